//! Where the person's policy meets a session: the rules screen a call before it runs (the
//! approver applies them to what asks), hooks run around calls, prompts and the end of a
//! turn, and the verify loop sends failures back to the model. Sub-agents' calls go through
//! the same steps: they run in `call::run_call` like their parent's.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tandem_policy::{CommandPart, HookEvent, HookOutcome, Verdict};
use tandem_protocol::{
    ContentBlock, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind,
};
use tokio_util::sync::CancellationToken;

use crate::env::Env;
use crate::session::Session;

/// The parts of a command line for the rules (every simple command, through wrappers and
/// `sh -c`); `None` when it cannot be parsed.
pub fn command_parts(line: &str) -> Option<Vec<CommandPart>> {
    tandem_tool_exec::safety::parts(line)
}

/// What the rules say about a call before it runs, for what the approver does not see (the
/// paths a reading tool reads, the URL of a fetch, a tool as a whole).
pub(crate) fn screen(env: &Env, session: &Session, tool: &str, arguments: &Value) -> Verdict {
    let resolve = |raw: &str| env.workspace.resolve(raw, &session.cwd).ok();
    env.config.policy.rules().decide_call(tool, arguments, &session.cwd, &resolve, &command_parts)
}

/// The input every hook gets: the session, the directory, the event.
fn input(env: &Env, session: &Session, event: HookEvent) -> Value {
    json!({
        "session_id": session.id,
        "cwd": session.cwd,
        "hook_event_name": event.as_str(),
        "permission_mode": session.gate.mode().as_str(),
        "transcript_path": "",
        "project_dir": env.workspace.root(),
    })
}

fn tool_fields(input: &mut Value, tool: &str, arguments: &Value) {
    input["tool_name"] = json!(tandem_policy::hooks::claude_name(tool).unwrap_or(tool));
    input["tandem_tool_name"] = json!(tool);
    input["tool_input"] = arguments.clone();
}

fn root(env: &Env) -> PathBuf {
    env.workspace.root().to_path_buf()
}

/// Runs the `PreToolUse` hooks of a call.
pub(crate) async fn pre_tool_use(
    env: &Env,
    session: &Session,
    tool: &str,
    arguments: &Value,
    cancel: &CancellationToken,
) -> HookOutcome {
    tool_use(env, session, HookEvent::PreToolUse, (tool, arguments), None, cancel).await
}

/// Runs the `PostToolUse` hooks of a call that ran, with its result.
pub(crate) async fn post_tool_use(
    env: &Env,
    session: &Session,
    tool: &str,
    arguments: &Value,
    result: &tandem_protocol::ToolResult,
    cancel: &CancellationToken,
) -> HookOutcome {
    tool_use(env, session, HookEvent::PostToolUse, (tool, arguments), Some(result), cancel).await
}

/// Runs the hooks of `event` for a call of `tool` (with its result as `tool_response`, after it ran).
async fn tool_use(
    env: &Env,
    session: &Session,
    event: HookEvent,
    (tool, arguments): (&str, &Value),
    result: Option<&tandem_protocol::ToolResult>,
    cancel: &CancellationToken,
) -> HookOutcome {
    let hooks = &env.config.policy.hooks;
    if !hooks.any(event, Some(tool)) {
        return HookOutcome::default();
    }
    let mut input = input(env, session, event);
    tool_fields(&mut input, tool, arguments);
    if let Some(result) = result {
        input["tool_response"] = json!({
            "output": result.output,
            "error": result.error,
            "success": result.error.is_none(),
            "title": result.title,
            "metadata": result.metadata,
        });
    }
    hooks.run(event, Some(tool), &input, &root(env), cancel).await
}

/// The hooks' runs as text for the person (each command, how it ended, its output).
pub(crate) fn runs_text(outcome: &HookOutcome) -> String {
    outcome.runs.iter().map(|run| run.summary()).collect::<Vec<_>>().join("\n\n")
}

/// Shows hooks that ran for an event without a tool call as a card of their own (a block,
/// context, a failure: the person sees what their hooks did).
pub(crate) async fn show(session: &Session, title: String, outcome: &HookOutcome) {
    if !outcome.ran() {
        return;
    }
    let id = format!("{}hook{}", session.call_prefix, session.next_call.fetch_add(1, Ordering::Relaxed));
    let failed = outcome.block.is_some() || outcome.runs.iter().any(|r| !r.succeeded());
    let mut text = runs_text(outcome);
    if let Some(block) = &outcome.block {
        text = format!("{block}\n\n{text}");
    }
    card(session, id, title, text, failed).await;
}

/// Whether `id` is the card of hooks that ran (`hook3`, `a1.hook3`), which a sub-agent's
/// client passes on to the person.
pub(crate) fn is_hook_card(id: &str) -> bool {
    id.rsplit('.').next().is_some_and(|last| last.starts_with("hook") && last[4..].chars().all(|c| c.is_ascii_digit()))
}

/// A finished card: a tool call of kind "other" with `text`.
async fn card(session: &Session, id: String, title: String, text: String, failed: bool) {
    let content = vec![ToolCallContent::Content { content: ContentBlock::text(text) }];
    let call = ToolCall {
        tool_call_id: id.clone(),
        title,
        kind: ToolKind::Other,
        status: ToolCallStatus::InProgress,
        content: Vec::new(),
        locations: Vec::new(),
        raw_input: None,
        tool_name: None,
    };
    session.client.update(&session.id, SessionUpdate::ToolCall(call)).await;
    let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let update =
        ToolCallUpdate { tool_call_id: id, status: Some(status), content: Some(content), ..Default::default() };
    session.client.update(&session.id, SessionUpdate::ToolCallUpdate(update)).await;
}

/// What the person's prompt hooks said: context to add, or why the prompt is blocked.
pub(crate) struct PromptHooks {
    /// Text added to the prompt for the model.
    pub context: Vec<String>,
    /// A hook blocked the prompt: why.
    pub blocked: Option<String>,
}

/// Runs `SessionStart` (on a session's first prompt) and `UserPromptSubmit` for `prompt`.
pub(crate) async fn prompt_hooks(
    env: &Env,
    session: &Session,
    first: bool,
    prompt: &str,
    cancel: &CancellationToken,
) -> PromptHooks {
    let hooks = &env.config.policy.hooks;
    let mut result = PromptHooks { context: Vec::new(), blocked: None };
    if first && hooks.any(HookEvent::SessionStart, None) {
        let mut input = input(env, session, HookEvent::SessionStart);
        input["source"] = json!("startup");
        let outcome = hooks.run(HookEvent::SessionStart, None, &input, &root(env), cancel).await;
        show(session, "Hook: SessionStart".to_owned(), &outcome).await;
        result.context.extend(outcome.context);
    }
    if hooks.any(HookEvent::UserPromptSubmit, None) {
        let mut input = input(env, session, HookEvent::UserPromptSubmit);
        input["prompt"] = json!(prompt);
        let outcome = hooks.run(HookEvent::UserPromptSubmit, None, &input, &root(env), cancel).await;
        show(session, "Hook: UserPromptSubmit".to_owned(), &outcome).await;
        result.context.extend(outcome.context);
        result.blocked = outcome.block;
    }
    result
}

/// Runs `PreCompact` before the conversation is compacted (`trigger`: `auto` or `manual`).
pub(crate) async fn pre_compact(env: &Env, session: &Session, trigger: &str, cancel: &CancellationToken) {
    let hooks = &env.config.policy.hooks;
    if !hooks.any(HookEvent::PreCompact, None) {
        return;
    }
    let mut input = input(env, session, HookEvent::PreCompact);
    input["trigger"] = json!(trigger);
    let outcome = hooks.run(HookEvent::PreCompact, None, &input, &root(env), cancel).await;
    show(session, "Hook: PreCompact".to_owned(), &outcome).await;
}

/// When the model ends a turn: the verify commands (when the turn changed files) and the
/// `Stop` hooks. Returns what goes back to the model to work on, or `None` to end the turn.
/// `round` counts the times something went back in this turn; after `max_rounds` (3 without
/// `[verify]`) the turn ends whatever they say.
pub(crate) async fn at_stop(
    env: &Env,
    session: &Arc<Session>,
    changed: bool,
    round: &mut u32,
    cancel: &CancellationToken,
) -> Option<String> {
    let policy = &env.config.policy;
    let max_rounds = policy.verify.as_ref().map_or(3, |v| v.max_rounds);
    if session.depth > 0 || *round >= max_rounds || cancel.is_cancelled() {
        return None;
    }
    if changed && let Some(verify) = &policy.verify {
        let mut failures = Vec::new();
        for command in &verify.commands {
            let run = tandem_policy::hooks::run_command(command, None, &root(env), verify.timeout, cancel).await;
            let id = format!("{}verify{}", session.call_prefix, session.next_call.fetch_add(1, Ordering::Relaxed));
            let title = format!("Verify: {command} (round {} of {max_rounds})", *round + 1);
            card(session, id, title, run.summary(), !run.succeeded()).await;
            if !run.succeeded() {
                failures.push(run.summary());
            }
        }
        if !failures.is_empty() {
            *round += 1;
            return Some(format!(
                "[The project's verify commands failed after your changes (round {round} of {max_rounds}). Fix the cause, then finish.]\n\n{}",
                failures.join("\n\n"),
                round = *round
            ));
        }
    }
    if policy.hooks.any(HookEvent::Stop, None) {
        let mut input = input(env, session, HookEvent::Stop);
        input["stop_hook_active"] = json!(*round > 0);
        let outcome = policy.hooks.run(HookEvent::Stop, None, &input, &root(env), cancel).await;
        show(session, "Hook: Stop".to_owned(), &outcome).await;
        if let Some(block) = outcome.block {
            *round += 1;
            return Some(format!("[A Stop hook sent you back to work: {block}]"));
        }
    }
    None
}
