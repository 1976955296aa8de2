// Generated from server/protocol/schema/protocol.schema.json by server/protocol/tests/client_types.rs.
// Do not edit: regenerate with `UPDATE_EXPECT=1 cargo test -p tandem-protocol`.

/** A choice. */
export type AskOption = {
  /** What it means. */
  description?: string;
  /** Label, returned as the answer. */
  label: string;
};

/** One question. */
export type AskQuestion = {
  /** A short label for it. */
  header?: string;
  /** Whether several options may be chosen. */
  multiSelect?: boolean;
  /** Choices; empty for a free-form answer (the answer is then the typed text). */
  options?: AskOption[];
  /** The question. */
  question: string;
};

/** `tandem/session/askUser` params: questions for the person. */
export type AskUserParams = {
  /** The questions (1-4). */
  questions: AskQuestion[];
  /** Session. */
  sessionId: string;
};

/** `tandem/session/askUser` result: `answers` (one list of labels per question) or `cancelled`. */
export type AskUserResult = {
  /** One list of chosen labels (or the typed text) per question. */
  answers?: string[][] | null;
  /** The person dismissed the questions. */
  cancelled?: boolean | null;
};

/** A slash command. */
export type AvailableCommand = {
  /** What it does. */
  description: string;
  /** What to type after the name (ACP's `input`), when it takes arguments. */
  input?: AvailableCommandInput | null;
  /** Name without the slash. */
  name: string;
};

/** The arguments a slash command takes. */
export type AvailableCommandInput = {
  /** A hint shown while typing them (`<file> [focus]`). */
  hint: string;
};

/** One checkpoint. */
export type CheckpointInfo = {
  /**
   * Files that changed between this checkpoint and the next one (what the tool call, the
   * restore or, after a turn, the person changed then), workspace-relative.
   */
  files?: string[];
  /** Its id in the session (from 1). */
  id: number;
  /** What was about to happen. */
  kind: CheckpointKind;
  /** Files the snapshot left out (over the size cap). */
  skipped?: string[];
  /** When, RFC 3339. */
  time: string;
  /** Its tool. */
  tool?: string | null;
  /** The tool call about to run or that ended (`beforeTool`, `afterTool`). */
  toolCallId?: string | null;
  /** The session's turn (from 1). */
  turn: number;
};

/** What was about to happen when a checkpoint was taken. */
export type CheckpointKind =
  /** A turn started. */
  | "beforeTurn"
  /**
   * A tool call that can change files started (again once the person allowed a command:
   * what changed while they were asked is theirs).
   */
  | "beforeTool"
  /** A tool call that can change files ended. */
  | "afterTool"
  /** A turn ended. */
  | "afterTurn"
  /** A restore started (restoring this one is a redo). */
  | "beforeRestore"
  /** A restore ended. */
  | "afterRestore";

/** Params of `tandem/commands/list`. */
export type CommandsListParams = {
  /** The working directory whose commands to list (default: the workspace root). */
  cwd?: string | null;
};

/** Result of `tandem/commands/list`. */
export type CommandsListResult = {
  /** The commands, the built-in ones first; a custom command of a built-in name is not listed. */
  commands: AvailableCommand[];
};

/** A choice of a [`ConfigOption`]. */
export type ConfigChoice = {
  /** More about it. */
  description?: string | null;
  /** Its name for people. */
  name: string;
  /** What to send as `value`. */
  value: string;
};

/** One setting of a session, with its choices (ACP's `SessionConfigOption`, `select` kind). */
export type ConfigOption = {
  /** `mode` or `model` (ACP's categories, which clients use to place the control). */
  category: string;
  /** The choice in force. */
  currentValue: string;
  /** What it changes. */
  description: string;
  /** `mode` or `model`. */
  id: string;
  /** Its name for people. */
  name: string;
  /** The choices. */
  options: ConfigChoice[];
  /** Always `select`. */
  type: string;
};

/** A piece of a prompt or of a message. */
export type ContentBlock =
  /** Plain text (Markdown). */
  | {
    /** The text. */
    text: string;
    type: "text";
  }
  /** A link to a file or resource the agent may read. */
  | {
    /** MIME type. */
    mimeType?: string | null;
    /** Display name. */
    name: string;
    type: "resource_link";
    /** URI, usually `file:///...`. */
    uri: string;
  }
  /** A resource with its content (e.g. a selection the person attached). */
  | {
    /** The resource. */
    resource: EmbeddedResource;
    type: "resource";
  }
  /**
   * An image (a pasted screenshot, an image file): PNG, JPEG, GIF or WebP, sent to a model
   * that takes images (resized to the provider's limits), refused for one that does not.
   */
  | {
    /**
     * The image's bytes, base64. May be empty when `uri` names a local file
     * (`file:///…`): Tandem then reads the file.
     */
    data?: string;
    /** `image/png`, `image/jpeg`, `image/gif` or `image/webp`. */
    mimeType: string;
    type: "image";
    /** Where the image came from (`file:///…`), shown with it. */
    uri?: string | null;
  };

/**
 * What the whole change (every hunk applied) would do to the diagnostics of the files it
 * touches and of the other files the servers report on.
 */
export type DiagnosticsPreview = {
  /**
   * One entry per file a server reported on: the changed files, and other files whose
   * diagnostics the change alters (a renamed function's callers).
   */
  files: FileDiagnosticsPreview[];
  /**
   * `ready` when every server answered for every file in time; `partial` when some did not
   * (see each file); `notReady` when none did: then nothing is known about errors.
   */
  status: PreviewStatus;
  /** For the person: `introduces 2 errors: … / resolves 1`, or why nothing is known. */
  summary: string;
};

/** Params of `tandem/document/save`. */
export type DocumentSaveParams = {
  /** The document to save. */
  uri: string;
};

/** Result of `tandem/document/save`. */
export type DocumentSaveResult = {
  /** Whether the editor saved it; when false the server writes the file itself. */
  saved: boolean;
};

/** The content of an embedded resource. */
export type EmbeddedResource = {
  /** MIME type. */
  mimeType?: string | null;
  /** Its text. */
  text: string;
  /** URI of the resource. */
  uri: string;
};

/** One file of a preview. */
export type FileDiagnosticsPreview = {
  /** `true` for a file of the change; `false` for another file whose diagnostics it alters. */
  changed: boolean;
  /** Errors and warnings the change would add (positions in the proposed text). */
  introduced?: PreviewDiagnostic[];
  /** Absolute path. */
  path: string;
  /** Why the file is not ready. */
  reason?: string | null;
  /** Errors and warnings the change would remove (positions in the current text). */
  resolved?: PreviewDiagnostic[];
  /** The language server that answered (or was asked). */
  server?: string | null;
  /** `ready` or `notReady` (never `partial`). */
  status: PreviewStatus;
};

/** A hunk offered for review. */
export type HunkInfo = {
  /**
   * Context lines of the patch hunk behind this change that were left unchecked to place it
   * (`patch -F`; absent when none were).
   */
  fuzz?: number | null;
  /** Id to name in `acceptedHunks`. */
  id: string;
  /** New lines covered. */
  newLines: number;
  /** First new line (1-based). */
  newStart: number;
  /** Old lines covered. */
  oldLines: number;
  /** First old line (1-based). */
  oldStart: number;
  /** The hunk as unified-diff text, `@@` header included. */
  patch: string;
};

/** `initializationOptions` of `initialize`. */
export type InitializationOptions = {
  /** Starting permission mode. */
  mode?: ModeId | null;
  /** Permission rules from the editor's settings, added to those of the configuration files. */
  permissions?: PermissionRules | null;
  /** Tool profile: minimal, standard, full or custom. */
  profile?: string | null;
  /** Model provider. */
  provider?: ProviderConfig | null;
};

/** Permission modes of a session. */
export type ModeId =
  /** Ask for edits and commands. */
  | "default"
  /** Edits apply, commands ask. */
  | "auto-edit"
  /** Read-only until the plan is approved. */
  | "plan"
  /** Nothing asks. */
  | "yolo";

/** A mode as shown to people. */
export type ModeInfo = {
  /** What it allows. */
  description: string;
  /** Mode id. */
  id: ModeId;
  /** Short name. */
  name: string;
};

/** A choice in a permission request. */
export type PermissionOption = {
  /** Kind. */
  kind: PermissionOptionKind;
  /** Label. */
  name: string;
  /** Id to answer with. */
  optionId: string;
};

/** Kinds of permission choices (ACP). */
export type PermissionOptionKind =
  /** Allow this once. */
  | "allow_once"
  /** Allow this and the same kind of thing for the rest of the session. */
  | "allow_always"
  /** Reject this once. */
  | "reject_once"
  /** Reject this and the same kind of thing for the rest of the session. */
  | "reject_always";

/** The person's answer. */
export type PermissionOutcome =
  /** An option was chosen. */
  | {
    /** For edits: the hunks accepted; absent means all. */
    acceptedHunks?: string[] | null;
    /** Optional words for the model (why it was rejected). */
    message?: string | null;
    /** Its id. */
    optionId: string;
    outcome: "selected";
  }
  /** The request was cancelled. */
  | {
    outcome: "cancelled";
  };

/** Permission rules (`tool(specifier)` patterns, as in `[permissions]` of `config.toml`). */
export type PermissionRules = {
  /** Calls that run without asking (`bash(npm test:*)`, `edit(src/**)`). */
  allow?: string[];
  /** Calls that ask every time. */
  ask?: string[];
  /** Calls that never run. */
  deny?: string[];
};

/** An entry of the plan. */
export type PlanEntry = {
  /** What to do. */
  content: string;
  /** `high`, `medium` or `low`. */
  priority: string;
  /** `pending`, `in_progress` or `completed`. */
  status: string;
};

/**
 * One diagnostic of a preview. Lines and columns are 1-based; columns count Unicode scalar
 * values.
 */
export type PreviewDiagnostic = {
  /** The server's code for it. */
  code?: string | null;
  /** Start column. */
  column: number;
  /** End column (exclusive). */
  endColumn: number;
  /** End line. */
  endLine: number;
  /**
   * The hunk (`HunkInfo.id`) whose lines hold it: new lines for an introduced diagnostic,
   * old lines for a resolved one. Absent outside every hunk and in other files.
   */
  hunk?: string | null;
  /** Start line. */
  line: number;
  /** What the server says. */
  message: string;
  /** How bad. */
  severity: PreviewSeverity;
  /** Who reported it (`Pylance`, `rustc`, ...). */
  source?: string | null;
};

/** Severity of a previewed diagnostic (only errors and warnings are previewed). */
export type PreviewSeverity =
  /** An error. */
  | "error"
  /** A warning. */
  | "warning";

/** How complete a preview is. */
export type PreviewStatus =
  /** Fresh diagnostics of the current and of the proposed text. */
  | "ready"
  /** Some files are ready, others not. */
  | "partial"
  /**
   * The server did not answer in time, is starting or indexing, cannot check unsaved text,
   * or failed: this says nothing about errors.
   */
  | "notReady";

/** A model provider, as the editor or config file names it. */
export type ProviderConfig = {
  /** Name of the environment variable that holds the API key. */
  apiKeyEnv?: string | null;
  /** Base URL, e.g. `http://127.0.0.1:11434/v1`. */
  baseUrl?: string | null;
  /** `openai` (Chat Completions wire format) or `anthropic` (Messages). */
  kind?: string | null;
  /** Model name. */
  model?: string | null;
};

/** `tandem/session/requestPermission` params. */
export type RequestPermissionParams = {
  /**
   * For a change to files: what it would do to the language servers' diagnostics (absent
   * when no server serves its files, or for commands and other calls).
   */
  diagnostics?: DiagnosticsPreview | null;
  /** Choices. */
  options: PermissionOption[];
  /** Session. */
  sessionId: string;
  /** The call that waits, with its diff or command. */
  toolCall: ToolCallUpdate;
};

/** `tandem/session/requestPermission` result. */
export type RequestPermissionResult = {
  /** The answer. */
  outcome: PermissionOutcome;
};

/** `tandem/session/cancel` params (a notification). */
export type SessionCancelParams = {
  /** Session. */
  sessionId: string;
};

/**
 * `tandem/session/checkpointFile` params: one file's text at a checkpoint (to compare it with
 * the file now).
 */
export type SessionCheckpointFileParams = {
  /** The checkpoint. */
  checkpointId: number;
  /** The file: workspace-relative, or absolute inside the workspace. */
  path: string;
  /** The session. */
  sessionId: string;
};

/** `tandem/session/checkpointFile` result. */
export type SessionCheckpointFileResult = {
  /**
   * The file's text at the checkpoint; absent when the checkpoint does not hold the file (it
   * did not exist then).
   */
  content?: string | null;
};

/** `tandem/session/checkpoints` params. */
export type SessionCheckpointsParams = {
  /** The session. */
  sessionId: string;
};

/** `tandem/session/checkpoints` result, oldest first. */
export type SessionCheckpointsResult = {
  /** The checkpoints. */
  checkpoints: CheckpointInfo[];
};

/** `tandem/session/compact` params. */
export type SessionCompactParams = {
  /** Session. */
  sessionId: string;
};

/** `tandem/session/compact` result. */
export type SessionCompactResult = {
  /**
   * Whether older turns were replaced by a summary the model wrote (else only old tool
   * outputs were elided, or there was nothing to shorten).
   */
  summarized: boolean;
  /** Estimated tokens after. */
  tokensAfter: number;
  /** Estimated tokens of the conversation before. */
  tokensBefore: number;
};

/** `tandem/session/configOptions` params. */
export type SessionConfigOptionsParams = {
  /** Session. */
  sessionId: string;
};

/** `tandem/session/configOptions` and `tandem/session/setConfigOption` result. */
export type SessionConfigOptionsResult = {
  /** The session's settings, the mode first. */
  configOptions: ConfigOption[];
  /**
   * Why the provider's model list could not be read (the model choices are then only the
   * configured model and the session's).
   */
  modelsError?: string | null;
};

/** `tandem/session/delete` params (the result is `{}`). */
export type SessionDeleteParams = {
  /** The stored session to delete. */
  sessionId: string;
};

/** A stored session. */
export type SessionInfo = {
  /** Working directory. */
  cwd: string;
  /** Id. */
  sessionId: string;
  /** The first prompt, shortened. */
  title?: string | null;
  /** Last change, RFC 3339. */
  updatedAt?: string | null;
};

/** `tandem/session/list` params. */
export type SessionListParams = {
  /** Continue after this cursor (from `nextCursor`). */
  cursor?: string | null;
  /** Only sessions whose working directory is this one. */
  cwd?: string | null;
};

/** `tandem/session/list` result, most recent first. */
export type SessionListResult = {
  /** Cursor for the next page. */
  nextCursor?: string | null;
  /** Sessions. */
  sessions: SessionInfo[];
};

/**
 * `tandem/session/load` params: the history is replayed as `tandem/session/update`s before
 * the result is sent.
 */
export type SessionLoadParams = {
  /** Working directory (ignored when it is the stored one). */
  cwd?: string | null;
  /** MCP servers (ACP shape). */
  mcpServers?: unknown;
  /** Session to load. */
  sessionId: string;
};

/** `tandem/session/load` result. */
export type SessionLoadResult = {
  /** Its modes. */
  modes: SessionModes;
};

/** The modes of a session. */
export type SessionModes = {
  /** Every mode. */
  available: ModeInfo[];
  /** The mode in force. */
  current: ModeId;
};

/** `tandem/session/new` params. */
export type SessionNewParams = {
  /** Working directory (absolute, inside the workspace); default: the workspace root. */
  cwd?: string | null;
  /** MCP servers the editor wants the session to use (ACP shape). */
  mcpServers?: unknown;
  /** Starting mode; default: the configured mode. */
  mode?: ModeId | null;
  /** Model; default: the configured model. */
  model?: string | null;
  /**
   * Work in the agent worktree of this name (a git worktree on the branch `tandem/NAME`,
   * outside the working tree), created or reused as `tandem run --worktree NAME` does; `cwd`
   * is then ignored.
   */
  worktree?: string | null;
};

/** `tandem/session/new` result. */
export type SessionNewResult = {
  /** The model it uses. */
  model?: string | null;
  /** Its modes. */
  modes: SessionModes;
  /** The new session's id. */
  sessionId: string;
  /** Where it works, when it was asked to work in a worktree. */
  worktree?: WorktreePlace | null;
};

/** `tandem/session/update` params. */
export type SessionNotification = {
  /** Session. */
  sessionId: string;
  /** What happened. */
  update: SessionUpdate;
};

/** `tandem/session/prompt` params. */
export type SessionPromptParams = {
  /** What the person wrote and attached. */
  prompt: ContentBlock[];
  /** Session. */
  sessionId: string;
};

/** `tandem/session/prompt` result, sent when the turn ends. */
export type SessionPromptResult = {
  /** With `error`: what failed and what to do. */
  error?: string | null;
  /** Why the turn ended. */
  stopReason: StopReason;
};

/** `tandem/session/restore` params: exactly one of `checkpointId`, `turn` and `toolCallId`. */
export type SessionRestoreParams = {
  /** Back to this checkpoint's state. */
  checkpointId?: number | null;
  /** Only say what would change (the diff), change nothing. */
  dryRun?: boolean;
  /** Also restore the files the person changed after the checkpoint (left alone by default). */
  includeConflicts?: boolean;
  /** The session. */
  sessionId: string;
  /** Undo only what this tool call changed. */
  toolCallId?: string | null;
  /** Back to the state before this turn (`1`: the start of the session). */
  turn?: number | null;
};

/** `tandem/session/restore` result. */
export type SessionRestoreResult = {
  /** Files the person changed after the checkpoint: left alone unless `includeConflicts`. */
  conflicts: string[];
  /** The change as a unified diff (current → restored). */
  diff: string;
  /** What the restore did, in words (the review's outcome included). */
  message: string;
  /**
   * Files the agent changed or removed after the checkpoint that checkpoints leave out (over
   * the size cap, ignored): not covered by undo, so no restore can bring them back.
   */
  notCovered?: string[];
  /** The checkpoint holding the state before this restore: restoring it is the redo. */
  redoCheckpointId?: number | null;
  /** Files restored (or, with `dryRun`, that would be). */
  restored: string[];
  /**
   * Files not restored: the checkpoint does not hold them (over the size cap), they are not
   * text, or they are now a symbolic link or inside one (a restore never reads or writes
   * through a link).
   */
  skipped: string[];
};

/** `tandem/session/setConfigOption` params. */
export type SessionSetConfigOptionParams = {
  /** `mode` or `model`. */
  configId: string;
  /** Session. */
  sessionId: string;
  /**
   * One of the option's choices (a model the provider does not list is accepted too: some
   * providers list only part of what they serve).
   */
  value: string;
};

/** `tandem/session/setMode` params. */
export type SessionSetModeParams = {
  /** New mode. */
  modeId: ModeId;
  /** Session. */
  sessionId: string;
};

/** One step of a session, discriminated by `sessionUpdate`. */
export type SessionUpdate =
  /** Streamed answer text. */
  | {
    /** The chunk. */
    content: ContentBlock;
    sessionUpdate: "agent_message_chunk";
  }
  /** Streamed reasoning. */
  | {
    /** The chunk. */
    content: ContentBlock;
    sessionUpdate: "agent_thought_chunk";
  }
  /** The person's prompt (replayed by `load`). */
  | {
    /** The chunk. */
    content: ContentBlock;
    /**
     * The prompt this chunk belongs to: all chunks of one prompt share it, a new id starts
     * the next prompt (ACP's `messageId`). A replay sets it, so a prompt that got no answer
     * (a cancelled one) stays apart from the next.
     */
    messageId?: string | null;
    sessionUpdate: "user_message_chunk";
  }
  /** A new tool call. */
  | (ToolCall & {
    sessionUpdate: "tool_call";
  })
  /** A change to a tool call. */
  | (ToolCallUpdate & {
    sessionUpdate: "tool_call_update";
  })
  /** The agent's plan (from `todowrite`). */
  | {
    /** Entries in order. */
    entries: PlanEntry[];
    sessionUpdate: "plan";
  }
  /** The session's mode changed. */
  | {
    /** The new mode. */
    currentModeId: ModeId;
    sessionUpdate: "current_mode_update";
  }
  /** Slash commands the session offers. */
  | {
    /** Commands. */
    availableCommands: AvailableCommand[];
    sessionUpdate: "available_commands_update";
  }
  /** Token use. */
  | (Usage & {
    sessionUpdate: "usage_update";
  });

/** Why a turn ended. */
export type StopReason =
  /** The model finished. */
  | "end_turn"
  /** The person cancelled. */
  | "cancelled"
  /** The turn limit was reached. */
  | "max_turns"
  /** The model refused. */
  | "refusal"
  /** The answer was cut at the output token limit (the person was told how to go on). */
  | "max_tokens"
  /** The model provider failed (see `error`). */
  | "error";

/** `capabilities.experimental.tandem` in the `initialize` result. */
export type TandemCapabilities = {
  /** Available modes. */
  modes: ModeId[];
  /** Names of the enabled tools. */
  tools: string[];
  /** Protocol version. */
  version: string;
};

/** A tool call as the editor shows it. */
export type ToolCall = {
  /** What it produced or proposes. */
  content?: ToolCallContent[];
  /** Kind. */
  kind: ToolKind;
  /** Files it touches. */
  locations?: ToolCallLocation[];
  /** The arguments as the model sent them. */
  rawInput?: unknown;
  /** Status. */
  status: ToolCallStatus;
  /** One line for people. */
  title: string;
  /** Id, unique in the session. */
  toolCallId: string;
  /** The tool's name, for a call of a tool (not for Tandem's own cards). */
  toolName?: string | null;
};

/** Content of a tool call. */
export type ToolCallContent =
  /** Text or other content. */
  | {
    /** The content. */
    content: ContentBlock;
    type: "content";
  }
  /** A change to a file. */
  | {
    /** Hunks with ids, for per-hunk acceptance (in permission requests). */
    hunks?: HunkInfo[];
    /** Text after (empty for a deleted file). */
    newText: string;
    /** Text before; `null` for a new file. */
    oldText?: string | null;
    /** Absolute path. */
    path: string;
    type: "diff";
  }
  /** A terminal the client shows. */
  | {
    /** Terminal id. */
    terminalId: string;
    type: "terminal";
  };

/** A file location of a tool call. */
export type ToolCallLocation = {
  /** 1-based line. */
  line?: number | null;
  /** Absolute path. */
  path: string;
};

/** Where a tool call is in its life. */
export type ToolCallStatus =
  /** Announced, not started (or waiting for approval). */
  | "pending"
  /** Running. */
  | "in_progress"
  /** Done. */
  | "completed"
  /** Failed, rejected or cancelled. */
  | "failed";

/** Changed fields of a tool call; absent fields are unchanged. */
export type ToolCallUpdate = {
  /** New content (replaces the old). */
  content?: ToolCallContent[] | null;
  /** New kind. */
  kind?: ToolKind | null;
  /** New locations. */
  locations?: ToolCallLocation[] | null;
  /** The arguments. */
  rawInput?: unknown;
  /** The tool's result (title, output, metadata, error). */
  rawOutput?: unknown;
  /** New status. */
  status?: ToolCallStatus | null;
  /** New title. */
  title?: string | null;
  /** Id of the call. */
  toolCallId: string;
};

/** Tool groups: the unit that profiles and `TANDEM_FEATURE_<GROUP>` switch. */
export type ToolGroup =
  /** Files: read, write, edit, list, ... */
  | "fs"
  /** glob, grep. */
  | "search"
  /** bash and script tools. */
  | "exec"
  /** webfetch, websearch. */
  | "web"
  /** Questions to the person. */
  | "interact"
  /** todo and plan mode. */
  | "plan"
  /** Memory. */
  | "memory"
  /** Sub-agents. */
  | "agent"
  /** Language-server queries. */
  | "lsp"
  /** Tools of MCP servers. */
  | "mcp";

/** A tool as listed to the editor. */
export type ToolInfo = {
  /** Other names that resolve to it. */
  aliases: string[];
  /** Whether it changes files or state. */
  canWrite: boolean;
  /** Whether it may run concurrently with other calls. */
  concurrencySafe: boolean;
  /** What it does, for the model. */
  description: string;
  /** Its group. */
  group: ToolGroup;
  /** Canonical name. */
  name: string;
  /** JSON Schema of its arguments. */
  parameters: unknown;
};

/** What a tool call does, for icons and grouping. */
export type ToolKind =
  /** Reads files. */
  | "read"
  /** Changes files. */
  | "edit"
  /** Deletes files. */
  | "delete"
  /** Moves files. */
  | "move"
  /** Searches. */
  | "search"
  /** Runs commands. */
  | "execute"
  /** Thinks or plans. */
  | "think"
  /** Fetches from the network. */
  | "fetch"
  /** Anything else. */
  | "other";

/** The result of a tool call. A failed call sets `error`; it is not a JSON-RPC error. */
export type ToolResult = {
  /** Extra content (images, resources). */
  attachments: unknown[];
  /** When set, the call failed: what failed, why, and what to do next. */
  error?: string | null;
  /** Structured details for editors and tests. */
  metadata: Record<string, unknown>;
  /** The text the model sees. */
  output: string;
  /** One line saying what happened. */
  title: string;
};

/** Params of `tandem/tools/call`. */
export type ToolsCallParams = {
  /** Arguments, as the tool's schema says. */
  arguments?: unknown;
  /** Tool name or alias. */
  name: string;
  /** The session on whose behalf it runs; staleness checks are per session. */
  sessionId?: string | null;
};

/** Params of `tandem/tools/list`. */
export type ToolsListParams = Record<string, unknown>;

/** Result of `tandem/tools/list`. */
export type ToolsListResult = {
  /** The active profile. */
  profile: string;
  /** The tools enabled in this workspace. */
  tools: ToolInfo[];
};

/** Token counts of a session. */
export type Usage = {
  /** Prompt tokens read from the provider's cache in the last model turn. */
  cacheReadTokens: number;
  /** The model's context window in tokens (0: unknown). */
  contextWindow?: number;
  /** Prompt tokens of the last model turn (how full the context is). */
  inputTokens: number;
  /** Completion tokens of the last model turn. */
  outputTokens: number;
  /** Completion tokens of the last model turn spent on reasoning. */
  reasoningTokens?: number;
  /** Totals over the whole session. */
  session?: UsageTotals;
  /** All tokens of the session so far (input + output over every model turn). */
  totalTokens: number;
};

/** Token totals of a session (every model turn, compaction summaries included). */
export type UsageTotals = {
  /** Prompt tokens read from the provider's cache. */
  cacheReadTokens: number;
  /**
   * Estimated cost in US dollars of the turns whose model has a known price (list prices,
   * or the configured ones); absent when no turn had one.
   */
  costUsd?: number | null;
  /** Prompt tokens (cached ones included). */
  inputTokens: number;
  /** Completion tokens. */
  outputTokens: number;
  /** Completion tokens spent on reasoning. */
  reasoningTokens: number;
};

/** One agent worktree of the workspace's repository. */
export type WorktreeInfo = {
  /** Its branch (`tandem/NAME`). */
  branch: string;
  /** How many files differ from its base (committed or not, new files included). */
  changes: number;
  /** The newest of them. */
  lastSession?: string | null;
  /** Its name (`tandem run --worktree NAME`). */
  name: string;
  /** Its folder (absolute). */
  path: string;
  /** How many sessions worked in it. */
  sessions: number;
};

/** A file of the worktree's change that was not brought over, and why. */
export type WorktreeLeftFile = {
  /** Workspace-relative path. */
  path: string;
  /** Why (a conflict with the person's own change since the base, not text, ...). */
  reason: string;
};

/** `tandem/worktree/list` params. */
export type WorktreeListParams = Record<string, unknown>;

/** `tandem/worktree/list` result. */
export type WorktreeListResult = {
  /** The agent worktrees, by name. */
  worktrees: WorktreeInfo[];
};

/** Where a session started with `worktree` works. */
export type WorktreePlace = {
  /** Its branch (`tandem/NAME`). */
  branch: string;
  /** Whether this session created it (else it was reused). */
  created: boolean;
  /** The worktree's name. */
  name: string;
  /** Its folder (absolute): the session's workspace. */
  path: string;
};

/** `tandem/worktree/review` params. */
export type WorktreeReviewParams = {
  /** The worktree's name. */
  name: string;
};

/**
 * `tandem/worktree/review` result, sent once the review is over and the accepted hunks are
 * written.
 */
export type WorktreeReviewResult = {
  /** Files changed in the workspace (in whole or in part). */
  applied: string[];
  /**
   * The base commit the worktree's change was taken against (the merge base of the
   * workspace's `HEAD` and the worktree's).
   */
  base: string;
  /** Files not brought over: refused before the review, or rejected in it. */
  left: WorktreeLeftFile[];
  /** What happened, in words. */
  message: string;
};
