// The agent panel: a webview view in Tandem's activity bar container. It renders what the extension
// posts (media/panel.js, built from webview/panel.ts) and sends back what the person does. Messages
// are kept and delivered through an Outbox (src/delivery.ts): nothing goes to a webview before its
// script says it is ready, then the backlog as one replay, then live messages; so a panel opened
// mid-turn, or recreated, shows every message exactly once.

import * as crypto from "node:crypto";
import * as vscode from "vscode";

import { Outbox } from "./delivery";
import { type FromPanel, type ToPanel, parseFromPanel } from "./messages";

export class PanelProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = "tandem.panel";
  private view: vscode.WebviewView | undefined;
  private readonly outbox = new Outbox((envelope) => void this.view?.webview.postMessage(envelope));
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (message: FromPanel) => void,
    private readonly log: (line: string) => void,
  ) {}

  post(message: ToPanel): void {
    this.outbox.post(message);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    // Its script has not run yet: whatever is posted now waits for its "ready".
    this.outbox.detach();
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = this.html(view.webview, media);
    this.disposables.push(
      view.webview.onDidReceiveMessage((raw) => {
        const message = parseFromPanel(raw);
        if (!message) {
          this.log(`panel: ignored a malformed message ${JSON.stringify(raw).slice(0, 200)}`);
          return;
        }
        if (message.type === "ready" && this.view === view) this.outbox.ready();
        this.onMessage(message);
      }),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.outbox.detach();
        }
      }),
    );
  }

  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${PanelProvider.viewId}.focus`);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.css"));
    const csp = [
      "default-src 'none'",
      `img-src ${webview.cspSource} data:`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Tandem</title>
</head>
<body data-root="${escapeAttribute(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "")}">
<header class="bar">
  <select data-testid="mode" title="Permission mode">
    <option value="default">default</option>
    <option value="auto-edit">auto-edit</option>
    <option value="plan">plan</option>
    <option value="yolo">yolo</option>
  </select>
  <select class="model" data-testid="model" title="Model" hidden></select>
  <span class="usage" data-testid="usage" hidden></span>
  <span class="spacer"></span>
  <button class="secondary" data-testid="new-session" title="Start a new session">New</button>
  <button class="secondary" data-testid="sessions-button" title="Resume a stored session">Sessions</button>
</header>
<div class="sessions" data-testid="sessions" hidden></div>
<div class="review" data-testid="review" hidden>
  <span class="review-summary"></span>
  <span class="review-diagnostics" data-testid="review-diagnostics" hidden></span>
  <button data-testid="review-accept-all">Accept all</button>
  <button class="secondary" data-testid="review-reject-all">Reject all</button>
</div>
<ol class="plan" data-testid="plan" hidden></ol>
<main class="messages" data-testid="messages" aria-live="polite"></main>
<footer class="composer">
  <ol class="queue" data-testid="queue" hidden></ol>
  <div class="attachments" data-testid="attachments" hidden>
    <span class="attachment-list"></span>
    <button class="secondary" data-testid="clear-attachments" title="Do not send these with the next prompt">Clear</button>
  </div>
  <ul class="mentions" data-testid="mention-list" role="listbox" hidden></ul>
  <textarea data-testid="prompt" rows="3" placeholder="Ask Tandem… (@ to add files, symbols, @problems, @selection, @terminal, @https://…; Enter to send, Shift+Enter for a new line)"></textarea>
  <div class="actions">
    <span class="status" data-testid="status"></span>
    <button class="secondary" data-testid="cancel" disabled>Cancel</button>
    <button data-testid="send">Send</button>
  </div>
</footer>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}

function escapeAttribute(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
