//! One running language server: the child process, async-lsp's client main loop, what the
//! server told us (diagnostics, progress, readiness), requests with a timeout and an explicit
//! `$/cancelRequest`, and document sync.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;

use async_lsp::lsp_types::notification::{
    self as notif, DidChangeTextDocument, DidChangeWatchedFiles, DidOpenTextDocument, DidSaveTextDocument,
    Notification, Progress, PublishDiagnostics,
};
use async_lsp::lsp_types::request::{self as req, Request};
use async_lsp::lsp_types::{self as lsp, NumberOrString, ProgressParamsValue, Url, WorkDoneProgress};
use async_lsp::router::Router;
use async_lsp::{ErrorCode, MainLoop, ResponseError, ServerSocket};
use serde_json::{Value, json};
use tandem_text::{BufferCache, ContentHash, Lines, PositionEncoding, Rope};
use tokio::io::AsyncBufReadExt;
use tokio::sync::watch;
use tokio_util::compat::{TokioAsyncReadCompatExt, TokioAsyncWriteCompatExt};

use crate::catalog::{DiagnosticsMode, ServerSpec, language_id};

mod memo;
mod preview;
use crate::{ProgressEvent, ProgressKind};

/// How long to wait for a version-less server's publish once it has published for the file.
const FIRST_PUBLISH_WAIT: Duration = Duration::from_secs(3);
/// How much of a message to a language server is gathered before it is written.
const SERVER_WRITE_BUFFER: usize = 64 * 1024;
/// Requests in a row answered only busy (each after its retries) that make a loaded server
/// stuck: it is restarted (see `Server::stuck`).
const STUCK_AFTER: u32 = 3;

/// Why a call to a server failed.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// No answer within the timeout; the request was cancelled.
    #[error("{server} did not answer {method} within {secs:.1} s (the request was cancelled)")]
    Timeout {
        /// The server.
        server: String,
        /// The request.
        method: &'static str,
        /// The timeout.
        secs: f64,
    },
    /// An empty answer from a server that was still loading the project.
    #[error(
        "{server} answered {method} with nothing, but it had not finished loading the project after {secs:.1} s, so that says nothing yet"
    )]
    NotReady {
        /// The server.
        server: String,
        /// The request.
        method: &'static str,
        /// How long it was given.
        secs: f64,
    },
    /// The process ended.
    #[error("{server} stopped (crashed or exited)")]
    Died {
        /// The server.
        server: String,
    },
    /// The server answered with an error.
    #[error("{server} answered {method} with an error: {message}")]
    Response {
        /// The server.
        server: String,
        /// The request.
        method: &'static str,
        /// Its message.
        message: String,
    },
    /// It could not be started.
    #[error("cannot start {server} ({program}): {message}")]
    Spawn {
        /// The server.
        server: String,
        /// The program.
        program: String,
        /// The OS error.
        message: String,
    },
    /// A file could not be read to sync it.
    #[error("{0}")]
    File(String),
}

/// Requests sent with `Value` results, parsed leniently: typed replies break on what real
/// servers send (a `null` where a list is due, fields a version added or left out).
macro_rules! raw_request {
    ($($name:ident => $method:literal),* $(,)?) => {
        /// Raw requests.
        pub mod raw {
            $(
                #[doc = concat!("`", $method, "` with a raw JSON result.")]
                #[derive(Debug)]
                pub enum $name {}
                impl async_lsp::lsp_types::request::Request for $name {
                    type Params = serde_json::Value;
                    type Result = serde_json::Value;
                    const METHOD: &'static str = $method;
                }
            )*
        }
    };
}

raw_request! {
    Initialize => "initialize",
    Shutdown => "shutdown",
    Definition => "textDocument/definition",
    Implementation => "textDocument/implementation",
    References => "textDocument/references",
    Hover => "textDocument/hover",
    DocumentSymbol => "textDocument/documentSymbol",
    WorkspaceSymbol => "workspace/symbol",
    PrepareCallHierarchy => "textDocument/prepareCallHierarchy",
    IncomingCalls => "callHierarchy/incomingCalls",
    OutgoingCalls => "callHierarchy/outgoingCalls",
    Rename => "textDocument/rename",
}

/// A publishDiagnostics as received.
#[derive(Clone, Debug)]
pub struct Published {
    /// The document version it is about, if the server says.
    pub version: Option<i32>,
    /// Arrival order (the server's publish counter).
    pub seq: u64,
    /// The diagnostics.
    pub items: Vec<lsp::Diagnostic>,
}

/// What the notification handlers record; read by waiters through `changed`.
pub struct Shared {
    name: String,
    root: PathBuf,
    diagnostics: Mutex<HashMap<Url, Published>>,
    seq: AtomicU64,
    /// Active work-done progress: token → title.
    progress: Mutex<HashMap<String, String>>,
    /// Flycheck runs begun (rust-analyzer's `cargo check`).
    flychecks_begun: AtomicU64,
    /// Flycheck runs ended (completed or cancelled).
    flychecks_done: AtomicU64,
    /// rust-analyzer's `experimental/serverStatus` quiescent.
    quiescent: AtomicBool,
    alive: AtomicBool,
    /// Requests in a row that got only busy answers (see [`STUCK_AFTER`]).
    busy_streak: AtomicU32,
    changed: watch::Sender<u64>,
    progress_tx: Option<tokio::sync::mpsc::UnboundedSender<ProgressEvent>>,
    /// What `workspace/configuration` answers ([`ServerSpec::settings`]).
    settings: Value,
}

impl Shared {
    fn bump(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    fn forward(&self, kind: ProgressKind) {
        if let Some(tx) = &self.progress_tx {
            tx.send(ProgressEvent { server: self.name.clone(), root: self.root.clone(), kind }).ok();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A document as the server has it.
#[derive(Clone)]
struct SentDoc {
    version: i32,
    hash: ContentHash,
    rope: Rope,
    /// The publish counter when this version was sent.
    sent_seq: u64,
    /// The flycheck runs begun when this version was saved (rust-analyzer).
    saved_flychecks: Option<u64>,
    /// What else the server analysed when this version was sent ([`memo::world_except`]).
    world_at_send: u64,
}

/// How a file changed on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiskChange {
    /// It appeared.
    Created,
    /// Its bytes changed.
    Changed,
    /// It went away.
    Deleted,
}

/// A running server.
pub struct Server {
    /// Its catalog entry.
    pub spec: ServerSpec,
    /// Its project root.
    pub root: PathBuf,
    socket: ServerSocket,
    shared: Arc<Shared>,
    /// Ids the main loop gives requests: 0, 1, 2, ... in the order they reach it.
    next_id: Mutex<i32>,
    docs: Mutex<HashMap<PathBuf, SentDoc>>,
    /// Negotiated position encoding.
    pub encoding: PositionEncoding,
    /// The server's capabilities.
    pub capabilities: Value,
    child: tokio::sync::Mutex<tokio::process::Child>,
    /// The process id, for tests and logs.
    pub pid: Option<u32>,
    timeout: Duration,
    /// How long a query waits for the server to be ready (indexed) before it is asked: at
    /// least `timeout`.
    ready_wait: Duration,
    version_counter: AtomicI32,
    /// Diagnostics by document text ([`memo`]).
    memo: Mutex<HashMap<PathBuf, Vec<memo::Memo>>>,
    /// How many times the server was told of changes to files it does not have open.
    disk_epoch: AtomicU64,
}

fn is_flycheck(token: &str, title: &str) -> bool {
    token.contains("flycheck") || title.contains("cargo check") || title.contains("cargo clippy")
}

fn router(shared: Arc<Shared>) -> Router<Arc<Shared>> {
    let mut router = Router::new(shared);
    router
        .notification::<PublishDiagnostics>(|s, params| {
            let seq = s.seq.fetch_add(1, Ordering::SeqCst) + 1;
            tracing::debug!(server = %s.name, uri = %params.uri, version = ?params.version, n = params.diagnostics.len(), "publishDiagnostics");
            lock(&s.diagnostics)
                .insert(params.uri, Published { version: params.version, seq, items: params.diagnostics });
            s.bump();
            ControlFlow::Continue(())
        })
        .notification::<Progress>(|s, params| {
            let token = match &params.token {
                NumberOrString::Number(n) => n.to_string(),
                NumberOrString::String(t) => t.clone(),
            };
            let ProgressParamsValue::WorkDone(work) = params.value;
            match work {
                WorkDone::Begin(begin) => {
                    tracing::debug!(server = %s.name, %token, title = %begin.title, "progress begin");
                    if is_flycheck(&token, &begin.title) {
                        s.flychecks_begun.fetch_add(1, Ordering::SeqCst);
                    }
                    s.forward(ProgressKind::Begin { title: format!("{}: {}", s.name, begin.title) });
                    lock(&s.progress).insert(token, begin.title);
                }
                WorkDone::Report(report) => {
                    if let Some(message) = report.message {
                        s.forward(ProgressKind::Report { message });
                    }
                }
                WorkDone::End(_) => {
                    let title = lock(&s.progress).remove(&token).unwrap_or_default();
                    tracing::debug!(server = %s.name, %token, %title, "progress end");
                    if is_flycheck(&token, &title) {
                        s.flychecks_done.fetch_add(1, Ordering::SeqCst);
                    }
                    s.forward(ProgressKind::End);
                }
            }
            s.bump();
            ControlFlow::Continue(())
        })
        .notification::<notif::LogMessage>(|s, params| {
            tracing::debug!(server = %s.name, "log: {}", params.message);
            ControlFlow::Continue(())
        })
        .notification::<notif::ShowMessage>(|s, params| {
            tracing::info!(server = %s.name, "message: {}", params.message);
            ControlFlow::Continue(())
        })
        // Unknown notifications must not stop the loop (async-lsp's default for them is an error).
        .unhandled_notification(|s, n| {
            if n.method == "experimental/serverStatus" {
                let quiescent = n.params.get("quiescent").and_then(Value::as_bool).unwrap_or(false);
                s.quiescent.store(quiescent, Ordering::SeqCst);
                s.bump();
            } else {
                tracing::trace!(server = %s.name, method = %n.method, "notification ignored");
            }
            ControlFlow::Continue(())
        })
        // Servers ask the client things (progress tokens, capability registration) and some
        // wait for the answer before they go on: every such request is answered.
        .request::<req::WorkDoneProgressCreate, _>(|_, _| async { Ok(()) })
        .request::<req::RegisterCapability, _>(|_, _| async { Ok(()) })
        .request::<req::UnregisterCapability, _>(|_, _| async { Ok(()) })
        .request::<req::WorkspaceConfiguration, _>(|s, params| {
            let answers: Vec<Value> =
                params.items.iter().map(|item| crate::restricted::section(&s.settings, item.section.as_deref())).collect();
            async move { Ok(answers) }
        })
        .request::<req::ApplyWorkspaceEdit, _>(|_, _| async {
            Ok(lsp::ApplyWorkspaceEditResponse {
                applied: false,
                failure_reason: Some("tandem applies edits through its own tools".into()),
                failed_change: None,
            })
        })
        .request::<req::ShowMessageRequest, _>(|_, _| async { Ok(None) })
        .request::<req::WorkspaceFoldersRequest, _>(|s, _| {
            let folder = Url::from_file_path(&s.root).ok().map(|uri| lsp::WorkspaceFolder { uri, name: "root".into() });
            async move { Ok(folder.map(|f| vec![f])) }
        })
        .unhandled_request(|_, r| {
            let method = r.method.clone();
            async move { Err(ResponseError::new(ErrorCode::METHOD_NOT_FOUND, format!("{method} is not supported"))) }
        })
        .unhandled_event(|_, _| ControlFlow::Continue(()));
    router
}

use WorkDoneProgress as WorkDone;

/// Polls a future once with a no-op waker (to make it send its request now).
fn poll_once<F: std::future::Future + ?Sized>(fut: Pin<&mut F>) -> Poll<F::Output> {
    let waker = futures_util::task::noop_waker();
    let mut cx = Context::from_waker(&waker);
    fut.poll(&mut cx)
}

impl Server {
    /// Starts `program` for `spec` in `root` and initializes it; `path`, when given, is the
    /// `PATH` it gets.
    pub async fn start(
        spec: ServerSpec,
        program: &Path,
        root: PathBuf,
        timeout: Duration,
        ready_wait: Duration,
        progress_tx: Option<tokio::sync::mpsc::UnboundedSender<ProgressEvent>>,
        path: Option<std::ffi::OsString>,
    ) -> Result<Arc<Self>, ServerError> {
        let name = spec.name.clone();
        let mut command = tokio::process::Command::new(program);
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let mut child = command
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .args(&spec.command[1..])
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| ServerError::Spawn {
                server: name.clone(),
                program: program.display().to_string(),
                message: err.to_string(),
            })?;
        let pid = child.id();
        tracing::info!(server = %name, root = %root.display(), ?pid, "started");
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ServerError::Died { server: name });
        };
        // The server's stderr, logged under its name.
        let log_name = name.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "tandem_lsp_proxy::stderr", server = %log_name, "{line}");
            }
        });
        let (changed, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            name: name.clone(),
            root: root.clone(),
            diagnostics: Mutex::new(HashMap::new()),
            seq: AtomicU64::new(0),
            progress: Mutex::new(HashMap::new()),
            flychecks_begun: AtomicU64::new(0),
            flychecks_done: AtomicU64::new(0),
            quiescent: AtomicBool::new(false),
            alive: AtomicBool::new(true),
            busy_streak: AtomicU32::new(0),
            changed,
            progress_tx,
            settings: spec.settings.clone(),
        });
        let loop_shared = Arc::clone(&shared);
        let (main_loop, socket) = MainLoop::new_client(|_socket| router(loop_shared));
        let loop_shared = Arc::clone(&shared);
        // `socket` (kept in `Server`) outlives the loop; the loop ending means the server died.
        let keep_alive = socket.clone();
        // The loop writes a message's header and body separately and flushes after each
        // message: buffered, a message reaches the server in one write (a server that reads
        // the header alone first, as Node's do, wakes once per message, not twice).
        let stdin = tokio::io::BufWriter::with_capacity(SERVER_WRITE_BUFFER, stdin);
        tokio::spawn(async move {
            let result = main_loop.run_buffered(stdout.compat(), stdin.compat_write()).await;
            drop(keep_alive);
            tracing::info!(server = %loop_shared.name, ?result, "main loop ended");
            loop_shared.alive.store(false, Ordering::SeqCst);
            loop_shared.bump();
        });
        shared.forward(ProgressKind::Begin { title: format!("starting {name}") });
        let server = Self {
            spec,
            root,
            socket,
            shared,
            next_id: Mutex::new(0),
            docs: Mutex::new(HashMap::new()),
            encoding: PositionEncoding::Utf16,
            capabilities: Value::Null,
            child: tokio::sync::Mutex::new(child),
            pid,
            timeout,
            ready_wait: ready_wait.max(timeout),
            version_counter: AtomicI32::new(0),
            memo: Mutex::new(HashMap::new()),
            disk_epoch: AtomicU64::new(0),
        };
        let result = server.initialize().await;
        server.shared.forward(ProgressKind::End);
        let (encoding, capabilities) = match result {
            Ok(done) => done,
            Err(err) => {
                server.kill().await;
                return Err(err);
            }
        };
        Ok(Arc::new(Self { encoding, capabilities, ..server }))
    }

    async fn initialize(&self) -> Result<(PositionEncoding, Value), ServerError> {
        let root_uri = Url::from_file_path(&self.root).ok();
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": { "name": "tandem", "version": env!("CARGO_PKG_VERSION") },
            "rootUri": root_uri,
            "rootPath": self.root,
            "workspaceFolders": [{ "uri": root_uri, "name": "root" }],
            "initializationOptions": self.spec.initialization_options,
            "capabilities": {
                "general": { "positionEncodings": ["utf-8", "utf-16"] },
                "window": { "workDoneProgress": true },
                "workspace": {
                    "configuration": true,
                    "workspaceFolders": true,
                    "symbol": { "dynamicRegistration": false },
                    "didChangeWatchedFiles": { "dynamicRegistration": true },
                },
                "textDocument": {
                    "synchronization": { "didSave": true, "dynamicRegistration": false },
                    "publishDiagnostics": { "versionSupport": true, "relatedInformation": false },
                    // Plain locations: a link's extra ranges are not used, and asking for
                    // them costs typescript-language-server 0.5–2 ms per definition.
                    "definition": { "linkSupport": false },
                    "implementation": { "linkSupport": false },
                    "references": {},
                    "hover": { "contentFormat": ["markdown", "plaintext"] },
                    "documentSymbol": { "hierarchicalDocumentSymbolSupport": true },
                    "rename": { "prepareSupport": false },
                    "callHierarchy": {},
                },
                "experimental": { "serverStatusNotification": true },
            },
        });
        let result = self.request::<raw::Initialize>(params, self.timeout.max(Duration::from_secs(1))).await?;
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let encoding = match capabilities.get("positionEncoding").and_then(Value::as_str) {
            Some("utf-8") => PositionEncoding::Utf8,
            Some("utf-32") => PositionEncoding::Utf32,
            _ => PositionEncoding::Utf16,
        };
        self.socket
            .notify::<notif::Initialized>(lsp::InitializedParams {})
            .map_err(|_| ServerError::Died { server: self.spec.name.clone() })?;
        // Servers that take settings pushed (pylsp) get them before any document.
        if !self.spec.settings.is_null() {
            self.socket
                .notify::<notif::DidChangeConfiguration>(lsp::DidChangeConfigurationParams {
                    settings: self.spec.settings.clone(),
                })
                .map_err(|_| ServerError::Died { server: self.spec.name.clone() })?;
        }
        tracing::info!(server = %self.spec.name, ?encoding, "initialized");
        Ok((encoding, capabilities))
    }

    /// The server declared the capability for `method` (unknown methods count as offered).
    pub fn supports(&self, method: &str) -> bool {
        let key = match method {
            "textDocument/definition" => "definitionProvider",
            "textDocument/implementation" => "implementationProvider",
            "textDocument/references" => "referencesProvider",
            "textDocument/hover" => "hoverProvider",
            "textDocument/documentSymbol" => "documentSymbolProvider",
            "workspace/symbol" => "workspaceSymbolProvider",
            "textDocument/prepareCallHierarchy" => "callHierarchyProvider",
            "textDocument/rename" => "renameProvider",
            _ => return true,
        };
        !matches!(self.capabilities.get(key), None | Some(Value::Null | Value::Bool(false)))
    }

    /// The process is still there.
    pub fn alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// One more request answered only busy: whether the server is stuck, [`STUCK_AFTER`] such
    /// requests in a row while it says its project is loaded (or says nothing about loading).
    /// rust-analyzer has been seen in that state: a panic in one revision of its database made
    /// it answer `content modified` to everything until something changed, which nothing does
    /// while the model only asks.
    fn stuck(&self) -> bool {
        if !self.loaded() {
            // Loading: busy is what it is meant to say.
            self.shared.busy_streak.store(0, Ordering::SeqCst);
            return false;
        }
        self.shared.busy_streak.fetch_add(1, Ordering::SeqCst) + 1 >= STUCK_AFTER
    }

    /// The server says its project is loaded (quiescent), or says nothing about loading.
    fn loaded(&self) -> bool {
        !self.spec.quiescence || self.shared.quiescent.load(Ordering::SeqCst)
    }

    fn died(&self) -> ServerError {
        ServerError::Died { server: self.spec.name.clone() }
    }

    /// Sends a request and waits at most `timeout`; on timeout sends `$/cancelRequest` for it.
    /// Busy answers (ContentModified, ServerCancelled) are retried a few times.
    pub async fn request<R>(&self, params: R::Params, timeout: Duration) -> Result<R::Result, ServerError>
    where
        R: Request,
        R::Params: Clone,
    {
        let deadline = tokio::time::Instant::now() + timeout;
        let mut attempts = 0;
        loop {
            if !self.alive() {
                return Err(self.died());
            }
            // The main loop numbers outgoing requests 0, 1, 2, ... in the order they reach it:
            // count under a lock and make the request reach it (first poll) before unlocking.
            let asked = std::time::Instant::now();
            let (id, mut fut, early) = {
                let mut next = lock(&self.next_id);
                let id = *next;
                *next += 1;
                let mut fut = Box::pin(self.socket.request::<R>(params.clone()));
                let early = poll_once(fut.as_mut());
                (id, fut, early)
            };
            tracing::debug!(server = %self.spec.name, method = R::METHOD, id, "request");
            let outcome = match early {
                Poll::Ready(result) => Ok(result),
                Poll::Pending => tokio::time::timeout_at(deadline, &mut fut).await,
            };
            let answer = match outcome {
                Ok(answer) => answer,
                Err(_) => {
                    // Dropping the future cancels nothing on the server: it is told with `$/cancelRequest`.
                    self.socket.notify::<notif::Cancel>(lsp::CancelParams { id: NumberOrString::Number(id) }).ok();
                    tracing::warn!(server = %self.spec.name, method = R::METHOD, id, "timed out; cancelled");
                    return Err(ServerError::Timeout {
                        server: self.spec.name.clone(),
                        method: R::METHOD,
                        secs: timeout.as_secs_f64(),
                    });
                }
            };
            tracing::debug!(server = %self.spec.name, method = R::METHOD, id, took_us = asked.elapsed().as_micros() as u64, "answered");
            let busy = |err: &async_lsp::ResponseError| {
                err.code == ErrorCode::CONTENT_MODIFIED || err.code == ErrorCode::SERVER_CANCELLED
            };
            match answer {
                Ok(result) => {
                    self.shared.busy_streak.store(0, Ordering::SeqCst);
                    return Ok(result);
                }
                Err(async_lsp::Error::Response(err))
                    if busy(&err) && attempts < 5 && tokio::time::Instant::now() < deadline =>
                {
                    attempts += 1;
                    tokio::time::sleep(Duration::from_millis(100 * attempts)).await;
                }
                Err(async_lsp::Error::Response(err)) if busy(&err) && self.stuck() => {
                    tracing::warn!(
                        server = %self.spec.name,
                        method = R::METHOD,
                        "answered busy {STUCK_AFTER} times in a row, each after its retries, with its project loaded; restarting it"
                    );
                    self.shared.alive.store(false, Ordering::SeqCst);
                    self.kill().await;
                    return Err(self.died());
                }
                Err(async_lsp::Error::Response(err)) if busy(&err) && tokio::time::Instant::now() < deadline => {
                    // Still busy, within the timeout: the model's call should get an answer,
                    // not "busy". Loading again (rust-analyzer, when a build script's output
                    // arrives after it first said it was quiescent): wait until it has loaded.
                    // Loaded: another round of retries, until it answers or is found stuck
                    // (`wait_ready` returns at once).
                    self.wait_ready(deadline).await;
                    attempts = 0;
                }
                Err(async_lsp::Error::Response(err)) => {
                    return Err(ServerError::Response {
                        server: self.spec.name.clone(),
                        method: R::METHOD,
                        message: err.message,
                    });
                }
                Err(async_lsp::Error::ServiceStopped | async_lsp::Error::Eof | async_lsp::Error::Io(_)) => {
                    return Err(self.died());
                }
                Err(other) => {
                    return Err(ServerError::Response {
                        server: self.spec.name.clone(),
                        method: R::METHOD,
                        message: other.to_string(),
                    });
                }
            }
        }
    }

    /// Default-timeout request.
    pub async fn ask<R>(&self, params: R::Params) -> Result<R::Result, ServerError>
    where
        R: Request,
        R::Params: Clone,
    {
        self.request::<R>(params, self.timeout).await
    }

    fn notify<N: Notification>(&self, params: N::Params) -> Result<(), ServerError> {
        self.socket.notify::<N>(params).map_err(|_| self.died())
    }

    /// Waits until the server is ready for queries (rust-analyzer: quiescent), at most until
    /// `deadline`. Returns whether it is.
    pub async fn wait_ready(&self, deadline: tokio::time::Instant) -> bool {
        if !self.spec.quiescence {
            return true;
        }
        self.wait_until(deadline, |s| s.quiescent.load(Ordering::SeqCst)).await
    }

    /// Waits (capped) until the server has published diagnostics for `uri` at least once: how
    /// typescript-language-server and pyright show that they loaded the file's project (before
    /// that, tsserver answers queries with nothing).
    pub async fn wait_analyzed(&self, uri: &Url, deadline: tokio::time::Instant) -> bool {
        if matches!(self.spec.diagnostics, DiagnosticsMode::FirstPublish | DiagnosticsMode::Versioned) {
            // Up to the request's own deadline: on a loaded machine tsserver takes longer than
            // any fixed cap, and a query before it has loaded answers nothing.
            return self.wait_until(deadline, |s| lock(&s.diagnostics).contains_key(uri)).await;
        }
        true
    }

    /// A query about `uri`, once the server has loaded what it needs (see [`Server::wait_ready`]
    /// and [`Server::wait_analyzed`]), waiting at most the request timeout for that. When it
    /// had not loaded by then and answers with nothing (`null` or `[]`), that says nothing
    /// ("not loaded yet" looks the same as "there is none"): the caller gets
    /// [`ServerError::NotReady`], to ask again, rather than an empty answer.
    pub async fn ask_loaded<R>(&self, uri: &Url, params: serde_json::Value) -> Result<serde_json::Value, ServerError>
    where
        R: Request<Params = serde_json::Value, Result = serde_json::Value>,
    {
        let ready = self.wait_ready(tokio::time::Instant::now() + self.ready_wait).await;
        let deadline = tokio::time::Instant::now() + self.timeout;
        let loaded = self.wait_analyzed(uri, deadline).await && ready;
        let answer = self.ask::<R>(params).await?;
        let empty = answer.is_null() || answer.as_array().is_some_and(Vec::is_empty);
        if loaded || !empty {
            return Ok(answer);
        }
        Err(ServerError::NotReady {
            server: self.spec.name.clone(),
            method: R::METHOD,
            secs: self.timeout.as_secs_f64(),
        })
    }

    async fn wait_until(&self, deadline: tokio::time::Instant, done: impl Fn(&Shared) -> bool) -> bool {
        let mut rx = self.shared.changed.subscribe();
        loop {
            if done(&self.shared) {
                return true;
            }
            if !self.alive() {
                return false;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => {}
                _ => return done(&self.shared),
            }
        }
    }

    /// The text of `path` as the person sees it: the editor's buffer, else the disk.
    pub fn current_text(cache: &BufferCache, path: &Path) -> Result<Rope, ServerError> {
        match cache.get(path) {
            Some(doc) => Ok(doc.rope),
            None => disk_text(path).map(|text| Rope::from_str(&text)),
        }
    }

    /// [`Server::current_text`]'s lines.
    pub fn current_lines(cache: &BufferCache, path: &Path) -> Result<Lines, ServerError> {
        match cache.get(path) {
            Some(doc) => Ok(Lines::new(doc.rope.to_string())),
            None => disk_text(path).map(Lines::new),
        }
    }

    /// Brings the server's copy of `path` up to date (didOpen, or didChange with the full text
    /// when it changed). Returns the URI, the version and the text. A file read from disk that
    /// the server already has is not made into a rope again: the one sent is returned.
    pub fn sync(&self, cache: &BufferCache, path: &Path) -> Result<(Url, i32, Rope), ServerError> {
        match cache.get(path) {
            Some(doc) => self.send_text(path, doc.rope),
            None => self.send(path, disk_text(path)?, Rope::from_str),
        }
    }

    /// Brings the server's copy of `path` to `rope` (didOpen, or didChange with the full text
    /// when it differs). Returns the URI, the version and the text.
    pub fn send_text(&self, path: &Path, rope: Rope) -> Result<(Url, i32, Rope), ServerError> {
        self.send(path, rope.to_string(), |_| rope)
    }

    /// [`Server::send_text`] of `text`, whose rope `rope` makes from it when it is needed.
    fn send(
        &self,
        path: &Path,
        text: String,
        rope: impl FnOnce(&str) -> Rope,
    ) -> Result<(Url, i32, Rope), ServerError> {
        let uri = Url::from_file_path(path).map_err(|()| ServerError::File(format!("bad path {}", path.display())))?;
        let hash = ContentHash::of(text.as_bytes());
        let mut docs = lock(&self.docs);
        let sent_seq = self.shared.seq.load(Ordering::SeqCst);
        let world_at_send = memo::world_except(&docs, path, self.disk_epoch.load(Ordering::SeqCst));
        match docs.get_mut(path) {
            Some(doc) if doc.hash == hash => Ok((uri, doc.version, doc.rope.clone())),
            Some(doc) => {
                let rope = rope(&text);
                doc.version = self.version_counter.fetch_add(1, Ordering::SeqCst) + 1;
                doc.hash = hash;
                doc.rope = rope.clone();
                doc.sent_seq = sent_seq;
                doc.saved_flychecks = None;
                doc.world_at_send = world_at_send;
                let version = doc.version;
                tracing::debug!(server = %self.spec.name, path = %path.display(), version, "didChange");
                self.notify::<DidChangeTextDocument>(lsp::DidChangeTextDocumentParams {
                    text_document: lsp::VersionedTextDocumentIdentifier { uri: uri.clone(), version },
                    content_changes: vec![lsp::TextDocumentContentChangeEvent {
                        range: None,
                        range_length: None,
                        text,
                    }],
                })?;
                Ok((uri, version, rope))
            }
            None => {
                let rope = rope(&text);
                let version = self.version_counter.fetch_add(1, Ordering::SeqCst) + 1;
                let extension = path.extension().and_then(|e| e.to_str()).unwrap_or_default();
                self.notify::<DidOpenTextDocument>(lsp::DidOpenTextDocumentParams {
                    text_document: lsp::TextDocumentItem {
                        uri: uri.clone(),
                        language_id: language_id(extension).to_owned(),
                        version,
                        text,
                    },
                })?;
                docs.insert(
                    path.to_path_buf(),
                    SentDoc { version, hash, rope: rope.clone(), sent_seq, saved_flychecks: None, world_at_send },
                );
                Ok((uri, version, rope))
            }
        }
    }

    /// Re-sends every document after a restart.
    pub fn reopen(&self, cache: &BufferCache, paths: &[PathBuf]) {
        for path in paths {
            if let Err(err) = self.sync(cache, path) {
                tracing::debug!(server = %self.spec.name, "not reopened: {err}");
            }
        }
    }

    /// The documents this server has open.
    pub fn open_paths(&self) -> Vec<PathBuf> {
        lock(&self.docs).keys().cloned().collect()
    }

    /// Tells the server that files changed on disk (`workspace/didChangeWatchedFiles`).
    pub fn files_changed(&self, changes: &[(PathBuf, DiskChange)]) {
        if changes.iter().any(|(path, _)| !self.is_open(path)) {
            self.disk_epoch.fetch_add(1, Ordering::SeqCst);
        }
        let changes: Vec<lsp::FileEvent> = changes
            .iter()
            .filter_map(|(path, change)| {
                let typ = match change {
                    DiskChange::Created => lsp::FileChangeType::CREATED,
                    DiskChange::Changed => lsp::FileChangeType::CHANGED,
                    DiskChange::Deleted => lsp::FileChangeType::DELETED,
                };
                Url::from_file_path(path).ok().map(|uri| lsp::FileEvent { uri, typ })
            })
            .collect();
        if !changes.is_empty() {
            self.notify::<DidChangeWatchedFiles>(lsp::DidChangeWatchedFilesParams { changes }).ok();
        }
    }

    /// Waits (until `deadline`) for diagnostics of `path` that are about its current text, as
    /// this server's mode tells. `Ok(None)` when the wait ran out.
    pub async fn fresh_diagnostics(
        &self,
        cache: &BufferCache,
        path: &Path,
        deadline: tokio::time::Instant,
    ) -> Result<Option<(Vec<lsp::Diagnostic>, Rope)>, ServerError> {
        let (uri, version, rope) = self.sync(cache, path)?;
        if !self.wait_fresh(path, &uri, version, deadline).await? {
            return Ok(None);
        }
        Ok(Some((self.published(&uri), rope)))
    }

    /// The diagnostics the server last published for `uri`.
    pub fn published(&self, uri: &Url) -> Vec<lsp::Diagnostic> {
        lock(&self.shared.diagnostics).get(uri).map(|p| p.items.clone()).unwrap_or_default()
    }

    /// Waits (until `deadline`) for diagnostics of `path` that are about the `version` just
    /// sent, as this server's mode tells. `false` when the wait ran out.
    pub async fn wait_fresh(
        &self,
        path: &Path,
        uri: &Url,
        version: i32,
        deadline: tokio::time::Instant,
    ) -> Result<bool, ServerError> {
        let got = match self.spec.diagnostics {
            DiagnosticsMode::None => return Ok(true),
            DiagnosticsMode::Versioned => {
                let uri = uri.clone();
                self.wait_until(deadline, move |s| {
                    lock(&s.diagnostics).get(&uri).is_some_and(|p| p.version.is_some_and(|v| v >= version))
                })
                .await
            }
            DiagnosticsMode::FirstPublish => {
                let sent_seq = lock(&self.docs).get(path).map_or(0, |d| d.sent_seq);
                let fresh = |s: &Shared| lock(&s.diagnostics).get(uri).is_some_and(|p| p.seq > sent_seq);
                // typescript-language-server publishes nothing when a file's diagnostics did not
                // change: once it has published for the file, wait only a short while (the result
                // is then "not ready", never "no errors").
                let published_before = lock(&self.shared.diagnostics).contains_key(uri);
                let deadline = if published_before {
                    deadline.min(tokio::time::Instant::now() + FIRST_PUBLISH_WAIT)
                } else {
                    deadline
                };
                let got = self.wait_until(deadline, fresh).await;
                if got {
                    // Debounce: later publishes for the same change replace the first.
                    loop {
                        let seen = self.shared.seq.load(Ordering::SeqCst);
                        let quiet = tokio::time::Instant::now() + Duration::from_millis(150);
                        let more = self.wait_until(quiet.min(deadline), |s| s.seq.load(Ordering::SeqCst) > seen).await;
                        if !more || tokio::time::Instant::now() >= deadline {
                            break;
                        }
                    }
                }
                got
            }
            DiagnosticsMode::Flycheck => {
                if !self.wait_ready(deadline).await {
                    return Ok(false);
                }
                // The check that answers is one that began after the save: one running at the
                // save (its begin counted already) checks the files as they were. Runs end in
                // the order they began, so that one has ended once the ends pass the begins
                // counted at the save.
                let saved = lock(&self.docs).get(path).and_then(|d| d.saved_flychecks);
                let target = match saved {
                    Some(count) => count + 1,
                    None => {
                        let before = self.shared.flychecks_begun.load(Ordering::SeqCst);
                        if let Some(doc) = lock(&self.docs).get_mut(path) {
                            doc.saved_flychecks = Some(before);
                        }
                        self.notify::<DidSaveTextDocument>(lsp::DidSaveTextDocumentParams {
                            text_document: lsp::TextDocumentIdentifier { uri: uri.clone() },
                            text: None,
                        })?;
                        before + 1
                    }
                };
                let got = self.wait_until(deadline, |s| s.flychecks_done.load(Ordering::SeqCst) >= target).await;
                if got {
                    // The check's diagnostics are published around its end.
                    let seen = self.shared.seq.load(Ordering::SeqCst);
                    let settle = tokio::time::Instant::now() + Duration::from_millis(200);
                    self.wait_until(settle.min(deadline), |s| s.seq.load(Ordering::SeqCst) > seen).await;
                }
                // A check of the saved files: not about one document's text.
                return Ok(got);
            }
        };
        if got {
            self.remember(path, uri, version);
        }
        Ok(got)
    }

    /// `shutdown`, `exit`, then waits briefly for the process; kills it if it stays.
    pub async fn shutdown(&self) {
        if self.alive() {
            let asked = self.request::<raw::Shutdown>(Value::Null, Duration::from_secs(2)).await;
            if asked.is_ok() {
                self.notify::<notif::Exit>(()).ok();
            }
        }
        let mut child = self.child.lock().await;
        if tokio::time::timeout(Duration::from_secs(2), child.wait()).await.is_err() {
            tracing::warn!(server = %self.spec.name, "did not exit after `exit`; killing it");
            child.kill().await.ok();
        }
    }

    async fn kill(&self) {
        self.child.lock().await.kill().await.ok();
    }
}

/// The text of `path` on disk (a binary, missing or unreadable file is an error).
fn disk_text(path: &Path) -> Result<String, ServerError> {
    match tandem_text::disk::read(path, 64 * 1024 * 1024) {
        Ok(tandem_text::disk::ReadOutcome::File(file)) => match file.decoded {
            tandem_text::Decoded::Text { text, .. } => Ok(text),
            tandem_text::Decoded::Binary { .. } => {
                Err(ServerError::File(format!("{} is a binary file", path.display())))
            }
        },
        Ok(_) => Err(ServerError::File(format!("{} does not exist or is not a file", path.display()))),
        Err(err) => Err(ServerError::File(err.to_string())),
    }
}
