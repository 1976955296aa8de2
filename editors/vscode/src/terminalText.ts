// `@terminal`: the commands run in each terminal (from VS Code's shell integration) kept with their
// output, the last few per terminal and capped, and the text the model gets. Pure (no `vscode`
// import), so it is unit-tested; src/terminal.ts feeds it from the terminal events.

/** Commands kept per terminal. */
export const MAX_EXECUTIONS = 5;
/** Output kept per command: its end (where the errors and the summary are). */
export const MAX_OUTPUT_CHARS = 32_000;
/** Lines of a terminal's text attached when it has no shell integration (its end). */
export const FALLBACK_LINES = 200;

export interface Execution {
  command: string;
  cwd?: string;
  output: string;
  /** Characters dropped from the start of the output to stay within the cap. */
  dropped: number;
  /** `undefined` while it runs (or when the shell did not say). */
  exitCode?: number;
  done: boolean;
}

/** The executions of each terminal (keyed by the terminal), oldest first, at most MAX_EXECUTIONS. */
export class ExecutionLog<K> {
  private readonly byTerminal = new Map<K, Execution[]>();

  start(terminal: K, command: string, cwd?: string): Execution {
    const execution: Execution = { command, output: "", dropped: 0, done: false, ...(cwd ? { cwd } : {}) };
    const list = this.byTerminal.get(terminal) ?? [];
    list.push(execution);
    this.byTerminal.set(terminal, list.slice(-MAX_EXECUTIONS));
    return execution;
  }

  append(execution: Execution, data: string): void {
    const output = execution.output + data;
    const over = output.length - MAX_OUTPUT_CHARS;
    execution.output = over > 0 ? output.slice(over) : output;
    if (over > 0) execution.dropped += over;
  }

  end(execution: Execution, exitCode: number | undefined): void {
    execution.done = true;
    if (exitCode !== undefined) execution.exitCode = exitCode;
  }

  /** The terminal's executions, oldest first. */
  of(terminal: K): Execution[] {
    return this.byTerminal.get(terminal) ?? [];
  }

  forget(terminal: K): void {
    this.byTerminal.delete(terminal);
  }
}

/**
 * Terminal output as plain text: escape sequences (colours, cursor moves, the shell integration's
 * own OSC 633 marks) removed, `\r\n` as `\n`, and a line rewritten with `\r` (a progress bar)
 * kept as it ended.
 */
// Escapes and control characters are what these expressions strip.
/* eslint-disable no-control-regex */
export function plainTerminalText(text: string): string {
  const stripped = text
    // OSC … BEL or ST (titles, shell integration marks, hyperlinks).
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "")
    // CSI sequences (colours, cursor), then any other two-character escape.
    .replace(/\x1b\[[0-?]*[ -/]*[@-~]/g, "")
    .replace(/\x1b[@-Z\\-_]/g, "")
    .replace(/\r\n/g, "\n");
  return stripped
    .split("\n")
    .map((line) => line.split("\r").filter((part) => part !== "").pop() ?? "")
    .join("\n")
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "");
}
/* eslint-enable no-control-regex */

function status(e: Execution): string {
  return !e.done ? "still running" : e.exitCode === undefined ? "finished" : `exit code ${e.exitCode}`;
}

/** Whether the output recorded for `e` has any text (a new terminal's first command may have lost it). */
export function hasOutput(e: Execution | undefined): boolean {
  return e !== undefined && plainTerminalText(e.output).trim() !== "";
}

/** What `@terminal` sends: the last command, its output and exit status, and the commands before it. */
export function executionText(terminalName: string, executions: Execution[]): string {
  const last = executions[executions.length - 1];
  if (!last) return `Terminal "${terminalName}": no command has run yet.`;
  const output = plainTerminalText(last.output).replace(/\s+$/, "");
  const lines = [
    `Terminal "${terminalName}", the last command${last.cwd ? ` (in ${last.cwd})` : ""}:`,
    `$ ${last.command}`,
    ...(last.dropped > 0 ? [`[… ${last.dropped} earlier characters of output left out]`] : []),
    output === "" ? "[no output]" : output,
    `[${status(last)}]`,
  ];
  const before = executions.slice(0, -1);
  if (before.length > 0) {
    lines.push("", "The commands before it:");
    for (const e of before) lines.push(`$ ${e.command}${e.done && e.exitCode !== undefined ? `  (exit code ${e.exitCode})` : ""}`);
  }
  return lines.join("\n");
}

/**
 * What `@terminal` sends when the command's output is not known (no shell integration, or the
 * output was not recorded): the end of the terminal's text, and the last command when known.
 */
export function screenText(terminalName: string, text: string, last?: Execution): string {
  const lines = plainTerminalText(text).replace(/\s+$/, "").split("\n");
  const shown = lines.slice(-FALLBACK_LINES);
  const what = shown.length < lines.length ? `its last ${shown.length} lines` : "its text";
  const head = last
    ? `Terminal "${terminalName}", ${what}; the last command was \`${last.command}\` [${status(last)}]:`
    : `Terminal "${terminalName}", ${what} (no shell integration: commands are not told apart):`;
  return `${head}\n${shown.join("\n")}`;
}
