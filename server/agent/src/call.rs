//! The tool calls of a model turn: announced, checked (tools of the session, valid arguments,
//! plan mode, loops), run with the session's approver, reported to the person, stored, and
//! turned into what the model is told ([`CallOutcome`]).

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use tandem_llm::Part;
use tandem_protocol::{
    ContentBlock, ModeId, SessionUpdate, ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolGroup, ToolKind, ToolResult,
};
use tandem_tool_api::{Tool, ToolContext, ToolSpec};
use tokio_util::sync::CancellationToken;

use crate::approver::{CallApprover, ShownCall};
use crate::checkpoints::CallWindow;
use crate::env::Env;
use crate::limits::{OutputKind, cap_output, short};
use crate::session::{History, Session};
use crate::store::Record;
use tandem_policy::{Action, Verdict};

/// Identical failing calls after which the call is not run again.
const MAX_IDENTICAL_FAILURES: u32 = 3;
/// Characters of a tool's output shown in the editor's tool-call card.
const DISPLAY_CHARS: usize = 8_000;

pub(crate) use crate::session::PlannedCall;

fn kind_of(name: &str, group: Option<ToolGroup>) -> ToolKind {
    match (name, group) {
        ("read", _) => ToolKind::Read,
        ("delete", _) => ToolKind::Delete,
        ("todowrite" | "todoread" | "plan_enter" | "plan_exit" | "plan_status", _) => ToolKind::Think,
        (_, Some(ToolGroup::Fs)) if name != "list" => ToolKind::Edit,
        (_, Some(ToolGroup::Fs | ToolGroup::Search | ToolGroup::Lsp)) => ToolKind::Search,
        (_, Some(ToolGroup::Exec)) => ToolKind::Execute,
        (_, Some(ToolGroup::Web)) => ToolKind::Fetch,
        _ => ToolKind::Other,
    }
}

/// Title and locations of a call before it runs.
fn describe(name: &str, args: &Value, cwd: &Path) -> (String, Vec<ToolCallLocation>) {
    let arg = |key: &str| args.get(key).and_then(Value::as_str);
    let file = arg("file_path").or_else(|| arg("path"));
    let locations = file
        .map(|f| vec![ToolCallLocation { path: cwd.join(f).display().to_string(), line: None }])
        .unwrap_or_default();
    let title = match (name, file) {
        ("read", Some(f)) => format!("Read {f}"),
        ("write", Some(f)) => format!("Write {f}"),
        ("edit" | "multiedit", Some(f)) => format!("Edit {f}"),
        ("multiedit", None) => "Edit files".to_owned(),
        ("append", Some(f)) => format!("Append to {f}"),
        ("delete", Some(f)) => format!("Delete {f}"),
        ("apply_patch", _) => "Apply patch".to_owned(),
        ("list", f) => format!("List {}", f.unwrap_or(".")),
        ("glob", _) => format!("Find `{}`", arg("pattern").unwrap_or_default()),
        ("grep", _) => format!("Search `{}`", short(arg("pattern").unwrap_or_default(), 60)),
        ("bash", _) => format!("Run `{}`", short(arg("command").unwrap_or_default(), 80)),
        _ => name.to_owned(),
    };
    (title, locations)
}

/// The `tool_call` update that announces a call (pending).
pub(crate) fn announce(session: &Session, id: &str, name: &str, arguments: &Value) -> SessionUpdate {
    let group = session.registry.find(name).map(|t| t.spec().group);
    let name = session.registry.find(name).map_or(name, |t| t.spec().name);
    let (title, locations) = describe(name, arguments, &session.cwd);
    SessionUpdate::ToolCall(ToolCall {
        tool_call_id: id.to_owned(),
        title,
        kind: kind_of(name, group),
        status: ToolCallStatus::Pending,
        content: Vec::new(),
        locations,
        raw_input: Some(arguments.clone()),
        tool_name: Some(name.to_owned()),
    })
}

/// Runs the calls of one model turn: runs of concurrency-safe calls in parallel, the others
/// one at a time, in order. Returns one result per call, in order.
pub(crate) async fn run_calls(
    env: &Env,
    session: &Arc<Session>,
    history: &mut History,
    calls: Vec<PlannedCall>,
    cancel: &CancellationToken,
) -> Vec<Part> {
    let safe = |call: &PlannedCall| session.registry.find(&call.name).is_some_and(|t| t.spec().concurrency_safe);
    let mut results = Vec::with_capacity(calls.len());
    let mut batch: Vec<PlannedCall> = Vec::new();
    let mut calls = calls.into_iter().peekable();
    while let Some(call) = calls.next() {
        let parallel = safe(&call);
        batch.push(call);
        if parallel && calls.peek().is_some_and(safe) {
            continue;
        }
        let current = std::mem::take(&mut batch);
        if cancel.is_cancelled() {
            for call in current {
                results.push(not_run(session, call, "cancelled before it ran").await);
            }
            continue;
        }
        let outcomes = futures_util::future::join_all(current.iter().map(|call| {
            let span = crate::otel::tool(&call.name, &call.tool_call_id, &call.arguments);
            let failures = &history.failures;
            async move {
                let outcome =
                    tracing::Instrument::instrument(run_call(env, session, failures, call, cancel), span.clone()).await;
                crate::otel::tool_done(&span, outcome.failed);
                outcome
            }
        }))
        .await;
        for (call, outcome) in current.into_iter().zip(outcomes) {
            let key = failure_key(&call);
            if outcome.failed {
                *history.failures.entry(key).or_insert(0) += 1;
            } else {
                history.failures.remove(&key);
            }
            results.push(Part::ToolResult {
                call_id: call.provider_id,
                content: outcome.text,
                is_error: outcome.failed,
            });
            results.extend(outcome.images);
        }
    }
    results
}

fn failure_key(call: &PlannedCall) -> String {
    format!("{}\u{0}{}", call.name, call.arguments)
}

async fn not_run(session: &Session, call: PlannedCall, why: &str) -> Part {
    let update = ToolCallUpdate {
        tool_call_id: call.tool_call_id.clone(),
        status: Some(ToolCallStatus::Failed),
        content: Some(vec![ToolCallContent::Content { content: ContentBlock::text(why) }]),
        ..Default::default()
    };
    session.client.update(&session.id, SessionUpdate::ToolCallUpdate(update)).await;
    Part::ToolResult { call_id: call.provider_id, content: why.to_owned(), is_error: true }
}

/// How one call ended, for the model and for loop detection.
pub(crate) struct CallOutcome {
    /// What the model is told: the output, or `Error: …`.
    pub text: String,
    /// The call failed (refused, cancelled, or the tool's error): the model is told so, and
    /// identical failing calls are counted.
    pub failed: bool,
    /// Images the call returned (a `read` of an image), sent right after its result.
    pub images: Vec<Part>,
}

/// Runs one call: checked, announced as running, run with its approver, reported, stored.
async fn run_call(
    env: &Env,
    session: &Arc<Session>,
    failures: &HashMap<String, u32>,
    call: &PlannedCall,
    cancel: &CancellationToken,
) -> CallOutcome {
    let tool = match admit(env, session, failures, call) {
        Ok(tool) => tool,
        Err(refusal) => return refuse(session, call, refusal).await,
    };
    let spec = tool.spec();
    // The person's rules and PreToolUse hooks, before anything runs (sub-agents' calls too).
    let screened = crate::policy::screen(env, session, spec.name, &call.arguments);
    if let Verdict::Deny { reason } = &screened {
        let message =
            format!("`{}` was not run: {reason}. Do not retry it; find another way or ask the person", spec.name);
        return refuse(session, call, message).await;
    }
    let pre = crate::policy::pre_tool_use(env, session, spec.name, &call.arguments, cancel).await;
    if let Some(block) = &pre.block {
        if session.depth > 0 {
            // A sub-agent's cards stay inside it; the person sees its hook's block on one of its own.
            crate::policy::show(session, format!("Hook blocked a sub-agent's `{}`", spec.name), &pre).await;
        }
        let message = format!("`{}` was not run: {block}\n\n{}", spec.name, crate::policy::runs_text(&pre));
        return refuse(session, call, message).await;
    }
    let (title, _) = describe(spec.name, &call.arguments, &session.cwd);
    let kind = kind_of(spec.name, Some(spec.group));
    let running = ToolCallUpdate {
        tool_call_id: call.tool_call_id.clone(),
        status: Some(ToolCallStatus::InProgress),
        ..Default::default()
    };
    env.client.update(&session.id, SessionUpdate::ToolCallUpdate(running)).await;
    // What it may change can be undone: commands included, whose effects nobody can predict.
    let window = CallWindow::of(&call.tool_call_id, spec);
    let shown = ShownCall {
        tool_call_id: call.tool_call_id.clone(),
        title: title.clone(),
        kind,
        raw_input: call.arguments.clone(),
    };
    let approver = CallApprover::new(Arc::clone(&session.gate), Arc::clone(&session.client), cancel.clone(), shown);
    let approver = approver.with_policy(Arc::clone(&env.config.policy), spec.name);
    if let Some((action, reason)) = &pre.permission {
        let why = reason.clone().unwrap_or_else(|| "a PreToolUse hook said so".to_owned());
        approver.hook_decided(*action, why);
    }
    let approver = Arc::new(env.undo_aware(approver, session, window.as_ref()));
    // A rule or a hook asks about a call that would not ask on its own (a read, a fetch).
    let asked = matches!(screened, Verdict::Ask { .. }) || matches!(pre.permission, Some((Action::Ask, _)));
    if asked && spec.effect.is_read_only() {
        if let Verdict::Ask { reason } = &screened {
            approver.hook_decided(Action::Ask, reason.clone());
        }
        let check = tandem_tool_api::ToolCheck {
            tool: spec.name.to_owned(),
            server: None,
            arguments: call.arguments.clone(),
            reason: "a rule or hook asks before it runs".to_owned(),
        };
        match tandem_tool_api::Approver::confirm_tool(approver.as_ref(), &check).await {
            tandem_tool_api::CommandDecision::Allow => {}
            tandem_tool_api::CommandDecision::Reject { reason } => {
                let said = reason.map(|r| format!(" They said: {r}")).unwrap_or_default();
                return refuse(session, call, format!("the person declined `{}`; it did not run.{said}", spec.name))
                    .await;
            }
            _ => return refuse(session, call, format!("`{}` did not run (cancelled)", spec.name)).await,
        }
    }
    let mut ctx = tool_context(env, session, call, Arc::clone(&approver), cancel);
    if let Some(window) = &window {
        env.open_window(session, window, &mut ctx).await;
    }
    let result = invoke(session, spec, &title, call, ctx, cancel).await;
    if let Some(window) = window {
        env.close_window(session, window).await;
    }
    let post = crate::policy::post_tool_use(env, session, spec.name, &call.arguments, &result, cancel).await;
    let mut shown = approver.take_applied();
    for (event, hooks) in [("PreToolUse", &pre), ("PostToolUse", &post)] {
        if hooks.ran() {
            let text = format!("{event} hooks:\n{}", crate::policy::runs_text(hooks));
            shown.push(text_content(text));
        }
    }
    report(session, call, &result, shown, kind).await;
    let mut told = outcome(spec, &result, failures.get(&failure_key(call)).copied().unwrap_or(0));
    if result.error.is_none() {
        attach_images(env, session, &result, &mut told);
    }
    if let Some(block) = &post.block {
        told.text.push_str(&format!("\n\n[{block}]"));
    }
    for context in pre.context.iter().chain(&post.context) {
        told.text.push_str(&format!("\n\n[Hook context: {context}]"));
    }
    told
}

/// The tool to run, or why the call is refused before anything runs: a tool this session does
/// not have, arguments that are not JSON, a changing tool in plan mode, a call that already
/// failed too often.
fn admit(
    env: &Env,
    session: &Session,
    failures: &HashMap<String, u32>,
    call: &PlannedCall,
) -> Result<Arc<dyn Tool>, String> {
    let Some(tool) = session.registry.find(&call.name) else {
        if let Some(elsewhere) = env.registry.find(&call.name) {
            return Err(format!(
                "`{}` is not available to this sub-agent (its tool set is limited to its task); use the tools in your list, and say in your answer what is left for the caller to do",
                elsewhere.spec().name
            ));
        }
        let message = session.registry.unknown_tool(&call.name);
        return Err(format!("{message}. The available tools are in your tool list."));
    };
    let spec = tool.spec();
    if let Some(raw) = call.arguments.get("_raw").and_then(Value::as_str) {
        return Err(format!(
            "the arguments of this `{}` call are not valid JSON: {}. Send them again as one JSON object",
            spec.name,
            short(raw, 200)
        ));
    }
    let plan_file_write = matches!(spec.name, "write" | "edit" | "append")
        && call
            .arguments
            .get("file_path")
            .and_then(Value::as_str)
            .and_then(|raw| env.workspace.resolve_writable(raw, &session.cwd).ok())
            .is_some_and(|path| session.gate.is_plan_file(&path));
    if session.gate.mode() == ModeId::Plan && !spec.effect.is_read_only() && !plan_file_write {
        return Err(format!(
            "the session is in plan mode (read-only): `{}` changes files or runs commands, so it is blocked. Investigate with the read-only tools and present your plan; the person switches the mode to carry it out",
            spec.name
        ));
    }
    if failures.get(&failure_key(call)).copied().unwrap_or(0) >= MAX_IDENTICAL_FAILURES {
        return Err(format!(
            "this exact `{}` call already failed {MAX_IDENTICAL_FAILURES} times, so it was not run again. Change the arguments or the approach, or ask the person",
            spec.name
        ));
    }
    Ok(tool)
}

/// A call refused before it ran: shown as failed, stored, and the reason told to the model.
async fn refuse(session: &Session, call: &PlannedCall, message: String) -> CallOutcome {
    let content = vec![text_content(message.clone())];
    let update = finished(call, ToolCallStatus::Failed, content.clone(), None, None);
    session.client.update(&session.id, update).await;
    let (title, kind) = match session.registry.find(&call.name) {
        Some(tool) => {
            (describe(tool.spec().name, &call.arguments, &session.cwd).0, kind_of(&call.name, Some(tool.spec().group)))
        }
        None => (call.name.clone(), ToolKind::Other),
    };
    store_call(session, call, title, kind, ToolCallStatus::Failed, content, None);
    CallOutcome { text: message, failed: true, images: Vec::new() }
}

/// The context of a session's call: not the person's authority (it asks through `approver`),
/// in the session's directory, with the session's services.
fn tool_context(
    env: &Env,
    session: &Arc<Session>,
    call: &PlannedCall,
    approver: Arc<CallApprover>,
    cancel: &CancellationToken,
) -> ToolContext {
    let mut ctx = ToolContext::new(Arc::clone(&env.workspace), Arc::clone(&env.cache));
    ctx.session_id = Some(session.id.clone());
    ctx.tool_call_id = Some(call.tool_call_id.clone());
    ctx.working_dir = session.cwd.clone();
    ctx.user_confirmed = false;
    ctx.editor = env.editor.clone();
    ctx.intel = env.intel.clone();
    ctx.approver = Some(approver as Arc<dyn tandem_tool_api::Approver>);
    ctx.agent_depth = session.depth;
    ctx.max_agent_depth = env.config.max_agent_depth;
    ctx.registry = Some(Arc::clone(&session.registry));
    ctx.host = Some(Arc::new(crate::host::Host {
        env: env.me.clone(),
        session: Arc::clone(session),
        cancel: cancel.clone(),
        tool_call_id: call.tool_call_id.clone(),
    }));
    ctx
}

/// Runs the tool. Commands and MCP calls can run for long: a cancel stops waiting for them (and
/// drops their process, or sends the MCP server `notifications/cancelled`). File tools finish
/// what they started, so a multi-file change is never cut in half.
async fn invoke(
    session: &Session,
    spec: &ToolSpec,
    title: &str,
    call: &PlannedCall,
    ctx: ToolContext,
    cancel: &CancellationToken,
) -> ToolResult {
    let call_future = session.registry.call(spec.name, call.arguments.clone(), ctx);
    let outcome = if matches!(spec.group, ToolGroup::Exec | ToolGroup::Mcp) {
        tokio::select! {
            outcome = call_future => Some(outcome),
            () = cancel.cancelled() => None,
        }
    } else {
        Some(call_future.await)
    };
    let failure = |title: String, error: String| ToolResult {
        title,
        output: String::new(),
        metadata: Default::default(),
        error: Some(error),
        attachments: Vec::new(),
    };
    match outcome {
        None => failure(
            format!("{title} (cancelled)"),
            format!("cancelled: the person ended the turn while `{}` ran", spec.name),
        ),
        Some(Ok(result)) => result,
        Some(Err(err)) => failure(format!("{} failed", spec.name), err.to_string()),
    }
}

/// Shows the person how the call ended (what was applied, then the output or the error; a
/// command in the editor's terminal stays shown there) and stores it.
async fn report(
    session: &Session,
    call: &PlannedCall,
    result: &ToolResult,
    mut content: Vec<ToolCallContent>,
    kind: ToolKind,
) {
    let shown = result.error.clone().unwrap_or_else(|| result.output.clone());
    if let Some(terminal_id) = result.metadata.get("terminalId").and_then(Value::as_str) {
        content.push(ToolCallContent::Terminal { terminal_id: terminal_id.to_owned() });
    } else if !shown.is_empty() {
        content.push(text_content(cap_output(&shown, OutputKind::Status).chars().take(DISPLAY_CHARS).collect()));
    }
    let raw = json!({ "title": result.title, "error": result.error, "metadata": result.metadata });
    let status = if result.error.is_some() { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    let update = finished(call, status, content.clone(), Some(result.title.clone()), Some(raw.clone()));
    session.client.update(&session.id, update).await;
    store_call(session, call, result.title.clone(), kind, status, content, Some(raw));
}

/// What the model is told of a result; `failed_before` is how often this exact call failed.
fn outcome(spec: &ToolSpec, result: &ToolResult, failed_before: u32) -> CallOutcome {
    match &result.error {
        Some(error) => {
            let mut message = format!("Error: {error}");
            let count = failed_before + 1;
            if count >= MAX_IDENTICAL_FAILURES {
                message.push_str(&format!(
                    "\n(This identical call has now failed {count} times; it will not be run again with these arguments.)"
                ));
            }
            CallOutcome { text: cap_output(&message, OutputKind::Status), failed: true, images: Vec::new() }
        }
        None => CallOutcome {
            text: cap_output(&result.output, OutputKind::of(spec.name, spec.group)),
            failed: false,
            images: Vec::new(),
        },
    }
}

/// The images a call returned, for a model that takes them; for one that does not, a note
/// saying so after the text (which describes them), never a silent drop.
fn attach_images(env: &Env, session: &Session, result: &ToolResult, told: &mut CallOutcome) {
    let images = result.attachments.iter().filter(|a| a.get("type").and_then(Value::as_str) == Some("image")).count();
    if images == 0 {
        return;
    }
    let model = session.model();
    if !crate::images::vision(env.provider(), &model) {
        told.text.push_str(&crate::images::not_shown(&model, images));
        return;
    }
    let limits = tandem_llm::image::Limits::of(env.provider().kind);
    let (parts, problems) = crate::images::from_attachments(&result.attachments, limits);
    for problem in problems {
        told.text.push_str(&format!("\n\n[An image the tool returned could not be sent: {problem}]"));
    }
    told.images = parts;
}

/// The update that ends a call's card.
fn finished(
    call: &PlannedCall,
    status: ToolCallStatus,
    content: Vec<ToolCallContent>,
    title: Option<String>,
    raw_output: Option<Value>,
) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate {
        tool_call_id: call.tool_call_id.clone(),
        status: Some(status),
        content: Some(content),
        title,
        raw_output,
        ..Default::default()
    })
}

fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::Content { content: ContentBlock::text(text) }
}

/// Stores how a call ended, with what the person was shown (its final content, and the
/// locations it was announced with), so that loading the session replays it as it was.
fn store_call(
    session: &Session,
    call: &PlannedCall,
    title: String,
    kind: ToolKind,
    status: ToolCallStatus,
    content: Vec<ToolCallContent>,
    raw_output: Option<Value>,
) {
    let (_, locations) = describe(&call.name, &call.arguments, &session.cwd);
    session.record(&Record::Call {
        tool_call_id: call.tool_call_id.clone(),
        call_id: call.provider_id.clone(),
        title,
        kind,
        status,
        raw_input: call.arguments.clone(),
        content,
        locations,
        raw_output,
    });
}
