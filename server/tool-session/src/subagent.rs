//! `agent` / `agent_status`: sub-agents with their own context and a filtered tool set.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::session::{AgentType, SubAgentRequest, SubAgentState, SubAgentStatus};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{SESSION, host};

const AGENT: &str = "Hand a self-contained task to a sub-agent with its own context, and get its final answer. \
    Types: `explore` (read-only: read, search, language servers, web; for finding things across many files), \
    `plan` (read-only; returns a step-by-step plan), `verify` (read, search and bash; for checking work), `general` \
    (every tool; its edits and commands still ask the person). Write the prompt so it stands alone: the sub-agent \
    sees nothing of this conversation. `run_in_background` returns at once with an id for `agent_status`.";
const STATUS: &str = "The state of a sub-agent started with `run_in_background`, and its answer when done.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct AgentArgs {
    /// The task, complete and self-contained.
    prompt: String,
    /// general, explore, plan or verify (default general).
    #[serde(default)]
    agent_type: Option<AgentType>,
    /// Return at once with an id instead of waiting.
    #[serde(default)]
    run_in_background: bool,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct StatusArgs {
    /// The id `agent` returned.
    agent_id: String,
}

fn render(status: &SubAgentStatus) -> (String, String) {
    match &status.state {
        SubAgentState::Running => (
            format!("Sub-agent {} running", status.id),
            format!(
                "Sub-agent `{}` ({}) is still running ({} tool calls so far). Check again later with `agent_status`.",
                status.id,
                status.agent_type.as_str(),
                status.tool_calls
            ),
        ),
        SubAgentState::Completed(answer) => (format!("Sub-agent {} done", status.id), answer.clone()),
        SubAgentState::Failed(why) => (format!("Sub-agent {} failed", status.id), why.clone()),
    }
}

tool!(pub(crate) AgentTool(AgentArgs) = Decl::new("agent", ToolGroup::Agent, AGENT)
    .aliases(&["task", "Task", "subagent", "spawn_agent"])
    .keywords(&["delegate", "parallel", "explore", "research", "sub-agent"])
    .needs(SESSION), agent);

async fn agent(args: AgentArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let host = host::<AgentTool>(&ctx)?;
    if args.prompt.trim().is_empty() {
        return Err(ToolError::new("`prompt` is empty: say what the sub-agent should do"));
    }
    let depth = ctx.agent_depth + 1;
    if depth > ctx.max_agent_depth {
        return Err(ToolError::new(format!(
            "sub-agents may nest {} deep and this one would be {depth} deep; do the task yourself",
            ctx.max_agent_depth
        )));
    }
    let agent_type = args.agent_type.unwrap_or(AgentType::General);
    let request = SubAgentRequest { prompt: args.prompt, agent_type, background: args.run_in_background, depth };
    let status = host.run_agent(request).await?;
    let (title, output) = render(&status);
    let result = ToolOutput::new(title, output)
        .with("agentId", status.id.clone())
        .with("agentType", agent_type.as_str())
        .with("toolCalls", status.tool_calls);
    match status.state {
        SubAgentState::Failed(why) => Err(ToolError::new(why).with("agentId", status.id)),
        _ => Ok(result),
    }
}

tool!(pub(crate) AgentStatusTool(StatusArgs) = Decl::new("agent_status", ToolGroup::Agent, STATUS)
    .aliases(&["task_status"])
    .keywords(&["sub-agent", "background", "result"])
    .needs(SESSION), agent_status);

async fn agent_status(args: StatusArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let host = host::<AgentStatusTool>(&ctx)?;
    let status = host.agent_status(&args.agent_id).ok_or_else(|| {
        ToolError::new(format!("no sub-agent `{}` in this session; use the id `agent` returned", args.agent_id))
    })?;
    let (title, output) = render(&status);
    let running = status.state == SubAgentState::Running;
    Ok(ToolOutput::new(title, output).with("running", running).with("toolCalls", status.tool_calls))
}
