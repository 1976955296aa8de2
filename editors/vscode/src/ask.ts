// Questions to the person that are not an edit review: a command (or MCP tool, or plan) that needs
// approval, as a modal with the request's text; `tandem/session/askUser` as quick picks.

import * as vscode from "vscode";

import type { AskUserParams, AskUserResult, PermissionResult, RequestPermissionParams } from "./protocol";
import { blockText } from "./transcript";

export async function askPermission(params: RequestPermissionParams, token: vscode.CancellationToken): Promise<PermissionResult> {
  const detail = (params.toolCall.content ?? [])
    .map((c) => (c.type === "content" ? blockText(c.content) : c.type === "terminal" ? `terminal ${c.terminalId}` : ""))
    .filter((t) => t !== "")
    .join("\n\n");
  const items = params.options.map((o) => ({ title: o.name, optionId: o.optionId, isCloseAffordance: o.kind === "reject_once" }));
  const pick = await raceCancel(
    vscode.window.showWarningMessage(`Tandem: ${params.toolCall.title ?? "permission needed"}`, { modal: true, detail }, ...items),
    token,
  );
  if (!pick) return { outcome: { outcome: "cancelled" } };
  return { outcome: { outcome: "selected", optionId: pick.optionId } };
}

export async function askUser(params: AskUserParams, token: vscode.CancellationToken): Promise<AskUserResult> {
  const answers: string[][] = [];
  for (const [index, q] of params.questions.entries()) {
    const title = `${q.header ? `${q.header}: ` : ""}${q.question}${params.questions.length > 1 ? ` (${index + 1}/${params.questions.length})` : ""}`;
    const options = q.options ?? [];
    if (options.length === 0) {
      const text = await raceCancel(vscode.window.showInputBox({ title, prompt: q.question, ignoreFocusOut: true }), token);
      if (text === undefined) return { cancelled: true };
      answers.push([text]);
      continue;
    }
    const items = options.map((o) => ({ label: o.label, detail: o.description }));
    if (q.multiSelect) {
      const picked = await raceCancel(
        vscode.window.showQuickPick(items, { title, canPickMany: true, ignoreFocusOut: true }),
        token,
      );
      if (!picked) return { cancelled: true };
      answers.push(picked.map((p) => p.label));
    } else {
      const picked = await raceCancel(vscode.window.showQuickPick(items, { title, ignoreFocusOut: true }), token);
      if (!picked) return { cancelled: true };
      answers.push([picked.label]);
    }
  }
  return { answers };
}

function raceCancel<T>(thenable: Thenable<T>, token: vscode.CancellationToken): Promise<T | undefined> {
  return new Promise((resolve) => {
    const sub = token.onCancellationRequested(() => resolve(undefined));
    thenable.then(
      (value) => {
        sub.dispose();
        resolve(value);
      },
      () => {
        sub.dispose();
        resolve(undefined);
      },
    );
  });
}
