//! `tandem lsp`: the LSP front door, on the shared JSON-RPC transport ([`crate::rpc`]) with LSP
//! framing.
//!
//! One read loop takes frames off stdin, parses each body once and dispatches it. Text sync
//! (`didOpen`, `didChange`, `didClose`, `didSave`) is applied right there, in the editor's order;
//! requests run as tasks of their own, so a slow tool call never holds up reading (a tool call
//! waiting for the editor's `didChange` gets it). Everything outgoing goes through the
//! connection's one writer queue: a turn's updates are queued before its response, so they
//! reach the editor first, by construction. The lifecycle is LSP's: requests before
//! `initialize` get -32002, requests after `shutdown` get -32600, `exit` ends the process
//! (status 0 after `shutdown`, 1 without).

mod editor;
mod handlers;
mod worktrees;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use serde_json::Value;
use tandem_protocol::methods;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use self::handlers::Backend;
use crate::rpc::frames::{self, Frame, FrameReader};
use crate::rpc::{Connection, Framing, Incoming, RpcError};

/// How long the end of the session waits for queued messages to reach the client.
const WRITER_DRAIN: Duration = Duration::from_secs(2);

/// Runs the server over stdin/stdout until `exit` or the end of stdin.
pub async fn serve() -> ExitCode {
    serve_io(crate::stdio::stdin(), crate::stdio::stdout()).await
}

/// Runs the server over `input` and `output`.
async fn serve_io(
    input: impl AsyncRead + Unpin + Send + 'static,
    output: impl AsyncWrite + Unpin + Send + 'static,
) -> ExitCode {
    let (conn, _writer) = Connection::new(output, Framing::Headers);
    let conn = Arc::new(conn);
    let server =
        Arc::new(Server { backend: Arc::new(Backend::new(Arc::clone(&conn))), conn, running: Mutex::default() });
    // The read loop runs on a worker thread, not on the thread of `block_on`: reading, the
    // request tasks and the writer then share the workers' queues (a hand-off from the main
    // thread costs a futex wake-up per message).
    let reading = tokio::spawn({
        let server = Arc::clone(&server);
        async move { server.run(input).await }
    });
    let code = reading.await.unwrap_or_else(|err| {
        tracing::error!("the LSP read loop failed: {err}");
        ExitCode::FAILURE
    });
    server.conn.fail_pending();
    // The language servers outlive the session whichever way it ended: stop them here.
    server.backend.stop_language_servers().await;
    // What was queued before `exit` (the `shutdown` response among it) still goes out; a client
    // that stopped reading does not hold us.
    if tokio::time::timeout(WRITER_DRAIN, server.conn.flush()).await.is_err() {
        tracing::warn!("the client stopped reading; exiting without flushing");
    }
    code
}

/// Where the session is in LSP's lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before a successful `initialize`.
    Waiting,
    Running,
    /// After `shutdown`: only `exit` is accepted.
    ShutDown,
}

struct Server {
    conn: Arc<Connection>,
    backend: Arc<Backend>,
    /// The cancellation handle of each running request, by its id (as JSON text, so that the
    /// number 1 and the string "1" differ).
    running: Mutex<HashMap<String, CancellationToken>>,
}

impl Server {
    /// Reads and dispatches messages until `exit` or the end of input.
    async fn run(self: &Arc<Self>, input: impl AsyncRead + Unpin) -> ExitCode {
        let mut reader = FrameReader::new(input);
        let mut phase = Phase::Waiting;
        loop {
            let body = match reader.next().await {
                Ok(Frame::Body(body)) => body,
                Ok(Frame::TooLarge(length)) => {
                    let why = format!(
                        "message of {length} bytes skipped: messages are limited to {} MB",
                        frames::MAX_BODY >> 20
                    );
                    self.conn.respond(Value::Null, Err(RpcError::new(RpcError::INVALID_REQUEST, why)));
                    continue;
                }
                Ok(Frame::End) => return ExitCode::SUCCESS,
                Err(err) => {
                    tracing::error!("cannot read stdin: {err}");
                    return ExitCode::FAILURE;
                }
            };
            tracing::trace!(target: "tandem::lsp::wire", "← {}", String::from_utf8_lossy(body));
            let message = match serde_json::from_slice::<Value>(body) {
                Ok(message) => message,
                Err(err) => {
                    tracing::error!("a message body that is not JSON: {err}");
                    let error = RpcError::new(RpcError::PARSE, format!("not JSON: {err}"));
                    self.conn.respond(Value::Null, Err(error));
                    continue;
                }
            };
            if let Some(code) = self.receive(Incoming::classify(message), &mut phase) {
                return code;
            }
        }
    }

    /// Handles one message; `Some` ends the session with that status.
    fn receive(self: &Arc<Self>, incoming: Incoming, phase: &mut Phase) -> Option<ExitCode> {
        match incoming {
            Incoming::Request { id, method, params } => self.request(id, method, params, phase),
            Incoming::Notification { method, params } => return self.notification(&method, params, *phase),
            Incoming::Response(message) => self.conn.resolve(&message),
            Incoming::Invalid { reply_to, error } => {
                tracing::error!("invalid JSON-RPC message: {}", error.message);
                if let Some(id) = reply_to {
                    self.conn.respond(id, Err(error));
                }
            }
        }
        None
    }

    fn request(self: &Arc<Self>, id: Value, method: String, params: Value, phase: &mut Phase) {
        match (*phase, method.as_str()) {
            // Inline: nothing else may run before the workspace is open, and the response must
            // leave before anything the session sends.
            (Phase::Waiting, "initialize") => {
                let result = inline("initialize", || self.backend.initialize(params));
                if result.is_ok() {
                    *phase = Phase::Running;
                }
                self.conn.respond(id, result);
            }
            (Phase::Waiting, _) => {
                let error = RpcError::new(RpcError::RESOURCE_NOT_FOUND, format!("{method}: initialize first"));
                self.conn.respond(id, Err(error));
            }
            (Phase::Running, "initialize") => {
                let error = RpcError::new(RpcError::INVALID_REQUEST, "initialize may be sent only once");
                self.conn.respond(id, Err(error));
            }
            (Phase::Running, _) => {
                if method == "shutdown" {
                    *phase = Phase::ShutDown;
                }
                self.spawn(id, method, params);
            }
            (Phase::ShutDown, _) => {
                let error = RpcError::new(RpcError::INVALID_REQUEST, format!("{method} after shutdown: only exit"));
                self.conn.respond(id, Err(error));
            }
        }
    }

    /// Runs a request in a task of its own, in a span of its own; a panic becomes an error
    /// response.
    fn spawn(self: &Arc<Self>, id: Value, method: String, params: Value) {
        let key = id.to_string();
        let cancel = CancellationToken::new();
        self.running.lock().insert(key.clone(), cancel.clone());
        let span = tracing::info_span!("lsp", method = %method, id = %key);
        let server = Arc::clone(self);
        let task = async move {
            tracing::debug!("request");
            let work = AssertUnwindSafe(server.backend.handle(&method, params, &cancel)).catch_unwind();
            let result = work.await.unwrap_or_else(|panic| Err(panicked(&method, panic.as_ref())));
            server.running.lock().remove(&key);
            if let Err(err) = &result {
                tracing::info!(code = err.code, "{method} failed: {}", err.message);
            }
            server.conn.reply(id, result);
        };
        tokio::spawn(task.instrument(span));
    }

    /// Handles a notification on the read loop (in order, never in a task of its own).
    fn notification(&self, method: &str, params: Value, phase: Phase) -> Option<ExitCode> {
        if method == "exit" {
            return Some(if phase == Phase::ShutDown { ExitCode::SUCCESS } else { ExitCode::FAILURE });
        }
        if phase != Phase::Running {
            tracing::debug!("{method} dropped: not initialized, or shut down");
            return None;
        }
        let outcome = inline(method, || match method {
            "textDocument/didOpen" => self.backend.did_open(handlers::parse(params)?),
            "textDocument/didChange" => self.backend.did_change(handlers::parse(params)?),
            "textDocument/didClose" => self.backend.did_close(handlers::parse(params)?),
            "textDocument/didSave" => self.backend.did_save(handlers::parse(params)?),
            "$/cancelRequest" => self.cancel(&params),
            methods::SESSION_CANCEL => self.backend.session_cancel(handlers::parse(params)?),
            "initialized" => Ok(()),
            other => {
                // `$/` notifications may be ignored (LSP's rule); others we do not handle.
                if !other.starts_with("$/") {
                    tracing::debug!("ignored notification {other}");
                }
                Ok(())
            }
        });
        if let Err(err) = outcome {
            tracing::error!("{method}: {}", err.message);
        }
        None
    }

    /// `$/cancelRequest`: signals the request's task; each handler decides what cancelling
    /// means for it (see [`Backend::handle`]).
    fn cancel(&self, params: &Value) -> Result<(), RpcError> {
        let id = params.get("id").ok_or_else(|| RpcError::invalid_params("`id` is missing"))?;
        if let Some(token) = self.running.lock().get(&id.to_string()) {
            token.cancel();
        }
        Ok(())
    }
}

/// Runs `handler` on the read loop; a panic becomes an error instead of ending the loop.
fn inline<T>(what: &str, handler: impl FnOnce() -> Result<T, RpcError>) -> Result<T, RpcError> {
    std::panic::catch_unwind(AssertUnwindSafe(handler)).unwrap_or_else(|panic| Err(panicked(what, panic.as_ref())))
}

fn panicked(what: &str, panic: &(dyn std::any::Any + Send)) -> RpcError {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned());
    tracing::error!("{what} panicked: {message}");
    RpcError::internal(format!("{what} failed (panic: {message}); this is a bug in tandem"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_handler_is_an_internal_error() {
        let outcome: Result<(), RpcError> = inline("textDocument/didChange", || panic!("boom"));
        let error = outcome.err();
        assert_eq!(error.as_ref().map(|e| e.code), Some(RpcError::INTERNAL));
        assert!(error.is_some_and(|e| e.message.contains("panic: boom")));
    }

    #[tokio::test]
    async fn before_initialize_requests_get_32002_and_exit_without_shutdown_is_1() {
        let (client, server_side) = tokio::io::duplex(64 * 1024);
        let (server_in, server_out) = tokio::io::split(server_side);
        let serving = tokio::spawn(serve_io(server_in, server_out));
        let (mut from_server, mut to_server) = tokio::io::split(client);
        let frame = |body: &str| format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let input = [
            frame(r#"{"jsonrpc":"2.0","id":1,"method":"tandem/tools/list"}"#),
            frame(r#"{"jsonrpc":"2.0","id":2,"method":"shutdown"}"#),
            frame(r#"{"jsonrpc":"2.0","method":"exit"}"#),
        ]
        .concat();
        tokio::io::AsyncWriteExt::write_all(&mut to_server, input.as_bytes()).await.ok();
        assert_eq!(serving.await.ok(), Some(ExitCode::FAILURE));
        let mut output = Vec::new();
        let mut chunk = [0u8; 4096];
        while !String::from_utf8_lossy(&output).contains(r#""id":2"#) {
            match tokio::io::AsyncReadExt::read(&mut from_server, &mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => output.extend_from_slice(&chunk[..n]),
            }
        }
        let output = String::from_utf8_lossy(&output);
        assert_eq!(output.matches(r#""code":-32002"#).count(), 2, "{output}");
    }
}
