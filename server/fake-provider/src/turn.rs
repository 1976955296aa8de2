//! Scripted turns and how each wire format renders them.

use std::time::Duration;

use serde_json::{Value, json};

/// Why the scripted model stops; rendered as each format's own word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// `stop` / `end_turn`.
    EndTurn,
    /// `tool_calls` / `tool_use`.
    ToolUse,
    /// `length` / `max_tokens`.
    MaxTokens,
    /// `content_filter` / `refusal`.
    Refusal,
    /// Any other word, sent verbatim in both formats.
    Other(String),
}

impl Stop {
    fn openai(&self) -> &str {
        match self {
            Stop::EndTurn => "stop",
            Stop::ToolUse => "tool_calls",
            Stop::MaxTokens => "length",
            Stop::Refusal => "content_filter",
            Stop::Other(word) => word,
        }
    }

    fn anthropic(&self) -> &str {
        match self {
            Stop::EndTurn => "end_turn",
            Stop::ToolUse => "tool_use",
            Stop::MaxTokens => "max_tokens",
            Stop::Refusal => "refusal",
            Stop::Other(word) => word,
        }
    }
}

/// One piece of a streamed answer, in order.
#[derive(Clone, Debug)]
pub(crate) enum Item {
    Text(String),
    Thinking(String),
    ToolCall { id: String, name: String, fragments: Vec<String> },
    Error { kind: String, message: String },
}

/// What the server does with a request.
#[derive(Clone, Debug)]
pub(crate) enum Action {
    /// 200 with an event stream of the turn's items.
    Stream,
    /// A status with an error body.
    Status { code: u16, retry_after: Option<String>, body: Option<String> },
    /// Never answer; keep the connection open until the client leaves.
    Hang,
    /// 200 `text/event-stream` with this body verbatim.
    Raw(String),
}

/// Token counts a turn reports.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Counts {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

/// One scripted answer: what the next request to the fake provider gets.
///
/// Build a streamed answer with [`Turn::new`] (or [`Turn::reply`]) and the item methods, in
/// the order the model "says" them; or a failure with [`Turn::status`], [`Turn::hang`] or
/// [`Turn::raw`]. "Content chunks", counted by [`Turn::stall_after`] and [`Turn::close_after`],
/// are the text and thinking chunks and the tool-call argument fragments.
#[derive(Clone, Debug)]
pub struct Turn {
    pub(crate) action: Action,
    pub(crate) items: Vec<Item>,
    pub(crate) usage: Option<Counts>,
    pub(crate) stop: Option<Stop>,
    pub(crate) signature: String,
    pub(crate) chunk_delay: Duration,
    pub(crate) headers_delay: Duration,
    pub(crate) stall: Option<(usize, Duration)>,
    pub(crate) close_after: Option<usize>,
}

impl Default for Turn {
    fn default() -> Self {
        Self::new()
    }
}

impl Turn {
    /// An empty streamed answer (stop reason `end_turn`, or `tool_use` once it has tool calls).
    pub fn new() -> Self {
        Self {
            action: Action::Stream,
            items: Vec::new(),
            usage: None,
            stop: None,
            signature: "fake-signature".into(),
            chunk_delay: Duration::ZERO,
            headers_delay: Duration::ZERO,
            stall: None,
            close_after: None,
        }
    }

    /// A streamed answer of one text chunk.
    pub fn reply(text: impl Into<String>) -> Self {
        Self::new().text(text)
    }

    /// An HTTP error status (e.g. 429, 500, 529, 401, 400) with a default error body in the
    /// requested format; see [`Turn::retry_after`] and [`Turn::body`].
    pub fn status(code: u16) -> Self {
        Self { action: Action::Status { code, retry_after: None, body: None }, ..Self::new() }
    }

    /// Accept the request and never send the response headers (until the client disconnects
    /// or the provider is dropped).
    pub fn hang() -> Self {
        Self { action: Action::Hang, ..Self::new() }
    }

    /// Status 200, `content-type: text/event-stream`, and `body` verbatim (for garbage streams).
    pub fn raw(body: impl Into<String>) -> Self {
        Self { action: Action::Raw(body.into()), ..Self::new() }
    }

    /// Adds a text chunk.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.items.push(Item::Text(text.into()));
        self
    }

    /// Adds a thinking (reasoning) chunk: OpenAI `delta.reasoning_content`, Anthropic
    /// `thinking_delta` (consecutive chunks form one thinking block, closed by a
    /// `signature_delta` with [`Turn::signature`]).
    pub fn thinking(mut self, text: impl Into<String>) -> Self {
        self.items.push(Item::Thinking(text.into()));
        self
    }

    /// The signature sent at the end of each Anthropic thinking block (default
    /// `"fake-signature"`).
    pub fn signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = signature.into();
        self
    }

    /// Adds a tool call whose arguments arrive in one fragment.
    pub fn tool_call(self, id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        let text = arguments.to_string();
        self.tool_call_fragments(id, name, [text])
    }

    /// Adds a tool call whose argument text arrives in these fragments (their concatenation
    /// need not be valid JSON). No fragments sends one empty fragment.
    pub fn tool_call_fragments<S: Into<String>>(
        mut self,
        id: impl Into<String>,
        name: impl Into<String>,
        fragments: impl IntoIterator<Item = S>,
    ) -> Self {
        let mut fragments: Vec<String> = fragments.into_iter().map(Into::into).collect();
        if fragments.is_empty() {
            fragments.push(String::new());
        }
        self.items.push(Item::ToolCall { id: id.into(), name: name.into(), fragments });
        self
    }

    /// Adds an error inside the stream: an Anthropic `error` event of type `kind` (e.g.
    /// `overloaded_error`), or an OpenAI chunk `{"error": {...}}`. The stream ends after it.
    pub fn error_event(mut self, kind: impl Into<String>, message: impl Into<String>) -> Self {
        self.items.push(Item::Error { kind: kind.into(), message: message.into() });
        self
    }

    /// Reports token usage (OpenAI: a final usage chunk; Anthropic: `message_start` and
    /// `message_delta`).
    pub fn usage(mut self, input: u64, output: u64) -> Self {
        let counts = self.usage.get_or_insert_with(Counts::default);
        counts.input = input;
        counts.output = output;
        self
    }

    /// Reports cache token counts too (OpenAI sends only `cached_tokens` = `read`).
    pub fn cache_usage(mut self, read: u64, write: u64) -> Self {
        let counts = self.usage.get_or_insert_with(Counts::default);
        counts.cache_read = read;
        counts.cache_write = write;
        self
    }

    /// The stop reason (default: [`Stop::ToolUse`] when the turn has tool calls, else
    /// [`Stop::EndTurn`]).
    pub fn stop(mut self, stop: Stop) -> Self {
        self.stop = Some(stop);
        self
    }

    /// Waits this long before every event after the first (default none).
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Waits this long before sending the response headers (default none).
    pub fn headers_delay(mut self, delay: Duration) -> Self {
        self.headers_delay = delay;
        self
    }

    /// After `chunks` content chunks (0: right after the headers), goes silent for `silence`,
    /// then sends the rest.
    pub fn stall_after(mut self, chunks: usize, silence: Duration) -> Self {
        self.stall = Some((chunks, silence));
        self
    }

    /// After `chunks` content chunks, closes the connection without ending the body.
    pub fn close_after(mut self, chunks: usize) -> Self {
        self.close_after = Some(chunks);
        self
    }

    /// For [`Turn::status`]: a `Retry-After` header with these seconds.
    pub fn retry_after(mut self, seconds: u64) -> Self {
        if let Action::Status { retry_after, .. } = &mut self.action {
            *retry_after = Some(seconds.to_string());
        }
        self
    }

    /// For [`Turn::status`]: this body instead of the default JSON error.
    pub fn body(mut self, body: impl Into<String>) -> Self {
        if let Action::Status { body: slot, .. } = &mut self.action {
            *slot = Some(body.into());
        }
        self
    }

    fn stop_or_default(&self) -> Stop {
        match &self.stop {
            Some(stop) => stop.clone(),
            None if self.items.iter().any(|item| matches!(item, Item::ToolCall { .. })) => Stop::ToolUse,
            None => Stop::EndTurn,
        }
    }
}

/// The wire format of a request, chosen by its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    OpenAi,
    Anthropic,
}

/// One SSE event to write, and whether it counts as a content chunk.
#[derive(Debug)]
pub(crate) struct Frame {
    pub text: String,
    pub content: bool,
}

fn data(value: &Value) -> Frame {
    Frame { text: format!("data: {value}\n\n"), content: false }
}

fn event(name: &str, value: &Value) -> Frame {
    Frame { text: format!("event: {name}\ndata: {value}\n\n"), content: false }
}

fn content(mut frame: Frame) -> Frame {
    frame.content = true;
    frame
}

/// The SSE events of a streamed turn in `format`; `serial` numbers the response ids.
pub(crate) fn frames(turn: &Turn, format: Format, model: &str, serial: usize) -> Vec<Frame> {
    match format {
        Format::OpenAi => openai_frames(turn, model, serial),
        Format::Anthropic => anthropic_frames(turn, model, serial),
    }
}

fn openai_frames(turn: &Turn, model: &str, serial: usize) -> Vec<Frame> {
    let id = format!("chatcmpl-fake-{serial}");
    let chunk = |delta: Value, finish: Value| {
        json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        })
    };
    let mut out = vec![data(&chunk(json!({"role": "assistant", "content": ""}), Value::Null))];
    let mut tool_index = 0;
    for item in &turn.items {
        match item {
            Item::Text(text) => out.push(content(data(&chunk(json!({"content": text}), Value::Null)))),
            Item::Thinking(text) => out.push(content(data(&chunk(json!({"reasoning_content": text}), Value::Null)))),
            Item::ToolCall { id, name, fragments } => {
                for (n, fragment) in fragments.iter().enumerate() {
                    let call = if n == 0 {
                        json!({"index": tool_index, "id": id, "type": "function",
                               "function": {"name": name, "arguments": fragment}})
                    } else {
                        json!({"index": tool_index, "function": {"arguments": fragment}})
                    };
                    out.push(content(data(&chunk(json!({"tool_calls": [call]}), Value::Null))));
                }
                tool_index += 1;
            }
            Item::Error { kind, message } => {
                out.push(data(&json!({"error": {"message": message, "type": kind, "code": null}})));
                return out;
            }
        }
    }
    out.push(data(&chunk(json!({}), turn.stop_or_default().openai().into())));
    if let Some(usage) = turn.usage {
        out.push(data(&json!({
            "id": id, "object": "chat.completion.chunk", "created": 1_700_000_000, "model": model, "choices": [],
            "usage": {
                "prompt_tokens": usage.input, "completion_tokens": usage.output,
                "total_tokens": usage.input + usage.output,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read},
            },
        })));
    }
    out.push(Frame { text: "data: [DONE]\n\n".into(), content: false });
    out
}

fn anthropic_frames(turn: &Turn, model: &str, serial: usize) -> Vec<Frame> {
    let usage = turn.usage.unwrap_or_default();
    let mut out = vec![
        event(
            "message_start",
            &json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{serial}"), "type": "message", "role": "assistant", "model": model,
                "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": usage.input, "output_tokens": 1,
                          "cache_read_input_tokens": usage.cache_read,
                          "cache_creation_input_tokens": usage.cache_write},
            }}),
        ),
        event("ping", &json!({"type": "ping"})),
    ];
    // The open block: its index and whether it is text (true) or thinking (false).
    let mut open: Option<(usize, bool)> = None;
    let mut next_index = 0;
    let close = |out: &mut Vec<Frame>, open: &mut Option<(usize, bool)>| {
        if let Some((index, is_text)) = open.take() {
            if !is_text {
                out.push(event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "signature_delta", "signature": turn.signature}}),
                ));
            }
            out.push(event("content_block_stop", &json!({"type": "content_block_stop", "index": index})));
        }
    };
    for item in &turn.items {
        match item {
            Item::Text(text) | Item::Thinking(text) => {
                let is_text = matches!(item, Item::Text(_));
                if open.is_some_and(|(_, open_is_text)| open_is_text != is_text) {
                    close(&mut out, &mut open);
                }
                let index = match open {
                    Some((index, _)) => index,
                    None => {
                        let index = next_index;
                        next_index += 1;
                        let block = if is_text {
                            json!({"type": "text", "text": ""})
                        } else {
                            json!({"type": "thinking", "thinking": ""})
                        };
                        out.push(event(
                            "content_block_start",
                            &json!({"type": "content_block_start", "index": index, "content_block": block}),
                        ));
                        open = Some((index, is_text));
                        index
                    }
                };
                let delta = if is_text {
                    json!({"type": "text_delta", "text": text})
                } else {
                    json!({"type": "thinking_delta", "thinking": text})
                };
                out.push(content(event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": index, "delta": delta}),
                )));
            }
            Item::ToolCall { id, name, fragments } => {
                close(&mut out, &mut open);
                let index = next_index;
                next_index += 1;
                out.push(event(
                    "content_block_start",
                    &json!({"type": "content_block_start", "index": index,
                            "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
                ));
                for fragment in fragments {
                    out.push(content(event(
                        "content_block_delta",
                        &json!({"type": "content_block_delta", "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": fragment}}),
                    )));
                }
                out.push(event("content_block_stop", &json!({"type": "content_block_stop", "index": index})));
            }
            Item::Error { kind, message } => {
                out.push(event("error", &json!({"type": "error", "error": {"type": kind, "message": message}})));
                return out;
            }
        }
    }
    close(&mut out, &mut open);
    out.push(event(
        "message_delta",
        &json!({"type": "message_delta",
                "delta": {"stop_reason": turn.stop_or_default().anthropic(), "stop_sequence": null},
                "usage": {"output_tokens": usage.output}}),
    ));
    out.push(event("message_stop", &json!({"type": "message_stop"})));
    out
}

/// The body of the 400 a provider sends for a prompt longer than the window, in its words.
pub(crate) fn context_error(format: Format, tokens: u64, limit: u64) -> String {
    let value = match format {
        Format::OpenAi => json!({"error": {
            "message": format!("This model's maximum context length is {limit} tokens. However, your messages resulted in {tokens} tokens. Please reduce the length of the messages."),
            "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
        }}),
        Format::Anthropic => json!({"type": "error", "error": {
            "type": "invalid_request_error",
            "message": format!("prompt is too long: {tokens} tokens > {limit} maximum"),
        }}),
    };
    value.to_string()
}

/// The default error body for `code` in `format`.
pub(crate) fn error_body(format: Format, code: u16) -> String {
    let (kind, message) = match code {
        401 => ("authentication_error", "invalid x-api-key (fake provider)"),
        403 => ("permission_error", "permission denied (fake provider)"),
        404 => ("not_found_error", "model not found (fake provider)"),
        429 => ("rate_limit_error", "rate limit reached (fake provider)"),
        529 => ("overloaded_error", "overloaded (fake provider)"),
        400..=499 => ("invalid_request_error", "invalid request (fake provider)"),
        _ => ("api_error", "internal server error (fake provider)"),
    };
    let value = match format {
        Format::OpenAi => json!({"error": {"message": message, "type": kind, "code": null}}),
        Format::Anthropic => json!({"type": "error", "error": {"type": kind, "message": message}}),
    };
    value.to_string()
}
