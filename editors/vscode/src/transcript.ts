// The panel's transcript: session updates folded into entries the panel renders. Pure (no `vscode`,
// no DOM), so the extension host, the webview and the unit tests share it.

import type { ContentBlock, ModeId, PlanEntry, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolKind, Usage } from "./protocol";

export type Entry =
  | { kind: "user"; text: string; messageId?: string }
  | { kind: "assistant"; text: string }
  | { kind: "thought"; text: string }
  | { kind: "tool"; call: Required<Pick<ToolCall, "toolCallId" | "title" | "kind" | "status">> & ToolCall & { rawOutput?: unknown } }
  | { kind: "notice"; text: string; level: "info" | "error" };

export interface Transcript {
  entries: Entry[];
  plan: PlanEntry[];
  mode?: ModeId;
  usage?: Usage;
  commands: { name: string; description: string }[];
}

export function emptyTranscript(): Transcript {
  return { entries: [], plan: [], commands: [] };
}

/** What changed, so a renderer can redraw only that. */
export type Change =
  | { what: "entry"; index: number; added: boolean }
  | { what: "plan" }
  | { what: "mode" }
  | { what: "usage" }
  | { what: "commands" }
  | { what: "nothing" };

export function blockText(block: ContentBlock): string {
  switch (block.type) {
    case "text":
      return block.text;
    case "resource_link":
      return `[${block.name}](${block.uri})`;
    case "resource":
      return `\n\`\`\`\n${block.resource.text}\n\`\`\`\n`;
    case "image":
      // Markdown takes data URLs of images (and nothing else) as an image's source.
      return block.data ? `\n\n![image](data:${block.mimeType};base64,${block.data})\n\n` : "";
    default:
      return "";
  }
}

/**
 * A chunk of the person's prompt: an attachment shows by name, as the panel shows it when the
 * prompt is sent (a resumed session replays attachments as links).
 */
function userText(block: ContentBlock): string {
  if (block.type === "resource_link") return `\n\n(attached ${block.name})`;
  if (block.type === "resource") return `\n\n(attached ${block.resource.uri.replace(/\/+$/, "").split("/").pop() ?? block.resource.uri})`;
  return blockText(block);
}

/** Folds one update into the transcript (in place) and says what changed. */
export function applyUpdate(t: Transcript, update: SessionUpdate): Change {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return appendText(t, "assistant", blockText(update.content));
    case "agent_thought_chunk":
      return appendText(t, "thought", blockText(update.content));
    case "user_message_chunk":
      return appendText(t, "user", userText(update.content), update.messageId ?? undefined);
    case "tool_call": {
      const { sessionUpdate: _, ...call } = update;
      const existing = t.entries.findIndex((e) => e.kind === "tool" && e.call.toolCallId === call.toolCallId);
      const entry: Entry = {
        kind: "tool",
        call: { ...call, title: call.title ?? call.toolCallId, kind: call.kind ?? "other", status: call.status ?? "pending" },
      };
      if (existing >= 0) {
        t.entries[existing] = entry;
        return { what: "entry", index: existing, added: false };
      }
      t.entries.push(entry);
      return { what: "entry", index: t.entries.length - 1, added: true };
    }
    case "tool_call_update": {
      const index = t.entries.findIndex((e) => e.kind === "tool" && e.call.toolCallId === update.toolCallId);
      if (index < 0) {
        // An update for a call we never saw (a resumed session, a lost notification): show it anyway.
        return applyUpdate(t, {
          sessionUpdate: "tool_call",
          toolCallId: update.toolCallId,
          title: update.title ?? update.toolCallId,
          kind: update.kind ?? "other",
          status: update.status ?? "pending",
          ...(update.content ? { content: update.content } : {}),
          ...(update.locations ? { locations: update.locations } : {}),
          ...(update.rawInput !== undefined ? { rawInput: update.rawInput } : {}),
        });
      }
      const entry = t.entries[index] as Extract<Entry, { kind: "tool" }>;
      const { sessionUpdate: _, ...changes } = update;
      for (const [key, value] of Object.entries(changes)) {
        if (value !== undefined && value !== null) (entry.call as unknown as Record<string, unknown>)[key] = value;
      }
      return { what: "entry", index, added: false };
    }
    case "plan":
      t.plan = update.entries;
      return { what: "plan" };
    case "current_mode_update":
      t.mode = update.currentModeId;
      return { what: "mode" };
    case "available_commands_update":
      t.commands = update.availableCommands;
      return { what: "commands" };
    case "usage_update": {
      const { sessionUpdate: _, ...usage } = update;
      t.usage = usage;
      return { what: "usage" };
    }
    default:
      return { what: "nothing" };
  }
}

export function addNotice(t: Transcript, text: string, level: "info" | "error" = "info"): Change {
  t.entries.push({ kind: "notice", text, level });
  return { what: "entry", index: t.entries.length - 1, added: true };
}

/**
 * Appends streamed text to the last entry when it is of the same kind; a prompt's chunks join
 * only while their `messageId` is the same (a new id is the next prompt: one that got no answer,
 * a cancelled one, stays its own bubble).
 */
function appendText(t: Transcript, kind: "assistant" | "thought" | "user", text: string, messageId?: string): Change {
  const last = t.entries[t.entries.length - 1];
  if (last && last.kind === kind && (last.kind !== "user" || last.messageId === messageId)) {
    last.text += text;
    return { what: "entry", index: t.entries.length - 1, added: false };
  }
  t.entries.push(kind === "user" ? { kind, text, ...(messageId !== undefined ? { messageId } : {}) } : { kind, text });
  return { what: "entry", index: t.entries.length - 1, added: true };
}

/** The text of a tool call's content, for a card: plain text, a diff summary, or a terminal id. */
export function contentSummary(content: ToolCallContent): { kind: "text" | "diff" | "terminal"; text: string } {
  switch (content.type) {
    case "content":
      return { kind: "text", text: blockText(content.content) };
    case "diff": {
      const patch = (content.hunks ?? []).map((h) => h.patch).join("");
      return { kind: "diff", text: patch || changedRegion(content.path, content.oldText ?? null, content.newText) };
    }
    case "terminal":
      return { kind: "terminal", text: `terminal ${content.terminalId}` };
    default:
      return { kind: "text", text: "" };
  }
}

/**
 * A compact picture of a change without hunks (what was applied): the file's name, then the lines
 * between the common prefix and the common suffix, removed ones with "-", added ones with "+".
 */
export function changedRegion(path: string, oldText: string | null, newText: string, maxLines = 40): string {
  if (oldText === null) {
    const lines = newText.split("\n");
    const shown = lines.slice(0, maxLines).map((l) => `+${l}`);
    return [`${path} (new file)`, ...shown, ...(lines.length > maxLines ? [`… ${lines.length - maxLines} more lines`] : [])].join("\n");
  }
  const split = (t: string) => (t === "" ? [] : t.split("\n"));
  const a = split(oldText);
  const b = split(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  if (start === endA && start === endB) return `${path} (unchanged)`;
  const body = [...a.slice(start, endA).map((l) => `-${l}`), ...b.slice(start, endB).map((l) => `+${l}`)];
  const cut = body.length > maxLines ? [...body.slice(0, maxLines), `… ${body.length - maxLines} more lines`] : body;
  return [`@@ ${path}:${start + 1} @@`, ...cut].join("\n");
}

/** One line of a rendered diff: context, added, removed, or a hunk header. */
export interface DiffLine {
  op: " " | "+" | "-" | "@";
  text: string;
}

/** A file a tool call changed, as its card shows it: `calc.py +2 −2` and the diff. */
export interface FileChange {
  /** The path as the sidecar sent it (absolute). */
  path: string;
  /** Relative to the workspace when inside it. */
  display: string;
  added: number;
  removed: number;
  created: boolean;
  lines: DiffLine[];
}

/** `path` relative to `root` when it lies inside it (either separator), else as it is. */
export function relativePath(path: string, root: string | undefined): string {
  if (!root) return path;
  const trimmed = root.replace(/[\\/]+$/, "");
  if (path.startsWith(`${trimmed}/`) || path.startsWith(`${trimmed}\\`)) return path.slice(trimmed.length + 1);
  return path;
}

function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/**
 * A line diff of two texts (the common ends trimmed, then a longest common subsequence of what is
 * left; past `maxCells` the middle is shown as all removed then all added).
 */
export function lineDiff(oldText: string, newText: string, maxCells = 1_000_000): DiffLine[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const out: DiffLine[] = a.slice(0, start).map((text) => ({ op: " ", text }));
  const midA = a.slice(start, endA);
  const midB = b.slice(start, endB);
  const n = midA.length;
  const m = midB.length;
  if (n * m > maxCells) {
    for (const text of midA) out.push({ op: "-", text });
    for (const text of midB) out.push({ op: "+", text });
  } else {
    // lcs[i][j]: the longest common subsequence of midA[i..] and midB[j..].
    const lcs: Uint32Array[] = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
    for (let i = n - 1; i >= 0; i -= 1) {
      for (let j = m - 1; j >= 0; j -= 1) {
        lcs[i]![j] = midA[i] === midB[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n || j < m) {
      if (i < n && j < m && midA[i] === midB[j]) {
        out.push({ op: " ", text: midA[i]! });
        i += 1;
        j += 1;
      } else if (i < n && (j === m || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) {
        // Removed lines before the added ones that replace them, as unified diffs show them.
        out.push({ op: "-", text: midA[i]! });
        i += 1;
      } else {
        out.push({ op: "+", text: midB[j]! });
        j += 1;
      }
    }
  }
  for (const text of a.slice(endA)) out.push({ op: " ", text });
  return out;
}

/** The changed lines of a diff with `context` lines around them, each stretch under an `@@` header. */
export function hunksOf(lines: DiffLine[], context = 3): DiffLine[] {
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((line, i) => {
    if (line.op === " ") return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k += 1) keep[k] = true;
  });
  const out: DiffLine[] = [];
  let oldLine = 1;
  let newLine = 1;
  let inHunk = false;
  lines.forEach((line, i) => {
    if (keep[i] && !inHunk) out.push({ op: "@", text: `@@ -${oldLine} +${newLine} @@` });
    inHunk = keep[i]!;
    if (keep[i]) out.push(line);
    if (line.op !== "+") oldLine += 1;
    if (line.op !== "-") newLine += 1;
  });
  return out;
}

/** The files a tool call changed (its `diff` content: what was applied), for its card. */
export function fileChanges(contents: ToolCallContent[] | null | undefined, root: string | undefined): FileChange[] {
  const changes: FileChange[] = [];
  for (const content of contents ?? []) {
    if (content.type !== "diff") continue;
    const all = lineDiff(content.oldText ?? "", content.newText);
    changes.push({
      path: content.path,
      display: relativePath(content.path, root),
      added: all.filter((l) => l.op === "+").length,
      removed: all.filter((l) => l.op === "-").length,
      created: content.oldText === null || content.oldText === undefined,
      lines: hunksOf(all),
    });
  }
  return changes;
}

/** `calc.py +2 −2` (a real minus sign, as a diff stat). */
export function changeLabel(change: Pick<FileChange, "display" | "added" | "removed">): string {
  return `${change.display} +${change.added} \u2212${change.removed}`;
}

/** The text items of a tool call's content (what the model was told, or a command's output). */
export function textContents(contents: ToolCallContent[] | null | undefined): string[] {
  return (contents ?? []).flatMap((c) => (c.type === "content" ? [blockText(c.content)] : []));
}

/** A command's card: the command, its exit status and the tail of its output. */
export interface CommandSummary {
  command: string;
  /** `null`: it ended without an exit status (killed, timed out); `undefined`: not finished. */
  exitCode: number | null | undefined;
  timedOut: boolean;
  /** Failed: a non-zero exit, a timeout, a kill, or the call itself failed. */
  failed: boolean;
  tail: string[];
  /** Lines of output before the tail. */
  hidden: number;
}

/** What the card helpers read of a call (a `ToolCall` with the fields its updates added). */
export interface CallLike {
  kind?: ToolKind | null;
  status?: ToolCallStatus | null;
  rawInput?: unknown;
  rawOutput?: unknown;
  content?: ToolCallContent[] | null;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The command of a call (its `command` argument); `undefined` for calls that are not commands. */
export function commandSummary(call: CallLike, tailLines = 12): CommandSummary | undefined {
  const command = record(call.rawInput)?.command;
  if (call.kind !== "execute" || typeof command !== "string") return undefined;
  const metadata = record(record(call.rawOutput)?.metadata);
  const finished = call.status === "completed" || call.status === "failed";
  const raw = metadata?.exitCode;
  const exitCode = typeof raw === "number" ? raw : finished && metadata ? null : undefined;
  const timedOut = metadata?.timedOut === true;
  const failed = call.status === "failed" || (typeof exitCode === "number" && exitCode !== 0) || timedOut || exitCode === null;
  const texts = textContents(call.content);
  const output = texts.length > 0 ? texts[texts.length - 1]! : "";
  const lines = output.trim() === "(no output)" ? [] : output.replace(/\n+$/, "").split("\n");
  const tail = lines.slice(-tailLines);
  return { command, exitCode, timedOut, failed, tail, hidden: lines.length - tail.length };
}

/** The questions a `question` call asked and the answers it got (`Q: …` / `A: …` in its output). */
export function questionAnswers(call: CallLike): { question: string; answer: string }[] | undefined {
  if (!Array.isArray(record(call.rawInput)?.questions) && typeof record(call.rawInput)?.question !== "string") return undefined;
  const pairs: { question: string; answer: string }[] = [];
  for (const text of textContents(call.content)) {
    let question: string | undefined;
    for (const line of text.split("\n")) {
      if (line.startsWith("Q: ")) question = line.slice(3);
      else if (line.startsWith("A: ") && question !== undefined) {
        pairs.push({ question, answer: line.slice(3) });
        question = undefined;
      }
    }
  }
  return pairs;
}
