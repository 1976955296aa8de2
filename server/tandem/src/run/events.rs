//! `tandem run --output-format json|stream-json`: the run for scripts. With `stream-json`,
//! one JSON object per line on stdout as things happen, each with a `type`; with `json`, only
//! the last of them, the `result`. Nothing else reaches stdout: notes and errors go to stderr.
//! The events are documented in `docs/protocol.md` and their JSON Schema is
//! `docs/run-events.schema.json`.

use std::collections::HashMap;
use std::time::Instant;

use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use tandem_protocol::{ContentBlock, SessionUpdate, StopReason, ToolCallContent, ToolCallStatus, Usage, UsageTotals};

/// Longest tool output put in a `tool_result` event, in bytes (the rest is cut, and said so).
const MAX_OUTPUT: usize = 64 * 1024;

/// What `tandem run` prints on stdout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The answer as text, tool calls as cards (for people).
    #[default]
    Text,
    /// One JSON object at the end: the result.
    Json,
    /// One JSON object per line as things happen, the result last.
    StreamJson,
}

/// The events of one run, written as JSON lines.
pub(super) struct Events {
    /// Every event is written (`stream-json`), or only the result (`json`).
    stream: bool,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    session_id: String,
    /// Updates count only once the run's turn has begun (a resumed session's replay is not
    /// part of this run).
    active: bool,
    /// Answer text not yet written (one `assistant` event per stretch of text).
    text: String,
    /// Reasoning not yet written.
    thinking: String,
    /// The answer since the last tool call: the run's result.
    answer: String,
    /// Tool names by call id.
    tools: HashMap<String, String>,
    /// Model requests made in this run.
    requests: u32,
    /// The session's totals when the run began, and the latest.
    first: Option<UsageTotals>,
    last: Option<UsageTotals>,
    started: Option<Instant>,
}

impl Events {
    pub(super) fn new(format: OutputFormat) -> Self {
        Self { stream: format == OutputFormat::StreamJson, state: Mutex::new(State::default()) }
    }

    /// Writes `event` as one line, when every event is written.
    fn emit(&self, event: Value) {
        if self.stream {
            line(&event);
        }
    }

    /// The `system` event that opens the run: the session, the model, the mode and the tools.
    pub(super) fn init(&self, session_id: &str, model: &str, mode: &str, cwd: &str, tools: Vec<String>) {
        self.state.lock().session_id = session_id.to_owned();
        self.emit(json!({
            "type": "system",
            "subtype": "init",
            "session_id": session_id,
            "model": model,
            "mode": mode,
            "cwd": cwd,
            "tools": tools,
        }));
    }

    /// The run's turn begins: updates count from here.
    pub(super) fn begin(&self) {
        let mut state = self.state.lock();
        state.active = true;
        state.started = Some(Instant::now());
        state.first = state.last;
    }

    /// Writes the pending text and reasoning as their events.
    fn flush(&self, state: &mut State) {
        let session_id = state.session_id.clone();
        if !state.thinking.is_empty() {
            let text = std::mem::take(&mut state.thinking);
            self.emit(json!({ "type": "thinking", "session_id": session_id, "text": text }));
        }
        if !state.text.is_empty() {
            let text = std::mem::take(&mut state.text);
            self.emit(json!({ "type": "assistant", "session_id": session_id, "text": text }));
        }
    }

    /// One session update.
    pub(super) fn update(&self, update: SessionUpdate) {
        let mut state = self.state.lock();
        if let SessionUpdate::UsageUpdate(usage) = &update {
            // A resumed session's replay carries no usage; the latest totals are the base.
            state.last = Some(usage.session);
        }
        if !state.active {
            return;
        }
        let session_id = state.session_id.clone();
        match update {
            SessionUpdate::AgentMessageChunk { content: ContentBlock::Text { text } } => {
                if !state.thinking.is_empty() {
                    let thinking = std::mem::take(&mut state.thinking);
                    self.emit(json!({ "type": "thinking", "session_id": session_id, "text": thinking }));
                }
                state.text.push_str(&text);
                state.answer.push_str(&text);
            }
            SessionUpdate::AgentThoughtChunk { content: ContentBlock::Text { text } } => {
                state.thinking.push_str(&text);
            }
            SessionUpdate::ToolCall(call) => {
                self.flush(&mut state);
                state.answer.clear();
                let name = call.tool_name.clone().unwrap_or_default();
                state.tools.insert(call.tool_call_id.clone(), name.clone());
                self.emit(json!({
                    "type": "tool_call",
                    "session_id": session_id,
                    "id": call.tool_call_id,
                    "name": name,
                    "title": call.title,
                    "input": call.raw_input.unwrap_or(Value::Null),
                }));
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let status = match update.status {
                    Some(ToolCallStatus::Completed) => "completed",
                    Some(ToolCallStatus::Failed) => "failed",
                    _ => return,
                };
                self.flush(&mut state);
                let name = state.tools.get(&update.tool_call_id).cloned().unwrap_or_default();
                let mut event = Map::new();
                event.insert("type".into(), "tool_result".into());
                event.insert("session_id".into(), session_id.into());
                event.insert("id".into(), update.tool_call_id.into());
                event.insert("name".into(), name.into());
                event.insert("status".into(), status.into());
                let content = update.content.unwrap_or_default();
                event.insert("output".into(), output_of(&content).into());
                let files: Vec<&str> = content
                    .iter()
                    .filter_map(|c| match c {
                        ToolCallContent::Diff { path, .. } => Some(path.as_str()),
                        _ => None,
                    })
                    .collect();
                if !files.is_empty() {
                    event.insert("files".into(), json!(files));
                }
                // The tool's result: its metadata (a command's `exitCode`, say), and a command's
                // exit status on its own.
                if let Some(mut raw) = update.raw_output {
                    let metadata = raw.get_mut("metadata").map_or(Value::Null, Value::take);
                    if let Some(code) = metadata.get("exitCode").and_then(Value::as_i64) {
                        event.insert("exit_code".into(), code.into());
                    }
                    if !metadata.is_null() {
                        event.insert("metadata".into(), metadata);
                    }
                }
                self.emit(Value::Object(event));
            }
            SessionUpdate::Plan { entries } => {
                self.flush(&mut state);
                self.emit(json!({ "type": "plan", "session_id": session_id, "entries": entries }));
            }
            SessionUpdate::CurrentModeUpdate { current_mode_id } => {
                self.emit(json!({ "type": "mode", "session_id": session_id, "mode": current_mode_id.as_str() }));
            }
            SessionUpdate::UsageUpdate(usage) => {
                state.requests += 1;
                self.emit(usage_event(&session_id, &usage));
            }
            _ => {}
        }
    }

    /// A permission the run could not ask for (no terminal in a JSON run), for the record.
    pub(super) fn denied(&self, title: &str, why: &str) {
        let session_id = self.state.lock().session_id.clone();
        self.emit(json!({ "type": "permission_denied", "session_id": session_id, "title": title, "reason": why }));
    }

    /// The `result` event that ends the run (with `json`, the only one).
    pub(super) fn result(&self, stop: StopReason, error: Option<&str>) {
        let mut state = self.state.lock();
        self.flush(&mut state);
        let stop_reason = serde_json::to_value(stop).unwrap_or(Value::Null);
        let is_error = !matches!(stop, StopReason::EndTurn) || error.is_some();
        let subtype = match stop {
            StopReason::EndTurn if error.is_some() => "error",
            StopReason::EndTurn => "success",
            StopReason::MaxTurns => "error_max_turns",
            StopReason::Cancelled => "cancelled",
            _ => "error",
        };
        let base = state.first.unwrap_or_default();
        let now = state.last.unwrap_or(base);
        let cost = match (now.cost_usd, base.cost_usd) {
            (Some(now), base) => Some(now - base.unwrap_or(0.0)),
            (None, _) => None,
        };
        let mut result = json!({
            "type": "result",
            "subtype": subtype,
            "result": state.answer,
            "session_id": state.session_id,
            "is_error": is_error,
            "stop_reason": stop_reason,
            "num_turns": state.requests,
            "duration_ms": state.started.map_or(0, |t| u64::try_from(t.elapsed().as_millis()).unwrap_or(u64::MAX)),
            "usage": {
                "input_tokens": now.input_tokens.saturating_sub(base.input_tokens),
                "output_tokens": now.output_tokens.saturating_sub(base.output_tokens),
                "cache_read_tokens": now.cache_read_tokens.saturating_sub(base.cache_read_tokens),
                "reasoning_tokens": now.reasoning_tokens.saturating_sub(base.reasoning_tokens),
            },
            "cost_usd": cost,
        });
        if let Some(error) = error {
            result["error"] = error.into();
        }
        line(&result);
    }
}

/// A `usage` event: one model request's counts and the session's totals.
fn usage_event(session_id: &str, usage: &Usage) -> Value {
    json!({
        "type": "usage",
        "session_id": session_id,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "reasoning_tokens": usage.reasoning_tokens,
        "context_window": usage.context_window,
        "session_total_tokens": usage.total_tokens,
        "cost_usd": usage.session.cost_usd,
    })
}

/// The text a tool call's final content carries, cut at [`MAX_OUTPUT`].
fn output_of(content: &[ToolCallContent]) -> String {
    let mut text = content
        .iter()
        .filter_map(|c| match c {
            ToolCallContent::Content { content: ContentBlock::Text { text } } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if text.len() > MAX_OUTPUT {
        let mut cut = MAX_OUTPUT;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        let rest = text.len() - cut;
        text.truncate(cut);
        text.push_str(&format!("\n… {rest} more bytes"));
    }
    text
}

/// Writes one JSON line to stdout at once.
fn line(value: &Value) {
    crate::stdout::line(&value.to_string());
}
