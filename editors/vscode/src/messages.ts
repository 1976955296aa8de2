// Messages between the panel (webview) and the extension. Everything the webview sends is checked
// before the extension acts on it: the webview is a browser page, its messages are untrusted input.

import type { ModelChoices } from "./models";
import type { ModeId, SessionInfo, SessionUpdate, StopReason } from "./protocol";
import { isMode } from "./protocol";
import { webUrl } from "./mentionSyntax";
import type { SlashCommand } from "./slash";
import { IMAGE_TYPES, isImageData } from "./images";

/** Something `@` in the prompt can name. */
export interface Mention {
  kind: "file" | "folder" | "problems" | "selection" | "terminal" | "url" | "symbol";
  /**
   * A workspace-relative path (a folder's ends with "/"), `problems` / `selection` / `terminal`,
   * a web address (`https://…`), or a symbol's name.
   */
  label: string;
  detail?: string;
  /** A symbol's definition: where its name is (kind `symbol`). */
  symbol?: SymbolTarget;
}

/** Where a symbol `@` names is: its file (workspace-relative) and 1-based lines. */
export interface SymbolTarget {
  name: string;
  kind: string;
  path: string;
  line: number;
  /** The last line of the range the language server gave. */
  endLine?: number;
}

const MENTION_KINDS = ["file", "folder", "problems", "selection", "terminal", "url", "symbol"] as const;

/** Extension → panel. */
export type ToPanel =
  | { type: "reset"; sessionId?: string }
  | { type: "update"; update: SessionUpdate }
  | { type: "notice"; text: string; level: "info" | "error" }
  | { type: "turn"; running: boolean; stopReason?: StopReason }
  | { type: "mode"; mode: ModeId }
  | { type: "status"; state: "starting" | "ready" | "stopped" | "error"; detail?: string }
  | { type: "models"; models: ModelChoices }
  | { type: "sessions"; sessions: SessionInfo[] }
  | { type: "review"; pending: boolean; summary?: string; diagnostics?: string; diagnosticsStatus?: string }
  | { type: "attachments"; labels: string[]; thumbnails?: Record<string, string> }
  | { type: "mentions"; query: string; items: Mention[] }
  | { type: "commands"; commands: SlashCommand[] }
  /** The prompts waiting for the running turn's end, in the order they go. */
  | { type: "queue"; items: QueuedPrompt[] };

/** A prompt sent during a turn: it goes when the turn ends (the panel lists it, cancellable). */
export interface QueuedPrompt {
  id: number;
  text: string;
  /** What goes with it (the chips the person had added). */
  attachments: string[];
}

/** Panel → extension. */
export type FromPanel =
  | { type: "ready" }
  | { type: "prompt"; text: string }
  | { type: "cancel" }
  | { type: "setMode"; mode: ModeId }
  | { type: "setModel"; model: string }
  | { type: "newSession" }
  | { type: "listSessions" }
  | { type: "loadSession"; sessionId: string }
  | { type: "restoreTurn"; turn: number }
  | { type: "reviewAll"; accept: boolean }
  | { type: "openFile"; path: string; line?: number }
  | { type: "openChange"; toolCallId: string; path: string }
  | { type: "copyCode"; text: string }
  | { type: "insertCode"; text: string }
  | { type: "applyCode"; text: string }
  | { type: "clearAttachments" }
  | { type: "attachImage"; name: string; mimeType: string; data: string }
  | { type: "mentionQuery"; query: string }
  | { type: "mention"; mention: Mention }
  | { type: "listCommands" }
  | { type: "dequeue"; id: number };

/** The longest prompt the panel may send (a paste of a whole file is fine; a runaway script is not). */
export const MAX_PROMPT_CHARS = 1_000_000;

/** A symbol mention's target as the panel sent it back; `undefined` when malformed. */
function parseSymbolTarget(raw: unknown): SymbolTarget | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const s = raw as Record<string, unknown>;
  const text = (v: unknown, max: number): v is string => typeof v === "string" && v !== "" && v.length <= max;
  const line = (v: unknown): v is number => typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 10_000_000;
  if (!text(s.name, 500) || !text(s.kind, 50) || !text(s.path, 4096) || !line(s.line)) return undefined;
  if (s.endLine !== undefined && !(line(s.endLine) && s.endLine >= s.line)) return undefined;
  return { name: s.name, kind: s.kind, path: s.path, line: s.line, ...(s.endLine !== undefined ? { endLine: s.endLine as number } : {}) };
}

/** Parses a panel message; `undefined` for anything malformed. */
export function parseFromPanel(raw: unknown): FromPanel | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case "ready":
    case "listCommands":
    case "cancel":
    case "newSession":
    case "listSessions":
    case "clearAttachments":
      return { type: m.type };
    case "prompt":
      if (typeof m.text !== "string" || m.text.trim() === "" || m.text.length > MAX_PROMPT_CHARS) return undefined;
      return { type: "prompt", text: m.text };
    case "setMode":
      return isMode(m.mode) ? { type: "setMode", mode: m.mode } : undefined;
    case "setModel":
      // A model's name as the provider lists it (`gpt-4o-mini`, `qwen2.5-coder:7b`, `org/model`).
      // eslint-disable-next-line no-control-regex -- control characters are what it refuses
      return typeof m.model === "string" && m.model.trim() !== "" && /^[^\x00-\x1f\x7f]{1,300}$/.test(m.model)
        ? { type: "setModel", model: m.model }
        : undefined;
    case "dequeue":
      return Number.isInteger(m.id) && (m.id as number) >= 1 ? { type: "dequeue", id: m.id as number } : undefined;
    case "restoreTurn":
      return Number.isInteger(m.turn) && (m.turn as number) >= 1 && (m.turn as number) <= 1_000_000
        ? { type: "restoreTurn", turn: m.turn as number }
        : undefined;
    case "loadSession":
      return typeof m.sessionId === "string" && /^[\w.-]{1,200}$/.test(m.sessionId)
        ? { type: "loadSession", sessionId: m.sessionId }
        : undefined;
    case "reviewAll":
      return typeof m.accept === "boolean" ? { type: "reviewAll", accept: m.accept } : undefined;
    case "openFile":
      if (typeof m.path !== "string" || m.path === "") return undefined;
      return {
        type: "openFile",
        path: m.path,
        ...(typeof m.line === "number" && Number.isInteger(m.line) && m.line >= 0 ? { line: m.line } : {}),
      };
    case "attachImage":
      // A screenshot pasted or dropped into the panel: an image type, base64 within the size limit.
      if (typeof m.mimeType !== "string" || !IMAGE_TYPES.includes(m.mimeType) || !isImageData(m.data)) return undefined;
      return {
        type: "attachImage",
        name: typeof m.name === "string" && m.name.trim() !== "" ? m.name.slice(0, 200) : "pasted image",
        mimeType: m.mimeType,
        data: m.data,
      };
    case "mentionQuery":
      return typeof m.query === "string" && m.query.length <= 500 ? { type: "mentionQuery", query: m.query } : undefined;
    case "mention": {
      const mention = m.mention as Record<string, unknown> | null;
      if (typeof mention !== "object" || mention === null) return undefined;
      if (!(MENTION_KINDS as readonly unknown[]).includes(mention.kind)) return undefined;
      if (typeof mention.label !== "string" || mention.label === "" || mention.label.length > 4096) return undefined;
      const kind = mention.kind as Mention["kind"];
      if (kind === "url" && webUrl(mention.label) !== mention.label) return undefined;
      if (kind !== "symbol") return { type: "mention", mention: { kind, label: mention.label } };
      const symbol = parseSymbolTarget(mention.symbol);
      return symbol ? { type: "mention", mention: { kind, label: mention.label, symbol } } : undefined;
    }
    case "openChange":
      if (typeof m.toolCallId !== "string" || m.toolCallId === "" || m.toolCallId.length > 200) return undefined;
      if (typeof m.path !== "string" || m.path === "" || m.path.length > 4096) return undefined;
      return { type: "openChange", toolCallId: m.toolCallId, path: m.path };
    case "copyCode":
    case "insertCode":
    case "applyCode":
      // A code block of an answer: any text, within the prompt's size limit.
      if (typeof m.text !== "string" || m.text.length > MAX_PROMPT_CHARS) return undefined;
      return { type: m.type, text: m.text };
    default:
      return undefined;
  }
}
