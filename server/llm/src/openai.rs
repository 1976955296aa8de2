//! OpenAI Chat Completions (`POST {base_url}/chat/completions`, `stream: true`): the request
//! body and the streamed `chat.completion.chunk`s.
//!
//! Spoken by OpenAI, Ollama, vLLM, llama.cpp server, LM Studio and OpenRouter. Reasoning
//! arrives as `delta.reasoning_content` (DeepSeek, vLLM, llama.cpp) or `delta.reasoning`
//! (Ollama, OpenRouter) and is never sent back.

use serde_json::{Map, Value, json};

use crate::assemble::{Assembler, arguments_text};
use crate::sse::SseEvent;
use crate::{Event, Part, ProviderSettings, Request, Role, StopReason, Usage};

/// The JSON body of a streamed Chat Completions request.
pub(crate) fn request_body(settings: &ProviderSettings, request: &Request) -> Value {
    let mut messages = Vec::new();
    if !request.system.is_empty() {
        messages.push(json!({"role": "system", "content": request.system}));
    }
    for message in &request.messages {
        match message.role {
            Role::User => {
                let mut texts = Vec::new();
                for part in &message.content {
                    match part {
                        Part::ToolResult { call_id, content, is_error: _ } => {
                            messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": content}));
                        }
                        Part::Text { text } => texts.push(text.as_str()),
                        Part::Thinking { .. } | Part::ToolCall { .. } => {}
                    }
                }
                if !texts.is_empty() {
                    messages.push(json!({"role": "user", "content": texts.join("\n\n")}));
                }
            }
            Role::Assistant => {
                let mut texts = Vec::new();
                let mut tool_calls = Vec::new();
                for part in &message.content {
                    match part {
                        Part::Text { text } => texts.push(text.as_str()),
                        Part::ToolCall { id, name, arguments } => tool_calls.push(json!({
                            "id": id,
                            "type": "function",
                            "function": {"name": name, "arguments": arguments_text(arguments)},
                        })),
                        Part::Thinking { .. } | Part::ToolResult { .. } => {}
                    }
                }
                if texts.is_empty() && tool_calls.is_empty() {
                    continue;
                }
                let mut out = Map::new();
                out.insert("role".into(), "assistant".into());
                out.insert("content".into(), if texts.is_empty() { Value::Null } else { texts.concat().into() });
                if !tool_calls.is_empty() {
                    out.insert("tool_calls".into(), tool_calls.into());
                }
                messages.push(Value::Object(out));
            }
        }
    }
    let mut body = Map::new();
    body.insert("model".into(), request.model.as_deref().unwrap_or(&settings.model).into());
    body.insert("messages".into(), messages.into());
    body.insert("stream".into(), true.into());
    body.insert("stream_options".into(), json!({"include_usage": true}));
    body.insert("max_tokens".into(), settings.max_tokens.into());
    if let Some(temperature) = request.temperature {
        body.insert("temperature".into(), crate::assemble::temperature(temperature));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters},
                })
            })
            .collect();
        body.insert("tools".into(), tools.into());
    }
    Value::Object(body)
}

/// A tool call being streamed: fragments arrive under the same `index`.
#[derive(Debug)]
struct PendingCall {
    index: u64,
    part: Option<usize>,
    id: String,
    name: String,
    arguments: String,
    done: bool,
}

/// The stream's state between chunks.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    calls: Vec<PendingCall>,
    done: bool,
}

/// What went wrong in the stream, before the client classifies it.
#[derive(Debug)]
pub(crate) enum StreamFault {
    /// Not the documented format.
    Protocol(String),
    /// The provider reported an error inside the stream.
    Provider { retryable: bool, message: String },
}

impl Decoder {
    /// Handles one SSE event; returns whether the stream is complete.
    pub fn event(
        &mut self,
        event: &SseEvent,
        asm: &mut Assembler,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<bool, StreamFault> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.finish_calls(asm, on_event);
            self.done = true;
            return Ok(true);
        }
        if data.is_empty() {
            return Ok(false);
        }
        let chunk: Value = serde_json::from_str(data).map_err(|error| {
            StreamFault::Protocol(format!("a stream chunk is not JSON ({error}): {}", snippet(data)))
        })?;
        if let Some(error) = chunk.get("error").filter(|error| !error.is_null()) {
            let message = error.get("message").and_then(Value::as_str).map_or_else(|| error.to_string(), str::to_owned);
            return Err(StreamFault::Provider { retryable: false, message });
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            let field = |name: &str| usage.get(name).and_then(Value::as_u64).unwrap_or(0);
            let cached = usage.pointer("/prompt_tokens_details/cached_tokens").and_then(Value::as_u64).unwrap_or(0);
            asm.set_usage(
                Usage {
                    input_tokens: field("prompt_tokens"),
                    output_tokens: field("completion_tokens"),
                    cache_read_tokens: cached,
                    cache_write_tokens: 0,
                },
                on_event,
            );
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|choices| choices.first()) else {
            if chunk.get("choices").is_none() && chunk.get("usage").is_none() {
                return Err(StreamFault::Protocol(format!(
                    "a stream chunk has neither choices nor usage: {}",
                    snippet(data)
                )));
            }
            return Ok(false);
        };
        if let Some(delta) = choice.get("delta") {
            // Servers that send both carry the same text twice.
            let reasoning = ["reasoning_content", "reasoning"].iter().find_map(|key| delta.get(*key)?.as_str());
            if let Some(text) = reasoning {
                asm.thinking(text, on_event);
            }
            if let Some(text) = delta.get("content").and_then(Value::as_str) {
                asm.text(text, on_event);
            }
            if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
                for (position, call) in calls.iter().enumerate() {
                    self.tool_call_fragment(position as u64, call, asm, on_event);
                }
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_calls(asm, on_event);
            asm.stop = Some(match reason {
                "stop" if asm.has_tool_calls() => StopReason::ToolUse,
                "stop" => StopReason::EndTurn,
                "tool_calls" | "function_call" => StopReason::ToolUse,
                "length" => StopReason::MaxTokens,
                "content_filter" => StopReason::Refusal,
                other => StopReason::Other(other.to_owned()),
            });
        }
        Ok(false)
    }

    fn tool_call_fragment(
        &mut self,
        position: u64,
        call: &Value,
        asm: &mut Assembler,
        on_event: &mut dyn FnMut(Event),
    ) {
        let index = call.get("index").and_then(Value::as_u64).unwrap_or(position);
        let id = call.get("id").and_then(Value::as_str).filter(|id| !id.is_empty());
        let function = call.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str).filter(|name| !name.is_empty());
        let arguments = function.and_then(|f| f.get("arguments"));
        // A new id under an index already completed starts another call (servers that send
        // each complete call with index 0).
        let existing = self.calls.iter().position(|pending| {
            pending.index == index && !(pending.done || id.is_some_and(|id| !pending.id.is_empty() && pending.id != id))
        });
        let slot = match existing {
            Some(slot) => slot,
            None => {
                self.calls.push(PendingCall {
                    index,
                    part: None,
                    id: String::new(),
                    name: String::new(),
                    arguments: String::new(),
                    done: false,
                });
                self.calls.len() - 1
            }
        };
        let Some(pending) = self.calls.get_mut(slot) else { return };
        if let Some(id) = id
            && pending.id.is_empty()
        {
            id.clone_into(&mut pending.id);
        }
        if let Some(name) = name
            && pending.name.is_empty()
        {
            name.clone_into(&mut pending.name);
        }
        match arguments {
            Some(Value::String(text)) => pending.arguments.push_str(text),
            // Some servers send the arguments as an object rather than a JSON string.
            Some(object @ Value::Object(_)) => pending.arguments.push_str(&object.to_string()),
            _ => {}
        }
        if pending.part.is_none() && !pending.name.is_empty() {
            if pending.id.is_empty() {
                pending.id = format!("call_{index}");
            }
            pending.part = Some(asm.start_tool_call(&pending.id, &pending.name, on_event));
        }
    }

    fn finish_calls(&mut self, asm: &mut Assembler, on_event: &mut dyn FnMut(Event)) {
        for pending in &mut self.calls {
            if pending.done {
                continue;
            }
            pending.done = true;
            let part = match pending.part {
                Some(part) => part,
                None => {
                    // A call whose name never came: still report it so the model hears back.
                    if pending.id.is_empty() {
                        pending.id = format!("call_{}", pending.index);
                    }
                    asm.start_tool_call(&pending.id, &pending.name, on_event)
                }
            };
            asm.finish_tool_call(part, &pending.arguments, on_event);
        }
    }

    /// The body ended: complete when `[DONE]` or a finish reason arrived.
    pub fn finish(&mut self, asm: &mut Assembler, on_event: &mut dyn FnMut(Event)) -> Result<(), StreamFault> {
        if self.done || asm.stop.is_some() {
            self.finish_calls(asm, on_event);
            return Ok(());
        }
        Err(StreamFault::Provider {
            retryable: true,
            message: "the provider closed the stream before the response was complete".into(),
        })
    }
}

/// The first 200 characters of `text`, for error messages.
pub(crate) fn snippet(text: &str) -> String {
    const LIMIT: usize = 200;
    match text.char_indices().nth(LIMIT) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Feeds `chunks` as `data:` events; returns the parts, the stop reason and the events.
    fn decode(chunks: &[Value]) -> (Vec<Part>, Option<StopReason>, Vec<Event>) {
        let mut decoder = Decoder::default();
        let mut asm = Assembler::default();
        let mut events = Vec::new();
        let mut on_event = |event| events.push(event);
        for chunk in chunks {
            let event = SseEvent { event: String::new(), data: chunk.to_string() };
            assert!(matches!(decoder.event(&event, &mut asm, &mut on_event), Ok(false)));
        }
        assert!(decoder.finish(&mut asm, &mut on_event).is_ok());
        let stop = asm.stop.clone();
        (asm.into_message().content, stop, events)
    }

    fn delta(delta: Value, finish: Value) -> Value {
        json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    }

    #[test]
    fn lenient_tool_call_fragments() {
        let (parts, stop, events) = decode(&[
            delta(json!({"reasoning": "r", "reasoning_content": "r"}), Value::Null),
            // The id repeated in every fragment (some vLLM versions).
            delta(
                json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": "{\"p\""}}]}),
                Value::Null,
            ),
            delta(json!({"tool_calls": [{"index": 0, "id": "a", "function": {"arguments": ": 1}"}}]}), Value::Null),
            // Complete calls without an index, arguments as an object.
            delta(
                json!({"tool_calls": [{"id": "b", "function": {"name": "ls", "arguments": {"d": "."}}}]}),
                Value::Null,
            ),
            // No id at all.
            delta(json!({"tool_calls": [{"index": 2, "function": {"name": "pwd", "arguments": ""}}]}), Value::Null),
            // Some servers say "stop" after tool calls.
            delta(json!({}), json!("stop")),
        ]);
        assert_eq!(
            parts,
            vec![
                Part::Thinking { text: "r".into(), signature: None },
                Part::ToolCall { id: "a".into(), name: "read".into(), arguments: json!({"p": 1}) },
                Part::ToolCall { id: "b".into(), name: "ls".into(), arguments: json!({"d": "."}) },
                Part::ToolCall { id: "call_2".into(), name: "pwd".into(), arguments: json!({}) },
            ]
        );
        assert_eq!(stop, Some(StopReason::ToolUse));
        assert_eq!(events.iter().filter(|event| matches!(event, Event::ToolCallReady { .. })).count(), 3);
    }

    #[test]
    fn a_stream_without_a_finish_reason_or_done_is_incomplete() {
        let mut decoder = Decoder::default();
        let mut asm = Assembler::default();
        let event = SseEvent { event: String::new(), data: delta(json!({"content": "x"}), Value::Null).to_string() };
        assert!(matches!(decoder.event(&event, &mut asm, &mut |_| {}), Ok(false)));
        assert!(matches!(decoder.finish(&mut asm, &mut |_| {}), Err(StreamFault::Provider { retryable: true, .. })));
    }
}
