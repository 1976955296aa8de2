//! Plan mode: `plan_enter` switches the session to read-only planning, `plan_status` says where
//! it stands, `plan_exit` asks the person to approve the plan (approval restores the mode the
//! session had before).

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::{ModeId, ToolGroup};
use tandem_tool_api::session::PlanDecision;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{SESSION, default_plan_file, host};

const ENTER: &str = "Switch the session to plan mode: edits and commands are blocked (except writing the plan \
    file) while you investigate and write a plan. Use it before large or risky changes. Then write the plan to the \
    plan file and call `plan_exit` to ask the person to approve it.";
const STATUS: &str = "Show whether the session is in plan mode, why, and the plan file.";
const EXIT: &str = "Ask the person to approve the plan (the plan file's content and your summary). When they \
    approve, the session leaves plan mode and you carry out the plan; when they do not, keep planning with their \
    feedback.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct EnterArgs {
    /// Why planning first.
    #[serde(default)]
    reason: Option<String>,
    /// Where to write the plan (default `.tandem/plan.md`).
    #[serde(default)]
    plan_file: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct StatusArgs {}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ExitArgs {
    /// The plan in a few lines, for the person.
    summary: String,
}

tool!(pub(crate) PlanEnter(EnterArgs) = Decl::new("plan_enter", ToolGroup::Plan, ENTER)
    .aliases(&["enter_plan_mode", "EnterPlanMode"])
    .keywords(&["plan", "mode", "read-only", "design"])
    .needs(SESSION), plan_enter);

async fn plan_enter(args: EnterArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let host = host::<PlanEnter>(&ctx)?;
    if let Some(state) = host.plan_state() {
        return Err(ToolError::new(format!(
            "already in plan mode (plan file `{}`); write the plan there and call `plan_exit`",
            ctx.workspace.display(&state.plan_file)
        )));
    }
    let plan_file = match &args.plan_file {
        Some(raw) => ctx.workspace.resolve_writable(raw, &ctx.working_dir)?,
        None => default_plan_file(ctx.workspace.root()),
    };
    let shown = ctx.workspace.display(&plan_file);
    let reason = args.reason.unwrap_or_else(|| "plan before changing code".to_owned());
    let previous = host.enter_plan(reason.clone(), plan_file).await?;
    Ok(ToolOutput::new(
        "Plan mode",
        format!(
            "Plan mode is on ({reason}). Edits and commands are blocked, except writing `{shown}`. Investigate, \
             write the plan to `{shown}`, then call `plan_exit` with a summary. The session returns to `{}` mode \
             when the person approves.",
            previous.as_str()
        ),
    )
    .with("planFile", shown)
    .with("previousMode", previous.as_str()))
}

tool!(
    pub(crate) PlanStatus(StatusArgs) = Decl::new("plan_status", ToolGroup::Plan, STATUS).keywords(&["plan", "mode"]).needs(SESSION),
    plan_status
);

async fn plan_status(_args: StatusArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let host = host::<PlanStatus>(&ctx)?;
    let mode = host.mode();
    let Some(state) = host.plan_state() else {
        let output = if mode == ModeId::Plan {
            "The session is in plan mode (set by the person): edits and commands are blocked.".to_owned()
        } else {
            format!("Not in plan mode (mode `{}`).", mode.as_str())
        };
        return Ok(ToolOutput::new(format!("Mode: {}", mode.as_str()), output).with("mode", mode.as_str()));
    };
    let shown = ctx.workspace.display(&state.plan_file);
    let file = match std::fs::metadata(&state.plan_file) {
        Ok(meta) => format!("`{shown}` ({} bytes)", meta.len()),
        Err(_) => format!("`{shown}` (not written yet)"),
    };
    Ok(ToolOutput::new(
        "Plan mode",
        format!(
            "In plan mode: {}. Plan file: {file}. Returns to `{}` mode when the plan is approved (`plan_exit`).",
            state.reason,
            state.previous.as_str()
        ),
    )
    .with("mode", mode.as_str())
    .with("planFile", shown))
}

tool!(pub(crate) PlanExit(ExitArgs) = Decl::new("plan_exit", ToolGroup::Plan, EXIT)
    .aliases(&["exit_plan_mode", "ExitPlanMode"])
    .keywords(&["plan", "approve", "mode"])
    .needs(SESSION), plan_exit);

async fn plan_exit(args: ExitArgs, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let host = host::<PlanExit>(&ctx)?;
    if host.mode() != ModeId::Plan {
        return Err(ToolError::new("the session is not in plan mode; there is nothing to approve"));
    }
    let plan_file = host.plan_state().map_or_else(|| default_plan_file(ctx.workspace.root()), |s| s.plan_file);
    let plan = std::fs::read_to_string(&plan_file).ok().filter(|p| !p.trim().is_empty());
    match host.exit_plan(args.summary, plan.clone()).await? {
        PlanDecision::Approved { restored } => Ok(ToolOutput::new(
            "Plan approved",
            format!(
                "The person approved the plan. The session is back in `{}` mode: carry out the plan now.",
                restored.as_str()
            ),
        )
        .with("approved", true)
        .with("mode", restored.as_str())),
        PlanDecision::Rejected { feedback } => Err(ToolError::new(format!(
            "the person did not approve the plan; still in plan mode.{} Revise the plan and call `plan_exit` again",
            feedback.map(|f| format!(" They said: {f}.")).unwrap_or_default()
        ))
        .with("approved", false)),
        PlanDecision::Cancelled => {
            Err(ToolError::new("cancelled before the person answered; still in plan mode").with("cancelled", true))
        }
    }
}
