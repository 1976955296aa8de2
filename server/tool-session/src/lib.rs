//! Tools that work on the session rather than the workspace: the todo list, questions to the
//! person, plan mode, sub-agents and tool search. They reach the session through the
//! [`SessionHost`] the agent loop puts on the [`ToolContext`]; they declare that they need it
//! ([`SESSION`]), so a door without sessions (`tandem tool`, `tandem mcp`) does not offer them,
//! and a call without one (`tandem/tools/call`) is told where they work.

mod plan;
mod question;
mod subagent;
mod todo;
mod tool_search;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_tool_api::session::SessionHost;
use tandem_tool_api::{Service, Tool, ToolContext, ToolError, TypedTool, typed};

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

/// What the session tools need: the agent session ([`Service::Host`]). A registry leaves them
/// out where the door has no session, and refuses a call that comes without one.
pub(crate) const SESSION: &[Service] = &[Service::Host];

/// The call's session, which the registry checked is there (an error naming the service for a
/// call that did not come through a registry).
pub(crate) fn host<T: TypedTool>(ctx: &ToolContext) -> Result<&Arc<dyn SessionHost>, ToolError> {
    ctx.host.as_ref().ok_or_else(|| ToolError::new(Service::Host.missing(T::DECL.name(), "this call")))
}

/// The default plan file of a workspace.
pub(crate) fn default_plan_file(root: &Path) -> PathBuf {
    root.join(".tandem").join("plan.md")
}
