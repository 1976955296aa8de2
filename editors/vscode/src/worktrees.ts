// "Tandem: Review Worktree…": the agents' git worktrees (`tandem run --worktree NAME`) in a quick
// pick with their branch, sessions and changed files; the one chosen has its change (against its
// base) brought into the workspace through the usual diff-editor review, hunk by hunk. The
// sidecar computes the change, carries it over onto files the person changed since the base (or
// leaves them, named) and writes only what is accepted; this file lists, asks and reports.

import * as vscode from "vscode";

import { showError } from "./errorUi";
import { Methods } from "./protocol";
import type { WorktreeInfo, WorktreeListResult, WorktreeReviewResult } from "./protocol.generated";
import type { Sidecar } from "./sidecar";

interface WorktreeItem extends vscode.QuickPickItem {
  name: string;
}

/** One worktree as a quick pick row. */
export function worktreeItem(w: WorktreeInfo): WorktreeItem {
  const files = `${w.changes} changed file${w.changes === 1 ? "" : "s"}`;
  const sessions = `${w.sessions} session${w.sessions === 1 ? "" : "s"}`;
  return { name: w.name, label: w.name, description: `${w.branch} · ${files} · ${sessions}`, detail: w.path };
}

/** The review's outcome in one line, and the files left out (each with why). */
export function reviewOutcome(result: WorktreeReviewResult): { headline: string; left: string[] } {
  const headline = result.message.split("\n")[0] ?? "";
  return { headline, left: result.left.map((f) => `${f.path}: ${f.reason}`) };
}

export async function reviewWorktree(sidecar: Sidecar, log: (line: string) => void, name?: string): Promise<void> {
  let chosen = name;
  if (!chosen) {
    let list: WorktreeInfo[];
    try {
      list = (await sidecar.request<WorktreeListResult>(Methods.worktreeList, {})).worktrees;
    } catch (err) {
      void showError(`Could not list the worktrees: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (list.length === 0) {
      void vscode.window.showInformationMessage("Tandem: no agent worktrees yet (`tandem run --worktree NAME` makes one).");
      return;
    }
    const picked = await vscode.window.showQuickPick(list.map(worktreeItem), {
      title: "Tandem: Review Worktree",
      placeHolder: "Choose a worktree to review its change and bring it over",
      matchOnDescription: true,
    });
    if (!picked) return;
    chosen = picked.name;
  }
  try {
    log(`worktree ${chosen}: review`);
    const result = await sidecar.request<WorktreeReviewResult>(Methods.worktreeReview, { name: chosen });
    log(`worktree ${chosen}: ${result.message}`);
    const { headline, left } = reviewOutcome(result);
    if (left.length === 0) {
      void vscode.window.showInformationMessage(`Tandem: ${headline}`);
    } else {
      void vscode.window.showWarningMessage(`Tandem: ${headline}`, { detail: `Left out:\n${left.join("\n")}`, modal: false }, "Show Log").then(
        (choice) => choice && vscode.commands.executeCommand("tandem.showLog"),
      );
    }
  } catch (err) {
    void showError(`Could not review worktree ${chosen}: ${err instanceof Error ? err.message : String(err)}`);
  }
}
