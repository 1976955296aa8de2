// The panel's transcript: session updates folded into entries the panel renders. Pure (no `vscode`,
// no DOM), so the extension host, the webview and the unit tests share it.

import type { ContentBlock, ModeId, PlanEntry, SessionUpdate, ToolCall, ToolCallContent, Usage } from "./protocol";

export type Entry =
  | { kind: "user"; text: string }
  | { kind: "assistant"; text: string }
  | { kind: "thought"; text: string }
  | { kind: "tool"; call: Required<Pick<ToolCall, "toolCallId" | "title" | "kind" | "status">> & ToolCall }
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
    default:
      return "";
  }
}

/** Folds one update into the transcript (in place) and says what changed. */
export function applyUpdate(t: Transcript, update: SessionUpdate): Change {
  switch (update.sessionUpdate) {
    case "agent_message_chunk":
      return appendText(t, "assistant", blockText(update.content));
    case "agent_thought_chunk":
      return appendText(t, "thought", blockText(update.content));
    case "user_message_chunk":
      return appendText(t, "user", blockText(update.content));
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

function appendText(t: Transcript, kind: "assistant" | "thought" | "user", text: string): Change {
  const last = t.entries[t.entries.length - 1];
  if (last && last.kind === kind) {
    last.text += text;
    return { what: "entry", index: t.entries.length - 1, added: false };
  }
  t.entries.push({ kind, text });
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
