//! `mcp_fan_out`: MCP calls at once, results together.

use std::fmt::Write as _;
use std::time::Instant;

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput};

use super::{Manager, MetaTool};
use super::{Step, run_step};

/// `mcp_fan_out` arguments.
#[derive(Deserialize, JsonSchema)]
pub(super) struct FanOut {
    /// The calls, run at the same time (at most 8).
    calls: Vec<Step>,
}

/// `mcp_fan_out`: MCP calls at once, results together.
impl MetaTool for FanOut {
    // It may call tools that write: it runs alone (approval is per call).
    const DECL: Decl = Decl::new(
        "mcp_fan_out",
        ToolGroup::Mcp,
        "Call several MCP tools at the same time (at most 8) and get all results together, each marked ok or failed.",
    )
    .exclusive();

    async fn run(self, manager: Manager, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if self.calls.is_empty() || self.calls.len() > 8 {
            return Err(ToolError::new("`calls` must hold 1 to 8 {tool, arguments}"));
        }
        let started = Instant::now();
        let results =
            futures_util::future::join_all(self.calls.iter().map(|step| run_step(manager.as_ref(), step, &ctx))).await;
        let failed = results.iter().filter(|r| r.is_err()).count();
        let mut text = String::new();
        for (i, (step, result)) in self.calls.iter().zip(results).enumerate() {
            match result {
                Ok(out) => writeln!(text, "## {}. `{}` — ok\n{}\n", i + 1, step.tool, out.output),
                Err(err) => writeln!(text, "## {}. `{}` — failed\n{}\n", i + 1, step.tool, err.message),
            }
            .ok();
        }
        Ok(ToolOutput::new(format!("{} MCP calls, {failed} failed", self.calls.len()), text)
            .with("failed", failed)
            .with("elapsedMs", started.elapsed().as_millis() as u64))
    }
}
