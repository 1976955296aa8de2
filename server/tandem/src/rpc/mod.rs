//! JSON-RPC 2.0 over stdio, shared by the front doors: `tandem acp` (newline-delimited JSON) and
//! `tandem lsp` (LSP base protocol: `Content-Length` headers).
//!
//! One writer task owns stdout and every outgoing message goes through its queue, so messages
//! leave in the order they were queued: a turn's updates, queued before its response, always
//! reach the client first. Requests to the client wait on a table of pending ids.

mod connection;
pub mod frames;
mod json_out;
mod message;
pub mod ndjson;

pub use connection::{Connection, Framing, RpcError};
pub use json_out::WriteJson;
pub use message::Incoming;
