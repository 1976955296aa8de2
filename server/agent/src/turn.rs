//! One turn: model → tool calls → approvals → results → model, until the model stops.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use tandem_llm::{ErrorKind, Event, Message, Part, Request, Role, StopReason as ModelStop, ToolDef};
use tandem_protocol::{ContentBlock, SessionPromptResult, SessionUpdate, StopReason, Usage};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::call::{PlannedCall, announce, run_calls};
use crate::context::{self, Force};
use crate::session::{History, Session};
use crate::store::Record;

/// What the model is told, as a message of the person, where they cancelled a turn.
pub(crate) const INTERRUPTED: &str = "[The person interrupted this turn: it was cancelled, and whatever was running was stopped. Do not carry on with it unless they ask you to.]";

/// Whether `message` is the note that a turn was interrupted.
pub(crate) fn is_interruption(message: &Message) -> bool {
    message.role == Role::User && matches!(message.content.as_slice(), [Part::Text { text }] if text == INTERRUPTED)
}

fn prompt_text(blocks: Vec<ContentBlock>) -> Vec<Part> {
    blocks
        .into_iter()
        .map(|block| match block {
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
    agent: &Agent,
    session: &Arc<Session>,
    history: &mut History,
    prompt: Vec<ContentBlock>,
    cancel: &CancellationToken,
) -> SessionPromptResult {
    let first = history.messages.is_empty();
    let mut content = prompt_text(prompt);
    if session.depth == 0 {
        let said: Vec<&str> = content
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        let hooks = crate::policy::prompt_hooks(agent, session, first, &said.join("\n"), cancel).await;
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
    let user = Message { role: Role::User, content };
    session.record(&Record::Message { message: user.clone() });
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
    // Whether a call of this turn may have changed files (the verify loop runs then), and how
    // many times the verify commands or a Stop hook sent the model back.
    let mut changed = false;
    let mut rounds = 0;
    for _ in 0..agent.config.max_turns {
        if cancel.is_cancelled() {
            return interrupted(session, history, String::new());
        }
        let mode = session.gate.mode();
        let mut system = crate::prompt::system_prompt(agent.workspace.root(), &session.cwd, mode);
        if let Some(memories) = &memories {
            system.push('\n');
            system.push_str(memories);
        }
        let model = session.model();
        let budget = context::budget(agent, &model, history.stated_window);
        let tools = tool_defs(agent, session, budget);
        let fixed = system.len() + tools.bytes;
        if context::fit(agent, session, history, fixed, budget, Force::No, cancel).await.is_none() {
            return interrupted(session, history, String::new());
        }
        let sent_bytes = history.message_bytes() + fixed;
        let request_model = model.clone();
        let request = Request {
            system,
            messages: history.messages.clone(),
            tools: tools.defs,
            model: Some(model),
            temperature: None,
        };
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
            Err(err) if err.kind == ErrorKind::Cancelled => return interrupted(session, history, streamed),
            Err(err) if err.kind == ErrorKind::ContextTooLong && !overflow_retried => {
                overflow_retried = true;
                tracing::warn!(session = session.id, "{err}; compacting and trying again");
                // The estimate was too low for this provider: count more tokens per byte; and a
                // window it states (smaller than the profile's) holds from now on.
                history.bytes_per_token = (history.bytes_per_token * 0.75).max(1.0);
                history.stated_window = context::stated_window(&err.message).or(history.stated_window);
                let budget = context::budget(agent, &request_model, history.stated_window);
                if context::fit(agent, session, history, fixed, budget, Force::Provider, cancel).await.is_none() {
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
        history.add_usage(&response.usage, price_of(agent, &request_model));
        session.record(&Record::Usage { totals: history.totals });
        session.client.update(&session.id, usage_update(history, &response.usage, budget)).await;
        let message = response.message;
        session.record(&Record::Message { message: message.clone() });
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
                _ => match crate::policy::at_stop(agent, session, changed, &mut rounds, cancel).await {
                    Some(feedback) => {
                        let message = Message { role: Role::User, content: vec![Part::Text { text: feedback }] };
                        session.record(&Record::Message { message: message.clone() });
                        history.messages.push(Arc::new(message));
                        continue;
                    }
                    None => stop(StopReason::EndTurn),
                },
            };
        }
        let writes: Vec<bool> = calls
            .iter()
            .map(|c| session.registry.find(&c.name).is_some_and(|t| !t.spec().effect.is_read_only()))
            .collect();
        let results = run_calls(agent, session, history, calls, cancel).await;
        changed |= results
            .iter()
            .zip(&writes)
            .any(|(part, writes)| *writes && matches!(part, Part::ToolResult { is_error: false, .. }));
        let message = Message { role: Role::User, content: results };
        session.record(&Record::Message { message: message.clone() });
        history.messages.push(Arc::new(message));
        if cancel.is_cancelled() {
            return interrupted(session, history, String::new());
        }
    }
    stop(StopReason::MaxTurns)
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

/// The price of `model`: the configured one for the configured model, else the price table's.
pub(crate) fn price_of(agent: &Agent, model: &str) -> Option<tandem_llm::price::Price> {
    let settings = &agent.config.provider;
    settings.price.filter(|_| settings.model == model).or_else(|| tandem_llm::price::lookup(model))
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
pub(crate) fn tool_defs(agent: &Agent, session: &Session, budget: context::Budget) -> ToolSet {
    let all: Vec<Arc<dyn tandem_tools::Tool>> = session.registry.enabled().collect();
    let set = session.tool_sets.lock().get(&all);
    let too_big = || {
        let tokens = set.bytes as f64 / context::DEFAULT_BYTES_PER_TOKEN;
        tokens as u64 > budget.window / TOOLS_SHARE
    };
    if !agent.config.defer_tools && !too_big() {
        return set;
    }
    let loaded = session.loaded_tools.lock().clone();
    let offered: Vec<_> =
        all.into_iter().filter(|tool| tool.spec().always_load || loaded.contains(tool.spec().name)).collect();
    session.tool_sets.lock().get(&offered)
}

/// Tool definitions as a request carries them, and their size in JSON.
#[derive(Clone)]
pub(crate) struct ToolSet {
    pub(crate) defs: Arc<[ToolDef]>,
    pub(crate) bytes: usize,
}

/// The tool sets of recent requests, so a turn shares the definitions of the last one rather
/// than copying every schema again: the same tools (the same objects, whose specs cannot
/// change) give the same definitions.
#[derive(Default)]
pub(crate) struct ToolSets {
    /// The full set and the deferred one: a session alternates between at most these two.
    recent: Vec<(Vec<Arc<dyn tandem_tools::Tool>>, ToolSet)>,
}

impl ToolSets {
    fn get(&mut self, tools: &[Arc<dyn tandem_tools::Tool>]) -> ToolSet {
        let same = |known: &[Arc<dyn tandem_tools::Tool>]| {
            known.len() == tools.len() && known.iter().zip(tools).all(|(a, b)| Arc::ptr_eq(a, b))
        };
        if let Some((_, set)) = self.recent.iter().find(|(known, _)| same(known)) {
            return set.clone();
        }
        let defs: Vec<ToolDef> = tools
            .iter()
            .map(|tool| {
                let spec = tool.spec();
                ToolDef {
                    name: spec.name.to_owned(),
                    description: spec.description.to_owned(),
                    parameters: spec.parameters.clone(),
                }
            })
            .collect();
        let set = ToolSet { bytes: context::json_size(&defs), defs: defs.into() };
        if self.recent.len() >= 2 {
            self.recent.remove(0);
        }
        self.recent.push((tools.to_vec(), set.clone()));
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attached_links_tell_the_model_how_to_get_them() {
        let parts = prompt_text(vec![
            ContentBlock::ResourceLink {
                uri: "https://example.com/x".into(),
                name: "https://example.com/x".into(),
                mime_type: None,
            },
            ContentBlock::ResourceLink { uri: "file:///w/docs/".into(), name: "docs/".into(), mime_type: None },
        ]);
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
