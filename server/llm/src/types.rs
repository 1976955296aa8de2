//! The provider-neutral conversation and streaming types.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which wire format a provider speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions (`POST {base_url}/chat/completions`): OpenAI, Ollama, vLLM,
    /// llama.cpp server, LM Studio, OpenRouter.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic Messages (`POST {base_url}/messages`).
    Anthropic,
}

/// Everything needed to reach one model.
#[derive(Clone, Debug)]
pub struct ProviderSettings {
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL without the endpoint, e.g. `http://127.0.0.1:11434/v1`.
    pub base_url: String,
    /// Model name sent in the request.
    pub model: String,
    /// The API key itself (already read from the environment variable the configuration names).
    pub api_key: Option<String>,
    /// Name of the environment variable the key came from, for error messages.
    pub api_key_env: Option<String>,
    /// `max_tokens` for each response (`max_completion_tokens` for OpenAI's reasoning models).
    pub max_tokens: u32,
    /// Extended thinking / reasoning effort, when switched on.
    pub reasoning: Reasoning,
    /// The model's context window when the configuration names it (else the model table's,
    /// see [`profile::resolve`](crate::profile::resolve)).
    pub context_window: Option<u32>,
    /// Timeouts.
    pub timeouts: Timeouts,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// The configured model's price, overriding the price table ([`crate::price`]).
    pub price: Option<crate::price::Price>,
    /// Whether the model takes images, when the configuration says (else the model table's,
    /// see [`profile::resolve`](crate::profile::resolve)).
    pub images: Option<bool>,
}

/// How much the model may think before answering. Each wire format gets its own field: OpenAI
/// `reasoning_effort`, Anthropic `thinking: {type: "enabled", budget_tokens}`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reasoning {
    /// `low`, `medium` or `high` (other words go through as written: providers add their own).
    pub effort: Option<String>,
    /// Tokens of thinking (Anthropic's budget; with only `effort`, a budget is derived from it).
    pub budget_tokens: Option<u32>,
}

impl Reasoning {
    /// Whether thinking was asked for at all.
    pub fn is_on(&self) -> bool {
        self.effort.is_some() || self.budget_tokens.is_some()
    }

    /// Anthropic's thinking budget: the configured one, else one derived from the effort.
    pub fn budget(&self) -> Option<u32> {
        self.budget_tokens.or_else(|| {
            Some(match self.effort.as_deref()? {
                "minimal" | "low" => 4_096,
                "medium" => 10_000,
                _ => 24_000,
            })
        })
    }
}

/// Timeouts of one model turn.
#[derive(Clone, Copy, Debug)]
pub struct Timeouts {
    /// Connecting to the provider.
    pub connect: Duration,
    /// The whole turn, from sending the request to the last event.
    pub overall: Duration,
    /// The longest silence between two chunks of the stream before it counts as stalled.
    pub stall: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self { connect: Duration::from_secs(10), overall: Duration::from_secs(600), stall: Duration::from_secs(90) }
    }
}

/// Retries of failed requests (before any event was reported).
#[derive(Clone, Copy, Debug)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// Delay before the first retry; doubles each time, with jitter.
    pub base_delay: Duration,
    /// Cap for one delay (also caps `Retry-After`).
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self { max_retries: 4, base_delay: Duration::from_millis(500), max_delay: Duration::from_secs(30) }
    }
}

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person (and tool results, which both wire formats send on the user side).
    User,
    /// The model.
    Assistant,
}

/// One message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Speaker.
    pub role: Role,
    /// Parts in order.
    pub content: Vec<Part>,
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning (Anthropic `thinking`, OpenAI-compatible `reasoning_content`,
    /// `reasoning` or typed `thinking` content parts).
    Thinking {
        /// The reasoning text.
        text: String,
        /// Anthropic's signature, which must be sent back unchanged.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Where an OpenAI-compatible provider sent it, so it goes back under the same name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        field: Option<ReasoningField>,
    },
    /// Anthropic's encrypted reasoning (`redacted_thinking`): nothing to show, but it must be
    /// sent back unchanged within a tool-use turn.
    RedactedThinking {
        /// The opaque data.
        data: String,
    },
    /// A tool call by the assistant.
    ToolCall {
        /// The provider's call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments (an object; `{}` when the model sent none; the raw string under
        /// `"_raw"` when it sent invalid JSON, so the tool layer can report it).
        arguments: Value,
        /// Opaque provider data on the call, sent back verbatim (Gemini's `extra_content` with
        /// its thought signature, without which Gemini refuses the call when it comes back).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        extra: Option<Value>,
    },
    /// An image the person attached, or one a tool call returned (right after its
    /// [`Part::ToolResult`]), prepared for the provider ([`crate::image::prepare`]).
    Image(crate::image::Image),
    /// The result of a tool call, sent back on the user side.
    ToolResult {
        /// The call it answers.
        call_id: String,
        /// Text the model sees.
        content: String,
        /// Whether the call failed.
        is_error: bool,
    },
}

/// The text parts of `parts` (not thinking, not tool results), joined with `separator`.
pub fn text_of(parts: &[Part], separator: &str) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    texts.join(separator)
}

/// The field of an OpenAI-compatible stream that carried reasoning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasoningField {
    /// `reasoning_content` (DeepSeek, vLLM, llama.cpp): DeepSeek requires it back on every
    /// assistant message that made tool calls.
    ReasoningContent,
    /// `reasoning` (Ollama, OpenRouter).
    Reasoning,
    /// Typed content parts `{"type": "thinking", "thinking": [...]}` (Mistral's Magistral):
    /// shown and stored, not sent back.
    ThinkingPart,
}

/// A tool the model may call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub parameters: Value,
}

/// One model turn's input.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// System prompt (OpenAI: a leading `system` message; Anthropic: the `system` field).
    pub system: String,
    /// The conversation so far, shared with the caller's history (a request copies pointers,
    /// not messages).
    pub messages: Vec<Arc<Message>>,
    /// Tools offered (shared: the same set goes with many requests).
    pub tools: Arc<[ToolDef]>,
    /// Overrides the configured model for this request.
    pub model: Option<String>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
}

/// Something that arrived on the stream.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A piece of answer text.
    TextDelta(String),
    /// A piece of reasoning.
    ThinkingDelta(String),
    /// The model started a tool call.
    ToolCallStarted {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
    /// A tool call is complete (arguments parsed).
    ToolCallReady {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
        /// Parsed arguments (see [`Part::ToolCall`]).
        arguments: Value,
    },
    /// Token counts so far.
    Usage(Usage),
    /// A failed attempt that will be retried after `delay` (nothing was reported yet).
    Retrying {
        /// 1-based retry number.
        attempt: u32,
        /// Wait before the retry.
        delay: std::time::Duration,
        /// Why.
        reason: String,
    },
}

/// Token counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens, cached ones included (Anthropic reports those apart; they are added in).
    pub input_tokens: u64,
    /// Completion tokens (reasoning included).
    pub output_tokens: u64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Prompt tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Completion tokens spent on reasoning, where the provider says.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

/// Why the model stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The answer is complete.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// Output token limit.
    MaxTokens,
    /// The model refused (content filter / refusal).
    Refusal,
    /// Anything else, verbatim.
    Other(String),
}

/// A complete model turn.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The assistant message: thinking, text and tool calls in stream order.
    pub message: Message,
    /// Why it stopped.
    pub stop: StopReason,
    /// Final token counts.
    pub usage: Usage,
}

/// What went wrong, classified so the agent loop can tell the person what to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Nothing answered at the base URL (connection refused, DNS, TLS).
    Unreachable,
    /// 401/403: the key is missing or wrong.
    Auth,
    /// 429 after all retries.
    RateLimited,
    /// 5xx after all retries.
    Server,
    /// Other 4xx: the request was refused (unknown model, bad parameters).
    Rejected,
    /// The overall timeout passed.
    Timeout,
    /// No chunk within the stall timeout.
    Stalled,
    /// Cancelled by the caller.
    Cancelled,
    /// The request does not fit the model's context window (OpenAI `context_length_exceeded`,
    /// Anthropic "prompt is too long", or a 400/413 saying so): shorten the history and retry.
    ContextTooLong,
    /// The provider sent something that is not its documented wire format.
    Protocol,
}

/// A failed model turn. `message` is written for the person: it names the URL, the model and
/// what to change (e.g. which environment variable to set).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct LlmError {
    /// Class of the failure.
    pub kind: ErrorKind,
    /// What happened and what to do.
    pub message: String,
}
