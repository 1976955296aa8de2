//! Wire types of Tandem's editor protocol (the README's method table). This is the only crate whose types
//! go on the wire; everything here is serde + JSON Schema, no IO.
//!
//! The generated schema is checked in at `server/protocol/schema/protocol.schema.json`; a test
//! fails when the types drift from it (`UPDATE_EXPECT=1 cargo test -p tandem-protocol` refreshes).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Protocol version announced in `experimental.tandem.version`.
pub const PROTOCOL_VERSION: &str = "0";

/// Method names.
pub mod methods {
    /// `tandem/tools/list` (client → server request).
    pub const TOOLS_LIST: &str = "tandem/tools/list";
    /// `tandem/tools/call` (client → server request).
    pub const TOOLS_CALL: &str = "tandem/tools/call";
    /// `tandem/document/save` (server → client request).
    pub const DOCUMENT_SAVE: &str = "tandem/document/save";
    /// `tandem/session/new` (client → server request).
    pub const SESSION_NEW: &str = "tandem/session/new";
    /// `tandem/session/prompt` (client → server request, answered when the turn ends).
    pub const SESSION_PROMPT: &str = "tandem/session/prompt";
    /// `tandem/session/cancel` (client → server notification).
    pub const SESSION_CANCEL: &str = "tandem/session/cancel";
    /// `tandem/session/setMode` (client → server request).
    pub const SESSION_SET_MODE: &str = "tandem/session/setMode";
    /// `tandem/session/list` (client → server request).
    pub const SESSION_LIST: &str = "tandem/session/list";
    /// `tandem/session/load` (client → server request).
    pub const SESSION_LOAD: &str = "tandem/session/load";
    /// `tandem/session/delete` (client → server request): deletes a stored session (not one
    /// that is running).
    pub const SESSION_DELETE: &str = "tandem/session/delete";
    /// `tandem/session/compact` (client → server request): shortens the conversation the model
    /// sees (old tool outputs elided, the rest summarised), as Tandem does by itself when the
    /// context window fills up.
    pub const SESSION_COMPACT: &str = "tandem/session/compact";
    /// `tandem/session/update` (server → client notification).
    pub const SESSION_UPDATE: &str = "tandem/session/update";
    /// `tandem/session/requestPermission` (server → client request).
    pub const SESSION_REQUEST_PERMISSION: &str = "tandem/session/requestPermission";
    /// `tandem/session/askUser` (server → client request).
    pub const SESSION_ASK_USER: &str = "tandem/session/askUser";
    /// `tandem/session/checkpoints` (client → server request).
    pub const SESSION_CHECKPOINTS: &str = "tandem/session/checkpoints";
    /// `tandem/session/restore` (client → server request).
    pub const SESSION_RESTORE: &str = "tandem/session/restore";
    /// `tandem/session/checkpointFile` (client → server request): a file's text at a checkpoint.
    pub const SESSION_CHECKPOINT_FILE: &str = "tandem/session/checkpointFile";
    /// `tandem/session/configOptions` (client → server request): the session's mode and model
    /// with their choices (the models the provider lists).
    pub const SESSION_CONFIG_OPTIONS: &str = "tandem/session/configOptions";
    /// `tandem/session/setConfigOption` (client → server request): changes the mode or model.
    pub const SESSION_SET_CONFIG_OPTION: &str = "tandem/session/setConfigOption";
    /// `tandem/commands/list` (client → server request): the slash commands a prompt may start
    /// with (the built-in ones the agent answers, and the project's and person's own), for `/`
    /// completion; no session needed.
    pub const COMMANDS_LIST: &str = "tandem/commands/list";
    /// `tandem/worktree/list` (client → server request): the agents' git worktrees of the
    /// workspace's repository, with their sessions and how many files they change.
    pub const WORKTREE_LIST: &str = "tandem/worktree/list";
    /// `tandem/worktree/review` (client → server request): a worktree's change against its base,
    /// brought over into the workspace through the per-hunk review.
    pub const WORKTREE_REVIEW: &str = "tandem/worktree/review";
}

mod checkpoint;
mod options;
mod preview;
mod session;
mod worktree;

pub use checkpoint::*;
pub use options::*;
pub use preview::*;
pub use session::*;
pub use worktree::*;

/// Tool groups: the unit that profiles and `TANDEM_FEATURE_<GROUP>` switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolGroup {
    /// Files: read, write, edit, list, ...
    Fs,
    /// glob, grep.
    Search,
    /// bash and script tools.
    Exec,
    /// webfetch, websearch.
    Web,
    /// Questions to the person.
    Interact,
    /// todo and plan mode.
    Plan,
    /// Memory.
    Memory,
    /// Sub-agents.
    Agent,
    /// Language-server queries.
    Lsp,
    /// Tools of MCP servers.
    Mcp,
}

impl ToolGroup {
    /// Every group, in a stable order.
    pub const ALL: [ToolGroup; 10] = [
        Self::Fs,
        Self::Search,
        Self::Exec,
        Self::Web,
        Self::Interact,
        Self::Plan,
        Self::Memory,
        Self::Agent,
        Self::Lsp,
        Self::Mcp,
    ];

    /// The wire name (`"fs"`, ...), also the `<GROUP>` of `TANDEM_FEATURE_<GROUP>` in upper case.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fs => "fs",
            Self::Search => "search",
            Self::Exec => "exec",
            Self::Web => "web",
            Self::Interact => "interact",
            Self::Plan => "plan",
            Self::Memory => "memory",
            Self::Agent => "agent",
            Self::Lsp => "lsp",
            Self::Mcp => "mcp",
        }
    }
}

/// Permission modes of a session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ModeId {
    /// Ask for edits and commands.
    #[default]
    Default,
    /// Edits apply, commands ask.
    AutoEdit,
    /// Read-only until the plan is approved.
    Plan,
    /// Nothing asks.
    Yolo,
}

impl ModeId {
    /// Every mode, in the order shown to people.
    pub const ALL: [ModeId; 4] = [Self::Default, Self::AutoEdit, Self::Plan, Self::Yolo];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Default => "default",
            Self::AutoEdit => "auto-edit",
            Self::Plan => "plan",
            Self::Yolo => "yolo",
        }
    }

    /// How much the mode lets through without asking, from 0 (plan: it blocks) to 3 (yolo).
    pub fn laxness(self) -> u8 {
        match self {
            Self::Plan => 0,
            Self::Default => 1,
            Self::AutoEdit => 2,
            Self::Yolo => 3,
        }
    }
}

/// A tool as listed to the editor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// Canonical name.
    pub name: String,
    /// Other names that resolve to it.
    pub aliases: Vec<String>,
    /// What it does, for the model.
    pub description: String,
    /// Its group.
    pub group: ToolGroup,
    /// Whether it changes files or state.
    pub can_write: bool,
    /// Whether it may run concurrently with other calls.
    pub concurrency_safe: bool,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

/// The result of a tool call. A failed call sets `error`; it is not a JSON-RPC error.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ToolResult {
    /// One line saying what happened.
    pub title: String,
    /// The text the model sees.
    pub output: String,
    /// Structured details for editors and tests.
    pub metadata: Map<String, Value>,
    /// When set, the call failed: what failed, why, and what to do next.
    pub error: Option<String>,
    /// Extra content (images, resources).
    pub attachments: Vec<Value>,
}

impl From<ToolResult> for Value {
    /// The JSON that serializing the result gives, built by moving its strings and maps instead
    /// of copying them (a `read` result carries the whole text it read).
    fn from(result: ToolResult) -> Self {
        let ToolResult { title, output, metadata, error, attachments } = result;
        let mut object = Map::new();
        object.insert("title".into(), Value::String(title));
        object.insert("output".into(), Value::String(output));
        object.insert("metadata".into(), Value::Object(metadata));
        object.insert("error".into(), error.map_or(Value::Null, Value::String));
        object.insert("attachments".into(), Value::Array(attachments));
        Value::Object(object)
    }
}

/// Params of `tandem/tools/list`.
#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
pub struct ToolsListParams {}

/// Result of `tandem/tools/list`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct ToolsListResult {
    /// The tools enabled in this workspace.
    pub tools: Vec<ToolInfo>,
    /// The active profile.
    pub profile: String,
}

/// Params of `tandem/tools/call`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCallParams {
    /// Tool name or alias.
    pub name: String,
    /// Arguments, as the tool's schema says.
    #[serde(default = "empty_object")]
    pub arguments: Value,
    /// The session on whose behalf it runs; staleness checks are per session.
    #[serde(default)]
    pub session_id: Option<String>,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// A model provider, as the editor or config file names it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    /// `openai` (Chat Completions wire format) or `anthropic` (Messages).
    pub kind: Option<String>,
    /// Base URL, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: Option<String>,
    /// Model name.
    pub model: Option<String>,
    /// Name of the environment variable that holds the API key.
    pub api_key_env: Option<String>,
}

/// `initializationOptions` of `initialize`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializationOptions {
    /// Tool profile: minimal, standard, full or custom.
    pub profile: Option<String>,
    /// Starting permission mode.
    pub mode: Option<ModeId>,
    /// Model provider.
    pub provider: Option<ProviderConfig>,
    /// Permission rules from the editor's settings, added to those of the configuration files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permissions: Option<PermissionRules>,
}

/// Permission rules (`tool(specifier)` patterns, as in `[permissions]` of `config.toml`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionRules {
    /// Calls that run without asking (`bash(npm test:*)`, `edit(src/**)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// Calls that ask every time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ask: Vec<String>,
    /// Calls that never run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
}

/// `capabilities.experimental.tandem` in the `initialize` result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TandemCapabilities {
    /// Protocol version.
    pub version: String,
    /// Names of the enabled tools.
    pub tools: Vec<String>,
    /// Available modes.
    pub modes: Vec<ModeId>,
}

/// Params of `tandem/document/save`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DocumentSaveParams {
    /// The document to save.
    pub uri: String,
}

/// Result of `tandem/document/save`.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct DocumentSaveResult {
    /// Whether the editor saved it; when false the server writes the file itself.
    pub saved: bool,
}

/// The JSON Schema of every wire type, as one document with a definition per type.
pub fn protocol_schema() -> Value {
    let mut generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    macro_rules! add {
        ($($t:ty),*) => {$(
            generator.subschema_for::<$t>();
        )*};
    }
    add!(
        ToolInfo,
        ToolResult,
        ToolsListParams,
        ToolsListResult,
        ToolsCallParams,
        InitializationOptions,
        TandemCapabilities,
        DocumentSaveParams,
        DocumentSaveResult,
        SessionNewParams,
        SessionNewResult,
        SessionPromptParams,
        SessionPromptResult,
        SessionCancelParams,
        SessionSetModeParams,
        SessionListParams,
        SessionListResult,
        SessionLoadParams,
        SessionLoadResult,
        SessionDeleteParams,
        SessionCompactParams,
        SessionCompactResult,
        SessionConfigOptionsParams,
        SessionSetConfigOptionParams,
        SessionConfigOptionsResult,
        SessionNotification,
        RequestPermissionParams,
        RequestPermissionResult,
        DiagnosticsPreview,
        AskUserParams,
        AskUserResult,
        SessionCheckpointsParams,
        SessionCheckpointsResult,
        SessionRestoreParams,
        SessionRestoreResult,
        SessionCheckpointFileParams,
        SessionCheckpointFileResult,
        CommandsListParams,
        CommandsListResult,
        WorktreeListParams,
        WorktreeListResult,
        WorktreeReviewParams,
        WorktreeReviewResult
    );
    let defs = generator.take_definitions(true);
    serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Tandem editor protocol v0",
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_matches_checked_in_file() {
        let text = serde_json::to_string_pretty(&protocol_schema()).unwrap_or_default() + "\n";
        expect_test::expect_file!["../schema/protocol.schema.json"].assert_eq(&text);
    }

    #[test]
    fn tools_call_params_default_arguments() {
        let params: ToolsCallParams = serde_json::from_str(r#"{"name":"read"}"#).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(params.arguments, serde_json::json!({}));
        assert!(params.session_id.is_none());
        let mode: ModeId = serde_json::from_str("\"auto-edit\"").unwrap_or_default();
        assert_eq!(mode, ModeId::AutoEdit);
    }
}
