//! The Tool trait and what a call gets and returns.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tandem_text::BufferCache;

use crate::output::{ToolError, ToolOutput};
use crate::schema::schema_for;
use crate::spec::{Decl, ToolSpec};
use crate::{CodeIntel, EditorClient, Service, Workspace};

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

    /// Whether the call has `service`.
    pub fn has(&self, service: Service) -> bool {
        match service {
            Service::Editor => self.editor.is_some(),
            Service::Intel => self.intel.is_some(),
            Service::Approver => self.approver.is_some(),
            Service::Host => self.host.is_some(),
            Service::Registry => self.registry.is_some(),
            Service::Writes => self.writes.is_some(),
        }
    }

    /// The directory a tool's `path` argument names (the working directory when it is absent),
    /// or an error that says what is there instead: `if_file` and `if_missing` end the message
    /// with what to do.
    pub fn directory(&self, path: Option<&str>, if_file: &str, if_missing: &str) -> Result<PathBuf, ToolError> {
        let dir = self.workspace.resolve(path.unwrap_or("."), &self.working_dir)?;
        if dir.is_dir() {
            return Ok(dir);
        }
        let shown = self.workspace.display(&dir);
        Err(ToolError::new(if dir.exists() {
            format!("`{shown}` is a file, not a directory; {if_file}")
        } else {
            format!("`{shown}` does not exist; {if_missing}")
        }))
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

/// A tool with typed arguments. Implementations live one per file and declare, once, what the
/// tool is ([`TypedTool::DECL`]) and what it takes ([`TypedTool::Args`]); their
/// [`ToolSpec`] is derived from the two ([`TypedTool::spec`]), and [`typed`] makes one the
/// [`Tool`] the registry holds, whose `call` deserializes the validated arguments once
/// ([`parse_args`]) and hands them to [`TypedTool::run`].
pub trait TypedTool: Send + Sync + Sized + 'static {
    /// Name, group, description and effects.
    const DECL: Decl;
    /// The argument struct: `spec().parameters` is its schema ([`schema_for`]).
    type Args: DeserializeOwned + JsonSchema + Send;
    /// Runs the tool with its arguments (written `async fn run`).
    fn run(
        &self,
        args: Self::Args,
        ctx: ToolContext,
    ) -> impl std::future::Future<Output = Result<ToolOutput, ToolError>> + Send;

    /// The spec: [`TypedTool::DECL`] with the schema of [`TypedTool::Args`].
    fn spec() -> ToolSpec {
        Self::DECL.spec_lazy(schema_for::<Self::Args>)
    }
}

/// Declares a tool that needs no state of its own, once: `tool!(pub(crate) Read(Args) = DECL)`
/// is the unit struct `Read` and its [`TypedTool`] impl, with the declaration `DECL` (a
/// [`Decl`](crate::Decl) expression), the argument type `Args`, and as its `run` the module's
/// async function `run(args: Args, ctx: ToolContext)`; `tool!(... = DECL, read_file)` names
/// another (a function or a closure), for a module that declares more than one tool.
#[macro_export]
macro_rules! tool {
    ($(#[$attr:meta])* $vis:vis $name:ident($args:ty) = $decl:expr) => {
        $crate::tool!($(#[$attr])* $vis $name($args) = $decl, run);
    };
    ($(#[$attr:meta])* $vis:vis $name:ident($args:ty) = $decl:expr, $run:expr) => {
        $(#[$attr])*
        $vis struct $name;

        impl $crate::TypedTool for $name {
            const DECL: $crate::Decl = $decl;
            type Args = $args;

            async fn run(
                &self,
                args: $args,
                ctx: $crate::ToolContext,
            ) -> Result<$crate::ToolOutput, $crate::ToolError> {
                ($run)(args, ctx).await
            }
        }
    };
}

/// A [`TypedTool`] with its derived spec: the [`Tool`] the registry holds ([`typed`]).
struct Typed<T> {
    spec: ToolSpec,
    tool: T,
}

#[async_trait]
impl<T: TypedTool> Tool for Typed<T> {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args = parse_args(args)?;
        self.tool.run(args, ctx).await
    }
}

/// `tool` as the registry holds it, its spec derived once.
pub fn typed<T: TypedTool>(tool: T) -> Arc<dyn Tool> {
    Arc::new(Typed { spec: T::spec(), tool })
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
    use tandem_protocol::ToolGroup;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Args {
        /// Who to greet.
        name: String,
    }

    struct Greet;

    impl TypedTool for Greet {
        const DECL: Decl = Decl::new("greet", ToolGroup::Fs, "Greets.");
        type Args = Args;

        async fn run(&self, args: Args, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
            Ok(ToolOutput::new("Greeted", format!("hello {}", args.name)))
        }
    }

    tool!(Shout(Args) = Decl::new("shout", ToolGroup::Fs, "Shouts."), shout);

    async fn shout(args: Args, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::new("Shouted", args.name.to_uppercase()))
    }

    /// A person's context in a fresh workspace (kept while the directory lives).
    fn context() -> Result<(tempfile::TempDir, ToolContext), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let ctx = ToolContext::new(Arc::new(Workspace::new(dir.path(), &[])?), Arc::new(BufferCache::new()));
        Ok((dir, ctx))
    }

    fn call(tool: &dyn Tool, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        tool.call(args, ctx).now_or_never().unwrap_or_else(|| Err(ToolError::new("the call did not finish")))
    }

    #[test]
    fn a_typed_tool_is_a_tool_that_gets_its_arguments_parsed() -> Result<(), Box<dyn std::error::Error>> {
        let (_dir, ctx) = context()?;
        let tool = typed(Greet);
        assert_eq!(tool.spec().name, "greet");
        let out = call(tool.as_ref(), json!({"name": "Ada"}), ctx.clone()).map_err(|e| e.message)?;
        assert_eq!(out.output, "hello Ada");
        let err = call(tool.as_ref(), json!({"name": 1}), ctx).err().map(|e| e.message).unwrap_or_default();
        assert!(err.starts_with("invalid arguments: invalid type: integer `1`"), "{err}");
        Ok(())
    }

    #[test]
    fn a_tool_declared_by_the_macro_is_a_typed_tool_that_runs_its_function() -> Result<(), Box<dyn std::error::Error>> {
        let (_dir, ctx) = context()?;
        let tool = typed(Shout);
        assert_eq!(tool.spec().name, "shout");
        assert_eq!(tool.spec().parameters, schema_for::<Args>());
        let out = call(tool.as_ref(), json!({"name": "Ada"}), ctx).map_err(|e| e.message)?;
        assert_eq!(out.output, "ADA");
        Ok(())
    }
}
