//! Meta-tools over all MCP servers, one per file: `mcp_discover` (ranked servers and tools,
//! with schemas), `mcp_call_chain` (calls in order, each output passed on as `{{previous}}`),
//! `mcp_fan_out` (calls at once, results together), `mcp_session_summary`, and — full profile
//! only, asking the person first — `mcp_server_manage` (list / add / remove / health).

mod call_chain;
mod discover;
mod fan_out;
mod manage;
mod summary;

use std::future::Future;
use std::marker::PhantomData;
use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tandem_tool_api::{Decl, Tool, ToolContext, ToolError, ToolOutput, TypedTool, typed};

use crate::config::ServerConfig;
use crate::error::McpError;
use crate::ranking::Ranked;
use crate::server::{McpServer, RemoteTool};
use crate::tool::Dispatcher;
use crate::tracking::CallRecord;

/// What the meta-tools need of the MCP client (the manager implements it; the tools hold it
/// weakly, since the manager holds them).
#[async_trait::async_trait]
pub(crate) trait Servers: Dispatcher {
    /// Every configured server, in name order.
    fn servers(&self) -> Vec<Arc<McpServer>>;
    /// Waits (bounded) for the servers to list their tools.
    async fn ready(&self, wait: Duration);
    /// Every known tool ranked for `query`, best first.
    fn rank(&self, query: &str) -> Vec<(Ranked, Arc<McpServer>, RemoteTool)>;
    /// A tool by its exposed name or as `<server>/<tool>`.
    fn lookup(&self, name: &str) -> Option<(Arc<McpServer>, RemoteTool)>;
    /// Adds (or replaces) a server and connects it; its tool count.
    async fn add_server(&self, config: ServerConfig) -> Result<usize, McpError>;
    /// Removes a server; whether there was one.
    async fn remove_server(&self, name: &str) -> bool;
    /// The MCP calls of a session.
    fn session_calls(&self, session: Option<&str>) -> Vec<CallRecord>;
    /// The session's MCP log.
    fn log_path(&self, session: Option<&str>) -> PathBuf;
}

/// The client as the meta-tools hold it.
type Client = Weak<dyn Servers>;

/// The meta-tools.
pub(crate) fn all(manager: Client, manage: bool) -> Vec<Arc<dyn Tool>> {
    let mut tools: Vec<Arc<dyn Tool>> = vec![
        meta::<discover::Discover>(&manager),
        meta::<call_chain::CallChain>(&manager),
        meta::<fan_out::FanOut>(&manager),
        meta::<summary::Summary>(&manager),
    ];
    if manage {
        tools.push(meta::<manage::Manage>(&manager));
    }
    tools
}

/// The client, as a meta-tool's call gets it.
type Manager = Arc<dyn Servers>;

/// A meta-tool, as the arguments of one call: declared as a [`TypedTool`] is, and run with the
/// MCP client ([`Meta`] holds it and hands it to each call).
trait MetaTool: DeserializeOwned + JsonSchema + Send + Sync + 'static {
    /// Name, group, description and effects.
    const DECL: Decl;
    /// Runs the call with the client and the call's context.
    fn run(self, manager: Manager, ctx: ToolContext) -> impl Future<Output = Result<ToolOutput, ToolError>> + Send;
}

/// A meta-tool as the registry holds it: with the client, held weakly (the manager holds its
/// tools).
struct Meta<T> {
    manager: Client,
    tool: PhantomData<fn() -> T>,
}

impl<T: MetaTool> TypedTool for Meta<T> {
    const DECL: Decl = T::DECL;
    type Args = T;

    async fn run(&self, args: T, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let manager = self.manager.upgrade().ok_or_else(|| ToolError::new("the MCP client has shut down"))?;
        args.run(manager, ctx).await
    }
}

/// The meta-tool `T` over `manager`.
fn meta<T: MetaTool>(manager: &Client) -> Arc<dyn Tool> {
    typed(Meta::<T> { manager: manager.clone(), tool: PhantomData })
}

/// One call of a chain or fan-out.
#[derive(Deserialize, JsonSchema, Clone)]
struct Step {
    /// Tool name: `mcp__<server>__<tool>` (as mcp_discover lists it) or `<server>/<tool>`.
    tool: String,
    /// Arguments (a JSON object). In a chain, `{{previous}}` inside a string is replaced by the
    /// previous step's output.
    #[serde(default)]
    arguments: Value,
}

fn substitute(value: &Value, previous: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("{{previous}}", previous)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, previous)).collect()),
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), substitute(v, previous))).collect()),
        other => other.clone(),
    }
}

async fn run_step(manager: &dyn Servers, step: &Step, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let Some((server, remote)) = manager.lookup(&step.tool) else {
        return Err(ToolError::new(format!(
            "no MCP tool `{}` is known; mcp_discover lists them (names look like `mcp__<server>__<tool>`)",
            step.tool
        )));
    };
    let arguments = if step.arguments.is_null() { json!({}) } else { step.arguments.clone() };
    let arguments = tandem_tool_api::validate_arguments(&remote.schema, arguments, false)
        .map_err(|e| ToolError::new(format!("invalid arguments for `{}`: {e}", remote.exposed)))?
        .value;
    crate::dispatch::call(manager, &server, &remote, arguments, ctx).await
}
