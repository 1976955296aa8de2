// Tandem for VS Code: a shim over the `tandem lsp` sidecar. The panel chats with the agent, edits
// are reviewed hunk by hunk in diff editors with CodeLens, commands ask in a modal, and accepted
// edits to open files arrive as `workspace/applyEdit` (undoable) followed by a save.

import * as vscode from "vscode";

import { AppliedChanges } from "./appliedChanges";
import { applyCode } from "./applyUi";
import { askPermission, askUser } from "./ask";
import { CheckpointsUi } from "./checkpointsUi";
import { unsetKeyWarning } from "./configErrors";
import { showError } from "./errorUi";
import type { FromPanel } from "./messages";
import { typedUrls } from "./mentionSyntax";
import { MentionQueries } from "./mentionQueries";
import { findMentions, resolveMention, resourceFor, urlBlock } from "./mentions";
import { PanelProvider } from "./panel";
import { type ContentBlock, MODES, Methods, type ModeId, isMode } from "./protocol";
import { headline } from "./preview";
import { ReviewController } from "./reviewUi";
import { SessionController } from "./session";
import { commandsOf } from "./slash";
import { Sidecar, type SidecarState } from "./sidecar";
import { SymbolSearch } from "./symbolSearch";
import { TerminalWatcher } from "./terminal";
import { openProviderSettings, runDoctor } from "./walkthrough";
import { reviewWorktree } from "./worktrees";

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Tandem");
  const log = (line: string) => output.appendLine(`[${new Date().toISOString()}] ${line}`);

  const status = vscode.window.createStatusBarItem("tandem.status", vscode.StatusBarAlignment.Left, 100);
  status.name = "Tandem";
  status.command = "tandem.openPanel";
  let sidecarState: SidecarState = "stopped";

  const reviews = new ReviewController(log);
  const applied = new AppliedChanges();
  // eslint-disable-next-line prefer-const
  let session: SessionController;
  const panel = new PanelProvider(context.extensionUri, (message) => void onPanel(message), log);

  // While a turn runs the status bar says how long and how many tokens so far, once a second.
  let ticker: ReturnType<typeof setInterval> | undefined;
  const renderStatus = () => {
    const running = session?.isRunning === true;
    if (running && !ticker) ticker = setInterval(() => renderStatus(), 1000);
    if (!running && ticker) {
      clearInterval(ticker);
      ticker = undefined;
    }
    const spin = running ? "$(sync~spin) " : "";
    const icon = sidecarState === "error" ? "$(error) " : sidecarState === "ready" ? "" : "$(circle-slash) ";
    const progress = session?.progressText(Date.now(), reviews.current ? "your review" : undefined);
    status.text = `${spin}${icon}Tandem: ${session?.mode ?? "default"}${progress ? ` · ${progress}` : ""}`;
    status.tooltip = `Tandem sidecar: ${sidecarState}${session?.modelName ? ` · model ${session.modelName}` : ""}\nClick to open the panel.`;
    status.show();
  };

  const sidecar = new Sidecar(output, {
    update: (n) => {
      applied.record(n);
      reviews.onUpdate(n.update);
      session.onUpdate(n);
    },
    requestPermission: async (params, token) => {
      const inline = reviews.start(params, token);
      if (inline) {
        void panel.reveal();
        return inline;
      }
      return askPermission(params, token);
    },
    askUser: (params, token) => askUser(params, token),
    stateChanged: (state, detail) => {
      sidecarState = state;
      if (state === "stopped" || state === "error") {
        reviews.cancelAll();
        session?.forget();
      }
      panel.post({ type: "status", state, ...(detail ? { detail } : {}) });
      renderStatus();
    },
  });

  session = new SessionController(
    sidecar,
    {
      post: (m) => panel.post(m),
      turnChanged: () => {
        if (!session.isRunning) reviews.turnEnded();
        renderStatus();
      },
      modeChanged: () => renderStatus(),
      modelChanged: () => renderStatus(),
      cancelled: () => reviews.cancelAll(),
    },
    log,
  );

  const terminals = new TerminalWatcher(log);
  const symbols = new SymbolSearch(sidecar, log);
  const mentionQueries = new MentionQueries(findMentions, symbols, (query, items) => panel.post({ type: "mentions", query, items }), log);

  const checkpoints = new CheckpointsUi(sidecar, session, (text, level) => {
    log(text);
    panel.post({ type: "notice", text, level });
  });

  reviews.onDidChangeReview((review) => {
    const pending = review !== undefined && !review.isAnswered;
    const diagnostics = pending ? headline(review?.preview) : undefined;
    panel.post({
      type: "review",
      pending,
      summary: review?.summary(),
      ...(diagnostics ? { diagnostics, diagnosticsStatus: review?.preview?.status } : {}),
    });
  });

  async function onPanel(message: FromPanel): Promise<void> {
    switch (message.type) {
      case "ready": {
        panel.post({ type: "mode", mode: session.mode });
        session.postAttachments();
        session.postQueue();
        // Until a session names the model, the dropdown shows the configured one (if any).
        session.postModels();
        break;
      }
      case "prompt": {
        mentionQueries.cancel();
        // `@https://…` typed without choosing it from the list goes along too.
        const extra = typedUrls(message.text)
          .filter((url) => !session.isAttached(url))
          .map(urlBlock);
        await session.prompt(message.text, extra);
        break;
      }
      case "cancel":
        await session.cancel();
        break;
      case "dequeue":
        session.dequeue(message.id);
        break;
      case "setMode":
        await session.setMode(message.mode);
        break;
      case "setModel":
        await session.setModel(message.model);
        break;
      case "newSession":
        await session.newSession();
        break;
      case "listSessions":
        try {
          panel.post({ type: "sessions", sessions: await session.list() });
        } catch (err) {
          panel.post({ type: "notice", text: `Could not list sessions: ${err instanceof Error ? err.message : err}`, level: "error" });
        }
        break;
      case "restoreTurn":
        void checkpoints.restoreTurn(message.turn);
        break;
      case "loadSession":
        await session.load(message.sessionId);
        break;
      case "reviewAll":
        reviews.decideAll(message.accept);
        break;
      case "clearAttachments":
        session.clearAttachments();
        break;
      case "attachImage": {
        // A screenshot pasted or dropped into the panel; numbered so two pastes are two chips.
        let label = message.name;
        for (let n = 2; session.isAttached(label); n++) label = `${message.name} (${n})`;
        session.attach(label, { type: "image", data: message.data, mimeType: message.mimeType });
        break;
      }
      case "copyCode":
        await vscode.env.clipboard.writeText(message.text);
        vscode.window.setStatusBarMessage("Tandem: code copied", 3000);
        break;
      case "insertCode":
        await insertCode(message.text);
        break;
      case "applyCode":
        await applyCode(message.text, sidecar, reviews, (text, level) => panel.post({ type: "notice", text, level }), log);
        break;
      case "mentionQuery":
        await mentionQueries.ask(message.query);
        break;
      case "listCommands":
        // `/` typed first in the prompt: the sidecar's commands, asked each time (a new file
        // in .tandem/commands shows up at once); quiet on failure, the prompt still works.
        try {
          panel.post({ type: "commands", commands: commandsOf(await sidecar.request(Methods.commandsList, {})) });
        } catch (err) {
          log(`slash commands not listed: ${err instanceof Error ? err.message : err}`);
        }
        break;
      case "mention": {
        mentionQueries.cancel();
        const resolved = await resolveMention(message.mention, terminals);
        if (typeof resolved === "string") void vscode.window.showWarningMessage(`Tandem: @${message.mention.label}: ${resolved}.`);
        else session.attach(resolved.label, resolved.block);
        break;
      }
      case "openChange":
        await applied.open(message.toolCallId, message.path);
        break;
      case "openFile": {
        const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(message.path));
        const position = new vscode.Position(message.line ?? 0, 0);
        await vscode.window.showTextDocument(doc, { selection: new vscode.Range(position, position), preview: true });
        break;
      }
    }
  }

  context.subscriptions.push(
    output,
    status,
    { dispose: () => ticker && clearInterval(ticker) },
    reviews,
    applied,
    panel,
    terminals,
    symbols,
    sidecar,
    vscode.window.registerWebviewViewProvider(PanelProvider.viewId, panel, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.commands.registerCommand("tandem.openPanel", () => panel.reveal()),
    vscode.commands.registerCommand("tandem.prompt", async () => {
      const text = await vscode.window.showInputBox({ title: "Ask Tandem", prompt: "What should the agent do?", ignoreFocusOut: true });
      if (!text?.trim()) return;
      await panel.reveal();
      await session.prompt(text, selectionContext());
    }),
    vscode.commands.registerCommand("tandem.cancel", () => session.cancel()),
    vscode.commands.registerCommand("tandem.addSelection", async () => {
      const attachment = editorContext();
      if (!attachment) {
        void vscode.window.showWarningMessage("Tandem: open a file (and select the lines) to add to the chat.");
        return;
      }
      session.attach(attachment.label, attachment.block);
      await panel.reveal();
    }),
    vscode.commands.registerCommand("tandem.addToChat", async (uri?: unknown, uris?: unknown) => {
      // The explorer passes the clicked item and, with a multi-selection, all of them.
      const picked = (Array.isArray(uris) && uris.length > 0 ? uris : [uri]).filter((u): u is vscode.Uri => u instanceof vscode.Uri);
      const targets = picked.length > 0 ? picked : vscode.window.activeTextEditor ? [vscode.window.activeTextEditor.document.uri] : [];
      if (targets.length === 0) {
        void vscode.window.showWarningMessage("Tandem: choose a file or folder in the explorer to add to the chat.");
        return;
      }
      for (const target of targets) {
        const resolved = await resourceFor(target);
        if (typeof resolved === "string") void vscode.window.showWarningMessage(`Tandem: ${resolved}.`);
        else session.attach(resolved.label, resolved.block);
      }
      await panel.reveal();
    }),
    checkpoints,
    vscode.commands.registerCommand("tandem.showCheckpoints", () => checkpoints.show()),
    vscode.commands.registerCommand("tandem.undoTurn", () => checkpoints.undoLastTurn()),
    vscode.commands.registerCommand("tandem.compact", () => checkpoints.compact()),
    vscode.commands.registerCommand("tandem.setMode", async (mode?: unknown) => {
      const picked = isMode(mode)
        ? mode
        : await vscode.window.showQuickPick([...MODES], { title: "Tandem: permission mode", placeHolder: session.mode });
      if (isMode(picked)) await session.setMode(picked as ModeId);
    }),
    vscode.commands.registerCommand("tandem.chooseModel", () => session.chooseModel()),
    vscode.commands.registerCommand("tandem.acceptHunk", (id?: unknown) => reviews.decide(typeof id === "string" ? id : undefined, true)),
    vscode.commands.registerCommand("tandem.rejectHunk", (id?: unknown) => reviews.decide(typeof id === "string" ? id : undefined, false)),
    vscode.commands.registerCommand("tandem.nextHunk", () => reviews.navigate("next")),
    vscode.commands.registerCommand("tandem.previousHunk", () => reviews.navigate("previous")),
    vscode.commands.registerCommand("tandem.nextFile", () => reviews.navigate("nextFile")),
    vscode.commands.registerCommand("tandem.acceptAll", () => reviews.decideAll(true)),
    vscode.commands.registerCommand("tandem.rejectAll", () => reviews.decideAll(false)),
    vscode.commands.registerCommand("tandem.restart", async () => {
      try {
        await sidecar.restart();
        void vscode.window.showInformationMessage("Tandem: sidecar restarted.");
      } catch (err) {
        void showError(err instanceof Error ? err.message : String(err));
      }
    }),
    vscode.commands.registerCommand("tandem.showLog", () => output.show(true)),
    vscode.commands.registerCommand("tandem.openProviderSettings", () => openProviderSettings()),
    vscode.commands.registerCommand("tandem.doctor", () => runDoctor()),
    vscode.commands.registerCommand("tandem.reviewWorktree", (name?: unknown) =>
      reviewWorktree(sidecar, log, typeof name === "string" ? name : undefined),
    ),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("tandem")) {
        void vscode.window
          .showInformationMessage("Tandem settings changed. Restart the sidecar to use them?", "Restart")
          .then((choice) => choice === "Restart" && vscode.commands.executeCommand("tandem.restart"));
      }
    }),
  );

  renderStatus();
  // A key variable that is not set: said at start, not after the first request fails.
  const keyWarning = unsetKeyWarning(vscode.workspace.getConfiguration("tandem").get<string>("provider.apiKeyEnv", ""), process.env);
  if (keyWarning) {
    log(keyWarning);
    void vscode.window.showWarningMessage(`Tandem: ${keyWarning}`, "Open Setting").then((choice) => {
      if (choice) void vscode.commands.executeCommand("workbench.action.openSettings", "tandem.provider.apiKeyEnv");
    });
  }
  try {
    await sidecar.start();
  } catch (err) {
    // The binary not found (tandem.path), a .tandem/config.toml the sidecar refuses, …; else
    // Tandem's settings as a whole.
    void showError(err instanceof Error ? err.message : String(err), "tandem.");
  }
}

export function deactivate(): void {}

/**
 * A code block of an answer into the editor the person was last in: it replaces the selection, or
 * goes in at the cursor (the panel has the focus, so the editor is the last active or visible one).
 */
async function insertCode(text: string): Promise<void> {
  const editor =
    vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme !== "output");
  if (!editor) {
    void vscode.window.showWarningMessage("Tandem: open a file to insert the code into.");
    return;
  }
  const done = await editor.edit((edit) => {
    for (const selection of editor.selections) edit.replace(selection, text);
  });
  if (!done) {
    void vscode.window.showWarningMessage("Tandem: the editor refused the insertion (read-only?).");
    return;
  }
  await vscode.window.showTextDocument(editor.document, editor.viewColumn);
}

/** The active editor's selection (or, with none, the whole file) as context for the next prompt. */
function editorContext(): { label: string; block: ContentBlock } | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== "file") return undefined;
  const name = vscode.workspace.asRelativePath(editor.document.uri);
  if (editor.selection.isEmpty) {
    return {
      label: name,
      block: { type: "resource", resource: { uri: editor.document.uri.toString(), text: editor.document.getText(), mimeType: "text/plain" } },
    };
  }
  const [block] = selectionContext();
  const { start, end } = editor.selection;
  return block ? { label: `${name}:${start.line + 1}-${end.line + 1}`, block } : undefined;
}

/** The active editor's selection as an embedded resource, so the agent sees what the person means. */
function selectionContext(): ContentBlock[] {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.selection.isEmpty || editor.document.uri.scheme !== "file") return [];
  const { start, end } = editor.selection;
  const text = editor.document.getText(editor.selection);
  return [
    {
      type: "resource",
      resource: {
        uri: `${editor.document.uri.toString()}#L${start.line + 1}-L${end.line + 1}`,
        text,
        mimeType: "text/plain",
      },
    },
  ];
}
