//! Anthropic Messages (`POST {base_url}/messages`, `stream: true`): the request body and the
//! streamed events (`message_start`, `content_block_*`, `message_delta`, `message_stop`,
//! `ping`, `error`).
//!
//! Prompt caching: a `cache_control` breakpoint after the system prompt (which caches the tools
//! before it too) and one on the last block of the latest message, so each request reads the
//! conversation so far from the cache and writes only what is new.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use bytes::Bytes;

use crate::assemble::Assembler;
use crate::encoded::{BodyWriter, EncodeCache};
use crate::openai::{StreamFault, snippet};
use crate::sse::SseEvent;
use crate::{Event, Message, Part, ProviderSettings, Request, Role, StopReason, Usage};

/// Anthropic's cache breakpoint.
#[derive(Clone, Copy, Serialize)]
struct Ephemeral {
    r#type: &'static str,
}

const EPHEMERAL: Option<Ephemeral> = Some(Ephemeral { r#type: "ephemeral" });

/// A content block, borrowed from the conversation: the body is written in one pass.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum BlockOut<'a> {
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: Cow<'a, Value>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    Image {
        source: Source<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ResultOut<'a>,
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<Ephemeral>,
    },
}

/// An image's `source`: `{"type": "base64", "media_type": …, "data": …}`.
#[derive(Serialize)]
struct Source<'a> {
    r#type: &'static str,
    media_type: &'a str,
    data: &'a str,
}

impl<'a> Source<'a> {
    fn of(image: &'a crate::image::Image) -> Self {
        Self { r#type: "base64", media_type: &image.media_type, data: &image.data }
    }
}

/// A tool result's content: its text, or text and the images the call returned.
#[derive(Serialize)]
#[serde(untagged)]
enum ResultOut<'a> {
    Text(&'a str),
    Blocks(Vec<InnerOut<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum InnerOut<'a> {
    Text { text: &'a str },
    Image { source: Source<'a> },
}

impl BlockOut<'_> {
    /// Puts a cache breakpoint here; false for thinking blocks, which cannot carry one.
    fn mark(&mut self) -> bool {
        match self {
            Self::Text { cache_control, .. }
            | Self::ToolUse { cache_control, .. }
            | Self::Image { cache_control, .. }
            | Self::ToolResult { cache_control, .. } => {
                *cache_control = EPHEMERAL;
                true
            }
            Self::Thinking { .. } | Self::RedactedThinking { .. } => false,
        }
    }
}

#[derive(Serialize)]
struct MessageOut<'a> {
    role: &'static str,
    content: Vec<BlockOut<'a>>,
}

#[derive(Serialize)]
struct SystemOut<'a> {
    r#type: &'static str,
    text: &'a str,
    cache_control: Option<Ephemeral>,
}

#[derive(Serialize)]
struct ToolOut<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<Ephemeral>,
}

#[derive(Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemOut<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<ToolOut<'a>>,
}

fn block(part: &Part) -> Option<BlockOut<'_>> {
    Some(match part {
        // The API refuses empty text blocks.
        Part::Text { text } if text.is_empty() => return None,
        Part::Text { text } => BlockOut::Text { text, cache_control: None },
        // Thinking without a signature came from another provider and cannot be verified;
        // Anthropic refuses it, so it is left out.
        Part::Thinking { signature: None, .. } => return None,
        Part::Thinking { text, signature: Some(signature), .. } => BlockOut::Thinking { thinking: text, signature },
        Part::RedactedThinking { data } => BlockOut::RedactedThinking { data },
        Part::ToolCall { id, name, arguments, .. } => {
            let input = if arguments.is_object() { Cow::Borrowed(arguments) } else { Cow::Owned(json!({})) };
            BlockOut::ToolUse { id, name, input, cache_control: None }
        }
        Part::ToolResult { call_id, content, is_error } => BlockOut::ToolResult {
            tool_use_id: call_id,
            content: ResultOut::Text(content),
            is_error: *is_error,
            cache_control: None,
        },
        Part::Image(image) => BlockOut::Image { source: Source::of(image), cache_control: None },
    })
}

/// The blocks of `parts`: an image right after a tool result (the call's own image) goes
/// inside that result's content, as Anthropic documents for tool results.
fn blocks(parts: &[Part]) -> Vec<BlockOut<'_>> {
    let mut blocks: Vec<BlockOut<'_>> = Vec::with_capacity(parts.len());
    let mut after_result = false;
    for part in parts {
        if let (Part::Image(image), true, Some(BlockOut::ToolResult { content, .. })) =
            (part, after_result, blocks.last_mut())
        {
            if let ResultOut::Text(text) = *content {
                let text = (!text.is_empty()).then_some(InnerOut::Text { text });
                *content = ResultOut::Blocks(text.into_iter().collect());
            }
            if let ResultOut::Blocks(inner) = content {
                inner.push(InnerOut::Image { source: Source::of(image) });
            }
            continue;
        }
        after_result = matches!(part, Part::ToolResult { .. });
        blocks.extend(block(part));
    }
    blocks
}

/// The message `message` becomes, `None` when it has no block to send; with a cache breakpoint
/// on its last block that can carry one when `mark`.
fn message_out(message: &Message, mark: bool) -> Option<MessageOut<'_>> {
    let mut blocks = blocks(&message.content);
    if blocks.is_empty() {
        return None;
    }
    // Tool results must come first in a user message.
    blocks.sort_by_key(|block| !matches!(block, BlockOut::ToolResult { .. }));
    if mark {
        let _ = blocks.iter_mut().rev().any(BlockOut::mark);
    }
    let role = match message.role {
        Role::User => "user",
        Role::Assistant => "assistant",
    };
    Some(MessageOut { role, content: blocks })
}

/// The JSON of one history message without a breakpoint; nothing when it has no block.
fn message_json(message: &Message, out: &mut Vec<u8>) {
    if let Some(message) = message_out(message, false) {
        // Borrowed strings and JSON values: writing them cannot fail.
        let _ = serde_json::to_writer(&mut *out, &message);
    }
}

/// The JSON body of a streamed Messages request. The messages of earlier requests come from
/// `cache`; only new ones are written, and the latest one, which carries the breakpoint.
pub(crate) fn request_body(settings: &ProviderSettings, request: &Request, cache: &mut EncodeCache) -> Bytes {
    let model = request.model.as_deref().unwrap_or(&settings.model);
    // The configured limit, within what the model can give.
    let limit = crate::profile::resolve(settings, model).max_output;
    let thinking = settings.reasoning.budget().map(thinking_budget);
    let max_tokens = match thinking {
        // The answer needs room beyond the thinking.
        Some(budget) => limit.max(budget + MIN_ANSWER_TOKENS),
        None => limit,
    };
    let mut tools: Vec<ToolOut<'_>> = request
        .tools
        .iter()
        .map(|tool| ToolOut {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.parameters,
            cache_control: None,
        })
        .collect();
    let mut system = Vec::new();
    // The breakpoint after the system prompt caches the tools before it too.
    if !request.system.is_empty() {
        system.push(SystemOut { r#type: "text", text: &request.system, cache_control: EPHEMERAL });
    } else if let Some(last) = tools.last_mut() {
        last.cache_control = EPHEMERAL;
    }
    let body = Body {
        model,
        max_tokens,
        stream: true,
        thinking: thinking.map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
        system,
        // With thinking on, Anthropic accepts no temperature but the default.
        temperature: request.temperature.filter(|_| thinking.is_none()).map(crate::assemble::temperature),
        tools,
    };
    // A cache breakpoint on the latest message that sends something: the next request reads
    // all of this from the provider's cache.
    let latest =
        request.messages.iter().enumerate().rev().find_map(|(i, message)| Some((i, message_out(message, true)?)));
    let mut out = BodyWriter::open(cache, &body);
    for (i, message) in request.messages.iter().enumerate() {
        match &latest {
            Some((at, latest)) if *at == i => {
                // Borrowed strings and JSON values: writing them cannot fail.
                out.item(|_, out| {
                    let _ = serde_json::to_writer(out, latest);
                });
            }
            _ => out.message(message, message_json),
        }
    }
    out.finish()
}

/// Anthropic's smallest thinking budget.
const MIN_THINKING_BUDGET: u32 = 1_024;
/// Output tokens kept for the answer beyond the thinking budget.
const MIN_ANSWER_TOKENS: u32 = 1_024;

/// The budget sent: at least Anthropic's minimum.
fn thinking_budget(budget: u32) -> u32 {
    budget.max(MIN_THINKING_BUDGET)
}

/// What an open content block is.
#[derive(Debug)]
enum Block {
    Text,
    Thinking,
    ToolUse { part: usize, json: String, initial: Value },
    Other,
}

/// The stream's state between events.
#[derive(Debug, Default)]
pub(crate) struct Decoder {
    blocks: Vec<(u64, Block)>,
    done: bool,
}

impl Decoder {
    /// Handles one SSE event; returns whether the stream is complete.
    pub fn event(
        &mut self,
        event: &SseEvent,
        asm: &mut Assembler,
        on_event: &mut dyn FnMut(Event),
    ) -> Result<bool, StreamFault> {
        if event.data.trim().is_empty() {
            return Ok(false);
        }
        let data: Value = serde_json::from_str(&event.data).map_err(|error| {
            StreamFault::Protocol(format!("a stream event is not JSON ({error}): {}", snippet(&event.data)))
        })?;
        let kind = data.get("type").and_then(Value::as_str).unwrap_or(event.event.as_str());
        match kind {
            "message_start" => {
                if let Some(usage) = data.pointer("/message/usage") {
                    let usage = read_usage(usage, asm.usage);
                    asm.set_usage(usage, on_event);
                }
            }
            "content_block_start" => {
                let index = block_index(&data)?;
                let block = data.get("content_block").unwrap_or(&Value::Null);
                let block = match block.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        asm.text(block.get("text").and_then(Value::as_str).unwrap_or(""), on_event);
                        Block::Text
                    }
                    Some("thinking") => {
                        asm.start_thinking();
                        asm.thinking(block.get("thinking").and_then(Value::as_str).unwrap_or(""), on_event);
                        if let Some(signature) = block.get("signature").and_then(Value::as_str) {
                            asm.signature(signature);
                        }
                        Block::Thinking
                    }
                    Some("redacted_thinking") => {
                        asm.redacted_thinking(block.get("data").and_then(Value::as_str).unwrap_or(""));
                        Block::Other
                    }
                    Some("tool_use") => {
                        let id = block.get("id").and_then(Value::as_str).unwrap_or("");
                        let name = block.get("name").and_then(Value::as_str).unwrap_or("");
                        let part = asm.start_tool_call(id, name, on_event);
                        let initial = block.get("input").cloned().unwrap_or(Value::Null);
                        Block::ToolUse { part, json: String::new(), initial }
                    }
                    _ => Block::Other,
                };
                self.blocks.push((index, block));
            }
            "content_block_delta" => {
                let index = block_index(&data)?;
                let delta = data.get("delta").unwrap_or(&Value::Null);
                let field = |name: &str| delta.get(name).and_then(Value::as_str).unwrap_or("");
                let block = self.blocks.iter_mut().rev().find(|(i, _)| *i == index).map(|(_, block)| block);
                match (delta.get("type").and_then(Value::as_str), block) {
                    (Some("text_delta"), _) => asm.text(field("text"), on_event),
                    (Some("thinking_delta"), _) => asm.thinking(field("thinking"), on_event),
                    (Some("signature_delta"), _) => asm.signature(field("signature")),
                    (Some("input_json_delta"), Some(Block::ToolUse { json, .. })) => {
                        json.push_str(field("partial_json"))
                    }
                    (Some("input_json_delta"), _) => {
                        return Err(StreamFault::Protocol(format!(
                            "input_json_delta for block {index}, which is not a tool_use block"
                        )));
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                let index = block_index(&data)?;
                if let Some(position) = self.blocks.iter().rposition(|(i, _)| *i == index) {
                    let (_, block) = self.blocks.remove(position);
                    if let Block::ToolUse { part, json, initial } = block {
                        let raw =
                            if json.trim().is_empty() && initial.is_object() { initial.to_string() } else { json };
                        asm.finish_tool_call(part, &raw, on_event);
                    }
                }
            }
            "message_delta" => {
                if let Some(reason) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    asm.stop = Some(match reason {
                        "end_turn" | "stop_sequence" => StopReason::EndTurn,
                        "tool_use" => StopReason::ToolUse,
                        "max_tokens" => StopReason::MaxTokens,
                        "refusal" => StopReason::Refusal,
                        other => StopReason::Other(other.to_owned()),
                    });
                }
                if let Some(usage) = data.get("usage").filter(|usage| usage.is_object()) {
                    let usage = read_usage(usage, asm.usage);
                    asm.set_usage(usage, on_event);
                }
            }
            "message_stop" => {
                self.close_blocks(asm, on_event);
                self.done = true;
                return Ok(true);
            }
            "error" => {
                let error_type = data.pointer("/error/type").and_then(Value::as_str).unwrap_or("error");
                let message = data.pointer("/error/message").and_then(Value::as_str).unwrap_or("");
                return Err(StreamFault::Provider {
                    retryable: matches!(error_type, "overloaded_error" | "api_error" | "rate_limit_error"),
                    message: format!("{error_type}: {message}"),
                });
            }
            // `ping` and event types added later.
            _ => {}
        }
        Ok(false)
    }

    fn close_blocks(&mut self, asm: &mut Assembler, on_event: &mut dyn FnMut(Event)) {
        for (_, block) in self.blocks.drain(..) {
            if let Block::ToolUse { part, json, initial } = block {
                let raw = if json.trim().is_empty() && initial.is_object() { initial.to_string() } else { json };
                asm.finish_tool_call(part, &raw, on_event);
            }
        }
    }

    /// The body ended: complete only after `message_stop`.
    pub fn finish(&mut self, asm: &mut Assembler, on_event: &mut dyn FnMut(Event)) -> Result<(), StreamFault> {
        if self.done {
            return Ok(());
        }
        if asm.stop.is_some() {
            // message_delta came but message_stop did not: the answer itself is whole.
            self.close_blocks(asm, on_event);
            return Ok(());
        }
        Err(StreamFault::Provider {
            retryable: true,
            message: "the provider closed the stream before the response was complete".into(),
        })
    }
}

fn block_index(data: &Value) -> Result<u64, StreamFault> {
    data.get("index").and_then(Value::as_u64).ok_or_else(|| {
        StreamFault::Protocol(format!("a content block event without an index: {}", snippet(&data.to_string())))
    })
}

/// Anthropic's counts, where a missing field keeps the previous value (`message_delta` often
/// carries only `output_tokens`). Anthropic's `input_tokens` leaves out the tokens read from or
/// written to the cache; they are added back, so `input_tokens` means the whole prompt in both
/// formats.
fn read_usage(usage: &Value, previous: Usage) -> Usage {
    let field = |name: &str| usage.get(name).and_then(Value::as_u64);
    let cache_read = field("cache_read_input_tokens").unwrap_or(previous.cache_read_tokens);
    let cache_write = field("cache_creation_input_tokens").unwrap_or(previous.cache_write_tokens);
    let input = match field("input_tokens") {
        Some(uncached) => uncached + cache_read + cache_write,
        None => {
            let uncached =
                previous.input_tokens.saturating_sub(previous.cache_read_tokens + previous.cache_write_tokens);
            uncached + cache_read + cache_write
        }
    };
    Usage {
        input_tokens: input,
        output_tokens: field("output_tokens").unwrap_or(previous.output_tokens),
        cache_read_tokens: cache_read,
        cache_write_tokens: cache_write,
        reasoning_tokens: previous.reasoning_tokens,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn tool_input_in_the_block_start_is_used_without_deltas() {
        let mut decoder = Decoder::default();
        let mut asm = Assembler::default();
        let events = [
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "x"}}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "redacted_thinking", "data": "zz"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "some_future_event"}),
            json!({"type": "message_delta", "delta": {"stop_reason": "pause_turn"}, "usage": {"output_tokens": 4}}),
        ];
        for data in events {
            let event = SseEvent { event: String::new(), data: data.to_string() };
            assert!(matches!(decoder.event(&event, &mut asm, &mut |_| {}), Ok(false)));
        }
        assert!(decoder.finish(&mut asm, &mut |_| {}).is_ok());
        assert_eq!(asm.stop, Some(StopReason::Other("pause_turn".into())));
        assert_eq!(asm.usage.output_tokens, 4);
        assert_eq!(
            asm.into_message().content,
            vec![
                Part::ToolCall { id: "t1".into(), name: "read".into(), arguments: json!({"path": "x"}), extra: None },
                Part::RedactedThinking { data: "zz".into() },
            ]
        );
    }
}
