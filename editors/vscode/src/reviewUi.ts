// Inline review of a proposed edit: each file opens in a diff editor (the current text on the left,
// the proposal on the right, both read-only virtual documents) with an "Accept" and a "Reject"
// CodeLens on every hunk. When every hunk is decided the permission request is answered with
// exactly the accepted hunks; closing or cancelling answers "cancelled". The request's
// diagnostics preview (what the language servers say the change would break) shows as squiggles
// on the proposed side (the "tandem-review" diagnostics), a CodeLens line at the top of each
// proposed file and a count on each hunk; they go when the review ends.

import * as vscode from "vscode";

import type { PermissionResult, RequestPermissionParams } from "./protocol";
import { type PlacedDiagnostic, counts, fileLine, fileOf, headline, inHunk, place } from "./preview";
import { Review, type ReviewHunk, anchorLine, changedLines } from "./review";

export const SCHEME = "tandem-review";

interface Pending {
  key: string;
  review: Review;
  /** The tool call under review: its result says whether the accepted hunks landed. */
  toolCallId?: string;
  resolve: (answer: PermissionResult) => void;
  /** Set once its diff editors are open; closing them all afterwards rejects what is still pending. */
  opened: boolean;
}

export class ReviewController implements vscode.Disposable, vscode.TextDocumentContentProvider, vscode.CodeLensProvider {
  /** The status bar's message about reviews (one at a time; gone when the turn ends). */
  private status: vscode.Disposable | undefined;
  /** Decided reviews whose result has not come yet: tool call id → the decision's summary. */
  private readonly decided = new Map<string, string>();
  private readonly pending = new Map<string, Pending>();
  private next = 1;
  private readonly lensChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensChanged.event;
  private readonly changed = new vscode.EventEmitter<Review | undefined>();
  /** Fires when a review starts, changes or ends (with `undefined` when none is left). */
  readonly onDidChangeReview = this.changed.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly accepted: vscode.TextEditorDecorationType;
  private readonly rejected: vscode.TextEditorDecorationType;
  /** The previews' introduced problems: on the proposed side, and on other files they break. */
  private readonly problems: vscode.DiagnosticCollection;

  constructor(private readonly log: (line: string) => void) {
    // Decided hunks look decided: accepted ones keep their colour with a ✓ bar in the gutter side,
    // rejected ones are dimmed and struck through.
    this.accepted = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      borderWidth: "0 0 0 3px",
      borderStyle: "solid",
      borderColor: new vscode.ThemeColor("testing.iconPassed"),
      // The label goes on a hunk's first changed line only (the decorations' own after text).
      after: { color: new vscode.ThemeColor("testing.iconPassed") },
    });
    this.rejected = vscode.window.createTextEditorDecorationType({
      isWholeLine: true,
      opacity: "0.45",
      textDecoration: "line-through",
      after: { color: new vscode.ThemeColor("testing.iconFailed") },
    });
    this.problems = vscode.languages.createDiagnosticCollection(SCHEME);
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(SCHEME, this),
      vscode.languages.registerCodeLensProvider({ scheme: SCHEME }, this),
      vscode.window.onDidChangeVisibleTextEditors(() => this.decorate()),
      vscode.window.tabGroups.onDidChangeTabs((e) => {
        if (e.closed.length > 0) this.closedTabs();
      }),
      this.lensChanged,
      this.changed,
      this.accepted,
      this.rejected,
      this.problems,
    );
  }

  /** The review shown in the active editor, else the oldest one open. */
  get current(): Review | undefined {
    const active = vscode.window.activeTextEditor?.document.uri;
    if (active?.scheme === SCHEME) {
      const found = this.pending.get(parse(active).key);
      if (found) return found.review;
    }
    return this.pending.values().next().value?.review;
  }

  /** Starts a review; resolves with the reply to send. `undefined` when the request has no diff. */
  start(params: RequestPermissionParams, token: vscode.CancellationToken): Promise<PermissionResult> | undefined {
    const review = Review.fromRequest(params);
    if (!review) return undefined;
    const key = `r${this.next++}`;
    return new Promise<PermissionResult>((resolve) => {
      this.pending.set(key, { key, review, resolve, opened: false, toolCallId: params.toolCall?.toolCallId });
      token.onCancellationRequested(() => this.finish(key, review.isAnswered ? undefined : review.close()));
      void vscode.commands.executeCommand("setContext", "tandem.reviewing", true);
      this.changed.fire(review);
      this.lensChanged.fire();
      this.showProblems();
      const line = headline(review.preview);
      if (line) {
        this.log(`review ${key}: ${line}`);
        this.say(`Tandem: ${line}`, 15_000);
      }
      void this.open(key, review);
    });
  }

  decide(hunkId: string | undefined, accept: boolean): void {
    const entry = this.waitingEntry(hunkId);
    if (!entry) return;
    const id = hunkId ?? this.hunkUnderCursor(entry)?.id ?? entry.review.pending[0]?.id;
    if (!id) return;
    try {
      entry.review.decide(id, accept);
    } catch (err) {
      void vscode.window.showErrorMessage(`Tandem: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    this.log(`review ${entry.key}: ${id} ${accept ? "accepted" : "rejected"} (${entry.review.summary()})`);
    this.afterDecision(entry, entry.review.hunk(id));
  }

  /**
   * Moves the cursor to another hunk of the current review: the next or previous one (across
   * files, wrapping), or the first of the next file; its diff editor comes to the front.
   */
  navigate(where: "next" | "previous" | "nextFile"): void {
    const entry = this.waitingEntry(undefined);
    if (!entry) return;
    const here = this.hunkUnderCursor(entry);
    const review = entry.review;
    const target =
      where === "nextFile" ? review.nextFile(here) : review.neighbour(here, where === "next" ? 1 : -1, false);
    if (target) void this.reveal(entry, target, true);
  }

  decideAll(accept: boolean): void {
    const entry = this.waitingEntry(undefined);
    if (!entry) return;
    entry.review.decideAll(accept);
    this.log(`review ${entry.key}: all ${accept ? "accepted" : "rejected"}`);
    this.afterDecision(entry);
  }

  /**
   * A session update: the result of a reviewed call. One that failed (the accepted hunks did not
   * land: the file changed where they are) says so in the status bar and a warning, never as
   * accepted.
   */
  onUpdate(update: { sessionUpdate: string; toolCallId?: string; status?: string | null; rawOutput?: unknown }): void {
    if (update.sessionUpdate !== "tool_call_update" || !update.toolCallId) return;
    if (update.status !== "failed" && update.status !== "completed") return;
    const summary = this.decided.get(update.toolCallId);
    if (summary === undefined) return;
    this.decided.delete(update.toolCallId);
    if (update.status === "completed") {
      this.say(`Tandem: ${summary} — applied`, 5000);
      return;
    }
    const raw = (update.rawOutput ?? {}) as { error?: unknown; conflict?: unknown };
    const reason = typeof raw.error === "string" ? raw.error : "the change could not be applied";
    this.say(`$(warning) Tandem: not applied — ${reason.split("\n")[0]}`, 30_000);
    if (raw.conflict === true || /not applied/.test(reason)) void vscode.window.showWarningMessage(`Tandem: ${reason}`);
  }

  /** The turn ended: what the status bar said of its reviews goes. */
  turnEnded(): void {
    this.status?.dispose();
    this.status = undefined;
    this.decided.clear();
  }

  private say(text: string, ms: number): void {
    this.status?.dispose();
    this.status = vscode.window.setStatusBarMessage(text, ms);
  }

  /** Ends every open review as cancelled (the turn was cancelled, the sidecar stopped). */
  cancelAll(): void {
    for (const key of [...this.pending.keys()]) {
      const entry = this.pending.get(key);
      if (entry && !entry.review.isAnswered) this.finish(key, entry.review.close());
    }
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const { key, file, side } = parse(uri);
    const entry = this.pending.get(key);
    const f = entry?.review.files[file];
    if (!f) return "";
    return side === "original" ? (f.oldText ?? "") : f.newText;
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const { key, file, side } = parse(document.uri);
    const entry = this.pending.get(key);
    const f = entry?.review.files[file];
    if (!entry || !f || side !== "proposed") return [];
    const lenses: vscode.CodeLens[] = [];
    const preview = entry.review.preview;
    const title = headline(preview);
    if (title) {
      // The whole change's line on top of every proposed file, and this file's own.
      const top = new vscode.Range(0, 0, 0, 0);
      const icon = preview?.status === "notReady" ? "$(question)" : preview?.files.some((p) => (p.introduced ?? []).length > 0) ? "$(warning)" : "$(pass)";
      lenses.push(new vscode.CodeLens(top, { title: `${icon} ${title}`, command: "workbench.actions.view.problems", tooltip: title }));
      // (With one file the headline already says all of it, a "not ready" reason included.)
      const ownLine = preview !== undefined && preview.files.length > 1 ? fileLine(fileOf(preview, f.path)) : undefined;
      if (ownLine) lenses.push(new vscode.CodeLens(top, { title: ownLine, command: "" }));
    }
    const previewed = fileOf(preview, f.path);
    for (const hunk of f.hunks) {
      const line = Math.min(anchorLine(hunk), Math.max(document.lineCount - 1, 0));
      const range = new vscode.Range(line, 0, line, 0);
      const label = hunk.wholeFile ? "whole file" : `${hunk.id} (${hunk.oldLines}→${hunk.newLines} lines)`;
      const total = entry.review.hunks.length;
      if (total > 1) {
        lenses.push(
          new vscode.CodeLens(range, {
            title: `${entry.review.position(hunk)} of ${total}`,
            command: "tandem.nextHunk",
            tooltip: "Next hunk (Ctrl+Alt+])",
          }),
        );
      }
      if (hunk.state === "pending") {
        lenses.push(
          new vscode.CodeLens(range, { title: "Accept", command: "tandem.acceptHunk", arguments: [hunk.id], tooltip: `Accept ${label}` }),
          new vscode.CodeLens(range, { title: "Reject", command: "tandem.rejectHunk", arguments: [hunk.id], tooltip: `Reject ${label}` }),
        );
      } else {
        const title = hunk.state === "accepted" ? "✓ Accepted (click to reject)" : "✗ Rejected (click to accept)";
        const command = hunk.state === "accepted" ? "tandem.rejectHunk" : "tandem.acceptHunk";
        lenses.push(new vscode.CodeLens(range, { title, command, arguments: [hunk.id] }));
      }
      const problems = inHunk(previewed, hunk.id);
      if (problems.length > 0) {
        const first = problems[0]!.message.split("\n")[0];
        lenses.push(
          new vscode.CodeLens(range, {
            title: `$(warning) ${counts(problems, "new")}: ${first}${problems.length > 1 ? " …" : ""}`,
            command: "workbench.actions.view.problems",
            tooltip: problems.map((d) => `${d.severity} line ${d.line}: ${d.message}`).join("\n"),
          }),
        );
      }
    }
    return lenses;
  }

  dispose(): void {
    this.cancelAll();
    for (const d of this.disposables) d.dispose();
  }

  /** The review a command acts on; says so when there is none. */
  private waitingEntry(hunkId: string | undefined): Pending | undefined {
    const entry = this.entryFor(hunkId);
    if (!entry) void vscode.window.showInformationMessage("Tandem: no change is waiting for review.");
    return entry;
  }

  private entryFor(hunkId: string | undefined): Pending | undefined {
    if (hunkId !== undefined) {
      for (const entry of this.pending.values()) {
        if (entry.review.hunks.some((h) => h.id === hunkId)) return entry;
      }
      return undefined;
    }
    const current = this.current;
    return [...this.pending.values()].find((e) => e.review === current);
  }

  private hunkUnderCursor(entry: Pending): ReviewHunk | undefined {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== SCHEME) return undefined;
    const { key, file } = parse(editor.document.uri);
    if (key !== entry.key) return undefined;
    const path = entry.review.files[file]?.path;
    return path === undefined ? undefined : entry.review.hunkAt(path, editor.selection.active.line);
  }

  private afterDecision(entry: Pending, decided?: ReviewHunk): void {
    this.changed.fire(entry.review);
    if (entry.review.complete) {
      const answer = entry.review.answer();
      const summary = entry.review.summary();
      // Said as decided, not as done: the change's result says whether it landed.
      this.say(`Tandem: ${summary}${entry.review.hunks.some((h) => h.state === "accepted") ? " — applying" : ""}`, 5000);
      if (entry.toolCallId) this.decided.set(entry.toolCallId, summary);
      this.finish(entry.key, answer);
    } else {
      this.lensChanged.fire();
      this.decorate();
      this.say(`Tandem: ${entry.review.summary()}`, 5000);
      // On to the next undecided hunk, in this file or the next.
      const here = decided ?? this.hunkUnderCursor(entry);
      const next = entry.review.neighbour(here, 1, true);
      if (next) void this.reveal(entry, next, false);
    }
  }

  /** Brings `hunk`'s diff editor to the front with the cursor on its first changed line. */
  private async reveal(entry: Pending, hunk: ReviewHunk, focus: boolean): Promise<void> {
    const index = entry.review.files.findIndex((f) => f.hunks.includes(hunk));
    const file = entry.review.files[index];
    if (!file) return;
    const line = anchorLine(hunk);
    const at = new vscode.Range(line, 0, line, 0);
    try {
      await vscode.commands.executeCommand(
        "vscode.diff",
        reviewUri(entry.key, index, "original", file.path),
        reviewUri(entry.key, index, "proposed", file.path),
        titleOf(file),
        { preview: false, preserveFocus: !focus, selection: at },
      );
      const editor = vscode.window.visibleTextEditors.find(
        (e) => e.document.uri.toString() === reviewUri(entry.key, index, "proposed", file.path).toString(),
      );
      if (editor) {
        editor.selection = new vscode.Selection(at.start, at.start);
        editor.revealRange(at, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
      }
    } catch (err) {
      this.log(`could not show ${hunk.id} of ${file.path}: ${err}`);
    }
  }

  private finish(key: string, answer: PermissionResult | undefined): void {
    const entry = this.pending.get(key);
    if (!entry) return;
    this.pending.delete(key);
    if (answer) entry.resolve(answer);
    this.showProblems();
    void this.closeEditors(key);
    void vscode.commands.executeCommand("setContext", "tandem.reviewing", this.pending.size > 0);
    this.lensChanged.fire();
    this.changed.fire(this.current);
  }

  /** Every diff editor of a review was closed by the person: the undecided hunks count as rejected. */
  private closedTabs(): void {
    const open = new Set(this.reviewTabs().map(({ key }) => key));
    for (const entry of [...this.pending.values()]) {
      if (!entry.opened || open.has(entry.key) || entry.review.isAnswered) continue;
      for (const hunk of entry.review.pending) entry.review.decide(hunk.id, false);
      this.log(`review ${entry.key}: closed, undecided hunks rejected (${entry.review.summary()})`);
      this.afterDecision(entry);
    }
  }

  /** The open diff editors of reviews, with the key of the review each belongs to. */
  private reviewTabs(): { tab: vscode.Tab; key: string }[] {
    return vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .flatMap((tab) =>
        tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === SCHEME
          ? [{ tab, key: parse(tab.input.modified).key }]
          : [],
      );
  }

  private async open(key: string, review: Review): Promise<void> {
    for (const [index, file] of review.files.entries()) {
      const original = reviewUri(key, index, "original", file.path);
      const proposed = reviewUri(key, index, "proposed", file.path);
      const title = titleOf(file);
      try {
        await vscode.commands.executeCommand("vscode.diff", original, proposed, title, {
          preview: false,
          preserveFocus: true,
        });
      } catch (err) {
        this.log(`could not open the review of ${file.path}: ${err}`);
      }
    }
    const entry = this.pending.get(key);
    if (entry) entry.opened = this.reviewTabs().some((t) => t.key === key);
    this.decorate();
    // The first file with an undecided hunk in front, at that hunk.
    const first = review.neighbour(undefined, 1, true);
    if (entry && first) await this.reveal(entry, first, false);
  }

  private async closeEditors(key: string): Promise<void> {
    const mine = this.reviewTabs()
      .filter((t) => t.key === key)
      .map((t) => t.tab);
    if (mine.length > 0) await vscode.window.tabGroups.close(mine, true);
  }

  /**
   * Sets the "tandem-review" diagnostics from the previews of the open reviews (none left: none):
   * the introduced problems of each reviewed file on its proposed side, and those of other files
   * the change would break on those files.
   */
  private showProblems(): void {
    const byUri = new Map<string, { uri: vscode.Uri; diagnostics: vscode.Diagnostic[] }>();
    const add = (uri: vscode.Uri, placed: PlacedDiagnostic[], server: string | null | undefined, note: string) => {
      const slot = byUri.get(uri.toString()) ?? { uri, diagnostics: [] };
      byUri.set(uri.toString(), slot);
      for (const p of placed) {
        const d = new vscode.Diagnostic(
          new vscode.Range(p.line, p.character, p.endLine, p.endCharacter),
          `${p.message}${note}`,
          p.severity === "error" ? vscode.DiagnosticSeverity.Error : vscode.DiagnosticSeverity.Warning,
        );
        d.source = `${p.source ?? server ?? "preview"} (Tandem preview)`;
        if (p.code) d.code = p.code;
        slot.diagnostics.push(d);
      }
    };
    for (const entry of this.pending.values()) {
      const preview = entry.review.preview;
      if (!preview) continue;
      const reviewed = new Set<string>();
      for (const [index, file] of entry.review.files.entries()) {
        const own = fileOf(preview, file.path);
        reviewed.add(file.path);
        if (!own) continue;
        if (own.path !== file.path) reviewed.add(own.path);
        add(reviewUri(entry.key, index, "proposed", file.path), place(own.introduced ?? [], file.newText), own.server, "");
      }
      for (const other of preview.files) {
        if (reviewed.has(other.path) || (other.introduced ?? []).length === 0) continue;
        const uri = vscode.Uri.file(other.path);
        const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
        add(uri, place(other.introduced ?? [], open?.getText()), other.server, ` (if ${entry.review.title} is accepted)`);
      }
    }
    this.problems.clear();
    for (const { uri, diagnostics } of byUri.values()) this.problems.set(uri, diagnostics);
  }

  /** Dims the proposed lines of hunks already decided. */
  private decorate(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      if (editor.document.uri.scheme !== SCHEME) continue;
      const { key, file, side } = parse(editor.document.uri);
      const f = this.pending.get(key)?.review.files[file];
      if (!f || side !== "proposed") continue;
      // Only the lines a hunk adds or changes (never its context), the label on the first.
      const lines = (state: string, label: string): vscode.DecorationOptions[] =>
        f.hunks
          .filter((h) => h.state === state)
          .flatMap((h) =>
            changedLines(h).map((line, i) => ({
              range: new vscode.Range(line, 0, line, 0),
              ...(i === 0 ? { renderOptions: { after: { contentText: label } } } : {}),
            })),
          );
      editor.setDecorations(this.accepted, lines("accepted", "  ✓ accepted"));
      editor.setDecorations(this.rejected, lines("rejected", "  ✗ rejected"));
    }
  }
}

/** The diff editor's title of a reviewed file. */
function titleOf(file: { path: string; oldText: string | null }): string {
  const name = file.path.split(/[\\/]/).pop() ?? file.path;
  return `${name} ← Tandem (${file.oldText === null ? "new file" : "proposed"})`;
}

function reviewUri(key: string, file: number, side: "original" | "proposed", path: string): vscode.Uri {
  // The file's own name at the end keeps its language (syntax colouring) in the diff editor.
  const name = path.split(/[\\/]/).pop() ?? "file";
  return vscode.Uri.from({ scheme: SCHEME, path: `/${key}/${file}/${side}/${name}`, query: path });
}

function parse(uri: vscode.Uri): { key: string; file: number; side: string } {
  const [, key = "", file = "-1", side = ""] = uri.path.split("/");
  return { key, file: Number(file), side };
}
