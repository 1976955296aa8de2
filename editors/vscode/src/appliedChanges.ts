// What the agent's edits applied, kept per tool call from the session updates, so a card's file
// opens in a diff editor: the text before the call (left) against the text it left (right), both
// read-only documents of the `tandem-applied:` scheme.

import * as vscode from "vscode";

import type { SessionNotification, ToolCallContent } from "./protocol";

type Diff = Extract<ToolCallContent, { type: "diff" }>;

export class AppliedChanges implements vscode.TextDocumentContentProvider, vscode.Disposable {
  static readonly scheme = "tandem-applied";
  private readonly byCall = new Map<string, Diff[]>();
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(AppliedChanges.scheme, this);
  }

  /** Keeps the applied diffs of finished tool calls (a replayed session's included). */
  record(notification: SessionNotification): void {
    const update = notification.update;
    if (update.sessionUpdate !== "tool_call_update" && update.sessionUpdate !== "tool_call") return;
    const diffs = (update.content ?? []).filter((c): c is Diff => c.type === "diff");
    if (diffs.length > 0) this.byCall.set(update.toolCallId, diffs);
    // Bounded: a long session keeps the last few hundred calls' changes.
    if (this.byCall.size > 500) this.byCall.delete(this.byCall.keys().next().value as string);
  }

  async open(toolCallId: string, path: string): Promise<void> {
    const diff = this.byCall.get(toolCallId)?.find((d) => d.path === path);
    if (!diff) {
      void vscode.window.showWarningMessage("Tandem: that change is no longer known (the sidecar restarted?).");
      return;
    }
    const name = vscode.workspace.asRelativePath(vscode.Uri.file(path));
    const uri = (side: "before" | "after") =>
      // The real path travels in the query; the URI's path only gives the tab its language.
      vscode.Uri.from({
        scheme: AppliedChanges.scheme,
        path: `/${path.replace(/\\/g, "/").replace(/^\/+/, "")}`,
        query: new URLSearchParams({ call: toolCallId, side, path }).toString(),
      });
    await vscode.commands.executeCommand("vscode.diff", uri("before"), uri("after"), `${name} (applied by Tandem)`, {
      preview: true,
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const query = new URLSearchParams(uri.query);
    const diff = this.byCall.get(query.get("call") ?? "")?.find((d) => d.path === query.get("path"));
    if (!diff) return "";
    return query.get("side") === "before" ? (diff.oldText ?? "") : diff.newText;
  }

  dispose(): void {
    this.registration.dispose();
    this.byCall.clear();
  }
}
