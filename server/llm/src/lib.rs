//! Model providers: OpenAI-compatible Chat Completions and Anthropic Messages, streamed over SSE.
//!
//! One [`Client`] per provider configuration. [`Client::stream`] sends a [`Request`], reports
//! [`Event`]s as they arrive, and returns the whole assistant [`Response`] when the stream ends.
//! Retries (429, 5xx, connection errors; honouring `Retry-After`) happen only before the first
//! text, thinking or tool-call event was reported, so a caller never sees a piece twice ([`Event::Usage`]
//! may repeat: each one replaces the last).

mod anthropic;
mod assemble;
mod client;
mod encoded;
pub mod image;
mod models;
mod openai;
pub mod price;
pub mod profile;
mod sse;
mod types;

pub use client::Client;
pub use models::ModelInfo;
pub use types::*;
