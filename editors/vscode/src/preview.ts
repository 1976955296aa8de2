// The diagnostics preview of a permission request (`RequestPermissionParams.diagnostics`): what
// the language servers say the proposed change would break, turned into what the review shows
// (the headline, squiggles on the proposed text, a count per hunk). Pure: no `vscode`.

import type { DiagnosticsPreview, FileDiagnosticsPreview, PreviewDiagnostic } from "./protocol";

/** A diagnostic placed in a text: 0-based lines, UTF-16 columns (as VS Code counts). */
export interface PlacedDiagnostic {
  line: number;
  character: number;
  endLine: number;
  endCharacter: number;
  severity: "error" | "warning";
  message: string;
  source?: string;
  code?: string;
  hunk?: string;
}

const NOT_READY = "diagnostics not ready, so nothing is known about errors";

/**
 * The line the review shows: `Diagnostics preview: introduces 1 error: …`. A preview that is not
 * ready says so, never "no problems"; `undefined` without a preview.
 */
export function headline(preview: DiagnosticsPreview | null | undefined): string | undefined {
  if (!preview) return undefined;
  let summary = preview.summary.trim();
  if (preview.status === "notReady" && !/not ready/i.test(summary)) summary = summary ? `${NOT_READY}; ${summary}` : NOT_READY;
  if (!summary) summary = preview.status === "ready" ? "no new errors or warnings" : NOT_READY;
  return `Diagnostics preview: ${summary}`;
}

/** The line for one file of the review: its state when it is not ready, else its own counts. */
export function fileLine(file: FileDiagnosticsPreview | undefined): string | undefined {
  if (!file) return undefined;
  if (file.status !== "ready") {
    const who = file.server ? `${file.server}: ` : "";
    return `diagnostics of this file not ready (${who}${file.reason ?? "no answer"}): nothing is known about its errors`;
  }
  const parts = [counts(file.introduced ?? [], "new")];
  if ((file.resolved ?? []).length > 0) parts.push(`${(file.resolved ?? []).length} resolved`);
  return `this file: ${parts.filter(Boolean).join(", ") || "no new errors or warnings"}`;
}

/** `1 new error, 2 new warnings`; "" for none. */
export function counts(diagnostics: PreviewDiagnostic[], adjective = ""): string {
  const word = (n: number, w: string) => `${n} ${adjective ? `${adjective} ` : ""}${w}${n === 1 ? "" : "s"}`;
  const errors = diagnostics.filter((d) => d.severity === "error").length;
  const warnings = diagnostics.length - errors;
  return [errors > 0 ? word(errors, "error") : "", warnings > 0 ? word(warnings, "warning") : ""].filter(Boolean).join(", ");
}

/** The preview's entry for `path` (paths compared as given, and without a trailing separator). */
export function fileOf(preview: DiagnosticsPreview | null | undefined, path: string): FileDiagnosticsPreview | undefined {
  const norm = (p: string) => p.replace(/[\\/]+$/, "");
  return preview?.files.find((f) => norm(f.path) === norm(path));
}

/** The introduced diagnostics that lie in hunk `id`. */
export function inHunk(file: FileDiagnosticsPreview | undefined, id: string): PreviewDiagnostic[] {
  return (file?.introduced ?? []).filter((d) => d.hunk === id);
}

/**
 * Places diagnostics in `text` (the text their positions are of): 1-based lines and columns in
 * Unicode scalar values become 0-based lines and UTF-16 columns, clamped to the text.
 */
export function place(diagnostics: PreviewDiagnostic[], text: string | undefined): PlacedDiagnostic[] {
  const lines = text === undefined ? undefined : text.split("\n");
  const clampLine = (line: number) => {
    const zero = Math.max(line - 1, 0);
    return lines ? Math.min(zero, Math.max(lines.length - 1, 0)) : zero;
  };
  const column = (line: number, scalar: number) => {
    const col = Math.max(scalar - 1, 0);
    const content = lines?.[line]?.replace(/\r$/, "");
    if (content === undefined) return col;
    return utf16Offset(content, col);
  };
  return diagnostics.map((d) => {
    const line = clampLine(d.line);
    let endLine = clampLine(d.endLine);
    const character = column(line, d.column);
    let endCharacter = column(endLine, d.endColumn);
    if (endLine < line || (endLine === line && endCharacter < character)) {
      endLine = line;
      endCharacter = character;
    }
    return {
      line,
      character,
      endLine,
      endCharacter,
      severity: d.severity,
      message: d.message,
      ...(d.source ? { source: d.source } : {}),
      ...(d.code ? { code: d.code } : {}),
      ...(d.hunk ? { hunk: d.hunk } : {}),
    };
  });
}

/** The UTF-16 offset of the `scalar`-th Unicode scalar value of `line` (clamped to its end). */
export function utf16Offset(line: string, scalar: number): number {
  let offset = 0;
  let seen = 0;
  for (const ch of line) {
    if (seen >= scalar) break;
    offset += ch.length;
    seen += 1;
  }
  return offset;
}
