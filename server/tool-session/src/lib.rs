//! Tools that work on the session rather than the workspace: the todo list, questions to the
//! person, plan mode, sub-agents and tool search. They reach the session through the
//! [`SessionHost`] the agent loop puts on the [`ToolContext`]; without one
//! (a call through `tandem/tools/call` or `tandem tool`) they say that they need a session.

mod plan;
mod question;
mod subagent;
mod todo;
mod tool_search;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_tool_api::session::SessionHost;
use tandem_tool_api::{Tool, ToolContext, ToolError, typed};

/// The session tools.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        typed(todo::TodoWrite),
        typed(todo::TodoRead),
        typed(question::Question),
        typed(question::AskUser),
        typed(plan::PlanEnter),
        typed(plan::PlanStatus),
        typed(plan::PlanExit),
        typed(subagent::AgentTool),
        typed(subagent::AgentStatusTool),
        typed(tool_search::ToolSearch),
    ]
}

/// The context's session, or an error saying the tool needs one.
pub(crate) fn host<'a>(ctx: &'a ToolContext, tool: &str) -> Result<&'a Arc<dyn SessionHost>, ToolError> {
    ctx.host.as_ref().ok_or_else(|| {
        ToolError::new(format!(
            "`{tool}` works inside an agent session (tandem/session/prompt or `tandem run`); this call has none"
        ))
    })
}

/// The default plan file of a workspace.
pub(crate) fn default_plan_file(root: &Path) -> PathBuf {
    root.join(".tandem").join("plan.md")
}
