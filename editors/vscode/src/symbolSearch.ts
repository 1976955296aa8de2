// `@` symbols from the sidecar's language servers: after a pause in typing, the `lsp` tool's
// `workspace_symbols` for the text after `@` (one request at a time: a newer query cancels the
// older one). Quiet on failure: no language server for the project, a sidecar that is not running
// or a call that fails all mean no symbols in the list (the reason goes to the log).

import * as vscode from "vscode";

import type { Mention } from "./messages";
import type { ToolResult } from "./protocol";
import type { Sidecar } from "./sidecar";
import { parseSymbols, rankSymbols, symbolMention, wantsSymbols, type WorkspaceSymbol } from "./symbols";

/** How long typing must pause before the language servers are asked. */
export const SYMBOL_DEBOUNCE_MS = 250;
/** Files of the languages the sidecar has servers for: one of them picks the server to ask. */
const SOURCE = /\.(?:rs|py|pyi|ts|tsx|js|jsx|mjs|cjs|mts|cts|c|h|cc|cpp|cxx|hpp|hh|hxx|go)$/i;
const SOURCE_GLOB = "**/*.{rs,py,ts,tsx,js,jsx,mjs,c,cc,cpp,h,hpp,go}";
const EXCLUDE = "{**/node_modules/**,**/.git/**,**/target/**,**/.tandem/**,**/dist/**,**/out/**,**/.venv/**}";

export class SymbolSearch implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private pending: vscode.CancellationTokenSource | undefined;
  /** A source file of the workspace (for when none is open); `null` once known there is none. */
  private someSource: string | null | undefined;

  constructor(
    private readonly sidecar: Sidecar,
    private readonly log: (line: string) => void,
    private readonly delayMs = SYMBOL_DEBOUNCE_MS,
  ) {}

  /** After the pause, `found` gets the symbols matching `query` (only when there are some). */
  schedule(query: string, found: (items: Mention[]) => void): void {
    this.cancel();
    // A sidecar still starting answers once it runs; a stopped or failed one is not started for this.
    if (!wantsSymbols(query) || (this.sidecar.state !== "ready" && this.sidecar.state !== "starting")) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const source = new vscode.CancellationTokenSource();
      this.pending = source;
      void this.lookup(query, source.token).then((symbols) => {
        if (source.token.isCancellationRequested || symbols.length === 0) return;
        found(rankSymbols(symbols, query).map(symbolMention));
      });
    }, this.delayMs);
  }

  /** Forgets the query waiting or asked (the list closed, or another query came). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.pending?.cancel();
    this.pending?.dispose();
    this.pending = undefined;
  }

  private async lookup(query: string, token: vscode.CancellationToken): Promise<WorkspaceSymbol[]> {
    const hint = await this.hintFile();
    // A file picks the language (and starts its server); without one, any server that runs.
    for (const filePath of hint ? [hint, undefined] : [undefined]) {
      if (token.isCancellationRequested) return [];
      try {
        const result = await this.sidecar.request<ToolResult>(
          "tandem/tools/call",
          { name: "lsp", arguments: { operation: "workspace_symbols", query, ...(filePath ? { file_path: filePath } : {}) } },
          token,
        );
        if (!result.error) return parseSymbols(result.metadata);
        this.log(`@ symbols for "${query}"${filePath ? ` (${filePath})` : ""}: ${result.error}`);
      } catch (err) {
        if (!token.isCancellationRequested) this.log(`@ symbols for "${query}": ${err instanceof Error ? err.message : err}`);
        return [];
      }
    }
    return [];
  }

  /** The file whose language server to ask: the active editor's, an open one's, else any in the workspace. */
  private async hintFile(): Promise<string | undefined> {
    const root = vscode.workspace.workspaceFolders?.[0];
    if (!root) return undefined;
    const open = [
      vscode.window.activeTextEditor?.document,
      ...vscode.window.visibleTextEditors.map((e) => e.document),
      ...vscode.workspace.textDocuments,
    ].find((d) => d?.uri.scheme === "file" && SOURCE.test(d.uri.path) && vscode.workspace.getWorkspaceFolder(d.uri)?.uri.toString() === root.uri.toString());
    if (open) return vscode.workspace.asRelativePath(open.uri, false);
    if (this.someSource === undefined) {
      const [found] = await vscode.workspace.findFiles(new vscode.RelativePattern(root, SOURCE_GLOB), EXCLUDE, 1);
      this.someSource = found ? vscode.workspace.asRelativePath(found, false) : null;
    }
    return this.someSource ?? undefined;
  }

  dispose(): void {
    this.cancel();
  }
}
