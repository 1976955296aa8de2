// The sidecar's wire types the extension uses (the Rust source of truth is server/protocol, its
// JSON Schema server/protocol/schema/protocol.schema.json; the methods are listed in the README).

export const Methods = {
  sessionNew: "tandem/session/new",
  sessionPrompt: "tandem/session/prompt",
  sessionCancel: "tandem/session/cancel",
  sessionSetMode: "tandem/session/setMode",
  sessionList: "tandem/session/list",
  sessionLoad: "tandem/session/load",
  sessionUpdate: "tandem/session/update",
  requestPermission: "tandem/session/requestPermission",
  askUser: "tandem/session/askUser",
  documentSave: "tandem/document/save",
} as const;

export const MODES = ["default", "auto-edit", "plan", "yolo"] as const;
export type ModeId = (typeof MODES)[number];

export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "resource_link"; uri: string; name: string; mimeType?: string }
  | { type: "resource"; resource: { uri: string; text: string; mimeType?: string } };

export interface HunkInfo {
  id: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  patch: string;
}

export type ToolCallContent =
  | { type: "content"; content: ContentBlock }
  | { type: "diff"; path: string; oldText: string | null; newText: string; hunks?: HunkInfo[] }
  | { type: "terminal"; terminalId: string };

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

export interface ToolCall {
  toolCallId: string;
  title?: string;
  kind?: string;
  status?: ToolStatus;
  content?: ToolCallContent[];
  locations?: { path: string; line?: number }[];
  rawInput?: unknown;
  rawOutput?: unknown;
}

export interface PlanEntry {
  content: string;
  status: "pending" | "in_progress" | "completed";
  priority?: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export type SessionUpdate =
  | { sessionUpdate: "agent_message_chunk"; content: ContentBlock }
  | { sessionUpdate: "agent_thought_chunk"; content: ContentBlock }
  | { sessionUpdate: "user_message_chunk"; content: ContentBlock }
  | ({ sessionUpdate: "tool_call" } & ToolCall)
  | ({ sessionUpdate: "tool_call_update" } & ToolCall)
  | { sessionUpdate: "plan"; entries: PlanEntry[] }
  | { sessionUpdate: "current_mode_update"; currentModeId: ModeId }
  | { sessionUpdate: "available_commands_update"; availableCommands: { name: string; description: string }[] }
  | ({ sessionUpdate: "usage_update" } & Usage);

export interface SessionNotification {
  sessionId: string;
  update: SessionUpdate;
}

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always" | string;
}

export interface RequestPermissionParams {
  sessionId: string;
  toolCall: ToolCall;
  options: PermissionOption[];
}

export type PermissionResult =
  | {
      outcome: { outcome: "selected"; optionId: string; acceptedHunks?: string[]; message?: string };
    }
  | { outcome: { outcome: "cancelled" } };

export interface AskUserQuestion {
  question: string;
  header?: string;
  options?: { label: string; description?: string }[];
  multiSelect?: boolean;
}

export interface AskUserParams {
  sessionId: string;
  questions: AskUserQuestion[];
}

export type AskUserResult = { answers: string[][] } | { cancelled: true };

export interface SessionNewResult {
  sessionId: string;
  modes: { current: ModeId; available: { id: ModeId; name: string; description: string }[] };
  model?: string;
}

export interface SessionInfo {
  sessionId: string;
  cwd: string;
  title?: string;
  updatedAt?: string;
}

export type StopReason = "end_turn" | "cancelled" | "max_turns" | "refusal" | "error" | string;

export function isMode(value: unknown): value is ModeId {
  return typeof value === "string" && (MODES as readonly string[]).includes(value);
}
