//! `mcp_discover`: the MCP servers (with their state) and their tools ranked for a query, with schemas.

use std::fmt::Write as _;

use super::{Manager, MetaTool};
use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput};

const DESCRIPTION: &str = "List the MCP servers (with their state) and their tools ranked for a query, with each tool's \
    argument schema. Use it to find a tool that is not in your tool list, then call it with \
    mcp_call_chain (one step) or directly by name if listed.";

/// `mcp_discover` arguments.
#[derive(Deserialize, JsonSchema)]
pub(super) struct Discover {
    /// What you want to do, in words; tools are ranked by relevance to it (and by reliability,
    /// latency and what usually follows your last call). Empty: all tools.
    #[serde(default)]
    query: Option<String>,
    /// Only this server's tools.
    #[serde(default)]
    server: Option<String>,
    /// How many tools to list (default 10).
    #[serde(default)]
    limit: Option<usize>,
}

/// `mcp_discover`: the MCP servers (with their state) and their tools ranked for a query, with schemas.
impl MetaTool for Discover {
    const DECL: Decl =
        Decl::new("mcp_discover", ToolGroup::Mcp, DESCRIPTION).keywords(&["mcp", "tools", "search", "servers"]);

    async fn run(self, manager: Manager, _ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        manager.ready(std::time::Duration::from_secs(10)).await;
        let mut text = String::from("Servers:\n");
        for server in manager.servers() {
            let health = server.health().await;
            let error = health.last_error.map(|e| format!(" — last error: {e}")).unwrap_or_default();
            writeln!(text, "- `{}`: {}, {} tools{error}", server.name(), health.state, health.tools).ok();
        }
        let limit = self.limit.unwrap_or(10).max(1);
        let ranked: Vec<_> = manager
            .rank(self.query.as_deref().unwrap_or_default())
            .into_iter()
            .filter(|(_, s, _)| self.server.as_deref().is_none_or(|name| name == s.name()))
            .take(limit)
            .collect();
        writeln!(text, "\nTools (best first):").ok();
        for (rank, server, tool) in &ranked {
            writeln!(
                text,
                "- `{}` (server `{}`{}; score {:.2}): {}\n  arguments: {}",
                tool.exposed,
                server.name(),
                if tool.read_only { ", read-only" } else { "" },
                rank.score,
                tool.description.lines().next().unwrap_or_default(),
                tool.schema
            )
            .ok();
        }
        if ranked.is_empty() {
            text.push_str("(none)\n");
        }
        Ok(ToolOutput::new(format!("{} MCP tools", ranked.len()), text).with("count", ranked.len()))
    }
}
