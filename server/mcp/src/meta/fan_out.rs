//! `mcp_fan_out`: MCP calls at once, results together.

use std::fmt::Write as _;
use std::time::Instant;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::ToolGroup;
use tandem_tools::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec, schema_for};

use super::{Client, parse, upgrade};
use super::{Step, run_step};

/// `mcp_fan_out` arguments.
#[derive(Deserialize, JsonSchema)]
struct FanOutArgs {
    /// The calls, run at the same time (at most 8).
    calls: Vec<Step>,
}

/// `mcp_fan_out`: MCP calls at once, results together.
pub(super) struct FanOut {
    spec: ToolSpec,
    manager: Client,
}

impl FanOut {
    pub(super) fn new(manager: Client) -> Self {
        let spec = ToolSpec::new(
            "mcp_fan_out",
            ToolGroup::Mcp,
            "Call several MCP tools at the same time (at most 8) and get all results together, each marked ok or failed.",
            schema_for::<FanOutArgs>(),
        );
        // It may call tools that write: it runs alone (approval is per call).
        let spec = ToolSpec { concurrency_safe: false, ..spec };
        Self { spec, manager }
    }
}

#[async_trait]
impl Tool for FanOut {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let manager = upgrade(&self.manager)?;
        let args: FanOutArgs = parse(args)?;
        if args.calls.is_empty() || args.calls.len() > 8 {
            return Err(ToolError::new("`calls` must hold 1 to 8 {tool, arguments}"));
        }
        let started = Instant::now();
        let results =
            futures_util::future::join_all(args.calls.iter().map(|step| run_step(manager.as_ref(), step, &ctx))).await;
        let failed = results.iter().filter(|r| r.is_err()).count();
        let mut text = String::new();
        for (i, (step, result)) in args.calls.iter().zip(results).enumerate() {
            match result {
                Ok(out) => writeln!(text, "## {}. `{}` — ok\n{}\n", i + 1, step.tool, out.output),
                Err(err) => writeln!(text, "## {}. `{}` — failed\n{}\n", i + 1, step.tool, err.message),
            }
            .ok();
        }
        Ok(ToolOutput::new(format!("{} MCP calls, {failed} failed", args.calls.len()), text)
            .with("failed", failed)
            .with("elapsedMs", started.elapsed().as_millis() as u64))
    }
}
