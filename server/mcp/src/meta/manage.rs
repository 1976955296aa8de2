//! `mcp_server_manage` (full profile only, asking the person first): list, health, add and remove MCP servers of this process.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;
use tandem_tool_api::{CommandDecision, Decl, ToolCheck, ToolContext, ToolError, ToolOutput};

use super::{Manager, MetaTool};
use crate::config::McpConfig;

const DESCRIPTION: &str = "Manage MCP servers of this process: `list`, `health` (of one or all), `add` (name + config \
    as in .mcp.json; the person approves), `remove` (the person approves). Changes last until \
    the process ends.";

/// `mcp_server_manage` arguments.
#[derive(Deserialize, JsonSchema)]
pub(super) struct Manage {
    /// `list`, `health`, `add` or `remove`.
    action: String,
    /// Server name (for `add`, `remove`, `health` of one server).
    #[serde(default)]
    name: Option<String>,
    /// For `add`: the server as in `.mcp.json` (`{"command", "args", "env"}` or `{"url", "headers"}`).
    #[serde(default)]
    config: Option<Value>,
}

/// `mcp_server_manage` (full profile only, asking the person first): list, health, add and remove MCP servers of this process.
impl MetaTool for Manage {
    const DECL: Decl = Decl::new("mcp_server_manage", ToolGroup::Mcp, DESCRIPTION).writes();

    async fn run(self, manager: Manager, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        match self.action.as_str() {
            "list" | "health" => {
                let mut text = String::new();
                for server in manager.servers() {
                    if self.name.as_deref().is_some_and(|n| n != server.name()) {
                        continue;
                    }
                    let health = server.health().await;
                    writeln!(
                        text,
                        "- `{}` ({}): {}, {} tools, {} calls, {} failed{}",
                        server.name(),
                        server.config.source,
                        health.state,
                        health.tools,
                        health.calls.0,
                        health.calls.1,
                        health.last_error.map(|e| format!("; last error: {e}")).unwrap_or_default()
                    )
                    .ok();
                }
                Ok(ToolOutput::new("MCP servers", if text.is_empty() { "(no servers)".into() } else { text }))
            }
            action @ ("add" | "remove") => {
                let Some(name) = self.name else {
                    return Err(ToolError::new(format!("`{action}` needs `name`")));
                };
                if let Some(approver) = &ctx.approver {
                    let check = ToolCheck {
                        tool: "mcp_server_manage".into(),
                        server: Some(name.clone()),
                        arguments: json!({"action": action, "name": name, "config": self.config}),
                        reason: format!("it would {action} an MCP server (a program or endpoint tools run on)"),
                    };
                    match approver.confirm_tool(&check).await {
                        CommandDecision::Allow => {}
                        CommandDecision::Reject { .. } | CommandDecision::Cancelled | CommandDecision::RunSandboxed => {
                            return Err(ToolError::new(format!("the person did not allow to {action} `{name}`")));
                        }
                    }
                }
                if action == "remove" {
                    return if manager.remove_server(&name).await {
                        Ok(ToolOutput::new(format!("Removed MCP server {name}"), format!("`{name}` removed.")))
                    } else {
                        Err(ToolError::new(format!("no MCP server `{name}`")))
                    };
                }
                let Some(config) = self.config else {
                    return Err(ToolError::new("`add` needs `config` ({\"command\", \"args\"} or {\"url\"})"));
                };
                let mut parsed = McpConfig::default();
                parsed.merge(&json!({"mcpServers": {name.clone(): config}}), "mcp_server_manage", &|v| {
                    std::env::var(v).ok()
                });
                let Some(server) = parsed.servers.remove(&name) else {
                    return Err(ToolError::new(format!(
                        "invalid server configuration: {}",
                        parsed.warnings.join("; ")
                    )));
                };
                match manager.add_server(server).await {
                    Ok(tools) => Ok(ToolOutput::new(
                        format!("Added MCP server {name}"),
                        format!("`{name}` connected with {tools} tools."),
                    )),
                    Err(err) => Err(ToolError::new(format!("`{name}` was added but does not connect: {err}"))),
                }
            }
            other => Err(ToolError::new(format!("unknown action `{other}`: use list, health, add or remove"))),
        }
    }
}
