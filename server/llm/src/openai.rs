//! OpenAI Chat Completions (`POST {base_url}/chat/completions`, `stream: true`): the request
//! body and the streamed `chat.completion.chunk`s.
//!
//! Spoken by OpenAI, Ollama, vLLM, llama.cpp server, LM Studio, OpenRouter, DeepSeek, Gemini,
//! Mistral and Groq. Reasoning arrives as `delta.reasoning_content` (DeepSeek, vLLM, llama.cpp),
//! `delta.reasoning` (Ollama, OpenRouter) or typed `thinking` content parts (Mistral's
//! Magistral). On an assistant message that made tool calls it goes back under the field it came
//! in (DeepSeek refuses a tool-call turn without its `reasoning_content`); Mistral's typed parts
//! are shown, not sent back. Gemini's `extra_content` on a tool call goes back verbatim.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use bytes::Bytes;

use crate::assemble::{Assembler, arguments_text};
use crate::encoded::{BodyWriter, EncodeCache};
use crate::sse::SseEvent;
use crate::{Event, Message, Part, ProviderSettings, ReasoningField, Request, Role, StopReason, Usage};

/// Whether `model` is one of OpenAI's reasoning models, which take `max_completion_tokens`
/// (they refuse `max_tokens`).
pub(crate) fn is_reasoning_model(model: &str) -> bool {
    let name = model.rsplit('/').next().unwrap_or(model).to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5"].iter().any(|prefix| {
        name.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', ':']))
    })
}

/// The reasoning to send back on an assistant message: the text of its thinking parts that came
/// in `reasoning_content` or `reasoning`, under that field's name.
fn reasoning_back(parts: &[Part]) -> Option<(&'static str, String)> {
    let mut field = None;
    let mut text = String::new();
    for part in parts {
        if let Part::Thinking { text: piece, field: Some(kind), .. } = part {
            let name = match kind {
                ReasoningField::ReasoningContent => "reasoning_content",
                ReasoningField::Reasoning => "reasoning",
                ReasoningField::ThinkingPart => continue,
            };
            field.get_or_insert(name);
            text.push_str(piece);
        }
    }
    field.map(|name| (name, text))
}

/// A Chat Completions message, borrowed from the conversation: the body is written in one pass,
/// without copying the history into a JSON tree first.
#[derive(Serialize)]
#[serde(untagged)]
enum Out<'a> {
    Plain { role: &'static str, content: Cow<'a, str> },
    Parts { role: &'static str, content: Vec<PartOut<'a>> },
    Tool { role: &'static str, tool_call_id: &'a str, content: &'a str },
    Assistant(AssistantOut<'a>),
}

/// A part of a user message with images: `{"type": "text", …}` or
/// `{"type": "image_url", "image_url": {"url": "data:…"}}`.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum PartOut<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: UrlOut },
}

#[derive(Serialize)]
struct UrlOut {
    url: String,
}

#[derive(Serialize)]
struct AssistantOut<'a> {
    role: &'static str,
    content: Option<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<CallOut<'a>>,
}

#[derive(Serialize)]
struct CallOut<'a> {
    id: &'a str,
    r#type: &'static str,
    function: FunctionOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extra_content: Option<&'a Value>,
}

#[derive(Serialize)]
struct FunctionOut<'a> {
    name: &'a str,
    arguments: String,
}

#[derive(Serialize)]
struct ToolOut<'a> {
    r#type: &'static str,
    function: FunctionDef<'a>,
}

#[derive(Serialize)]
struct FunctionDef<'a> {
    name: &'a str,
    description: &'a str,
    parameters: &'a Value,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    stream: bool,
    stream_options: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning_effort: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolOut<'a>>,
}

/// Texts joined for a message: borrowed when there is one.
fn joined<'a>(texts: &[&'a str], separator: &str) -> Cow<'a, str> {
    match texts {
        [one] => Cow::Borrowed(*one),
        _ => Cow::Owned(texts.join(separator)),
    }
}

/// The Chat Completions messages of a user message: a `tool` message per tool result, then one
/// `user` message with the text, and the images as `image_url` parts (a tool message takes text
/// only, so the images a call returned follow in the user message, each named by its call).
fn user_messages<'a>(message: &'a Message, out: &mut Vec<Out<'a>>) {
    let mut texts = Vec::new();
    let mut images: Vec<(Option<&'a str>, &'a crate::image::Image)> = Vec::new();
    let mut last_call = None;
    for part in &message.content {
        match part {
            Part::ToolResult { call_id, content, is_error: _ } => {
                out.push(Out::Tool { role: "tool", tool_call_id: call_id, content });
                last_call = Some(call_id.as_str());
                continue;
            }
            Part::Text { text } => texts.push(text.as_str()),
            Part::Image(image) => {
                images.push((last_call, image));
                continue;
            }
            Part::Thinking { .. } | Part::RedactedThinking { .. } | Part::ToolCall { .. } => {}
        }
        last_call = None;
    }
    if images.is_empty() {
        if !texts.is_empty() {
            out.push(Out::Plain { role: "user", content: joined(&texts, "\n\n") });
        }
        return;
    }
    let mut content = Vec::with_capacity(texts.len() + 2 * images.len());
    if !texts.is_empty() {
        content.push(PartOut::Text { text: joined(&texts, "\n\n") });
    }
    for (call, image) in images {
        if let Some(call) = call {
            content.push(PartOut::Text { text: Cow::Owned(format!("[the image the tool call {call} returned]")) });
        }
        content.push(PartOut::ImageUrl { image_url: UrlOut { url: image.data_url() } });
    }
    out.push(Out::Parts { role: "user", content });
}

fn assistant_message(message: &Message) -> Option<Out<'_>> {
    let mut texts = Vec::new();
    let mut tool_calls = Vec::new();
    for part in &message.content {
        match part {
            Part::Text { text } => texts.push(text.as_str()),
            Part::ToolCall { id, name, arguments, extra } => tool_calls.push(CallOut {
                id,
                r#type: "function",
                function: FunctionOut { name, arguments: arguments_text(arguments) },
                extra_content: extra.as_ref(),
            }),
            Part::Thinking { .. } | Part::RedactedThinking { .. } | Part::ToolResult { .. } | Part::Image(_) => {}
        }
    }
    if texts.is_empty() && tool_calls.is_empty() {
        return None;
    }
    let mut out = AssistantOut {
        role: "assistant",
        content: (!texts.is_empty()).then(|| joined(&texts, "")),
        reasoning_content: None,
        reasoning: None,
        tool_calls,
    };
    // Only a tool-call turn needs its reasoning back (DeepSeek); elsewhere it would be
    // ignored, or refused by older reasoners.
    if !out.tool_calls.is_empty() {
        match reasoning_back(&message.content) {
            Some(("reasoning_content", text)) => out.reasoning_content = Some(text),
            Some((_, text)) => out.reasoning = Some(text),
            None => {}
        }
    }
    Some(Out::Assistant(out))
}

/// The JSON of one history message: the Chat Completions messages it becomes (none, one, or
/// several: each tool result is a message of its own), comma-separated.
fn message_json(message: &Message, out: &mut Vec<u8>) {
    let mut messages = Vec::new();
    match message.role {
        Role::User => user_messages(message, &mut messages),
        Role::Assistant => messages.extend(assistant_message(message)),
    }
    for (i, message) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Borrowed strings and JSON values: writing them cannot fail.
        let _ = serde_json::to_writer(&mut *out, message);
    }
}

/// The JSON body of a streamed Chat Completions request. The messages of earlier requests come
/// from `cache`; only new ones are written.
pub(crate) fn request_body(settings: &ProviderSettings, request: &Request, cache: &mut EncodeCache) -> Bytes {
    let model = request.model.as_deref().unwrap_or(&settings.model);
    // The configured limit, within what the model can give.
    let limit = crate::profile::resolve(settings, model).max_output;
    let reasoning_model = is_reasoning_model(model);
    let body = Body {
        model,
        stream: true,
        stream_options: json!({"include_usage": true}),
        max_tokens: (!reasoning_model).then_some(limit),
        max_completion_tokens: reasoning_model.then_some(limit),
        reasoning_effort: settings.reasoning.effort.as_deref(),
        temperature: request.temperature.map(crate::assemble::temperature),
        tools: request
            .tools
            .iter()
            .map(|tool| ToolOut {
                r#type: "function",
                function: FunctionDef {
                    name: &tool.name,
                    description: &tool.description,
                    parameters: &tool.parameters,
                },
            })
            .collect(),
    };
    let mut out = BodyWriter::open(cache, &body);
    if !request.system.is_empty() {
        let system = Out::Plain { role: "system", content: Cow::Borrowed(&request.system) };
        // Borrowed strings: writing them cannot fail.
        out.item(|_, out| {
            let _ = serde_json::to_writer(out, &system);
        });
    }
    // A message that sends nothing (thinking only) takes no comma either.
    for message in &request.messages {
        out.message(message, message_json);
    }
    out.finish()
}

/// A tool call being streamed: fragments arrive under the same `index`.
#[derive(Debug)]
struct PendingCall {
    index: u64,
    part: Option<usize>,
    id: String,
    name: String,
    arguments: String,
    /// Gemini's `extra_content` (its thought signature), sent back with the call.
    extra: Option<Value>,
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
        // Groq puts the counts under `x_groq`.
        let usage = chunk.get("usage").or_else(|| chunk.pointer("/x_groq/usage")).filter(|usage| usage.is_object());
        if let Some(usage) = usage {
            asm.set_usage(read_usage(usage), on_event);
        }
        let Some(choice) = chunk.get("choices").and_then(Value::as_array).and_then(|choices| choices.first()) else {
            if chunk.get("choices").is_none() && usage.is_none() {
                return Err(StreamFault::Protocol(format!(
                    "a stream chunk has neither choices nor usage: {}",
                    snippet(data)
                )));
            }
            return Ok(false);
        };
        if let Some(delta) = choice.get("delta") {
            // Servers that send both carry the same text twice.
            let reasoning =
                [("reasoning_content", ReasoningField::ReasoningContent), ("reasoning", ReasoningField::Reasoning)]
                    .into_iter()
                    .find_map(|(key, field)| Some((delta.get(key)?.as_str()?, field)));
            if let Some((text, field)) = reasoning {
                asm.thinking_in(text, Some(field), on_event);
            }
            match delta.get("content") {
                Some(Value::String(text)) => asm.text(text, on_event),
                Some(Value::Array(parts)) => content_parts(parts, asm, on_event),
                _ => {}
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
        let extra = call.get("extra_content").filter(|extra| !extra.is_null());
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
                    extra: None,
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
        if let Some(extra) = extra {
            pending.extra = Some(extra.clone());
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
            if let Some(extra) = pending.extra.take() {
                asm.tool_call_extra(part, extra);
            }
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

/// Typed content parts (Mistral): `{"type": "text", "text"}` and `{"type": "thinking",
/// "thinking": [{"type": "text", "text"}]}`; other types (references) are skipped.
fn content_parts(parts: &[Value], asm: &mut Assembler, on_event: &mut dyn FnMut(Event)) {
    for part in parts {
        match part.get("type").and_then(Value::as_str) {
            Some("text") => asm.text(part.get("text").and_then(Value::as_str).unwrap_or(""), on_event),
            Some("thinking") => {
                let pieces = part.get("thinking").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
                for piece in pieces {
                    if let Some(text) = piece.get("text").and_then(Value::as_str) {
                        asm.thinking_in(text, Some(ReasoningField::ThinkingPart), on_event);
                    }
                }
            }
            _ => {}
        }
    }
}

/// Counts of a `usage` object: OpenAI's, DeepSeek's (`prompt_cache_hit_tokens`), Groq's.
fn read_usage(usage: &Value) -> Usage {
    let number = |pointer: &str| usage.pointer(pointer).and_then(Value::as_u64);
    Usage {
        input_tokens: number("/prompt_tokens").unwrap_or(0),
        output_tokens: number("/completion_tokens").unwrap_or(0),
        cache_read_tokens: number("/prompt_tokens_details/cached_tokens")
            .or_else(|| number("/prompt_cache_hit_tokens"))
            .unwrap_or(0),
        cache_write_tokens: 0,
        reasoning_tokens: number("/completion_tokens_details/reasoning_tokens").unwrap_or(0),
    }
}

/// The first 200 characters of `text`, for error messages.
pub(crate) fn snippet(text: &str) -> String {
    tandem_text::clip(text, 200)
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
            // An empty id on a later fragment (some servers) continues the call.
            delta(json!({"tool_calls": [{"index": 0, "id": "", "function": {"arguments": ""}}]}), Value::Null),
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
                Part::Thinking { text: "r".into(), signature: None, field: Some(ReasoningField::ReasoningContent) },
                Part::ToolCall { id: "a".into(), name: "read".into(), arguments: json!({"p": 1}), extra: None },
                Part::ToolCall { id: "b".into(), name: "ls".into(), arguments: json!({"d": "."}), extra: None },
                Part::ToolCall { id: "call_2".into(), name: "pwd".into(), arguments: json!({}), extra: None },
            ]
        );
        assert_eq!(stop, Some(StopReason::ToolUse));
        assert_eq!(events.iter().filter(|event| matches!(event, Event::ToolCallReady { .. })).count(), 3);
    }

    #[test]
    fn reasoning_models_take_max_completion_tokens() {
        for model in ["o1", "o3-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5.1", "gpt-5-mini", "openai/gpt-5"] {
            assert!(is_reasoning_model(model), "{model}");
        }
        for model in ["gpt-4o", "gpt-4.1", "omni", "o10x", "qwen2.5-coder", "gpt-50"] {
            assert!(!is_reasoning_model(model), "{model}");
        }
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
