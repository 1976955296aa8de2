//! ACP's transport: newline-delimited JSON-RPC 2.0 over stdio. One writer task owns stdout
//! (messages leave in the order they were queued, so a turn's updates always precede its
//! response); requests to the client wait on a table of pending ids.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use serde_json::{Value, json};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// Longest line (one message) read from the client; a longer one is skipped with an error.
pub const MAX_LINE: usize = 64 * 1024 * 1024;

/// One line read by [`read_line`].
pub enum Line {
    /// The input ended.
    End,
    /// A line (without its newline), in the buffer given.
    Read,
    /// A line longer than the limit: it was skipped up to its newline.
    TooLong(usize),
}

/// Reads one line into `line` (cleared first), holding at most `max` bytes of it: a longer
/// line is read to its end and dropped, so one huge message costs no memory and the next one
/// is read normally.
pub async fn read_line<R: tokio::io::AsyncBufRead + Unpin>(
    reader: &mut R,
    line: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    use tokio::io::AsyncBufReadExt;
    line.clear();
    let mut skipped = 0usize;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(match (skipped, line.is_empty()) {
                (0, true) => Line::End,
                (0, false) => Line::Read,
                (n, _) => Line::TooLong(n),
            });
        }
        let (chunk, done) = match buffer.iter().position(|&b| b == b'\n') {
            Some(at) => (&buffer[..=at], true),
            None => (buffer, false),
        };
        let used = chunk.len();
        if skipped > 0 || line.len() + used > max {
            skipped += line.len() + used;
            line.clear();
        } else {
            line.extend_from_slice(chunk);
        }
        reader.consume(used);
        if done {
            return Ok(if skipped > 0 { Line::TooLong(skipped) } else { Line::Read });
        }
    }
}

/// A JSON-RPC error object.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub const PARSE: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL: i64 = -32603;
    /// ACP's "resource not found" (an unknown session).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;

    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(Self::INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Self::INTERNAL, message)
    }

    fn to_json(&self) -> Value {
        let mut error = json!({ "code": self.code, "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }

    fn from_json(value: &Value) -> Self {
        Self {
            code: value.get("code").and_then(Value::as_i64).unwrap_or(Self::INTERNAL),
            message: value.get("message").and_then(Value::as_str).unwrap_or("unknown error").to_owned(),
            data: value.get("data").cloned(),
        }
    }
}

type Pending = oneshot::Sender<Result<Value, RpcError>>;

/// The connection to the ACP client: sends messages, matches responses to requests.
pub struct Connection {
    out: mpsc::UnboundedSender<String>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
}

impl Connection {
    /// A connection writing to `writer` from a task of its own (which ends when the last
    /// sender is dropped).
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(mut writer: W) -> (Self, tokio::task::JoinHandle<()>) {
        let (out, mut rx) = mpsc::unbounded_channel::<String>();
        let task = tokio::spawn(async move {
            while let Some(line) = rx.recv().await {
                if let Err(err) = writer.write_all(line.as_bytes()).await {
                    tracing::error!("cannot write to the client: {err}");
                    return;
                }
                // Flush when nothing else is queued: one syscall for a burst of updates.
                if rx.is_empty()
                    && let Err(err) = writer.flush().await
                {
                    tracing::error!("cannot write to the client: {err}");
                    return;
                }
            }
        });
        (Self { out, pending: Mutex::new(HashMap::new()), next_id: AtomicU64::new(1) }, task)
    }

    fn send(&self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        tracing::trace!(target: "tandem::acp::wire", "→ {}", line.trim_end());
        if self.out.send(line).is_err() {
            tracing::warn!("the client's output is closed; a message was dropped");
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// Sends a response to the client's request `id`.
    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        let message = match result {
            Ok(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
            Err(error) => json!({ "jsonrpc": "2.0", "id": id, "error": error.to_json() }),
        };
        self.send(&message);
    }

    /// Sends a request and waits for its response (no timeout: callers bound it).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id, tx);
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        let answer = rx.await;
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
        answer.unwrap_or_else(|_| Err(RpcError::internal("the client disconnected")))
    }

    /// Delivers a response from the client. Unknown ids are logged and dropped.
    pub fn resolve(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            tracing::warn!("a response without a numeric id: {message}");
            return;
        };
        let Some(tx) = self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id) else {
            tracing::debug!(id, "a response to a request nobody waits for any more");
            return;
        };
        let result = match message.get("error") {
            Some(error) => Err(RpcError::from_json(error)),
            None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
        };
        tx.send(result).ok();
    }

    /// Fails every request still waiting (the client went away).
    pub fn fail_pending(&self) {
        let pending: Vec<Pending> =
            self.pending.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, tx)| tx).collect();
        for tx in pending {
            tx.send(Err(RpcError::internal("the client disconnected"))).ok();
        }
    }
}
