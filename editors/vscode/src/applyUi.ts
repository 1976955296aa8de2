// "Apply to file" on an answer's code block: the block becomes a proposed change to the file the
// person was in (its selection, else the function the block rewrites, else the whole file), shown in
// the same per-hunk review as the agent's edits. Exactly the accepted hunks are then written through
// the sidecar's `write` tool (an open document gets a workspace/applyEdit, so undo has it, then a
// save). `tandem/tools/call` is the person's own call and never asks again: the review here is the
// approval.

import * as vscode from "vscode";

import { propose, proposedText } from "./apply";
import type { PermissionResult, RequestPermissionParams, ToolResult } from "./protocol";
import type { ReviewController } from "./reviewUi";
import type { Sidecar } from "./sidecar";

let applied = 0;

export async function applyCode(
  code: string,
  sidecar: Sidecar,
  reviews: ReviewController,
  notice: (text: string, level: "info" | "error") => void,
  log: (line: string) => void,
): Promise<void> {
  const editor =
    vscode.window.activeTextEditor?.document.uri.scheme === "file"
      ? vscode.window.activeTextEditor
      : vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === "file");
  if (!editor) {
    void vscode.window.showWarningMessage("Tandem: open the file to apply the code to (select the lines it replaces, if any).");
    return;
  }
  const document = editor.document;
  const name = vscode.workspace.asRelativePath(document.uri);
  const before = document.getText();
  const version = document.version;
  const selection = editor.selection.isEmpty
    ? undefined
    : { start: document.offsetAt(editor.selection.start), end: document.offsetAt(editor.selection.end) };
  // A file with CRLF line ends gets the block with CRLF too, so only real changes are hunks.
  const block = before.includes("\r\n") ? code.replace(/\r?\n/g, "\r\n") : code;
  const after = proposedText(before, block, selection);
  if (after === before) {
    void vscode.window.showInformationMessage(`Tandem: ${name} already holds this code.`);
    return;
  }
  const proposal = propose(before, after);
  applied += 1;
  const params: RequestPermissionParams = {
    sessionId: "",
    toolCall: {
      toolCallId: `apply-${applied}`,
      title: `Apply code to ${name}`,
      kind: "edit",
      status: "pending",
      content: [{ type: "diff", path: document.uri.fsPath, oldText: before, newText: after, hunks: proposal.hunks }],
    },
    options: [
      { optionId: "allow_once", name: "Accept", kind: "allow_once" },
      { optionId: "reject_once", name: "Reject", kind: "reject_once" },
    ],
  };
  const cancel = new vscode.CancellationTokenSource();
  let answer: PermissionResult | undefined;
  try {
    answer = await reviews.start(params, cancel.token);
  } finally {
    cancel.dispose();
  }
  const outcome = answer?.outcome;
  if (!outcome || outcome.outcome !== "selected" || outcome.optionId !== "allow_once") {
    notice(`Apply to ${name}: nothing applied.`, "info");
    return;
  }
  const accepted = outcome.acceptedHunks ?? undefined;
  if (accepted && accepted.length === 0) {
    notice(`Apply to ${name}: every hunk rejected, nothing applied.`, "info");
    return;
  }
  if (document.version !== version && document.getText() !== before) {
    notice(`Apply to ${name}: the file changed during the review; nothing applied. Apply the block again.`, "error");
    return;
  }
  const text = proposal.apply(accepted);
  try {
    const result = await sidecar.request<ToolResult>("tandem/tools/call", {
      name: "write",
      arguments: { file_path: document.uri.fsPath, content: text },
    });
    if (result.error) throw new Error(result.error);
    const count = accepted?.length ?? proposal.hunks.length;
    notice(`Applied ${count} of ${proposal.hunks.length} hunk${proposal.hunks.length === 1 ? "" : "s"} to ${name}.`, "info");
    log(`apply to ${name}: ${count}/${proposal.hunks.length} hunks written`);
  } catch (err) {
    notice(`Apply to ${name} failed: ${err instanceof Error ? err.message : String(err)}`, "error");
  }
}
