// The checkpoint commands: "Tandem: Show Checkpoints" (a QuickPick of the session's checkpoints,
// each with a Restore and a Compare button), "Tandem: Undo Last Turn" and "Tandem: Compact
// Conversation". A restore asks first with the sidecar's dry-run plan (the person's own changes
// since are named and kept unless chosen), then goes through the usual diff-editor review. Compare
// opens a diff editor between a file's text at the checkpoint (read-only `tandem-checkpoint:`
// documents, fetched with `tandem/session/checkpointFile`) and the file now.

import * as vscode from "vscode";

import { showError } from "./errorUi";

import {
  compactMessage,
  describeCheckpoint,
  filesSince,
  kindLabel,
  lastTurn,
  planQuestion,
  restoreOutcome,
} from "./checkpoints";
import {
  type CheckpointInfo,
  Methods,
  type SessionCheckpointFileResult,
  type SessionCheckpointsResult,
  type SessionCompactResult,
  type SessionRestoreResult,
} from "./protocol";
import type { Sidecar } from "./sidecar";

export const CHECKPOINT_SCHEME = "tandem-checkpoint";

/** What the commands need of the session. */
export interface SessionState {
  readonly id: string | undefined;
  readonly isRunning: boolean;
}

type Target = { checkpointId: number } | { turn: number };

interface CheckpointItem extends vscode.QuickPickItem {
  index: number;
}

const RESTORE_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("history"), tooltip: "Restore" };
const COMPARE_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("diff"), tooltip: "Compare" };

export class CheckpointsUi implements vscode.Disposable, vscode.TextDocumentContentProvider {
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly sidecar: Sidecar,
    private readonly session: SessionState,
    /** A line in the panel (and the log). */
    private readonly notice: (text: string, level: "info" | "error") => void,
  ) {
    this.disposables.push(vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, this));
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** "Tandem: Show Checkpoints". */
  async show(): Promise<void> {
    const session = this.idleSession();
    if (!session) return;
    const list = await this.list(session);
    if (!list) return;
    if (list.length === 0) {
      void vscode.window.showInformationMessage("Tandem: this session has no checkpoints yet.");
      return;
    }
    const pick = vscode.window.createQuickPick<CheckpointItem>();
    pick.title = "Tandem: Checkpoints";
    pick.placeholder = "Choose a checkpoint to restore or compare (newest first)";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.items = list
      .map((_, index) => ({ ...describeCheckpoint(list, index), index, buttons: [RESTORE_BUTTON, COMPARE_BUTTON] }))
      .reverse();
    const chosen = await new Promise<{ item: CheckpointItem; action?: "restore" | "compare" } | undefined>((resolve) => {
      pick.onDidTriggerItemButton((e) =>
        resolve({ item: e.item, action: e.button === RESTORE_BUTTON ? "restore" : "compare" }),
      );
      pick.onDidAccept(() => {
        const item = pick.selectedItems[0];
        resolve(item ? { item } : undefined);
      });
      pick.onDidHide(() => resolve(undefined));
      pick.show();
    });
    pick.dispose();
    if (!chosen) return;
    const checkpoint = list[chosen.item.index]!;
    const action = chosen.action ?? (await this.askAction(checkpoint));
    if (action === "restore") {
      await this.restore(session, { checkpointId: checkpoint.id }, `Restore to checkpoint #${checkpoint.id} (${kindLabel(checkpoint)})`);
    } else if (action === "compare") {
      await this.compare(session, list, chosen.item.index);
    }
  }

  /** "Tandem: Undo Last Turn": back to before the session's newest turn. */
  async undoLastTurn(): Promise<void> {
    const session = this.idleSession();
    if (!session) return;
    const list = await this.list(session);
    if (!list) return;
    const turn = lastTurn(list);
    if (turn === undefined) {
      void vscode.window.showInformationMessage("Tandem: this session has no turn to undo yet.");
      return;
    }
    await this.restore(session, { turn }, `Undo turn ${turn}`);
  }

  /** The panel's restore button on a prompt: back to before that turn (asks first, like Undo). */
  async restoreTurn(turn: number): Promise<void> {
    const session = this.idleSession();
    if (!session) return;
    await this.restore(session, { turn }, `Restore to before turn ${turn}`);
  }

  /** "Tandem: Compact Conversation". */
  async compact(): Promise<void> {
    const session = this.idleSession();
    if (!session) return;
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Tandem: compacting the conversation…" },
        () => this.sidecar.request<SessionCompactResult>(Methods.sessionCompact, { sessionId: session }),
      );
      const text = compactMessage(result);
      this.notice(text, "info");
      void vscode.window.showInformationMessage(`Tandem: ${text}`);
    } catch (err) {
      this.failed("Could not compact the conversation", err);
    }
  }

  /** A checkpoint document's text: the file at the checkpoint ("" when it did not exist then). */
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = new URLSearchParams(uri.query);
    const result = await this.sidecar.request<SessionCheckpointFileResult>(Methods.sessionCheckpointFile, {
      sessionId: query.get("session"),
      checkpointId: Number(query.get("checkpoint")),
      path: query.get("path"),
    });
    return result.content ?? "";
  }

  private async askAction(checkpoint: CheckpointInfo): Promise<"restore" | "compare" | undefined> {
    const picked = await vscode.window.showQuickPick(
      [
        { label: "$(history) Restore", detail: "Bring the files back to this checkpoint (asks first, then a review)", action: "restore" as const },
        { label: "$(diff) Compare", detail: "Open a file as it was at this checkpoint beside the file now", action: "compare" as const },
      ],
      { title: `Tandem: checkpoint #${checkpoint.id} (${kindLabel(checkpoint)})` },
    );
    return picked?.action;
  }

  private async compare(session: string, list: CheckpointInfo[], index: number): Promise<void> {
    const checkpoint = list[index]!;
    const files = filesSince(list, index);
    if (files.length === 0) {
      void vscode.window.showInformationMessage(`Tandem: no file changed since checkpoint #${checkpoint.id}.`);
      return;
    }
    const path =
      files.length === 1
        ? files[0]
        : await vscode.window.showQuickPick(files, { title: `Tandem: compare with checkpoint #${checkpoint.id}` });
    if (!path) return;
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    if (!root) return;
    const query = new URLSearchParams({ session, checkpoint: String(checkpoint.id), path }).toString();
    const left = vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: `/${path}`, query });
    const right = vscode.Uri.joinPath(root, path);
    const exists = await vscode.workspace.fs.stat(right).then(
      () => true,
      () => false,
    );
    // A file deleted since: its checkpoint text against nothing.
    const now = exists ? right : vscode.Uri.from({ scheme: "untitled", path: `/${path} (deleted)` });
    await vscode.commands.executeCommand("vscode.diff", left, now, `${path} (checkpoint #${checkpoint.id} ↔ now)`);
  }

  /** Asks with the dry run's plan, then restores (reviewed like any change). */
  private async restore(session: string, target: Target, title: string): Promise<void> {
    let plan: SessionRestoreResult;
    try {
      plan = await this.sidecar.request<SessionRestoreResult>(Methods.sessionRestore, {
        sessionId: session,
        ...target,
        dryRun: true,
        includeConflicts: true,
      });
    } catch (err) {
      this.failed(title, err);
      return;
    }
    if (plan.restored.length === 0) {
      void vscode.window.showInformationMessage(`Tandem: ${title}: nothing to restore, the files are as they were then.`);
      return;
    }
    const question = planQuestion(title, plan);
    const answer = await vscode.window.showWarningMessage(
      question.message,
      { modal: true, detail: question.detail },
      ...question.choices.map((c) => c.title),
    );
    const choice = question.choices.find((c) => c.title === answer);
    if (!choice) return;
    try {
      const result = await this.sidecar.request<SessionRestoreResult>(Methods.sessionRestore, {
        sessionId: session,
        ...target,
        includeConflicts: choice.includeConflicts,
      });
      const text = restoreOutcome(title, result, choice.includeConflicts);
      this.notice(text, "info");
      void vscode.window.showInformationMessage(`Tandem: ${text}`);
    } catch (err) {
      this.failed(title, err);
    }
  }

  private async list(session: string): Promise<CheckpointInfo[] | undefined> {
    try {
      const result = await this.sidecar.request<SessionCheckpointsResult>(Methods.sessionCheckpoints, { sessionId: session });
      return result.checkpoints;
    } catch (err) {
      this.failed("Could not list the checkpoints", err);
      return undefined;
    }
  }

  private idleSession(): string | undefined {
    if (!this.session.id) {
      void vscode.window.showInformationMessage("Tandem: no session yet. Ask something first, or resume a session in the panel.");
      return undefined;
    }
    if (this.session.isRunning) {
      void vscode.window.showWarningMessage("Tandem is still working on the last prompt. Cancel it first or wait.");
      return undefined;
    }
    return this.session.id;
  }

  private failed(what: string, err: unknown): void {
    const text = `${what}: ${err instanceof Error ? err.message : String(err)}`;
    this.notice(text, "error");
    void showError(text);
  }
}
