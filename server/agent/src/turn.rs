//! One turn: model → tool calls → approvals → results → model, until the model stops.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tandem_llm::{ErrorKind, Event, Message, Part, Request, Role, StopReason as ModelStop};
use tandem_protocol::{ContentBlock, SessionPromptResult, SessionUpdate, StopReason, Usage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::call::{PlannedCall, announce, run_calls};
use crate::context::{self, Force};
use crate::env::Env;
use crate::offer::ToolSet;
use crate::session::{History, INTERRUPTED, Session, is_interruption};
use crate::store::Record;

fn prompt_text(blocks: Vec<ContentBlock>, limits: tandem_llm::image::Limits) -> Vec<Part> {
    blocks
        .into_iter()
        .map(|block| match block {
            // Checked before the turn (`images::admit`): a failure here would be a file that
            // changed since; the model is told, never left guessing.
            ContentBlock::Image { data, mime_type, uri } => {
                match crate::images::from_block(&data, &mime_type, uri.as_deref(), limits) {
                    Ok(image) => Part::Image(image),
                    Err(problem) => Part::Text { text: format!("[an attached image could not be sent: {problem}]") },
                }
            }
            ContentBlock::Text { text } => Part::Text { text },
            ContentBlock::ResourceLink { uri, name, .. } if is_web(&uri) => Part::Text {
                text: format!("[attached: {name} ({uri}); a web page: fetch it with webfetch if you need it]"),
            },
            ContentBlock::ResourceLink { uri, name, .. } => {
                Part::Text { text: format!("[attached: {name} ({uri}); read it if you need it]") }
            }
            ContentBlock::Resource { resource } => {
                Part::Text { text: format!("<attached uri=\"{}\">\n{}\n</attached>", resource.uri, resource.text) }
            }
        })
        .collect()
}

/// A text part of a stored prompt as the person gave it (the inverse of [`prompt_text`]): an
/// attachment is a link to it, without the text it sent the model; what Tandem added to the
/// prompt (a hook's context) is none of it.
pub(crate) fn as_typed(text: &str) -> Option<ContentBlock> {
    let link = |uri: &str, name: &str| ContentBlock::ResourceLink {
        uri: uri.to_owned(),
        name: name.to_owned(),
        mime_type: None,
    };
    if text.starts_with("<hook-context>\n") && text.ends_with("\n</hook-context>") {
        return None;
    }
    if let Some(rest) = text.strip_prefix("<attached uri=\"")
        && text.ends_with("\n</attached>")
        && let Some((uri, _)) = rest.split_once("\">\n")
    {
        let name = uri.trim_end_matches('/').rsplit('/').next().filter(|n| !n.is_empty()).unwrap_or(uri);
        return Some(link(uri, name));
    }
    if let Some(rest) = text.strip_prefix("[attached: ")
        && (text.ends_with("; read it if you need it]")
            || text.ends_with("; a web page: fetch it with webfetch if you need it]"))
        && let Some((name, rest)) = rest.split_once(" (")
        && let Some((uri, _)) = rest.split_once("); ")
    {
        return Some(link(uri, name));
    }
    Some(ContentBlock::text(text))
}

/// Whether `uri` is a web address (an `@https://…` the person attached).
fn is_web(uri: &str) -> bool {
    let scheme = uri.split_once("://").map(|(scheme, _)| scheme.to_ascii_lowercase());
    matches!(scheme.as_deref(), Some("http" | "https"))
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
    env: &Env,
    session: &Arc<Session>,
    history: &mut History,
    prompt: Vec<ContentBlock>,
    cancel: &CancellationToken,
) -> SessionPromptResult {
    let first = history.messages.is_empty();
    let mut content = prompt_text(prompt, tandem_llm::image::Limits::of(env.provider().kind));
    if session.depth == 0 {
        let said = tandem_llm::text_of(&content, "\n");
        let hooks = crate::policy::prompt_hooks(env, session, first, &said, cancel).await;
        if let Some(block) = hooks.blocked {
            // The prompt does not reach the model (nor the history); the person sees why.
            let note = format!("[Your prompt was not sent: {block}]");
            session
                .client
                .update(&session.id, SessionUpdate::AgentMessageChunk { content: ContentBlock::text(note) })
                .await;
            return stop(StopReason::EndTurn);
        }
        content.extend(
            hooks
                .context
                .into_iter()
                .map(|text| Part::Text { text: format!("<hook-context>\n{text}\n</hook-context>") }),
        );
    }
    if first && session.depth == 0 {
        let said = tandem_llm::text_of(&content, "\n");
        if let Some(map) = crate::repo_map::first_map(env, &session.model(), history.stated_window, &said).await {
            content.push(Part::Text { text: map });
        }
    }
    let prompt_words = add_prompt(session, history, content);
    let memories = tandem_tool_memory::session_brief(env.workspace.root(), &prompt_words);
    // A provider that says the request does not fit gets one compaction and a retry per turn.
    let mut overflow_retried = false;
    // Whether a call of this turn may have changed files (the verify loop runs then), and how
    // many times the verify commands or a Stop hook sent the model back.
    let mut changed = false;
    let mut rounds = 0;
    for _ in 0..env.config.max_turns {
        if cancel.is_cancelled() {
            return interrupted(session, history, String::new());
        }
        let model = session.model();
        let instructions = crate::guidance::budget(env, &model);
        let (mut system, guidance) =
            crate::prompt::system_prompt(env.workspace.root(), &session.cwd, session.gate.mode(), instructions);
        crate::guidance::notify(env, session, &guidance, instructions).await;
        if let Some(memories) = &memories {
            system.push('\n');
            system.push_str(memories);
        }
        crate::prompt::append(&mut system, env.config.append_system_prompt.as_deref());
        history.size_images_for(env.provider().kind);
        let budget = context::budget(env.provider(), &model, history.stated_window);
        let tools = tool_defs(env.config.defer_tools, session, budget, guidance.skills > 0);
        let fixed = system.len() + tools.bytes;
        if context::fit(env, session, history, fixed, budget, Force::No, cancel).await.is_none() {
            return interrupted(session, history, String::new());
        }
        let sent_bytes = history.message_bytes() + fixed;
        let request = Request {
            system,
            messages: history.messages.clone(),
            tools: tools.defs,
            model: Some(model.clone()),
            temperature: None,
        };
        let (outcome, announced, streamed) = stream(env, session, &request, cancel).await;
        let response = match outcome {
            Ok(response) => response,
            Err(err) if err.kind == ErrorKind::Cancelled => return interrupted(session, history, streamed),
            Err(err) if err.kind == ErrorKind::ContextTooLong && !overflow_retried => {
                overflow_retried = true;
                tracing::warn!(session = session.id, "{err}; compacting and trying again");
                // The estimate was too low for this provider: count more tokens per byte; and a
                // window it states (smaller than the profile's) holds from now on.
                history.bytes_per_token = (history.bytes_per_token * 0.75).max(1.0);
                history.stated_window = context::stated_window(&err.message).or(history.stated_window);
                let budget = context::budget(env.provider(), &model, history.stated_window);
                if context::fit(env, session, history, fixed, budget, Force::Provider, cancel).await.is_none() {
                    return interrupted(session, history, String::new());
                }
                continue;
            }
            Err(err) => {
                // The client gets the error with the result; the log keeps it for the record.
                tracing::warn!(session = session.id, "model turn failed: {err}");
                return SessionPromptResult { stop_reason: StopReason::Error, error: Some(err.message) };
            }
        };
        history.calibrate(sent_bytes, response.usage.input_tokens);
        history.add_usage(&response.usage, env.price_of(&model));
        session.record(&Record::Usage { totals: history.totals });
        session.client.update(&session.id, usage_update(history, &response.usage, budget)).await;
        let message = response.message;
        session.record(&Record::Message { message: message.clone() });
        let calls = planned_calls(session, &message, &announced).await;
        history.messages.push(Arc::new(message));
        if calls.is_empty() {
            return match response.stop {
                ModelStop::Refusal => stop(StopReason::Refusal),
                ModelStop::MaxTokens => cut_short(env.provider(), session, &model).await,
                _ => match crate::policy::at_stop(env, session, changed, &mut rounds, cancel).await {
                    Some(feedback) => {
                        // Tandem's words to the model (checks that failed), never replayed as the person's.
                        let message = Message { role: Role::User, content: vec![Part::Text { text: feedback }] };
                        session.record(&Record::Note { message: message.clone() });
                        history.messages.push(Arc::new(message));
                        continue;
                    }
                    None => stop(StopReason::EndTurn),
                },
            };
        }
        let planned = calls.clone();
        let writes: Vec<bool> = calls
            .iter()
            .map(|c| session.registry.find(&c.name).is_some_and(|t| !t.spec().effect.is_read_only()))
            .collect();
        let mut results = run_calls(env, session, history, calls, cancel).await;
        changed |= results
            .iter()
            .zip(&writes)
            .any(|(part, writes)| *writes && matches!(part, Part::ToolResult { is_error: false, .. }));
        // Nested instruction files and scoped rules the calls brought into force, once each.
        let arrived = crate::guidance::arrivals(env, session, &planned, &results).await;
        results.extend(arrived);
        let message = Message { role: Role::User, content: results };
        session.record(&Record::Message { message: message.clone() });
        history.messages.push(Arc::new(message));
        if cancel.is_cancelled() {
            return interrupted(session, history, String::new());
        }
    }
    stop(StopReason::MaxTurns)
}

/// Adds the person's prompt to the history and the store; returns its words (what memories
/// are matched against). Two user messages in a row (after an error) become one; a cancelled
/// turn stays its own, closed by the note that the person interrupted it.
fn add_prompt(session: &Session, history: &mut History, content: Vec<Part>) -> String {
    let user = Message { role: Role::User, content };
    session.record(&Record::Message { message: user.clone() });
    match history.messages.last_mut() {
        Some(last) if last.role == Role::User && !is_interruption(last) => {
            Arc::make_mut(last).content.extend(user.content);
            history.remeasure_last();
        }
        _ => history.messages.push(Arc::new(user)),
    }
    history.messages.last().map(|m| tandem_llm::text_of(&m.content, " ")).unwrap_or_default()
}

/// One model request, its events forwarded in order as session updates. Returns the outcome,
/// the tool calls announced while streaming (the provider's id, ours), and the text the
/// person saw (kept when the turn is cancelled mid-stream).
async fn stream(
    env: &Env,
    session: &Session,
    request: &Request,
    cancel: &CancellationToken,
) -> (Result<tandem_llm::Response, tandem_llm::LlmError>, Vec<(String, String)>, String) {
    let forwarder = Forwarder::start(session);
    let mut announced: Vec<(String, String)> = Vec::new();
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
            let ours = next_call_id(session);
            forwarder.tx.send(announce(session, &ours, &name, &arguments)).ok();
            announced.push((id, ours));
        }
        Event::Retrying { attempt, delay, reason } => {
            tracing::debug!(session = session.id, attempt, ?delay, "model request failed, retrying: {reason}");
        }
        Event::ToolCallStarted { .. } | Event::Usage(_) => {}
    };
    let model = request.model.clone().unwrap_or_default();
    let span = crate::otel::request(&model);
    let outcome = tracing::Instrument::instrument(env.llm.stream(request, cancel, &mut on_event), span.clone()).await;
    forwarder.finish().await;
    match &outcome {
        Ok(response) => {
            let cost = env.price_of(&model).map(|price| price.cost(&response.usage));
            crate::otel::used(&span, &response.usage, cost);
        }
        Err(err) => crate::otel::failed(&span, &err.message),
    }
    (outcome, announced, streamed)
}

/// Our id for the session's next tool call.
fn next_call_id(session: &Session) -> String {
    format!("{}c{}", session.call_prefix, session.next_call.fetch_add(1, Ordering::Relaxed))
}

/// The tool calls of the model's answer, each under the id it was announced with (announced
/// now if streaming did not).
async fn planned_calls(session: &Session, message: &Message, announced: &[(String, String)]) -> Vec<PlannedCall> {
    let mut calls = Vec::new();
    for part in &message.content {
        if let Part::ToolCall { id, name, arguments, .. } = part {
            let ours = match announced.iter().find(|(provider, _)| provider == id) {
                Some((_, ours)) => ours.clone(),
                None => {
                    let ours = next_call_id(session);
                    session.client.update(&session.id, announce(session, &ours, name, arguments)).await;
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
    calls
}

/// Ends a cancelled turn in the history: the part of the answer that was streamed (if any),
/// then the note that the person interrupted, so the next prompt is a turn of its own and the
/// model knows the last one did not finish.
fn interrupted(session: &Session, history: &mut History, streamed: String) -> SessionPromptResult {
    let mut messages = Vec::new();
    if !streamed.is_empty() {
        messages.push(Message { role: Role::Assistant, content: vec![Part::Text { text: streamed }] });
    }
    if !history.messages.last().is_some_and(|last| is_interruption(last)) {
        messages.push(Message { role: Role::User, content: vec![Part::Text { text: INTERRUPTED.to_owned() }] });
    }
    for message in messages {
        session.record(&Record::Message { message: message.clone() });
        history.messages.push(Arc::new(message));
    }
    stop(StopReason::Cancelled)
}

/// The answer reached the output token limit: the person is told, with how to go on, and the
/// turn ends as `max_tokens` rather than as a finished answer.
async fn cut_short(provider: &tandem_llm::ProviderSettings, session: &Session, model: &str) -> SessionPromptResult {
    let note = format!(
        "\n\n[The answer was cut: it reached the output limit of {} tokens. Say \"continue\" to have the model go on, or raise `max_output_tokens` under [provider] in .tandem/config.toml.]",
        tandem_llm::profile::resolve(provider, model).max_output
    );
    session.client.update(&session.id, SessionUpdate::AgentMessageChunk { content: ContentBlock::text(note) }).await;
    stop(StopReason::MaxTokens)
}

fn stop(stop_reason: StopReason) -> SessionPromptResult {
    SessionPromptResult { stop_reason, error: None }
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

/// Share of the window the tools offered up front may take: beyond it, a small-context model
/// gets only the always-loaded ones.
const TOOLS_SHARE: u64 = 4;

/// Whether `tool` is one of an MCP server's (`mcp__<server>__<tool>`), not a built-in one.
fn is_server_tool(tool: &dyn tandem_tool_api::Tool) -> bool {
    let spec = tool.spec();
    spec.group == tandem_protocol::ToolGroup::Mcp && spec.name.starts_with("mcp__")
}

/// The tool that loads a skill: part of the core set only while the system prompt lists a skill.
const SKILL_TOOL: &str = "skill";

/// The tools offered in the next request. Deferring (the default): the always-loaded core set
/// (`skill` only when the system prompt lists a skill: `skills_listed`), those found with
/// `tool_search`, and the tools of the MCP servers the person configured; the other built-in
/// tools are found with `tool_search`. Otherwise every enabled tool. Whatever would take more
/// than a quarter of the window shrinks to the core set and the tools found.
pub(crate) fn tool_defs(defer_tools: bool, session: &Session, budget: context::Budget, skills_listed: bool) -> ToolSet {
    let all: Vec<Arc<dyn tandem_tool_api::Tool>> = session.registry.enabled().collect();
    let fits = |set: &ToolSet| {
        let tokens = set.bytes as f64 / crate::tokens::DEFAULT_BYTES_PER_TOKEN;
        tokens as u64 <= budget.window / TOOLS_SHARE
    };
    if !defer_tools {
        let set = session.tool_sets.lock().get(&all);
        if fits(&set) {
            return set;
        }
    }
    let loaded = session.loaded_tools.lock().clone();
    let core = |tool: &Arc<dyn tandem_tool_api::Tool>| {
        let spec = tool.spec();
        (spec.always_load && (skills_listed || spec.name != SKILL_TOOL)) || loaded.contains(spec.name)
    };
    if defer_tools {
        let offered: Vec<_> = all.iter().filter(|tool| core(tool) || is_server_tool(tool.as_ref())).cloned().collect();
        let set = session.tool_sets.lock().get(&offered);
        if fits(&set) {
            return set;
        }
    }
    let offered: Vec<_> = all.into_iter().filter(core).collect();
    session.tool_sets.lock().get(&offered)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attached_links_tell_the_model_how_to_get_them() {
        let parts = prompt_text(
            vec![
                ContentBlock::ResourceLink {
                    uri: "https://example.com/x".into(),
                    name: "https://example.com/x".into(),
                    mime_type: None,
                },
                ContentBlock::ResourceLink { uri: "file:///w/docs/".into(), name: "docs/".into(), mime_type: None },
            ],
            tandem_llm::image::Limits::of(tandem_llm::ProviderKind::OpenAi),
        );
        let texts: Vec<_> = parts
            .iter()
            .map(|p| match p {
                Part::Text { text } => text.as_str(),
                _ => "",
            })
            .collect();
        assert_eq!(
            texts,
            [
                "[attached: https://example.com/x (https://example.com/x); a web page: fetch it with webfetch if you need it]",
                "[attached: docs/ (file:///w/docs/); read it if you need it]",
            ]
        );
    }
}
