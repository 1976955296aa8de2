// `@terminal`: the active terminal's last command and its output. With shell integration (VS Code
// 1.93 and later, bash, zsh, fish, pwsh) every command is recorded as it runs, with its output and
// exit code (src/terminalText.ts keeps the last few per terminal). Without it, the terminal's text
// is copied through the clipboard (select all, copy, clear the selection) and the clipboard is put
// back as it was.

import * as vscode from "vscode";

import type { ContentBlock } from "./protocol";
import { ExecutionLog, type Execution, executionText, hasOutput, screenText } from "./terminalText";

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

/** How long one clipboard step may take. */
const CLIPBOARD_WAIT_MS = 2000;

/** `step`'s value, or `undefined` when it fails or takes longer than CLIPBOARD_WAIT_MS. */
function within<T>(step: Thenable<T>): Promise<T | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), CLIPBOARD_WAIT_MS);
    step.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      () => {
        clearTimeout(timer);
        resolve(undefined);
      },
    );
  });
}

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
    const last = executions[executions.length - 1];
    // Without the output (no shell integration, or a new terminal's first command, whose output
    // VS Code may not pass on), the terminal's own text.
    const screen = hasOutput(last) ? undefined : await this.copyScreen(terminal);
    const text = screen !== undefined ? screenText(terminal.name, screen, last) : last ? executionText(terminal.name, executions) : undefined;
    if (text === undefined) return `could not read the text of the terminal "${terminal.name}"`;
    return { label: "@terminal", block: { type: "resource", resource: { uri: TERMINAL_URI, text, mimeType: "text/plain" } } };
  }

  /**
   * The terminal's whole text through the clipboard, which is then put back. In a browser (VS Code
   * for the Web, code-server) reading the clipboard needs the page's permission and may wait for
   * the person: each step gives up after a while.
   */
  private async copyScreen(terminal: vscode.Terminal): Promise<string | undefined> {
    const clipboard = vscode.env.clipboard;
    const saved = await within(clipboard.readText());
    if (saved === undefined) {
      this.trace("the clipboard cannot be read here: the terminal's text is not attached");
      return undefined;
    }
    const marker = `tandem-terminal-${Date.now()}`;
    try {
      terminal.show(true);
      await within(clipboard.writeText(marker));
      await vscode.commands.executeCommand("workbench.action.terminal.selectAll");
      await vscode.commands.executeCommand("workbench.action.terminal.copySelection");
      await vscode.commands.executeCommand("workbench.action.terminal.clearSelection");
      const copied = await within(clipboard.readText());
      return copied === undefined || copied === marker || copied.trim() === "" ? undefined : copied;
    } catch (err) {
      this.trace(`copying the terminal's text: ${err instanceof Error ? err.message : err}`);
      return undefined;
    } finally {
      await within(clipboard.writeText(saved));
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
