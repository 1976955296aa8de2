//! `mcp_session_summary`: what this session did with MCP tools.

use std::fmt::Write as _;

use super::{Manager, MetaTool};
use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput};

/// `mcp_session_summary` arguments.
#[derive(Deserialize, JsonSchema)]
pub(super) struct Summary {}

/// `mcp_session_summary`: what this session did with MCP tools.
impl MetaTool for Summary {
    const DECL: Decl = Decl::new(
        "mcp_session_summary",
        ToolGroup::Mcp,
        "What this session did with MCP tools: calls per tool, failures, mean latency, and the servers' states.",
    );

    async fn run(self, manager: Manager, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let calls = manager.session_calls(ctx.session_id.as_deref());
        let mut per_tool: std::collections::BTreeMap<&str, (u64, u64, u64)> = Default::default();
        for call in &calls {
            let entry = per_tool.entry(&call.tool).or_default();
            entry.0 += 1;
            entry.1 += u64::from(!call.ok);
            entry.2 += call.ms;
        }
        let mut text = format!("{} MCP calls in this session.\n", calls.len());
        for (tool, (n, failed, ms)) in &per_tool {
            writeln!(text, "- `{tool}`: {n} calls, {failed} failed, mean {} ms", ms / n.max(&1)).ok();
        }
        writeln!(text, "\nServers:").ok();
        for server in manager.servers() {
            let health = server.health().await;
            writeln!(
                text,
                "- `{}`: {} ({} calls, {} failed)",
                server.name(),
                health.state,
                health.calls.0,
                health.calls.1
            )
            .ok();
        }
        let log = manager.log_path(ctx.session_id.as_deref());
        writeln!(text, "\nLog: {}", log.display()).ok();
        Ok(ToolOutput::new("MCP session summary", text).with("calls", calls.len()))
    }
}
