//! The connection to a client: one writer task, fed by one queue, for every outgoing message
//! (notifications, responses, requests to the client), and the table of requests waiting for
//! the client's answer.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::json_out::{self, Envelope, WriteJson};
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{mpsc, oneshot};

/// How messages are delimited on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// One message per line (ACP, MCP).
    Lines,
    /// The LSP base protocol: a `Content-Length` header, a blank line, the body.
    Headers,
}

/// Room left in front of a body for its `Content-Length` header (at most 40 bytes).
const HEADER_ROOM: usize = 48;

impl Framing {
    /// `message` as it goes on the wire: serialized once ([`json_out`]), straight into the buffer
    /// that is written (header and body in one write). The frame is `bytes[start..]`.
    fn frame(self, message: &Envelope<'_>) -> (Vec<u8>, usize) {
        match self {
            Self::Lines => {
                let mut bytes = Vec::with_capacity(message.size_hint());
                json_out::write_envelope(&mut bytes, message);
                self.trace(&bytes);
                bytes.push(b'\n');
                (bytes, 0)
            }
            Self::Headers => {
                let mut bytes = Vec::with_capacity(HEADER_ROOM + message.size_hint());
                bytes.resize(HEADER_ROOM, b' ');
                json_out::write_envelope(&mut bytes, message);
                self.trace(&bytes[HEADER_ROOM..]);
                let header = format!("Content-Length: {}\r\n\r\n", bytes.len() - HEADER_ROOM);
                let start = HEADER_ROOM - header.len();
                bytes[start..HEADER_ROOM].copy_from_slice(header.as_bytes());
                (bytes, start)
            }
        }
    }

    /// Logs one outgoing message at trace level, under the door's own wire target.
    fn trace(self, body: &[u8]) {
        match self {
            Self::Lines => tracing::trace!(target: "tandem::acp::wire", "→ {}", String::from_utf8_lossy(body)),
            Self::Headers => tracing::trace!(target: "tandem::lsp::wire", "→ {}", String::from_utf8_lossy(body)),
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
    /// The message of a request the client did not answer before it went away.
    const DISCONNECTED: &str = "the client disconnected";
    /// ACP's "resource not found" (an unknown session); LSP's "server not initialized".
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
    /// LSP: the request was cancelled (`$/cancelRequest`).
    pub const REQUEST_CANCELLED: i64 = -32800;

    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), data: None }
    }

    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::new(Self::INVALID_PARAMS, message)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Self::INTERNAL, message)
    }

    /// What a request gets when the client went away before answering.
    pub fn disconnected() -> Self {
        Self::internal(Self::DISCONNECTED)
    }

    /// Whether this is [`RpcError::disconnected`].
    pub fn is_disconnected(&self) -> bool {
        self.code == Self::INTERNAL && self.message == Self::DISCONNECTED
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

/// What the writer task is given.
enum Outgoing {
    /// A framed message: `bytes[start..]`.
    Frame { bytes: Vec<u8>, start: usize },
    /// Answered once everything queued before it has been written and flushed.
    Flush(oneshot::Sender<()>),
}

/// The connection to the client: sends messages, matches responses to requests.
pub struct Connection {
    framing: Framing,
    out: mpsc::UnboundedSender<Outgoing>,
    pending: Mutex<HashMap<u64, Pending>>,
    next_id: AtomicU64,
}

impl Connection {
    /// A connection writing to `writer` from a task of its own (which ends when the last
    /// sender is dropped or the output fails).
    pub fn new<W: AsyncWrite + Unpin + Send + 'static>(
        writer: W,
        framing: Framing,
    ) -> (Self, tokio::task::JoinHandle<()>) {
        let (out, rx) = mpsc::unbounded_channel::<Outgoing>();
        let task = tokio::spawn(write_all(writer, rx));
        (Self { framing, out, pending: Mutex::new(HashMap::new()), next_id: AtomicU64::new(1) }, task)
    }

    fn send(&self, message: &Envelope<'_>) {
        let (bytes, start) = self.framing.frame(message);
        if self.out.send(Outgoing::Frame { bytes, start }).is_err() {
            tracing::warn!("the client's output is closed; a message was dropped");
        }
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Value) {
        self.send(&Envelope::Notification { method, params: &params });
    }

    /// Sends a response to the client's request `id`.
    pub fn respond(&self, id: Value, result: Result<Value, RpcError>) {
        self.reply(id, result);
    }

    /// Sends a response to the client's request `id`: `result` is written straight into the
    /// frame (a `Value`, or a tool's result without a `Value` made of it first).
    pub fn reply<T: WriteJson>(&self, id: Value, result: Result<T, RpcError>) {
        let id = &id;
        self.send(&match &result {
            Ok(result) => Envelope::Response { id, result },
            Err(error) => Envelope::Error { id, code: error.code, message: &error.message, data: error.data.as_ref() },
        });
    }

    /// Sends a request and waits for its response (no timeout: callers bound it).
    pub async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().insert(id, tx);
        // Removes the entry however the wait ends, a timeout or a cancelled caller included.
        let _forget = Forget { pending: &self.pending, id };
        self.send(&Envelope::Request { id, method, params: &params });
        rx.await.unwrap_or_else(|_| Err(RpcError::disconnected()))
    }

    /// Delivers a response from the client. Unknown ids are logged and dropped.
    pub fn resolve(&self, message: &Value) {
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            tracing::warn!("a response without a numeric id: {message}");
            return;
        };
        let Some(tx) = self.pending.lock().remove(&id) else {
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
        let pending: Vec<Pending> = self.pending.lock().drain().map(|(_, tx)| tx).collect();
        for tx in pending {
            tx.send(Err(RpcError::disconnected())).ok();
        }
    }

    /// Waits until everything queued so far has been written and flushed (or the output failed).
    pub async fn flush(&self) {
        let (tx, rx) = oneshot::channel();
        if self.out.send(Outgoing::Flush(tx)).is_ok() {
            rx.await.ok();
        }
    }
}

/// Drops a pending request's entry when its waiter goes away.
struct Forget<'a> {
    pending: &'a Mutex<HashMap<u64, Pending>>,
    id: u64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.pending.lock().remove(&self.id);
    }
}

/// The writer task: writes messages in queue order until the queue or the output closes.
async fn write_all<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::UnboundedReceiver<Outgoing>) {
    while let Some(outgoing) = rx.recv().await {
        let written = match outgoing {
            Outgoing::Frame { bytes, start } => match writer.write_all(&bytes[start..]).await {
                // Flush when nothing else is queued: one syscall for a burst of updates.
                Ok(()) if rx.is_empty() => writer.flush().await,
                other => other,
            },
            Outgoing::Flush(done) => {
                let flushed = writer.flush().await;
                done.send(()).ok();
                flushed
            }
        };
        if let Err(err) = written {
            tracing::error!("cannot write to the client: {err}");
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn messages_leave_in_queue_order_in_either_framing() {
        for (framing, expected) in [
            (
                Framing::Lines,
                "{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":1}\n{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":2}\n",
            ),
            (
                Framing::Headers,
                "Content-Length: 41\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"a\",\"params\":1}Content-Length: 35\r\n\r\n{\"id\":1,\"jsonrpc\":\"2.0\",\"result\":2}",
            ),
        ] {
            let (ours, mut theirs) = tokio::io::duplex(4096);
            let (conn, _writer) = Connection::new(ours, framing);
            conn.notify("a", json!(1));
            conn.respond(json!(1), Ok(json!(2)));
            conn.flush().await;
            drop(conn);
            let mut text = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut theirs, &mut text).await.ok();
            assert_eq!(text, expected, "{framing:?}");
        }
    }

    proptest::proptest! {
        /// A tool's result shaped as `read` returns a file (numbered lines of source text, a tab
        /// and a newline to escape on each) is framed in the buffer allocated for it: never
        /// grown on the way, which would copy everything written so far, again and again.
        #[test]
        fn a_read_result_is_framed_without_growing_its_buffer(
            lines in proptest::collection::vec("[ -~]{12,120}", 0..400),
            title in "[ -~]{0,80}",
            metadata in proptest::collection::btree_map("[a-z]{1,12}", "[ -~]{0,40}", 0..8),
        ) {
            let output: String = lines.iter().enumerate().map(|(i, line)| format!("{:>6}\t{line}\n", i + 1)).collect();
            let metadata = metadata.into_iter().map(|(k, v)| (k, Value::String(v))).collect();
            let result = tandem_protocol::ToolResult { title, output, metadata, error: None, attachments: Vec::new() };
            let id = json!(7);
            for framing in [Framing::Lines, Framing::Headers] {
                let message = Envelope::Response { id: &id, result: &result };
                let room = match framing { Framing::Lines => 0, Framing::Headers => HEADER_ROOM } + message.size_hint();
                let (bytes, _) = framing.frame(&message);
                proptest::prop_assert!(bytes.len() <= room, "{} bytes written, {room} reserved", bytes.len());
                proptest::prop_assert_eq!(bytes.capacity(), room);
            }
        }
    }

    proptest::proptest! {
        /// Whatever the messages (bodies of any length, so headers of any width, and text that
        /// needs escaping), what is written reads back as the same messages in the same order,
        /// in both framings.
        #[test]
        fn what_is_written_reads_back_whole(texts in proptest::collection::vec("(?s).{0,40}|[a-z\"\\\n]{90,1100}", 1..8)) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            for framing in [Framing::Lines, Framing::Headers] {
                let read = runtime.block_on(async {
                    let (ours, mut theirs) = tokio::io::duplex(1 << 20);
                    let (conn, _writer) = Connection::new(ours, framing);
                    for (id, text) in texts.iter().enumerate() {
                        conn.respond(json!(id), Ok(json!({ "output": text })));
                    }
                    conn.flush().await;
                    drop(conn);
                    let mut wire = Vec::new();
                    tokio::io::AsyncReadExt::read_to_end(&mut theirs, &mut wire).await.ok();
                    let mut bodies = Vec::new();
                    match framing {
                        Framing::Lines => {
                            for line in wire.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
                                bodies.push(serde_json::from_slice::<Value>(line).ok());
                            }
                        }
                        Framing::Headers => {
                            let mut reader = super::super::frames::FrameReader::new(wire.as_slice());
                            while let Ok(super::super::frames::Frame::Body(body)) = reader.next().await {
                                bodies.push(serde_json::from_slice::<Value>(body).ok());
                            }
                        }
                    }
                    bodies
                });
                let expected: Vec<Option<Value>> = texts
                    .iter()
                    .enumerate()
                    .map(|(id, text)| Some(json!({ "jsonrpc": "2.0", "id": id, "result": { "output": text } })))
                    .collect();
                proptest::prop_assert_eq!(read, expected, "{:?}", framing);
            }
        }
    }

    #[tokio::test]
    async fn a_request_is_resolved_by_its_response_and_forgotten_when_abandoned() {
        let (ours, _theirs) = tokio::io::duplex(4096);
        let (conn, _writer) = Connection::new(ours, Framing::Headers);
        let conn = std::sync::Arc::new(conn);
        let waiting = tokio::spawn({
            let conn = std::sync::Arc::clone(&conn);
            async move { conn.request("workspace/applyEdit", json!({})).await }
        });
        while conn.pending.lock().is_empty() {
            tokio::task::yield_now().await;
        }
        conn.resolve(&json!({ "jsonrpc": "2.0", "id": 1, "error": { "code": -32601, "message": "no" } }));
        let answer = waiting.await.ok();
        assert_eq!(answer.and_then(Result::err).map(|e| e.code), Some(RpcError::METHOD_NOT_FOUND));
        let abandoned = tokio::time::timeout(std::time::Duration::from_millis(10), conn.request("x", json!({}))).await;
        assert!(abandoned.is_err());
        assert!(conn.pending.lock().is_empty());
    }
}
