// The bookkeeping of one `tandem/session/requestPermission` for edits: which hunks of which files
// are pending, accepted or rejected, and the reply once every hunk is decided. Pure: no `vscode`.

import type { DiagnosticsPreview, HunkInfo, PermissionOption, PermissionResult, RequestPermissionParams, ToolCallContent } from "./protocol";

export type HunkState = "pending" | "accepted" | "rejected";

/** One hunk under review; the line numbers are the 1-based ones of the unified diff. */
export interface ReviewHunk extends HunkInfo {
  state: HunkState;
  /** A stand-in for a file without hunks (a move or an empty file): its decision is all or nothing. */
  wholeFile: boolean;
}

export interface ReviewFile {
  path: string;
  oldText: string | null;
  newText: string;
  hunks: ReviewHunk[];
}

/** The reply that ends a review. */
export type ReviewAnswer = PermissionResult;

export class ReviewError extends Error {}

export class Review {
  private answered = false;

  private constructor(
    readonly sessionId: string,
    readonly toolCallId: string,
    readonly title: string,
    readonly files: ReviewFile[],
    readonly options: PermissionOption[],
    /** What the language servers say the whole change would do (absent when none serves its files). */
    readonly preview?: DiagnosticsPreview,
  ) {}

  /** The review of a permission request, or `undefined` when it carries no diff (a command, a plan). */
  static fromRequest(params: RequestPermissionParams): Review | undefined {
    const diffs = (params.toolCall.content ?? []).filter(
      (c): c is Extract<ToolCallContent, { type: "diff" }> => c.type === "diff",
    );
    if (diffs.length === 0) return undefined;
    const files = diffs.map((d, index) => {
      const hunks: ReviewHunk[] = (d.hunks ?? []).map((h) => ({ ...h, state: "pending", wholeFile: false }));
      if (hunks.length === 0) {
        const lines = lineCount(d.newText);
        hunks.push({
          id: `file${index + 1}`,
          oldStart: 1,
          oldLines: lineCount(d.oldText ?? ""),
          newStart: 1,
          newLines: lines,
          patch: "",
          state: "pending",
          wholeFile: true,
        });
      }
      return { path: d.path, oldText: d.oldText ?? null, newText: d.newText, hunks };
    });
    const ids = new Set<string>();
    for (const h of files.flatMap((f) => f.hunks)) {
      if (ids.has(h.id)) throw new ReviewError(`hunk id ${h.id} appears twice in the request`);
      ids.add(h.id);
    }
    return new Review(
      params.sessionId,
      params.toolCall.toolCallId,
      params.toolCall.title ?? "Edit",
      files,
      params.options,
      params.diagnostics ?? undefined,
    );
  }

  get hunks(): ReviewHunk[] {
    return this.files.flatMap((f) => f.hunks);
  }

  get pending(): ReviewHunk[] {
    return this.hunks.filter((h) => h.state === "pending");
  }

  get complete(): boolean {
    return this.pending.length === 0;
  }

  get isAnswered(): boolean {
    return this.answered;
  }

  hunk(id: string): ReviewHunk {
    const hunk = this.hunks.find((h) => h.id === id);
    if (!hunk) throw new ReviewError(`no hunk ${id} in this review (hunks: ${this.hunks.map((h) => h.id).join(", ")})`);
    return hunk;
  }

  fileOf(id: string): ReviewFile {
    const file = this.files.find((f) => f.hunks.some((h) => h.id === id));
    if (!file) throw new ReviewError(`no hunk ${id} in this review`);
    return file;
  }

  /** Records a decision; a decision may change until the review is answered. */
  decide(id: string, accept: boolean): void {
    if (this.answered) throw new ReviewError("this review has already been answered");
    const hunk = this.hunk(id);
    const state: HunkState = accept ? "accepted" : "rejected";
    if (hunk.wholeFile) {
      // A file without hunks cannot be applied in part: its answer is everyone's answer.
      for (const h of this.hunks) h.state = state;
      return;
    }
    hunk.state = state;
  }

  decideAll(accept: boolean): void {
    if (this.answered) throw new ReviewError("this review has already been answered");
    for (const h of this.hunks) h.state = accept ? "accepted" : "rejected";
  }

  /** The hunk whose lines in the proposed text cover `line` (0-based), else the nearest one below it. */
  hunkAt(path: string, line: number): ReviewHunk | undefined {
    const file = this.files.find((f) => f.path === path);
    if (!file) return undefined;
    let best: ReviewHunk | undefined;
    for (const h of file.hunks) {
      const start = anchorLine(h);
      const end = start + Math.max(h.newLines, 1) - 1;
      if (line >= start && line <= end) return h;
      if (!best && start > line) best = h;
    }
    return best ?? file.hunks[file.hunks.length - 1];
  }

  /** 1-based place of `hunk` among every hunk of the review ("2 of 5"). */
  position(hunk: ReviewHunk): number {
    return this.hunks.indexOf(hunk) + 1;
  }

  /**
   * The hunk `step` places after (1) or before (-1) `from` across files, wrapping around; with
   * `pendingOnly`, the nearest undecided one that way (none left: `undefined`). Without `from`,
   * the first (or last) such hunk.
   */
  neighbour(from: ReviewHunk | undefined, step: 1 | -1, pendingOnly: boolean): ReviewHunk | undefined {
    const all = this.hunks;
    const n = all.length;
    const start = from ? all.indexOf(from) : step === 1 ? -1 : n;
    for (let i = 1; i <= n; i++) {
      const hunk = all[(((start + step * i) % n) + n) % n];
      if (hunk && (!pendingOnly || hunk.state === "pending")) return hunk;
    }
    return undefined;
  }

  /** The first hunk of the file after `from`'s (wrapping), preferring one still pending there. */
  nextFile(from: ReviewHunk | undefined): ReviewHunk | undefined {
    const files = this.files.filter((f) => f.hunks.length > 0);
    const at = from ? files.findIndex((f) => f.hunks.includes(from)) : -1;
    const file = files[(at + 1) % Math.max(files.length, 1)];
    return file?.hunks.find((h) => h.state === "pending") ?? file?.hunks[0];
  }

  /** The reply; throws while hunks are pending. */
  answer(): ReviewAnswer {
    if (!this.complete) throw new ReviewError(`${this.pending.length} hunk(s) still pending`);
    this.answered = true;
    const accepted = this.hunks.filter((h) => h.state === "accepted");
    if (accepted.length === 0) {
      return { outcome: { outcome: "selected", optionId: this.optionId("reject_once"), message: "The person rejected every hunk." } };
    }
    const real = accepted.filter((h) => !h.wholeFile).map((h) => h.id);
    const all = accepted.length === this.hunks.length;
    return {
      outcome: {
        outcome: "selected",
        optionId: this.optionId("allow_once"),
        ...(all ? {} : { acceptedHunks: real }),
      },
    };
  }

  /** "Always allow edits": accepts everything and asks the session not to ask again. */
  answerAlways(): ReviewAnswer {
    this.decideAll(true);
    this.answered = true;
    return { outcome: { outcome: "selected", optionId: this.optionId("allow_always") } };
  }

  /** Marks the review answered without a decision (the turn was cancelled, the editor closed it). */
  close(): ReviewAnswer {
    this.answered = true;
    return { outcome: { outcome: "cancelled" } };
  }

  summary(): string {
    const count = (s: HunkState) => this.hunks.filter((h) => h.state === s).length;
    const n = this.hunks.length;
    return `${n} hunk${n === 1 ? "" : "s"}: ${count("accepted")} accepted, ${count("rejected")} rejected, ${count("pending")} pending`;
  }

  private optionId(kind: string): string {
    return this.options.find((o) => o.kind === kind)?.optionId ?? kind;
  }
}

/** The 0-based line of the proposed text where a hunk's lens sits: its first changed line. */
export function anchorLine(h: Pick<ReviewHunk, "newStart" | "newLines"> & { patch?: string }): number {
  // A pure deletion (`+n,0`) names the line before the removed lines; the lens goes after it.
  const start = Math.max(h.newLines === 0 ? h.newStart : h.newStart - 1, 0);
  if (!h.patch || h.newLines === 0) return start;
  // Skip the leading context lines (" ") of the patch.
  let context = 0;
  for (const line of h.patch.split("\n").slice(1)) {
    if (line.startsWith(" ")) context += 1;
    else break;
  }
  return Math.min(start + context, start + Math.max(h.newLines - 1, 0));
}

/**
 * The lines (0-based, of the proposed text) a hunk adds or changes: where a decided hunk's mark
 * goes, never on its context lines. A whole-file stand-in (no patch) covers its lines; a pure
 * deletion has none (its CodeLens says the decision).
 */
export function changedLines(h: Pick<ReviewHunk, "newStart" | "newLines" | "patch">): number[] {
  if (!h.patch) return Array.from({ length: h.newLines }, (_, i) => h.newStart - 1 + i);
  const lines: number[] = [];
  // `+n,0` names the line before the (empty) new range; otherwise the range starts at newStart.
  let line = h.newLines === 0 ? h.newStart : h.newStart - 1;
  for (const text of h.patch.split("\n").slice(1)) {
    if (text.startsWith("+")) lines.push(line++);
    else if (text.startsWith(" ")) line += 1;
  }
  return lines;
}

export function lineCount(text: string): number {
  if (text.length === 0) return 0;
  const n = text.split("\n").length;
  return text.endsWith("\n") ? n - 1 : n;
}
