//! One turn: model → tool calls → approvals → results → model, until the model stops.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tandem_llm::{ErrorKind, Event, Message, Part, Request, Role, StopReason as ModelStop, ToolDef};
use tandem_protocol::{
    ContentBlock, ModeId, SessionPromptResult, SessionUpdate, StopReason, ToolCall, ToolCallContent, ToolCallLocation,
    ToolCallStatus, ToolCallUpdate, ToolGroup, ToolKind, ToolResult, Usage,
};
use tandem_tools::ToolContext;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, History, Session};
use crate::approver::CallApprover;
use crate::context;
use crate::limits::{OutputKind, cap_output};
use crate::store::Record;

/// Identical failing calls after which the call is not run again.
const MAX_IDENTICAL_FAILURES: u32 = 3;
/// Characters of a tool's output shown in the editor's tool-call card.
const DISPLAY_CHARS: usize = 8_000;

/// What the model is told, as a message of the person, where they cancelled a turn.
pub(crate) const INTERRUPTED: &str = "[The person interrupted this turn: it was cancelled, and whatever was running was stopped. Do not carry on with it unless they ask you to.]";

/// Whether `message` is the note that a turn was interrupted.
pub(crate) fn is_interruption(message: &Message) -> bool {
    message.role == Role::User && matches!(message.content.as_slice(), [Part::Text { text }] if text == INTERRUPTED)
}

/// A tool call of the model, with our id.
struct PlannedCall {
    tool_call_id: String,
    provider_id: String,
    name: String,
    arguments: Value,
}

fn prompt_text(blocks: Vec<ContentBlock>) -> Vec<Part> {
    blocks
        .into_iter()
        .map(|block| match block {
            ContentBlock::Text { text } => Part::Text { text },
            ContentBlock::ResourceLink { uri, name, .. } => {
                Part::Text { text: format!("[attached: {name} ({uri}); read it if you need it]") }
            }
            ContentBlock::Resource { resource } => {
                Part::Text { text: format!("<attached uri=\"{}\">\n{}\n</attached>", resource.uri, resource.text) }
            }
        })
        .collect()
}

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

pub(crate) fn short(text: &str, max: usize) -> String {
    let line = text.lines().next().unwrap_or_default().trim();
    let cut = match line.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    };
    if text.lines().nth(1).is_some() && !cut.ends_with('…') { format!("{cut} …") } else { cut }
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

/// Sends updates in order from synchronous stream callbacks.
struct Forwarder {
    tx: mpsc::UnboundedSender<SessionUpdate>,
    task: tokio::task::JoinHandle<()>,
}

impl Forwarder {
    fn start(session: &Session) -> Self {
        let session_id = &session.id;
        let (tx, mut rx) = mpsc::unbounded_channel::<SessionUpdate>();
        let client = Arc::clone(&session.client);
        let id = session_id.to_owned();
        let task = tokio::spawn(async move {
            while let Some(update) = rx.recv().await {
                client.update(&id, update).await;
            }
        });
        Self { tx, task }
    }

    /// Waits until everything sent so far has been delivered.
    async fn finish(self) {
        drop(self.tx);
        self.task.await.ok();
    }
}

/// Runs one turn of `session` for `prompt`.
pub(crate) async fn run(
    agent: &Agent,
    session: &Arc<Session>,
    history: &mut History,
    prompt: Vec<ContentBlock>,
    cancel: &CancellationToken,
) -> SessionPromptResult {
    let user = Message { role: Role::User, content: prompt_text(prompt) };
    record(agent, session, Record::Message { message: user.clone() });
    // Two user messages in a row (after an error) become one; a cancelled turn stays its own,
    // closed by the note that the person interrupted it.
    match history.messages.last_mut() {
        Some(last) if last.role == Role::User && !is_interruption(last) => {
            Arc::make_mut(last).content.extend(user.content);
            history.remeasure_last();
        }
        _ => history.messages.push(Arc::new(user)),
    }
    let prompt_words: String = history
        .messages
        .last()
        .map(|m| {
            m.content
                .iter()
                .filter_map(|p| match p {
                    Part::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let memories = tandem_tools::memory::session_brief(agent.workspace.root(), &prompt_words);
    // A provider that says the request does not fit gets one compaction and a retry per turn.
    let mut overflow_retried = false;
    for _ in 0..agent.config.max_turns {
        if cancel.is_cancelled() {
            return interrupted(agent, session, history, String::new());
        }
        let mode = session.gate.mode();
        let mut system = crate::prompt::system_prompt(agent.workspace.root(), &session.cwd, mode);
        if let Some(memories) = &memories {
            system.push('\n');
            system.push_str(memories);
        }
        let model = session.model();
        let budget = context::budget(agent, &model);
        let tools = tool_defs(agent, session, budget);
        let fixed = system.len() + context::json_size(&tools);
        if context::fit(agent, session, history, fixed, budget, false, cancel).await.is_none() {
            return interrupted(agent, session, history, String::new());
        }
        let sent_bytes = history.message_bytes() + fixed;
        let request_model = model.clone();
        let request =
            Request { system, messages: history.messages.clone(), tools, model: Some(model), temperature: None };
        let forwarder = Forwarder::start(session);
        let mut announced: Vec<(String, String)> = Vec::new();
        // What the person saw of the answer, kept when the turn is cancelled mid-stream.
        let mut streamed = String::new();
        let mut on_event = |event: Event| match event {
            Event::TextDelta(text) => {
                streamed.push_str(&text);
                forwarder.tx.send(SessionUpdate::AgentMessageChunk { content: ContentBlock::text(text) }).ok();
            }
            Event::ThinkingDelta(text) => {
                forwarder.tx.send(SessionUpdate::AgentThoughtChunk { content: ContentBlock::text(text) }).ok();
            }
            Event::ToolCallReady { id, name, arguments } => {
                let ours = format!("{}c{}", session.call_prefix, session.next_call.fetch_add(1, Ordering::Relaxed));
                forwarder.tx.send(announce(session, &ours, &name, &arguments)).ok();
                announced.push((id, ours));
            }
            Event::Retrying { attempt, delay, reason } => {
                tracing::debug!(session = session.id, attempt, ?delay, "model request failed, retrying: {reason}");
            }
            Event::ToolCallStarted { .. } | Event::Usage(_) => {}
        };
        let outcome = agent.llm.stream(&request, cancel, &mut on_event).await;
        forwarder.finish().await;
        let response = match outcome {
            Ok(response) => response,
            Err(err) if err.kind == ErrorKind::Cancelled => return interrupted(agent, session, history, streamed),
            Err(err) if err.kind == ErrorKind::ContextTooLong && !overflow_retried => {
                overflow_retried = true;
                tracing::warn!(session = session.id, "{err}; compacting and trying again");
                // The estimate was too low for this provider: count more tokens per byte.
                history.bytes_per_token = (history.bytes_per_token * 0.75).max(1.0);
                if context::fit(agent, session, history, fixed, budget, true, cancel).await.is_none() {
                    return interrupted(agent, session, history, String::new());
                }
                continue;
            }
            Err(err) => {
                tracing::error!(session = session.id, "model turn failed: {err}");
                return SessionPromptResult { stop_reason: StopReason::Error, error: Some(err.message) };
            }
        };
        history.calibrate(sent_bytes, response.usage.input_tokens);
        history.add_usage(&response.usage);
        record(agent, session, Record::Usage { totals: history.totals });
        session.client.update(&session.id, usage_update(history, &response.usage, budget)).await;
        let message = response.message;
        record(agent, session, Record::Message { message: message.clone() });
        let mut calls = Vec::new();
        for part in &message.content {
            if let Part::ToolCall { id, name, arguments, .. } = part {
                let ours = match announced.iter().find(|(provider, _)| provider == id) {
                    Some((_, ours)) => ours.clone(),
                    None => {
                        let ours =
                            format!("{}c{}", session.call_prefix, session.next_call.fetch_add(1, Ordering::Relaxed));
                        let update = announce(session, &ours, name, arguments);
                        session.client.update(&session.id, update).await;
                        ours
                    }
                };
                calls.push(PlannedCall {
                    tool_call_id: ours,
                    provider_id: id.clone(),
                    name: name.clone(),
                    arguments: arguments.clone(),
                });
            }
        }
        history.messages.push(Arc::new(message));
        if calls.is_empty() {
            return match response.stop {
                ModelStop::Refusal => stop(StopReason::Refusal),
                ModelStop::MaxTokens => cut_short(agent, session, &request_model).await,
                _ => stop(StopReason::EndTurn),
            };
        }
        let results = run_calls(agent, session, history, calls, cancel).await;
        let message = Message { role: Role::User, content: results };
        record(agent, session, Record::Message { message: message.clone() });
        history.messages.push(Arc::new(message));
        if cancel.is_cancelled() {
            return interrupted(agent, session, history, String::new());
        }
    }
    stop(StopReason::MaxTurns)
}

/// Ends a cancelled turn in the history: the part of the answer that was streamed (if any),
/// then the note that the person interrupted, so the next prompt is a turn of its own and the
/// model knows the last one did not finish.
fn interrupted(agent: &Agent, session: &Session, history: &mut History, streamed: String) -> SessionPromptResult {
    let mut messages = Vec::new();
    if !streamed.is_empty() {
        messages.push(Message { role: Role::Assistant, content: vec![Part::Text { text: streamed }] });
    }
    if !history.messages.last().is_some_and(|last| is_interruption(last)) {
        messages.push(Message { role: Role::User, content: vec![Part::Text { text: INTERRUPTED.to_owned() }] });
    }
    for message in messages {
        record(agent, session, Record::Message { message: message.clone() });
        history.messages.push(Arc::new(message));
    }
    stop(StopReason::Cancelled)
}

/// The answer reached the output token limit: the person is told, with how to go on, and the
/// turn ends as `max_tokens` rather than as a finished answer.
async fn cut_short(agent: &Agent, session: &Session, model: &str) -> SessionPromptResult {
    let note = format!(
        "\n\n[The answer was cut: it reached the output limit of {} tokens. Say \"continue\" to have the model go on, or raise `max_output_tokens` under [provider] in .tandem/config.toml.]",
        tandem_llm::profile::resolve(&agent.config.provider, model).max_output
    );
    session.client.update(&session.id, SessionUpdate::AgentMessageChunk { content: ContentBlock::text(note) }).await;
    stop(StopReason::MaxTokens)
}

fn stop(stop_reason: StopReason) -> SessionPromptResult {
    SessionPromptResult { stop_reason, error: None }
}

/// Appends `record` to the session's file (sessions that are stored only).
pub(crate) fn record(agent: &Agent, session: &Session, record: Record) {
    if !session.persist {
        return;
    }
    if let Err(err) = agent.store.append(&session.id, &record) {
        tracing::warn!(session = session.id, "cannot store the session: {err}");
    }
}

/// The `usage_update` after a model turn: its counts, the window, the session's totals.
fn usage_update(history: &History, usage: &tandem_llm::Usage, budget: context::Budget) -> SessionUpdate {
    SessionUpdate::UsageUpdate(Usage {
        input_tokens: usage.input_tokens,
        output_tokens: usage.output_tokens,
        cache_read_tokens: usage.cache_read_tokens,
        total_tokens: history.total_tokens,
        reasoning_tokens: usage.reasoning_tokens,
        context_window: budget.window,
        session: history.totals,
    })
}

/// Share of the window the full tool set may take before tools are deferred (offered through
/// `tool_search`): small-context models would otherwise spend most of it on definitions.
const TOOLS_SHARE: u64 = 4;

/// The tools offered in the next request: all enabled ones, or, when deferring (configured, or
/// because they would take more than a quarter of the window), the always-loaded ones and those found
/// with `tool_search`.
pub(crate) fn tool_defs(agent: &Agent, session: &Session, budget: context::Budget) -> Vec<ToolDef> {
    let def = |tool: Arc<dyn tandem_tools::Tool>| {
        let spec = tool.spec();
        ToolDef {
            name: spec.name.to_owned(),
            description: spec.description.to_owned(),
            parameters: spec.parameters.clone(),
        }
    };
    let all: Vec<ToolDef> = session.registry.enabled().map(def).collect();
    let too_big = || {
        let tokens = context::json_size(&all) as f64 / context::DEFAULT_BYTES_PER_TOKEN;
        tokens as u64 > budget.window / TOOLS_SHARE
    };
    if !agent.config.defer_tools && !too_big() {
        return all;
    }
    let loaded = session.loaded_tools.lock().clone();
    session
        .registry
        .enabled()
        .filter(|tool| tool.spec().always_load || loaded.contains(tool.spec().name))
        .map(def)
        .collect()
}

fn announce(session: &Session, id: &str, name: &str, arguments: &Value) -> SessionUpdate {
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
    })
}

/// Runs the calls of one model turn: runs of concurrency-safe calls in parallel, the others
/// one at a time, in order. Returns one result per call, in order.
async fn run_calls(
    agent: &Agent,
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
        let outcomes = futures_util::future::join_all(
            current.iter().map(|call| run_call(agent, session, &history.failures, call, cancel)),
        )
        .await;
        for (call, (result, failed)) in current.into_iter().zip(outcomes) {
            let key = failure_key(&call);
            if failed {
                *history.failures.entry(key).or_insert(0) += 1;
            } else {
                history.failures.remove(&key);
            }
            results.push(Part::ToolResult { call_id: call.provider_id, content: result.0, is_error: result.1 });
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

/// Runs one call; returns ((text for the model, is_error), failed).
async fn run_call(
    agent: &Agent,
    session: &Arc<Session>,
    failures: &std::collections::HashMap<String, u32>,
    call: &PlannedCall,
    cancel: &CancellationToken,
) -> ((String, bool), bool) {
    let id = call.tool_call_id.clone();
    let finish = |status: ToolCallStatus, content: Vec<ToolCallContent>, title: Option<String>, raw: Option<Value>| {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id: id.clone(),
            status: Some(status),
            content: Some(content),
            title,
            raw_output: raw,
            ..Default::default()
        })
    };
    let text = |t: String| ToolCallContent::Content { content: ContentBlock::text(t) };
    let blocked = |message: String| async {
        session
            .client
            .update(&session.id, finish(ToolCallStatus::Failed, vec![text(message.clone())], None, None))
            .await;
        let (title, kind) = match session.registry.find(&call.name) {
            Some(tool) => (
                describe(tool.spec().name, &call.arguments, &session.cwd).0,
                kind_of(&call.name, Some(tool.spec().group)),
            ),
            None => (call.name.clone(), ToolKind::Other),
        };
        let content = vec![text(message.clone())];
        store_call(agent, session, call, title, kind, ToolCallStatus::Failed, content);
        ((message, true), true)
    };

    let Some(tool) = session.registry.find(&call.name) else {
        if let Some(elsewhere) = agent.registry.find(&call.name) {
            return blocked(format!(
                "`{}` is not available to this sub-agent (its tool set is limited to its task); use the tools in your list, and say in your answer what is left for the caller to do",
                elsewhere.spec().name
            ))
            .await;
        }
        let message = session.registry.unknown_tool(&call.name);
        return blocked(format!("{message}. The available tools are in your tool list.")).await;
    };
    let spec = tool.spec();
    if let Some(raw) = call.arguments.get("_raw").and_then(Value::as_str) {
        return blocked(format!(
            "the arguments of this `{}` call are not valid JSON: {}. Send them again as one JSON object",
            spec.name,
            short(raw, 200)
        ))
        .await;
    }
    let plan_file_write = matches!(spec.name, "write" | "edit" | "append")
        && call
            .arguments
            .get("file_path")
            .and_then(Value::as_str)
            .and_then(|raw| agent.workspace.resolve_writable(raw, &session.cwd).ok())
            .is_some_and(|path| session.gate.is_plan_file(&path));
    if session.gate.mode() == ModeId::Plan && !spec.effect.is_read_only() && !plan_file_write {
        return blocked(format!(
            "the session is in plan mode (read-only): `{}` changes files or runs commands, so it is blocked. Investigate with the read-only tools and present your plan; the person switches the mode to carry it out",
            spec.name
        ))
        .await;
    }
    if failures.get(&failure_key(call)).copied().unwrap_or(0) >= MAX_IDENTICAL_FAILURES {
        return blocked(format!(
            "this exact `{}` call already failed {MAX_IDENTICAL_FAILURES} times, so it was not run again. Change the arguments or the approach, or ask the person",
            spec.name
        ))
        .await;
    }

    let (title, _) = describe(spec.name, &call.arguments, &session.cwd);
    let kind = kind_of(spec.name, Some(spec.group));
    agent
        .client
        .update(
            &session.id,
            SessionUpdate::ToolCallUpdate(ToolCallUpdate {
                tool_call_id: id.clone(),
                status: Some(ToolCallStatus::InProgress),
                ..Default::default()
            }),
        )
        .await;
    let approver = Arc::new(CallApprover::new(
        Arc::clone(&session.gate),
        Arc::clone(&session.client),
        cancel.clone(),
        id.clone(),
        title.clone(),
        kind,
        call.arguments.clone(),
    ));
    let mut ctx = ToolContext::new(Arc::clone(&agent.workspace), Arc::clone(&agent.cache));
    ctx.session_id = Some(session.id.clone());
    ctx.tool_call_id = Some(id.clone());
    ctx.working_dir = session.cwd.clone();
    ctx.user_confirmed = false;
    ctx.editor = agent.editor.clone();
    ctx.intel = agent.intel.clone();
    ctx.approver = Some(Arc::clone(&approver) as Arc<dyn tandem_tools::Approver>);
    ctx.agent_depth = session.depth;
    ctx.max_agent_depth = agent.config.max_agent_depth;
    ctx.registry = Some(Arc::clone(&session.registry));
    ctx.host = Some(Arc::new(crate::host::Host {
        agent: agent.me.clone(),
        session: Arc::clone(session),
        cancel: cancel.clone(),
        tool_call_id: id.clone(),
    }));
    // What it may change can be undone: commands included, whose effects nobody can predict.
    if !spec.effect.is_read_only() {
        agent.snapshot(session, tandem_checkpoint::Kind::BeforeTool, Some((id.clone(), spec.name.to_owned()))).await;
    }
    let call_future = session.registry.call(spec.name, call.arguments.clone(), ctx);
    // Commands and MCP calls can run for long: a cancel stops waiting for them (and drops their
    // process, or sends the MCP server `notifications/cancelled`). File tools finish what they
    // started, so a multi-file change is never cut in half.
    let outcome = if matches!(spec.group, ToolGroup::Exec | ToolGroup::Mcp) {
        tokio::select! {
            outcome = call_future => Some(outcome),
            () = cancel.cancelled() => None,
        }
    } else {
        Some(call_future.await)
    };
    let result = match outcome {
        None => ToolResult {
            title: format!("{title} (cancelled)"),
            output: String::new(),
            metadata: Default::default(),
            error: Some(format!("cancelled: the person ended the turn while `{}` ran", spec.name)),
            attachments: Vec::new(),
        },
        Some(Ok(result)) => result,
        Some(Err(err)) => ToolResult {
            title: format!("{} failed", spec.name),
            output: String::new(),
            metadata: Default::default(),
            error: Some(err.to_string()),
            attachments: Vec::new(),
        },
    };
    let mut content = approver.take_applied();
    let failed = result.error.is_some();
    let shown = result.error.clone().unwrap_or_else(|| result.output.clone());
    if let Some(terminal_id) = result.metadata.get("terminalId").and_then(Value::as_str) {
        // The command ran in the editor's terminal: keep showing it there, not its text.
        content.push(ToolCallContent::Terminal { terminal_id: terminal_id.to_owned() });
    } else if !shown.is_empty() {
        content.push(text(cap_output(&shown, OutputKind::Status).chars().take(DISPLAY_CHARS).collect()));
    }
    let raw = json!({ "title": result.title, "error": result.error, "metadata": result.metadata });
    let status = if failed { ToolCallStatus::Failed } else { ToolCallStatus::Completed };
    session.client.update(&session.id, finish(status, content.clone(), Some(result.title.clone()), Some(raw))).await;
    store_call(agent, session, call, result.title.clone(), kind, status, content);

    let kind = OutputKind::of(spec.name, spec.group);
    let for_model = match &result.error {
        Some(error) => {
            let mut message = format!("Error: {error}");
            let count = failures.get(&failure_key(call)).copied().unwrap_or(0) + 1;
            if count >= MAX_IDENTICAL_FAILURES {
                message.push_str(&format!(
                    "\n(This identical call has now failed {count} times; it will not be run again with these arguments.)"
                ));
            }
            (cap_output(&message, OutputKind::Status), true)
        }
        None => (cap_output(&result.output, kind), false),
    };
    (for_model, failed)
}

/// Stores how a call ended, with what the person was shown (its final content, and the
/// locations it was announced with), so that loading the session replays it as it was.
fn store_call(
    agent: &Agent,
    session: &Session,
    call: &PlannedCall,
    title: String,
    kind: ToolKind,
    status: ToolCallStatus,
    content: Vec<ToolCallContent>,
) {
    let (_, locations) = describe(&call.name, &call.arguments, &session.cwd);
    record(
        agent,
        session,
        Record::Call {
            tool_call_id: call.tool_call_id.clone(),
            call_id: call.provider_id.clone(),
            title,
            kind,
            status,
            raw_input: call.arguments.clone(),
            content,
            locations,
        },
    );
}
