// `@` in the panel's prompt: what can be mentioned (files and folders of the workspace, the editor's
// problems, the selection, the terminal, a web address; symbols come from src/symbolSearch.ts) and
// what a mention sends to the model with the next prompt (an ACP content block: an embedded
// `resource` with the text, or a `resource_link` the model can read or fetch).

import * as vscode from "vscode";

import { webUrl } from "./mentionSyntax";
import type { Mention, SymbolTarget } from "./messages";
import type { ContentBlock } from "./protocol";
import { rangeUri, symbolExtent } from "./symbols";
import type { TerminalWatcher } from "./terminal";
import { MAX_IMAGE_BYTES, imageBlock, imageType } from "./images";

/** Files up to this size go along whole; larger ones, and folders, as links the model can read. */
const EMBED_MAX_CHARS = 64_000;
const MAX_PROBLEMS = 200;
const EXCLUDE = "{**/node_modules/**,**/.git/**,**/target/**,**/.tandem/**,**/dist/**,**/out/**}";

/** The mentions matching `query` (the text after `@`): the special ones, then folders and files. */
export async function findMentions(query: string): Promise<Mention[]> {
  const url = webUrl(query);
  if (url) return [{ kind: "url", label: url, detail: "attach this URL (the agent may fetch it)" }];
  if (/^https?:/i.test(query)) return [];
  const q = query.toLowerCase();
  const special: Mention[] = [
    { kind: "problems", label: "problems", detail: "the errors and warnings VS Code shows" },
    { kind: "selection", label: "selection", detail: "the lines selected in the editor" },
    { kind: "terminal", label: "terminal", detail: "the terminal's last command and its output" },
  ];
  const out = special.filter((m) => m.label.startsWith(q));
  const root = vscode.workspace.workspaceFolders?.[0];
  if (!root) return out;
  const pattern = q.includes("/") ? `**/${escapeGlob(query)}*` : `**/*${escapeGlob(query)}*`;
  const files = await vscode.workspace.findFiles(
    q === "" ? "**/*" : `{${pattern},${pattern}/**}`,
    EXCLUDE,
    200,
  );
  const folders = new Set<string>();
  const paths: string[] = [];
  for (const uri of files) {
    const rel = vscode.workspace.asRelativePath(uri, false);
    paths.push(rel);
    const parts = rel.split("/");
    for (let i = 1; i < parts.length; i += 1) folders.add(`${parts.slice(0, i).join("/")}/`);
  }
  const matches = (p: string) => q === "" || p.toLowerCase().includes(q);
  const rank = (p: string) => {
    const name = p.replace(/\/$/, "").split("/").pop()!.toLowerCase();
    return (name.startsWith(q) ? 0 : name.includes(q) ? 1 : 2) * 1000 + p.length;
  };
  const found = [...[...folders].filter(matches), ...paths.filter(matches)].sort((a, b) => rank(a) - rank(b)).slice(0, 30);
  for (const p of found) out.push({ kind: p.endsWith("/") ? "folder" : "file", label: p });
  return out;
}

function escapeGlob(text: string): string {
  return text.replace(/[{}[\]*?!]/g, "");
}

/** The content block of a mention, with the label the panel lists; `undefined` with a reason. */
export async function resolveMention(
  mention: Mention,
  terminals: TerminalWatcher,
): Promise<{ label: string; block: ContentBlock } | string> {
  switch (mention.kind) {
    case "problems":
      return { label: "@problems", block: problemsBlock() };
    case "terminal":
      return terminals.context();
    case "url": {
      const url = webUrl(mention.label);
      if (!url) return "not an http or https address";
      return { label: url, block: urlBlock(url) };
    }
    case "symbol":
      return mention.symbol ? symbolContext(mention.symbol) : "no symbol";
    case "selection": {
      const editor = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === "file");
      if (!editor || editor.selection.isEmpty) return "select some lines in an editor first";
      const { start, end } = editor.selection;
      return {
        label: `${vscode.workspace.asRelativePath(editor.document.uri)}:${start.line + 1}-${end.line + 1}`,
        block: {
          type: "resource",
          resource: {
            uri: `${editor.document.uri.toString()}#L${start.line + 1}-L${end.line + 1}`,
            text: editor.document.getText(editor.selection),
            mimeType: "text/plain",
          },
        },
      };
    }
    case "file":
    case "folder": {
      const root = vscode.workspace.workspaceFolders?.[0];
      if (!root) return "no workspace folder";
      const rel = mention.label.replace(/\/$/, "");
      if (rel.split("/").includes("..")) return "outside the workspace";
      return resourceFor(vscode.Uri.joinPath(root.uri, rel), mention.kind === "folder");
    }
  }
}

/** A web address as a link the agent may fetch. */
export function urlBlock(url: string): ContentBlock {
  return { type: "resource_link", uri: url, name: url };
}

/** The text of a file: the editor's (unsaved changes included) when it is open, else the disk's. */
async function fileText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    const bytes = await vscode.workspace.fs.readFile(uri);
    return bytes.includes(0) ? undefined : new TextDecoder().decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * A symbol's definition: the lines of its range (from the editor's own symbol provider when one
 * knows the symbol, else src/symbols.ts's reading of the text) as an embedded resource whose
 * uri names the lines (`file:///w/a.py#L3-L9`); a link to them when they are too long.
 */
async function symbolContext(target: SymbolTarget): Promise<{ label: string; block: ContentBlock } | string> {
  const root = vscode.workspace.workspaceFolders?.[0];
  if (!root) return "no workspace folder";
  if (target.path.startsWith("/") || target.path.split(/[/\\]/).includes("..")) return "outside the workspace";
  const uri = vscode.Uri.joinPath(root.uri, target.path);
  const text = await fileText(uri);
  if (text === undefined) return `cannot read ${target.path}`;
  const lines = text.split(/\r?\n/);
  const extent =
    (await providerExtent(uri, target)) ??
    symbolExtent(lines, target.line - 1, target.endLine === undefined ? undefined : target.endLine - 1, target.path);
  const [first, last] = [extent.start + 1, extent.end + 1];
  const label = `${target.name} (${target.path}:${first === last ? first : `${first}-${last}`})`;
  const linesUri = rangeUri(uri.toString(), first, last);
  const body = lines.slice(extent.start, extent.end + 1).join("\n");
  if (body.length > EMBED_MAX_CHARS) return { label, block: { type: "resource_link", uri: linesUri, name: label } };
  return { label, block: { type: "resource", resource: { uri: linesUri, text: body, mimeType: "text/plain" } } };
}

/** The symbol's range from the document symbols of the editor's own language support, if any. */
async function providerExtent(uri: vscode.Uri, target: SymbolTarget): Promise<{ start: number; end: number } | undefined> {
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000));
  const symbols = await Promise.race([
    Promise.resolve(
      vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>(
        "vscode.executeDocumentSymbolProvider",
        uri,
      ),
    ).catch(() => undefined),
    timeout,
  ]);
  const line = target.line - 1;
  const stack = [...(symbols ?? [])];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if ("selectionRange" in s) {
      if (s.selectionRange.start.line === line && s.name.includes(target.name)) return { start: s.range.start.line, end: s.range.end.line };
      stack.push(...s.children);
    } else if (s.location.range.start.line === line && s.location.range.end.line > line && s.name.includes(target.name)) {
      return { start: line, end: s.location.range.end.line };
    }
  }
  return undefined;
}

/** A file (its text, or a link when large or not text) or a folder (a link) as context. */
export async function resourceFor(uri: vscode.Uri, isFolder?: boolean): Promise<{ label: string; block: ContentBlock } | string> {
  const rel = vscode.workspace.asRelativePath(uri, false);
  const folder = isFolder ?? (await vscode.workspace.fs.stat(uri).then((s) => (s.type & vscode.FileType.Directory) !== 0, () => false));
  if (folder) {
    return { label: `${rel}/`, block: { type: "resource_link", uri: uri.toString(), name: `${rel}/`, mimeType: "inode/directory" } };
  }
  const mimeType = imageType(uri.path);
  if (mimeType !== undefined) {
    // An image goes as an image (its bytes), for a model that takes images.
    try {
      const bytes = await vscode.workspace.fs.readFile(uri);
      if (bytes.length > MAX_IMAGE_BYTES) return `${rel} is larger than ${MAX_IMAGE_BYTES >> 20} MB`;
      return { label: rel, block: imageBlock(bytes, mimeType, uri.toString()) };
    } catch {
      return `cannot read ${rel}`;
    }
  }
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  let text: string | undefined = open?.getText();
  if (text === undefined) {
    try {
      const bytes = await vscode.workspace.fs.readFile(uri);
      text = bytes.length <= EMBED_MAX_CHARS * 4 && !bytes.includes(0) ? new TextDecoder().decode(bytes) : undefined;
    } catch {
      return `cannot read ${rel}`;
    }
  }
  if (text !== undefined && text.length <= EMBED_MAX_CHARS) {
    return { label: rel, block: { type: "resource", resource: { uri: uri.toString(), text, mimeType: "text/plain" } } };
  }
  return { label: rel, block: { type: "resource_link", uri: uri.toString(), name: rel } };
}

/** The editor's errors and warnings (then the rest), one `path:line:col: severity: message` a line. */
export function problemsBlock(): ContentBlock {
  const names = ["error", "warning", "info", "hint"];
  const rows: { severity: number; line: string }[] = [];
  for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) {
    if (uri.scheme !== "file") continue;
    const rel = vscode.workspace.asRelativePath(uri, false);
    for (const d of diagnostics) {
      const source = d.source ? ` [${d.source}${d.code !== undefined ? ` ${typeof d.code === "object" ? d.code.value : d.code}` : ""}]` : "";
      rows.push({
        severity: d.severity,
        line: `${rel}:${d.range.start.line + 1}:${d.range.start.character + 1}: ${names[d.severity] ?? "info"}: ${d.message}${source}`,
      });
    }
  }
  rows.sort((a, b) => a.severity - b.severity);
  const shown = rows.slice(0, MAX_PROBLEMS).map((r) => r.line);
  const text =
    rows.length === 0
      ? "No problems: VS Code shows no errors or warnings."
      : `${shown.join("\n")}${rows.length > shown.length ? `\n… ${rows.length - shown.length} more` : ""}`;
  return { type: "resource", resource: { uri: "tandem://problems", text, mimeType: "text/plain" } };
}
