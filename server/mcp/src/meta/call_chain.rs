//! `mcp_call_chain`: MCP calls in order, each output passed on as `{{previous}}`.

use std::fmt::Write as _;

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput};

use super::{Manager, MetaTool};
use super::{Step, run_step, substitute};

const DESCRIPTION: &str = "Call MCP tools one after another; `{{previous}}` in a string argument is replaced by the \
    previous step's output. Stops at the first failure and says which step failed. Also the way \
    to call an MCP tool that is not in your tool list (a chain of one step).";

/// `mcp_call_chain` arguments.
#[derive(Deserialize, JsonSchema)]
pub(super) struct CallChain {
    /// The calls, run in order; the chain stops at the first failure.
    steps: Vec<Step>,
}

/// `mcp_call_chain`: MCP calls in order, each output passed on as `{{previous}}`.
impl MetaTool for CallChain {
    // It may call tools that write: it runs alone (approval is per call).
    const DECL: Decl = Decl::new("mcp_call_chain", ToolGroup::Mcp, DESCRIPTION).exclusive();

    async fn run(self, manager: Manager, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        if self.steps.is_empty() {
            return Err(ToolError::new("`steps` is empty: give at least one {tool, arguments}"));
        }
        let mut previous = String::new();
        let mut text = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            let step = Step { tool: step.tool.clone(), arguments: substitute(&step.arguments, &previous) };
            match run_step(manager.as_ref(), &step, &ctx).await {
                Ok(out) => {
                    writeln!(text, "## step {}: `{}` — ok\n{}\n", i + 1, step.tool, out.output).ok();
                    previous = out.output;
                }
                Err(err) => {
                    return Err(ToolError::new(format!(
                        "{text}## step {}: `{}` — failed\n{}\n(The chain stopped here; steps after it did not run.)",
                        i + 1,
                        step.tool,
                        err.message
                    ))
                    .with("failedStep", i + 1));
                }
            }
        }
        Ok(ToolOutput::new(format!("{} MCP calls", self.steps.len()), text).with("final", previous))
    }
}
