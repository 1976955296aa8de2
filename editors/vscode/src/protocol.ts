// The sidecar's wire types as the extension uses them. The types themselves are generated from the
// protocol's JSON Schema (server/protocol/schema/protocol.schema.json) into protocol.generated.ts,
// so they cannot drift from what the server sends; this file adds the method names, the mode list
// and the names the extension's code reads best with.

import type {
  AskQuestion,
  ModeId,
  RequestPermissionResult,
  SessionUpdate,
  ToolCallStatus,
} from "./protocol.generated";

export type {
  AskUserParams,
  AskUserResult,
  CheckpointInfo,
  ConfigChoice,
  ConfigOption,
  ContentBlock,
  DiagnosticsPreview,
  FileDiagnosticsPreview,
  HunkInfo,
  ModeId,
  PermissionOption,
  PlanEntry,
  PreviewDiagnostic,
  PreviewStatus,
  RequestPermissionParams,
  SessionCheckpointFileResult,
  SessionCheckpointsResult,
  SessionCompactResult,
  SessionConfigOptionsResult,
  SessionInfo,
  SessionNewResult,
  SessionNotification,
  SessionRestoreResult,
  SessionUpdate,
  StopReason,
  ToolCall,
  ToolCallContent,
  ToolCallStatus,
  ToolCallUpdate,
  ToolKind,
  ToolResult,
  Usage,
} from "./protocol.generated";

export type ToolStatus = ToolCallStatus;
export type PermissionResult = RequestPermissionResult;
export type AskUserQuestion = AskQuestion;
/** The `sessionUpdate` kinds. */
export type SessionUpdateKind = SessionUpdate["sessionUpdate"];

export const Methods = {
  sessionNew: "tandem/session/new",
  sessionPrompt: "tandem/session/prompt",
  sessionCancel: "tandem/session/cancel",
  sessionSetMode: "tandem/session/setMode",
  sessionList: "tandem/session/list",
  sessionLoad: "tandem/session/load",
  sessionCheckpoints: "tandem/session/checkpoints",
  sessionRestore: "tandem/session/restore",
  sessionCheckpointFile: "tandem/session/checkpointFile",
  sessionCompact: "tandem/session/compact",
  commandsList: "tandem/commands/list",
  worktreeList: "tandem/worktree/list",
  worktreeReview: "tandem/worktree/review",
  sessionConfigOptions: "tandem/session/configOptions",
  sessionSetConfigOption: "tandem/session/setConfigOption",
  sessionUpdate: "tandem/session/update",
  requestPermission: "tandem/session/requestPermission",
  askUser: "tandem/session/askUser",
  documentSave: "tandem/document/save",
} as const;

export const MODES = ["default", "auto-edit", "plan", "yolo"] as const satisfies readonly ModeId[];
// Every mode of the schema is in MODES (a mode added to the protocol fails to compile here).
const everyMode: Exclude<ModeId, (typeof MODES)[number]> extends never ? true : never = true;
void everyMode;

export function isMode(value: unknown): value is ModeId {
  return typeof value === "string" && (MODES as readonly string[]).includes(value);
}
