// `@terminal`: the active terminal's last command and its output. With shell integration (VS Code
// 1.93 and later, bash, zsh, fish, pwsh) every command is recorded as it runs, with its output and
// exit code (src/terminalText.ts keeps the last few per terminal). Without it, the terminal's text
// is copied through the clipboard (select all, copy, clear the selection) and the clipboard is put
// back as it was.

import * as vscode from "vscode";

import type { ContentBlock } from "./protocol";
import { ExecutionLog, type Execution, executionText, screenText } from "./terminalText";

/** The shell integration API (VS Code 1.93), declared here: the extension still runs on 1.82. */
interface ShellExecution {
  commandLine: { value: string };
  cwd?: vscode.Uri;
  read(): AsyncIterable<string>;
}
interface ShellExecutionStart {
  terminal: vscode.Terminal;
  execution: ShellExecution;
}
interface ShellExecutionEnd extends ShellExecutionStart {
  exitCode: number | undefined;
}
interface ShellIntegrationWindow {
  onDidStartTerminalShellExecution?: vscode.Event<ShellExecutionStart>;
  onDidEndTerminalShellExecution?: vscode.Event<ShellExecutionEnd>;
}

export const TERMINAL_URI = "tandem://terminal";

export class TerminalWatcher implements vscode.Disposable {
  private readonly log = new ExecutionLog<vscode.Terminal>();
  private readonly running = new WeakMap<ShellExecution, Execution>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(private readonly trace: (line: string) => void) {
    const events = vscode.window as unknown as ShellIntegrationWindow;
    if (events.onDidStartTerminalShellExecution && events.onDidEndTerminalShellExecution) {
      this.disposables.push(
        events.onDidStartTerminalShellExecution((e) => this.started(e)),
        events.onDidEndTerminalShellExecution((e) => {
          const execution = this.running.get(e.execution);
          if (execution) this.log.end(execution, e.exitCode);
        }),
      );
    }
    this.disposables.push(vscode.window.onDidCloseTerminal((t) => this.log.forget(t)));
  }

  private started(e: ShellExecutionStart): void {
    const execution = this.log.start(e.terminal, e.execution.commandLine.value, e.execution.cwd?.fsPath);
    this.running.set(e.execution, execution);
    // The output must be read from the start, or it is gone.
    void (async () => {
      try {
        for await (const data of e.execution.read()) this.log.append(execution, data);
      } catch (err) {
        this.trace(`terminal output of \`${execution.command}\`: ${err instanceof Error ? err.message : err}`);
      }
    })();
  }

  /** The active terminal's last command and its output as context; a reason when there is none. */
  async context(): Promise<{ label: string; block: ContentBlock } | string> {
    const terminal = vscode.window.activeTerminal ?? vscode.window.terminals[vscode.window.terminals.length - 1];
    if (!terminal) return "no terminal is open: open one (Terminal: Create New Terminal), run the command, then mention @terminal";
    const executions = this.log.of(terminal);
    const text = executions.length > 0 ? executionText(terminal.name, executions) : await this.copyScreen(terminal);
    if (text === undefined) return `could not read the text of the terminal "${terminal.name}"`;
    return { label: "@terminal", block: { type: "resource", resource: { uri: TERMINAL_URI, text, mimeType: "text/plain" } } };
  }

  /** The terminal's whole text through the clipboard, which is then put back. */
  private async copyScreen(terminal: vscode.Terminal): Promise<string | undefined> {
    const clipboard = vscode.env.clipboard;
    const saved = await clipboard.readText().then(
      (t) => t,
      () => "",
    );
    const marker = `tandem-terminal-${Date.now()}`;
    try {
      terminal.show(true);
      await clipboard.writeText(marker);
      await vscode.commands.executeCommand("workbench.action.terminal.selectAll");
      await vscode.commands.executeCommand("workbench.action.terminal.copySelection");
      await vscode.commands.executeCommand("workbench.action.terminal.clearSelection");
      const copied = await clipboard.readText();
      return copied === marker || copied.trim() === "" ? undefined : screenText(terminal.name, copied);
    } catch (err) {
      this.trace(`copying the terminal's text: ${err instanceof Error ? err.message : err}`);
      return undefined;
    } finally {
      await clipboard.writeText(saved).then(undefined, () => undefined);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
