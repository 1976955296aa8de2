//! Agent sessions: `tandem/session/*` requests, their updates, and permission requests.
//! Shapes follow ACP v1 (Agent Client Protocol) wherever ACP has the same concept.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::ModeId;

/// A piece of a prompt or of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    /// Plain text (Markdown).
    Text {
        /// The text.
        text: String,
    },
    /// A link to a file or resource the agent may read.
    #[serde(rename_all = "camelCase")]
    ResourceLink {
        /// URI, usually `file:///...`.
        uri: String,
        /// Display name.
        name: String,
        /// MIME type.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
    /// A resource with its content (e.g. a selection the person attached).
    Resource {
        /// The resource.
        resource: EmbeddedResource,
    },
    /// An image (a pasted screenshot, an image file): PNG, JPEG, GIF or WebP, sent to a model
    /// that takes images (resized to the provider's limits), refused for one that does not.
    #[serde(rename_all = "camelCase")]
    Image {
        /// The image's bytes, base64. May be empty when `uri` names a local file
        /// (`file:///…`): Tandem then reads the file.
        #[serde(default)]
        data: String,
        /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
        mime_type: String,
        /// Where the image came from (`file:///…`), shown with it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uri: Option<String>,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text { text: text.into() }
    }
}

/// The content of an embedded resource.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedResource {
    /// URI of the resource.
    pub uri: String,
    /// Its text.
    pub text: String,
    /// MIME type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
}

/// `tandem/session/new` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionNewParams {
    /// Working directory (absolute, inside the workspace); default: the workspace root.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Starting mode; default: the configured mode.
    #[serde(default)]
    pub mode: Option<ModeId>,
    /// Model; default: the configured model.
    #[serde(default)]
    pub model: Option<String>,
    /// MCP servers the editor wants the session to use (ACP shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Value>,
    /// Work in the agent worktree of this name (a git worktree on the branch `tandem/NAME`,
    /// outside the working tree), created or reused as `tandem run --worktree NAME` does; `cwd`
    /// is then ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
}

/// A mode as shown to people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModeInfo {
    /// Mode id.
    pub id: ModeId,
    /// Short name.
    pub name: String,
    /// What it allows.
    pub description: String,
}

/// The modes of a session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionModes {
    /// The mode in force.
    pub current: ModeId,
    /// Every mode.
    pub available: Vec<ModeInfo>,
}

/// `tandem/session/new` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionNewResult {
    /// The new session's id.
    pub session_id: String,
    /// Its modes.
    pub modes: SessionModes,
    /// The model it uses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where it works, when it was asked to work in a worktree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<crate::WorktreePlace>,
}

/// `tandem/session/prompt` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionPromptParams {
    /// Session.
    pub session_id: String,
    /// What the person wrote and attached.
    pub prompt: Vec<ContentBlock>,
}

/// Why a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model finished.
    EndTurn,
    /// The person cancelled.
    Cancelled,
    /// The turn limit was reached.
    MaxTurns,
    /// The model refused.
    Refusal,
    /// The answer was cut at the output token limit (the person was told how to go on).
    MaxTokens,
    /// The model provider failed (see `error`).
    Error,
}

/// `tandem/session/prompt` result, sent when the turn ends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionPromptResult {
    /// Why the turn ended.
    pub stop_reason: StopReason,
    /// With `error`: what failed and what to do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `tandem/session/cancel` params (a notification).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCancelParams {
    /// Session.
    pub session_id: String,
}

/// `tandem/session/setMode` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionSetModeParams {
    /// Session.
    pub session_id: String,
    /// New mode.
    pub mode_id: ModeId,
}

/// `tandem/session/list` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListParams {
    /// Only sessions whose working directory is this one.
    #[serde(default)]
    pub cwd: Option<String>,
    /// Continue after this cursor (from `nextCursor`).
    #[serde(default)]
    pub cursor: Option<String>,
}

/// `tandem/session/delete` params (the result is `{}`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionDeleteParams {
    /// The stored session to delete.
    pub session_id: String,
}

/// A stored session.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Id.
    pub session_id: String,
    /// Working directory.
    pub cwd: String,
    /// The first prompt, shortened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Last change, RFC 3339.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// `tandem/session/list` result, most recent first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionListResult {
    /// Sessions.
    pub sessions: Vec<SessionInfo>,
    /// Cursor for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

/// `tandem/session/load` params: the history is replayed as `tandem/session/update`s before
/// the result is sent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionLoadParams {
    /// Session to load.
    pub session_id: String,
    /// Working directory (ignored when it is the stored one).
    #[serde(default)]
    pub cwd: Option<String>,
    /// MCP servers (ACP shape).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_servers: Option<Value>,
}

/// `tandem/session/load` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionLoadResult {
    /// Its modes.
    pub modes: SessionModes,
}

/// `tandem/session/compact` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactParams {
    /// Session.
    pub session_id: String,
}

/// `tandem/session/compact` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCompactResult {
    /// Estimated tokens of the conversation before.
    pub tokens_before: u64,
    /// Estimated tokens after.
    pub tokens_after: u64,
    /// Whether older turns were replaced by a summary the model wrote (else only old tool
    /// outputs were elided, or there was nothing to shorten).
    pub summarized: bool,
}

/// `tandem/session/update` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionNotification {
    /// Session.
    pub session_id: String,
    /// What happened.
    pub update: SessionUpdate,
}

/// One step of a session, discriminated by `sessionUpdate`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "sessionUpdate", rename_all = "snake_case")]
pub enum SessionUpdate {
    /// Streamed answer text.
    AgentMessageChunk {
        /// The chunk.
        content: ContentBlock,
    },
    /// Streamed reasoning.
    AgentThoughtChunk {
        /// The chunk.
        content: ContentBlock,
    },
    /// The person's prompt (replayed by `load`).
    #[serde(rename_all = "camelCase")]
    UserMessageChunk {
        /// The chunk.
        content: ContentBlock,
        /// The prompt this chunk belongs to: all chunks of one prompt share it, a new id starts
        /// the next prompt (ACP's `messageId`). A replay sets it, so a prompt that got no answer
        /// (a cancelled one) stays apart from the next.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message_id: Option<String>,
    },
    /// A new tool call.
    ToolCall(ToolCall),
    /// A change to a tool call.
    ToolCallUpdate(ToolCallUpdate),
    /// The agent's plan (from `todowrite`).
    Plan {
        /// Entries in order.
        entries: Vec<PlanEntry>,
    },
    /// The session's mode changed.
    #[serde(rename_all = "camelCase")]
    CurrentModeUpdate {
        /// The new mode.
        current_mode_id: ModeId,
    },
    /// Slash commands the session offers.
    #[serde(rename_all = "camelCase")]
    AvailableCommandsUpdate {
        /// Commands.
        available_commands: Vec<AvailableCommand>,
    },
    /// Token use.
    UsageUpdate(Usage),
}

/// A slash command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AvailableCommand {
    /// Name without the slash.
    pub name: String,
    /// What it does.
    pub description: String,
    /// What to type after the name (ACP's `input`), when it takes arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<AvailableCommandInput>,
}

/// The arguments a slash command takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AvailableCommandInput {
    /// A hint shown while typing them (`<file> [focus]`).
    pub hint: String,
}

/// Params of `tandem/commands/list`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct CommandsListParams {
    /// The working directory whose commands to list (default: the workspace root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// Result of `tandem/commands/list`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct CommandsListResult {
    /// The commands, the built-in ones first; a custom command of a built-in name is not listed.
    pub commands: Vec<AvailableCommand>,
}

/// Token counts of a session.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens of the last model turn (how full the context is).
    pub input_tokens: u64,
    /// Completion tokens of the last model turn.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache in the last model turn.
    pub cache_read_tokens: u64,
    /// All tokens of the session so far (input + output over every model turn).
    pub total_tokens: u64,
    /// Completion tokens of the last model turn spent on reasoning.
    #[serde(default)]
    pub reasoning_tokens: u64,
    /// The model's context window in tokens (0: unknown).
    #[serde(default)]
    pub context_window: u64,
    /// Totals over the whole session.
    #[serde(default)]
    pub session: UsageTotals,
}

/// Token totals of a session (every model turn, compaction summaries included).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct UsageTotals {
    /// Prompt tokens (cached ones included).
    pub input_tokens: u64,
    /// Completion tokens.
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Completion tokens spent on reasoning.
    pub reasoning_tokens: u64,
    /// Estimated cost in US dollars of the turns whose model has a known price (list prices,
    /// or the configured ones); absent when no turn had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl UsageTotals {
    /// Adds one model turn's counts.
    pub fn add(&mut self, input: u64, output: u64, cache_read: u64, reasoning: u64) {
        self.input_tokens += input;
        self.output_tokens += output;
        self.cache_read_tokens += cache_read;
        self.reasoning_tokens += reasoning;
    }

    /// Adds one model turn's cost in US dollars.
    pub fn add_cost(&mut self, usd: f64) {
        self.cost_usd = Some(self.cost_usd.unwrap_or(0.0) + usd);
    }
}

/// An entry of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PlanEntry {
    /// What to do.
    pub content: String,
    /// `high`, `medium` or `low`.
    pub priority: String,
    /// `pending`, `in_progress` or `completed`.
    pub status: String,
}

/// What a tool call does, for icons and grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads files.
    Read,
    /// Changes files.
    Edit,
    /// Deletes files.
    Delete,
    /// Moves files.
    Move,
    /// Searches.
    Search,
    /// Runs commands.
    Execute,
    /// Thinks or plans.
    Think,
    /// Fetches from the network.
    Fetch,
    /// Anything else.
    Other,
}

/// Where a tool call is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ToolCallStatus {
    /// Announced, not started (or waiting for approval).
    Pending,
    /// Running.
    InProgress,
    /// Done.
    Completed,
    /// Failed, rejected or cancelled.
    Failed,
}

/// A tool call as the editor shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// Id, unique in the session.
    pub tool_call_id: String,
    /// One line for people.
    pub title: String,
    /// Kind.
    pub kind: ToolKind,
    /// Status.
    pub status: ToolCallStatus,
    /// What it produced or proposes.
    #[serde(default)]
    pub content: Vec<ToolCallContent>,
    /// Files it touches.
    #[serde(default)]
    pub locations: Vec<ToolCallLocation>,
    /// The arguments as the model sent them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// The tool's name, for a call of a tool (not for Tandem's own cards).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
}

/// Changed fields of a tool call; absent fields are unchanged.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolCallUpdate {
    /// Id of the call.
    pub tool_call_id: String,
    /// New title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// New kind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<ToolKind>,
    /// New status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ToolCallStatus>,
    /// New content (replaces the old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<ToolCallContent>>,
    /// New locations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locations: Option<Vec<ToolCallLocation>>,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_input: Option<Value>,
    /// The tool's result (title, output, metadata, error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<Value>,
}

/// Content of a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ToolCallContent {
    /// Text or other content.
    Content {
        /// The content.
        content: ContentBlock,
    },
    /// A change to a file.
    #[serde(rename_all = "camelCase")]
    Diff {
        /// Absolute path.
        path: String,
        /// Text before; `null` for a new file.
        old_text: Option<String>,
        /// Text after (empty for a deleted file).
        new_text: String,
        /// Hunks with ids, for per-hunk acceptance (in permission requests).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        hunks: Vec<HunkInfo>,
    },
    /// A terminal the client shows.
    #[serde(rename_all = "camelCase")]
    Terminal {
        /// Terminal id.
        terminal_id: String,
    },
}

/// A hunk offered for review.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HunkInfo {
    /// Id to name in `acceptedHunks`.
    pub id: String,
    /// First old line (1-based).
    pub old_start: usize,
    /// Old lines covered.
    pub old_lines: usize,
    /// First new line (1-based).
    pub new_start: usize,
    /// New lines covered.
    pub new_lines: usize,
    /// The hunk as unified-diff text, `@@` header included.
    pub patch: String,
    /// Context lines of the patch hunk behind this change that were left unchecked to place it
    /// (`patch -F`; absent when none were).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuzz: Option<usize>,
}

/// A file location of a tool call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolCallLocation {
    /// Absolute path.
    pub path: String,
    /// 1-based line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// `tandem/session/requestPermission` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestPermissionParams {
    /// Session.
    pub session_id: String,
    /// The call that waits, with its diff or command.
    pub tool_call: ToolCallUpdate,
    /// Choices.
    pub options: Vec<PermissionOption>,
    /// For a change to files: what it would do to the language servers' diagnostics (absent
    /// when no server serves its files, or for commands and other calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<crate::DiagnosticsPreview>,
}

/// A choice in a permission request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionOption {
    /// Id to answer with.
    pub option_id: String,
    /// Label.
    pub name: String,
    /// Kind.
    pub kind: PermissionOptionKind,
}

/// Kinds of permission choices (ACP).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PermissionOptionKind {
    /// Allow this once.
    AllowOnce,
    /// Allow this and the same kind of thing for the rest of the session.
    AllowAlways,
    /// Reject this once.
    RejectOnce,
    /// Reject this and the same kind of thing for the rest of the session.
    RejectAlways,
}

/// `tandem/session/requestPermission` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RequestPermissionResult {
    /// The answer.
    pub outcome: PermissionOutcome,
}

/// The person's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(tag = "outcome", rename_all = "snake_case")]
pub enum PermissionOutcome {
    /// An option was chosen.
    #[serde(rename_all = "camelCase")]
    Selected {
        /// Its id.
        option_id: String,
        /// For edits: the hunks accepted; absent means all.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        accepted_hunks: Option<Vec<String>>,
        /// Optional words for the model (why it was rejected).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The request was cancelled.
    Cancelled,
}

/// `tandem/session/askUser` params: questions for the person.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskUserParams {
    /// Session.
    pub session_id: String,
    /// The questions (1-4).
    pub questions: Vec<AskQuestion>,
}

/// One question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskQuestion {
    /// The question.
    pub question: String,
    /// A short label for it.
    #[serde(default)]
    pub header: String,
    /// Choices; empty for a free-form answer (the answer is then the typed text).
    #[serde(default)]
    pub options: Vec<AskOption>,
    /// Whether several options may be chosen.
    #[serde(default)]
    pub multi_select: bool,
}

/// A choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AskOption {
    /// Label, returned as the answer.
    pub label: String,
    /// What it means.
    #[serde(default)]
    pub description: String,
}

/// `tandem/session/askUser` result: `answers` (one list of labels per question) or `cancelled`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AskUserResult {
    /// One list of chosen labels (or the typed text) per question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answers: Option<Vec<Vec<String>>>,
    /// The person dismissed the questions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled: Option<bool>,
}
