// "Apply to file" of an answer's code block: the change it makes to a file, cut into hunks the
// person reviews one by one (the same review as the agent's edits), and the text that results from
// the hunks they accepted. Pure: no `vscode`.

import type { HunkInfo } from "./protocol";
import { type DiffLine, lineDiff } from "./transcript";

/**
 * What applying `code` to a file proposes: the block replaces the selection; without one, the part
 * of the file it is a new version of (see `matchingRange`); failing that, the whole file.
 */
export function proposedText(fileText: string, code: string, selection?: { start: number; end: number }): string {
  const range = selection && selection.end > selection.start ? selection : matchingRange(fileText, code);
  const eol = fileText.includes("\r\n") ? "\r\n" : "\n";
  if (range) {
    const replaced = range.end > range.start && fileText[range.end - 1] === "\n" && !code.endsWith("\n") ? `${code}${eol}` : code;
    return fileText.slice(0, range.start) + replaced + fileText.slice(range.end);
  }
  // A whole file ends as it did: with a final newline when it had one.
  return fileText.endsWith("\n") && !code.endsWith("\n") ? `${code}${eol}` : code;
}

export interface Proposal {
  hunks: HunkInfo[];
  /** The text with exactly the accepted hunks applied (`undefined`: all of them). */
  apply(accepted?: readonly string[]): string;
}

/**
 * The hunks of a change from `oldText` to `newText` (ids `h1`, `h2`, … with `context` lines around
 * each; changes closer than twice that share a hunk), and how to apply a subset of them.
 */
export function propose(oldText: string, newText: string, context = 3): Proposal {
  const lines = lineDiff(oldText, newText);
  // Group the changed lines into hunks: a run of changes, with at most 2 * context unchanged lines inside.
  const groups: { from: number; to: number }[] = [];
  lines.forEach((line, i) => {
    if (line.op === " ") return;
    const last = groups[groups.length - 1];
    if (last && i - last.to <= 2 * context + 1) last.to = i;
    else groups.push({ from: i, to: i });
  });
  // Line numbers (1-based) of each diff line in the old and the new text.
  const oldAt: number[] = [];
  const newAt: number[] = [];
  let o = 1;
  let n = 1;
  for (const line of lines) {
    oldAt.push(o);
    newAt.push(n);
    if (line.op !== "+") o += 1;
    if (line.op !== "-") n += 1;
  }
  const owner = new Map<number, string>();
  const hunks: HunkInfo[] = groups.map((g, index) => {
    const id = `h${index + 1}`;
    const from = Math.max(0, g.from - context);
    const to = Math.min(lines.length - 1, g.to + context);
    for (let i = g.from; i <= g.to; i += 1) owner.set(i, id);
    const part: DiffLine[] = lines.slice(from, to + 1);
    const oldLines = part.filter((l) => l.op !== "+").length;
    const newLines = part.filter((l) => l.op !== "-").length;
    const oldStart = oldLines === 0 ? oldAt[from]! - 1 : oldAt[from]!;
    const newStart = newLines === 0 ? newAt[from]! - 1 : newAt[from]!;
    const patch = `@@ -${oldStart},${oldLines} +${newStart},${newLines} @@\n${part.map((l) => `${l.op}${l.text}\n`).join("")}`;
    return { id, oldStart, oldLines, newStart, newLines, patch };
  });
  return {
    hunks,
    apply(accepted?: readonly string[]): string {
      if (accepted === undefined) return newText;
      const take = new Set(accepted);
      if (take.size === 0) return oldText;
      if (hunks.every((h) => take.has(h.id))) return newText;
      const out: string[] = [];
      lines.forEach((line, i) => {
        const id = owner.get(i);
        const keepNew = id !== undefined && take.has(id);
        if (line.op === " " || (line.op === "+" && keepNew) || (line.op === "-" && !keepNew)) out.push(line.text);
      });
      const ending = (keepsNew: boolean) => (keepsNew ? newText : oldText).endsWith("\n");
      const lastId = owner.get(lines.length - 1);
      const text = out.join("\n");
      return text === "" ? "" : `${text}${ending(lastId !== undefined && take.has(lastId)) ? "\n" : ""}`;
    },
  };
}

const indent = (line: string) => line.length - line.trimStart().length;
const CLOSERS = /^[}\])]|^end\b|^fi\b|^done\b|^esac\b/;

/**
 * The lines of `fileText` that `code` is a new version of, as character offsets (whole lines): they
 * start at the file's line equal to the block's first line (its header: `def sub(a, b):`,
 * `fn main() {`) and end at the line equal to the block's last line within the header's block, else
 * where that block ends (the next line indented no deeper than the header, a closing bracket at its
 * depth included). `undefined` when the file has no such header line, or several.
 */
export function matchingRange(fileText: string, code: string): { start: number; end: number } | undefined {
  const lines = fileText.split("\n");
  const block = code.split("\n").filter((l, i, all) => l.trim() !== "" || (i > 0 && i < all.length - 1));
  const first = block.find((l) => l.trim() !== "")?.trim();
  const last = [...block].reverse().find((l) => l.trim() !== "")?.trim();
  if (!first || !last) return undefined;
  const starts = lines.flatMap((l, i) => (l.trim() === first ? [i] : []));
  if (starts.length !== 1) return undefined;
  const start = starts[0]!;
  const depth = indent(lines[start]!);
  // Where the header's block ends: the last line before one that is indented no deeper.
  let end = start;
  for (let i = start + 1; i < lines.length; i += 1) {
    const line = lines[i]!;
    if (line.trim() === "") continue;
    if (indent(line) > depth) {
      end = i;
      continue;
    }
    if (indent(line) === depth && CLOSERS.test(line.trim())) end = i;
    break;
  }
  for (let i = end; i > start; i -= 1) {
    if (lines[i]!.trim() === last) {
      end = i;
      break;
    }
  }
  const offset = (line: number) => lines.slice(0, line).reduce((n, l) => n + l.length + 1, 0);
  const stop = Math.min(fileText.length, offset(end + 1));
  return { start: offset(start), end: stop };
}
