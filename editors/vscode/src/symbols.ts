// `@` symbols: the workspace symbols the sidecar's language servers know (the `lsp` tool's
// `workspace_symbols`, whose `metadata.symbols` lists them), ranked for the completion list, and
// the lines of a symbol's definition to attach. Pure (no `vscode` import), so it is unit-tested.

import type { Mention, SymbolTarget } from "./messages";

/** One entry of the `lsp` tool's `metadata.symbols` (1-based line and character of the name). */
export interface WorkspaceSymbol {
  name: string;
  kind: string;
  /** Workspace-relative. */
  path: string;
  line: number;
  character: number;
  /** The last line of the range the server gave (often the name's own line). */
  endLine?: number;
  /** The class or module it is in, when the server says. */
  container?: string;
}

/** Symbols listed at most in the completion. */
export const MAX_SYMBOL_MENTIONS = 15;
/** Lines looked at past a symbol's first one to find where its definition ends. */
const MAX_SCAN_LINES = 5000;

/** Whether `query` (the text after `@`) is worth asking the language servers about. */
export function wantsSymbols(query: string): boolean {
  return query.length >= 2 && !/[\s/\\]/.test(query) && !/^https?:/i.test(query);
}

/**
 * The symbols of an `lsp` `workspace_symbols` result's metadata, those in the workspace (a
 * library's have an absolute path); anything malformed is left out.
 */
export function parseSymbols(metadata: unknown): WorkspaceSymbol[] {
  const list = (metadata as { symbols?: unknown } | null | undefined)?.symbols;
  if (!Array.isArray(list)) return [];
  const out: WorkspaceSymbol[] = [];
  for (const raw of list) {
    if (typeof raw !== "object" || raw === null) continue;
    const s = raw as Record<string, unknown>;
    if (typeof s.name !== "string" || s.name === "" || typeof s.path !== "string" || s.path === "") continue;
    if (/^(?:[\\/]|[A-Za-z]:)/.test(s.path) || s.path.split(/[\\/]/).includes("..")) continue;
    if (!isLine(s.line) || !isLine(s.character)) continue;
    out.push({
      name: s.name,
      kind: typeof s.kind === "string" && s.kind !== "" ? s.kind : "symbol",
      path: s.path,
      line: s.line,
      character: s.character,
      ...(isLine(s.endLine) && s.endLine >= s.line ? { endLine: s.endLine } : {}),
      ...(typeof s.container === "string" && s.container !== "" ? { container: s.container } : {}),
    });
  }
  return out;
}

function isLine(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1;
}

/** Kinds that are definitions worth attaching first (a class before a variable of the same name). */
const KIND_RANK: Record<string, number> = {
  class: 0, struct: 0, interface: 0, enum: 0, function: 0, method: 0, constructor: 0, module: 1, namespace: 1,
  type_parameter: 2, constant: 1, field: 2, property: 2, enum_member: 2, variable: 3,
};

/**
 * The symbols for the completion of `query`, best first: the exact name, then names starting with
 * it, then names containing it, then the rest (the server's fuzzy matches); definitions before
 * variables, then the shorter path. Duplicates go.
 */
export function rankSymbols(symbols: WorkspaceSymbol[], query: string, max = MAX_SYMBOL_MENTIONS): WorkspaceSymbol[] {
  const q = query.toLowerCase();
  const match = (s: WorkspaceSymbol) => {
    const name = s.name.toLowerCase();
    if (s.name === query) return 0;
    if (name === q) return 1;
    if (name.startsWith(q)) return 2;
    return name.includes(q) ? 3 : 4;
  };
  const seen = new Set<string>();
  return symbols
    .filter((s) => {
      const key = `${s.path}:${s.line}:${s.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map((s) => ({ s, rank: [match(s), KIND_RANK[s.kind] ?? 2, s.path.length, s.line] }))
    .sort((a, b) => {
      const i = a.rank.findIndex((v, j) => v !== b.rank[j]);
      return i === -1 ? 0 : a.rank[i]! - b.rank[i]!;
    })
    .slice(0, max)
    .map(({ s }) => s);
}

/** What the completion shows beside a symbol: its kind, where it is. */
export function symbolDetail(s: WorkspaceSymbol): string {
  return `${s.kind.replace(/_/g, " ")}${s.container ? ` in ${s.container}` : ""} · ${s.path}:${s.line}`;
}

/** The completion item of a symbol (its label is the name, typed into the prompt when chosen). */
export function symbolMention(s: WorkspaceSymbol): Mention {
  const symbol: SymbolTarget = { name: s.name, kind: s.kind, path: s.path, line: s.line };
  if (s.endLine !== undefined) symbol.endLine = s.endLine;
  return { kind: "symbol", label: s.name, detail: symbolDetail(s), symbol };
}

/** The language family of a file by its extension: how strings and comments are written. */
type Family = "python" | "rust" | "c-like";

function familyOf(path: string): Family {
  const ext = path.split(".").pop()?.toLowerCase() ?? "";
  if (["py", "pyi", "pyw"].includes(ext)) return "python";
  return ext === "rs" ? "rust" : "c-like";
}

/** A line's code with its strings emptied and its comment cut, so brackets in them do not count. */
function codeOf(line: string, family: Family): string {
  let code = line.replace(/"(?:\\.|[^"\\])*"/g, '""');
  code = family === "rust" ? code.replace(/'(?:\\.|[^'\\])'/g, "''") : code.replace(/'(?:\\.|[^'\\])*'/g, "''");
  if (family === "c-like") code = code.replace(/`(?:\\.|[^`\\])*`/g, "``");
  code = code.replace(/\/\*.*?\*\//g, " ");
  if (family === "python") return code.replace(/#.*$/, "");
  return code.replace(/\/\/.*$/, "");
}

const indentOf = (line: string) => line.length - line.trimStart().length;

/** Whether a line goes on with the definition above it (`{` on its own line, `where`, `->`, …). */
const CONTINUES = /^(?:[{.=:?|&+]|->|where\b|extends\b|implements\b|throws\b)/;

/** A line ending so that the next one, indented deeper, goes on with it (`=>`, `where`, …). */
const OPEN_END = /(?:[=>,(+|&]|\bwhere)$/;

/** Lines that belong to the definition below them: decorators, attributes, doc comments. */
const LEADING = /^(?:@|#\[|\/\/|\/\*|\*|#(?:\s|$))/;

/**
 * The 0-based first and last line of the definition of the symbol named on line `line` (0-based):
 * the range the server gave when it spans lines; else the block that starts there — up to the
 * brace that closes it, or (a line ending in `:`, as in Python) the lines indented deeper —, or
 * the statement (brackets balanced). Decorators, attributes and doc comments right above go too.
 */
export function symbolExtent(lines: string[], line: number, endLine?: number, path = ""): { start: number; end: number } {
  const first = Math.max(0, Math.min(line, lines.length - 1));
  const end =
    endLine !== undefined && endLine > first ? Math.min(endLine, lines.length - 1) : blockEnd(lines, first, familyOf(path));
  let start = first;
  while (start > 0 && LEADING.test(lines[start - 1]!.trim())) start -= 1;
  return { start, end };
}

function blockEnd(lines: string[], first: number, family: Family): number {
  const last = Math.min(lines.length - 1, first + MAX_SCAN_LINES);
  let depth = 0;
  let braced = false;
  for (let i = first; i <= last; i += 1) {
    const code = codeOf(lines[i]!, family);
    for (const ch of code) {
      if (ch === "(" || ch === "[" || ch === "{") {
        depth += 1;
        if (ch === "{") braced = true;
      } else if (ch === ")" || ch === "]" || ch === "}") {
        depth -= 1;
      }
    }
    if (depth > 0) continue;
    if (braced || depth < 0) return i;
    const trimmed = code.trimEnd();
    if (trimmed.endsWith(":")) return indentedEnd(lines, first, i, last);
    if (trimmed.endsWith(";")) return i;
    const next = lines.slice(i + 1, last + 1).findIndex((l) => l.trim() !== "");
    if (next === -1) return i;
    const following = lines[i + 1 + next]!;
    const goesOn =
      CONTINUES.test(following.trim()) || (OPEN_END.test(trimmed) && indentOf(following) > indentOf(lines[i]!));
    if (!goesOn) return i;
  }
  return last;
}

/** The last line indented deeper than line `first`, after the header that ends on `header`. */
function indentedEnd(lines: string[], first: number, header: number, last: number): number {
  const base = indentOf(lines[first]!);
  let end = header;
  for (let j = header + 1; j <= last; j += 1) {
    const text = lines[j]!;
    if (text.trim() === "") continue;
    if (indentOf(text) <= base) break;
    end = j;
  }
  return end;
}

/** A file URI with a line range, as the selection's: `file:///w/a.py#L3-L9` (1-based). */
export function rangeUri(fileUri: string, start: number, end: number): string {
  return `${fileUri}#L${start}-L${end}`;
}
