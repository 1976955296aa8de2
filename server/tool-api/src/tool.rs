//! The Tool trait and what a call gets and returns.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tandem_protocol::ToolGroup;
use tandem_text::BufferCache;

use crate::{CodeIntel, EditorClient, Workspace};

/// Everything the registry and the editor need to know about a tool, fixed at construction.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// Canonical name.
    pub name: &'static str,
    /// Names models already know (`read_file`, ...).
    pub aliases: &'static [&'static str],
    /// Words for tool search.
    pub keywords: &'static [&'static str],
    /// What it does and when to use it, for the model.
    pub description: &'static str,
    /// JSON Schema of the arguments.
    pub parameters: Value,
    /// Its group (what profiles switch).
    pub group: ToolGroup,
    /// It changes files or state.
    pub can_write: bool,
    /// It may run concurrently with other calls.
    pub concurrency_safe: bool,
    /// Unknown arguments are an error (otherwise they are ignored and reported).
    pub strict: bool,
    /// Always offered to the model, even when tool search hides others.
    pub always_load: bool,
    /// What it may change: the gate (the registry, the commit path, the command check) and the
    /// MCP annotations read it.
    pub effect: Effect,
    /// Its changes may destroy or overwrite (as opposed to only adding).
    pub destructive: bool,
}

/// What a tool may change, declared once in its [`ToolSpec`]. Every effect but the first three
/// goes through the gate: the person's approval (unless the session's mode says otherwise),
/// blocked in plan mode, refused by a read-only `tandem mcp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Effect {
    /// Reads the workspace and changes nothing.
    Read,
    /// Reads from the network (web fetch and search) and changes nothing.
    Network,
    /// Changes only the session's own state (todo list, plan mode, questions, sub-agents, its
    /// background jobs).
    Session,
    /// Changes workspace files. The change is staged and goes through the commit path, which
    /// shows it to the person as a diff before anything is written.
    Files,
    /// Runs commands. Each command is checked (refused, read-only, or asks) before it runs.
    Commands,
    /// Changes state outside the workspace's files that later sessions read (memories). The
    /// registry asks before the call.
    State,
    /// A tool of an outside (MCP) server that does not declare itself read-only: the MCP
    /// client asks before the call.
    External,
}

impl Effect {
    /// It changes nothing outside the session.
    pub fn is_read_only(self) -> bool {
        matches!(self, Self::Read | Self::Network | Self::Session)
    }

    /// Why the person is asked, in a few words.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Read | Self::Network | Self::Session => "changes nothing",
            Self::Files => "changes files",
            Self::Commands => "runs commands",
            Self::State => "changes what later sessions remember",
            Self::External => "the server does not mark this tool read-only, so it may change things",
        }
    }
}

impl ToolSpec {
    /// A tool that changes nothing, may run concurrently and asks nobody; the setters below
    /// change that. Its effect starts from its group: web tools read the network; plan,
    /// question and sub-agent tools change only the session; the rest read.
    pub fn new(name: &'static str, group: ToolGroup, description: &'static str, parameters: Value) -> Self {
        Self {
            name,
            aliases: &[],
            keywords: &[],
            description,
            parameters,
            group,
            can_write: false,
            concurrency_safe: true,
            strict: false,
            always_load: false,
            effect: match group {
                ToolGroup::Web => Effect::Network,
                ToolGroup::Plan | ToolGroup::Interact | ToolGroup::Agent => Effect::Session,
                _ => Effect::Read,
            },
            destructive: false,
        }
    }

    /// Other names that resolve to the tool.
    pub fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    /// Words for tool search.
    pub fn keywords(mut self, keywords: &'static [&'static str]) -> Self {
        self.keywords = keywords;
        self
    }

    /// The tool changes workspace files through the commit path (which asks with the diff).
    pub fn writes(self) -> Self {
        self.with_effect(Effect::Files)
    }

    /// The tool runs commands (each checked, and asked about, before it runs).
    pub fn runs_commands(self) -> Self {
        self.with_effect(Effect::Commands)
    }

    /// The tool changes state that later sessions read (the registry asks before the call).
    pub fn changes_state(self) -> Self {
        self.with_effect(Effect::State)
    }

    /// A tool of an outside server that may change things (its client asks before the call).
    pub fn external(self) -> Self {
        self.with_effect(Effect::External)
    }

    /// The tool reads from the network.
    pub fn network(mut self) -> Self {
        self.effect = Effect::Network;
        self
    }

    /// The tool changes only the session's own state.
    pub fn session_only(mut self) -> Self {
        self.effect = Effect::Session;
        self
    }

    /// Its changes only add (a new memory, text appended): MCP's `destructiveHint: false`.
    pub fn additive(mut self) -> Self {
        self.destructive = false;
        self
    }

    /// A changing effect: the tool runs alone, and may destroy unless marked [`Self::additive`].
    fn with_effect(mut self, effect: Effect) -> Self {
        self.effect = effect;
        self.can_write = true;
        self.concurrency_safe = false;
        self.destructive = true;
        self
    }

    /// Always offered to the model.
    pub fn always_load(mut self) -> Self {
        self.always_load = true;
        self
    }

    /// Unknown arguments are an error.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }
}

/// The context of one call.
#[derive(Clone)]
pub struct ToolContext {
    /// The agent session on whose behalf the call runs; `None` for the person at the editor
    /// or the command line.
    pub session_id: Option<String>,
    /// The session's id of this tool call (what the editor shows it under), in a session.
    pub tool_call_id: Option<String>,
    /// The workspace (root and confinement).
    pub workspace: Arc<Workspace>,
    /// Directory that relative paths in commands start from (inside the workspace).
    pub working_dir: PathBuf,
    /// The person confirmed this call.
    pub user_confirmed: bool,
    /// A file must have been read in this session (`session_id`) before it is changed.
    pub require_read: bool,
    /// The session that spawned this one (sub-agents).
    pub parent_session: Option<String>,
    /// Sub-agent depth of the session (0 for a top-level session).
    pub agent_depth: u32,
    /// Maximum sub-agent depth.
    pub max_agent_depth: u32,
    /// The buffer cache.
    pub cache: Arc<BufferCache>,
    /// The editor, when one is connected.
    pub editor: Option<Arc<dyn EditorClient>>,
    /// Language servers (the `lsp` tool, diagnostics after edits), when configured.
    pub intel: Option<Arc<dyn CodeIntel>>,
    /// Who approves changes and commands of this call; `None` when the person made the call
    /// (nothing asks).
    pub approver: Option<Arc<dyn crate::Approver>>,
    /// The agent session's services (todo list, questions, plan mode, sub-agents); `None`
    /// outside a session.
    pub host: Option<Arc<dyn crate::session::SessionHost>>,
    /// The registry the call came through (for `tool_search`).
    pub registry: Option<Arc<crate::Registry>>,
    /// Where the commit path records what this call wrote (checkpoints tell the agent's changes
    /// from the person's by it); `None`: nobody keeps it (the person's own calls).
    pub writes: Option<Arc<crate::WriteLog>>,
}

impl ToolContext {
    /// A context for the person at the editor or command line, in `workspace`.
    pub fn new(workspace: Arc<Workspace>, cache: Arc<BufferCache>) -> Self {
        Self {
            session_id: None,
            tool_call_id: None,
            working_dir: workspace.root().to_path_buf(),
            workspace,
            user_confirmed: true,
            require_read: false,
            parent_session: None,
            agent_depth: 0,
            max_agent_depth: 3,
            cache,
            editor: None,
            intel: None,
            approver: None,
            host: None,
            registry: None,
            writes: None,
        }
    }
}

/// A successful call.
#[derive(Clone, Debug, Default)]
pub struct ToolOutput {
    /// One line saying what happened.
    pub title: String,
    /// The text the model sees.
    pub output: String,
    /// Structured details.
    pub metadata: Map<String, Value>,
}

impl ToolOutput {
    /// An output with a title and text.
    pub fn new(title: impl Into<String>, output: impl Into<String>) -> Self {
        Self { title: title.into(), output: output.into(), metadata: Map::new() }
    }

    /// Adds a metadata entry.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }

    /// Adds several metadata entries.
    pub fn with_all(mut self, entries: Map<String, Value>) -> Self {
        self.metadata.extend(entries);
        self
    }
}

/// A failed call: a message the model can act on (what failed, why, what to do next).
#[derive(Clone, Debug, Default)]
pub struct ToolError {
    /// The message.
    pub message: String,
    /// Structured details.
    pub metadata: Map<String, Value>,
}

impl ToolError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), metadata: Map::new() }
    }

    /// Adds a metadata entry.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }
}

impl From<tandem_text::TextError> for ToolError {
    fn from(err: tandem_text::TextError) -> Self {
        Self::new(err.to_string())
    }
}

impl From<crate::PathError> for ToolError {
    fn from(err: crate::PathError) -> Self {
        Self::new(err.to_string())
    }
}

/// A tool, as the registry holds it (`Arc<dyn Tool>`): `call` gets arguments already validated
/// against `spec().parameters`. The built-in tools implement [`TypedTool`], which comes with this
/// trait; a tool whose arguments have no fixed type (an MCP server's) implements it directly.
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The tool's fixed description.
    fn spec(&self) -> &ToolSpec;
    /// Runs the tool.
    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
}

/// A tool with typed arguments. Implementations live one per file. Every `TypedTool` is a
/// [`Tool`] (one blanket impl): its `call` deserializes the validated arguments once into
/// [`TypedTool::Args`] ([`parse_args`]) and hands them to [`TypedTool::run`].
#[async_trait]
pub trait TypedTool: Send + Sync + 'static {
    /// The argument struct: `spec().parameters` is its schema ([`schema_for`](crate::schema_for)).
    type Args: DeserializeOwned + JsonSchema + Send;
    /// The tool's fixed description.
    fn spec(&self) -> &ToolSpec;
    /// Runs the tool with its arguments.
    async fn run(&self, args: Self::Args, ctx: ToolContext) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<T: TypedTool> Tool for T {
    fn spec(&self) -> &ToolSpec {
        TypedTool::spec(self)
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args = parse_args(args)?;
        self.run(args, ctx).await
    }
}

/// Deserializes validated arguments into a tool's argument struct: what every [`TypedTool`]'s
/// `call` starts with. Public for tools that implement [`Tool`] directly.
pub fn parse_args<T: DeserializeOwned>(args: Value) -> Result<T, ToolError> {
    serde_json::from_value(args).map_err(|err| ToolError::new(format!("invalid arguments: {err}")))
}

#[cfg(test)]
mod tests {
    use futures_util::FutureExt;
    use serde_json::json;

    use super::*;
    use crate::schema_for;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        /// Who to greet.
        name: String,
    }

    struct Greet(ToolSpec);

    #[async_trait]
    impl TypedTool for Greet {
        type Args = Args;

        fn spec(&self) -> &ToolSpec {
            &self.0
        }

        async fn run(&self, args: Args, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::new("Greeted", format!("hello {}", args.name)))
        }
    }

    fn call(tool: &dyn Tool, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        tool.call(args, ctx).now_or_never().unwrap_or_else(|| Err(ToolError::new("the call did not finish")))
    }

    #[test]
    fn a_typed_tool_is_a_tool_that_gets_its_arguments_parsed() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let ctx = ToolContext::new(Arc::new(Workspace::new(dir.path(), &[])?), Arc::new(BufferCache::new()));
        let tool: Arc<dyn Tool> =
            Arc::new(Greet(ToolSpec::new("greet", ToolGroup::Fs, "Greets.", schema_for::<Args>())));
        assert_eq!(tool.spec().name, "greet");
        let out = call(tool.as_ref(), json!({"name": "Ada"}), ctx.clone()).map_err(|e| e.message)?;
        assert_eq!(out.output, "hello Ada");
        let err = call(tool.as_ref(), json!({"name": 1}), ctx).err().map(|e| e.message).unwrap_or_default();
        assert!(err.starts_with("invalid arguments: invalid type: integer `1`"), "{err}");
        Ok(())
    }
}
