//! `tandem lsp`: the LSP front door (tower-lsp-server over stdio).
//!
//! Text sync feeds the buffer cache; `tandem/tools/list` and `tandem/tools/call` run tools with
//! the authority of the person at the editor. Edits to open documents go back to the editor as
//! `workspace/applyEdit` followed by `tandem/document/save` (see [`LspEditor`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tandem_agent::{Agent, AgentError, SessionClient};
use tandem_lsp_proxy::{LspProxy, ProgressEvent, ProgressKind};
use tandem_protocol::{
    AskUserParams, AskUserResult, DocumentSaveParams, DocumentSaveResult, InitializationOptions, ModeId,
    PROTOCOL_VERSION, RequestPermissionParams, RequestPermissionResult, SessionCancelParams, SessionListParams,
    SessionListResult, SessionLoadParams, SessionLoadResult, SessionNewParams, SessionNewResult, SessionNotification,
    SessionPromptParams, SessionPromptResult, SessionSetModeParams, SessionUpdate, TandemCapabilities, ToolResult,
    ToolsCallParams, ToolsListParams, ToolsListResult, methods,
};
use tandem_text::{BufferCache, ContentChange, Position, PositionEncoding};
use tandem_tools::{CodeIntel, DocumentEdit, EditorClient, Registry, ToolContext, Workspace};
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Result};
use tower_lsp_server::ls_types::{
    self as lsp, InitializeParams, InitializeResult, OneOf, PositionEncodingKind, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, Uri,
};
use tower_lsp_server::{Client, LanguageServer, LspService, Server};

use crate::config::Config;

/// How long `session/new` waits for MCP servers that are still connecting.
const MCP_READY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// How long the editor gets to answer `workspace/applyEdit` or `tandem/document/save`.
const EDITOR_REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// Concurrent requests in flight. Generous: a tool call that waits for the editor's
/// `didChange` must not keep that notification queued behind it.
const MAX_CONCURRENCY: usize = 64;

/// Runs the server until `exit` or the end of stdin.
pub async fn serve() -> ExitCode {
    // The language servers outlive the LSP service (which is dropped when the transport
    // ends): shut them down here, whichever way the session ended.
    let servers: Arc<Mutex<Option<Arc<LspProxy>>>> = Arc::default();
    let servers_of_backend = Arc::clone(&servers);
    let (service, socket) = LspService::build(move |client| Backend::new(client, servers_of_backend))
        .custom_method(methods::TOOLS_LIST, Backend::tools_list)
        .custom_method(methods::TOOLS_CALL, Backend::tools_call)
        .custom_method(methods::SESSION_NEW, Backend::session_new)
        .custom_method(methods::SESSION_PROMPT, Backend::session_prompt)
        .custom_method(methods::SESSION_CANCEL, Backend::session_cancel)
        .custom_method(methods::SESSION_SET_MODE, Backend::session_set_mode)
        .custom_method(methods::SESSION_LIST, Backend::session_list)
        .custom_method(methods::SESSION_LOAD, Backend::session_load)
        .custom_method(methods::SESSION_COMPACT, Backend::session_compact)
        .finish();
    // stdin goes through the guard, so one malformed frame cannot end the transport.
    let (guarded, input) = tokio::io::duplex(256 * 1024);
    let guard = crate::stdin_guard::run(crate::stdio::stdin(), guarded);
    let server = Server::new(input, crate::stdio::stdout(), socket).concurrency_level(MAX_CONCURRENCY).serve(service);
    // Guard and server in one task on a worker thread: a message then crosses no thread
    // boundary between stdin, the guard and the server (each crossing is a futex wake-up).
    let both = async move {
        tokio::pin!(guard, server);
        tokio::select! {
            () = &mut server => {}
            // stdin ended: the guard dropped its end of the pipe, so the server sees the end
            // of input too; let it finish.
            () = &mut guard => server.await,
        }
    };
    let served = tokio::spawn(both).await;
    let proxy = servers.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(proxy) = proxy {
        proxy.shutdown().await;
    }
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("the LSP server task failed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// What exists once `initialize` has run.
struct Ready {
    workspace: Arc<Workspace>,
    registry: Arc<Registry>,
    /// MCP servers of the workspace (their tools are in `registry`).
    mcp: Arc<tandem_mcp::McpManager>,
    editor: Arc<LspEditor>,
    /// The language servers (the `lsp` tool, diagnostics after edits).
    intel: Option<Arc<LspProxy>>,
    /// The sessions, or why there are none (an invalid provider configuration).
    agent: std::result::Result<Arc<Agent>, String>,
}

struct Backend {
    client: Client,
    cache: Arc<BufferCache>,
    /// The editor's URI for each open document's canonical path, so edits go back under the
    /// name the editor knows.
    uris: Arc<Mutex<HashMap<PathBuf, Uri>>>,
    ready: RwLock<Option<Arc<Ready>>>,
    encoding: RwLock<PositionEncoding>,
    /// Where `serve` finds the proxy to shut it down.
    servers: Arc<Mutex<Option<Arc<LspProxy>>>>,
}

/// Lets the transport write the updates already sent before the response that follows them.
///
/// tower-lsp-server writes responses and server-to-client messages from two queues merged
/// round-robin, so a response can overtake notifications queued just before it. A session's
/// updates must reach the editor before the response that ends the turn (ACP's rule); the
/// writer runs as soon as it is woken, so a short pause is enough in practice.
async fn flush_updates() {
    tokio::time::sleep(Duration::from_millis(25)).await;
}

fn agent_error(err: AgentError) -> Error {
    Error::invalid_params(err.to_string())
}

fn internal(message: impl Into<String>) -> Error {
    Error { code: ErrorCode::InternalError, message: message.into().into(), data: None }
}

/// The path the cache uses for `uri`: canonical when the file exists, so it matches the
/// resolved paths tools use; `None` for non-file URIs (untitled buffers and the like).
fn cache_path(uri: &Uri) -> Option<PathBuf> {
    let path = uri.to_file_path()?.into_owned();
    if let Ok(real) = path.canonicalize() {
        return Some(real);
    }
    // A buffer not yet saved: its directory may still be reached through a symlink.
    match (path.parent().and_then(|p| p.canonicalize().ok()), path.file_name()) {
        (Some(dir), Some(name)) => Some(dir.join(name)),
        _ => Some(path),
    }
}

impl Backend {
    fn new(client: Client, servers: Arc<Mutex<Option<Arc<LspProxy>>>>) -> Self {
        Self {
            servers,
            client,
            cache: Arc::new(BufferCache::new()),
            uris: Arc::new(Mutex::new(HashMap::new())),
            ready: RwLock::new(None),
            encoding: RwLock::new(PositionEncoding::Utf16),
        }
    }

    fn ready(&self) -> Result<Arc<Ready>> {
        self.ready.read().unwrap_or_else(PoisonError::into_inner).clone().ok_or_else(|| Error {
            code: ErrorCode::ServerError(-32002),
            message: "initialize first".into(),
            data: None,
        })
    }

    fn encoding(&self) -> PositionEncoding {
        *self.encoding.read().unwrap_or_else(PoisonError::into_inner)
    }

    async fn tools_list(&self, _params: ToolsListParams) -> Result<ToolsListResult> {
        let ready = self.ready()?;
        Ok(ToolsListResult { tools: ready.registry.infos(), profile: ready.registry.config().profile.to_string() })
    }

    async fn tools_call(&self, params: ToolsCallParams) -> Result<ToolResult> {
        let ready = self.ready()?;
        let mut ctx = ToolContext::new(Arc::clone(&ready.workspace), Arc::clone(&self.cache));
        ctx.session_id = params.session_id;
        ctx.editor = Some(Arc::clone(&ready.editor) as Arc<dyn EditorClient>);
        ctx.intel = ready.intel.clone().map(|proxy| proxy as Arc<dyn CodeIntel>);
        let span = tracing::info_span!("tool", name = %params.name);
        let _enter = span.enter();
        // A task of its own: file work blocks its worker thread (block_in_place), and must not
        // block this request loop, which has to keep reading (the editor's didChange among others).
        let registry = Arc::clone(&ready.registry);
        let call = tokio::spawn(async move { registry.call(&params.name, params.arguments, ctx).await });
        match call.await {
            Ok(result) => result.map_err(|err| Error::invalid_params(err.to_string())),
            Err(err) => Err(internal(format!("the tool call was lost: {err}"))),
        }
    }

    fn agent(&self) -> Result<Arc<Agent>> {
        self.ready()?.agent.clone().map_err(Error::invalid_params)
    }

    async fn session_new(&self, params: SessionNewParams) -> Result<SessionNewResult> {
        let agent = self.agent()?;
        let mcp = Arc::clone(&self.ready()?.mcp);
        // Servers the editor passes join the process's; then the session's first turn waits
        // (bounded) for the servers to list their tools.
        if let Some(servers) = &params.mcp_servers {
            for warning in mcp.add_session_servers(servers).await {
                tracing::warn!("{warning}");
            }
        }
        mcp.ready(MCP_READY_WAIT).await;
        agent.new_session(params).map_err(agent_error)
    }

    async fn session_prompt(&self, params: SessionPromptParams) -> Result<SessionPromptResult> {
        let agent = self.agent()?;
        // A task of its own, as for tool calls: the turn's file work must not block this loop.
        let result = match tokio::spawn(async move { agent.prompt(params).await }).await {
            Ok(result) => result.map_err(agent_error),
            Err(err) => Err(internal(format!("the turn was lost: {err}"))),
        };
        flush_updates().await;
        result
    }

    async fn session_cancel(&self, params: SessionCancelParams) {
        match self.agent() {
            Ok(agent) => agent.cancel(&params.session_id),
            Err(err) => tracing::warn!("cancel: {}", err.message),
        }
    }

    async fn session_set_mode(&self, params: SessionSetModeParams) -> Result<Value> {
        self.agent()?.set_mode(params).await.map_err(agent_error)?;
        flush_updates().await;
        Ok(serde_json::json!({}))
    }

    async fn session_list(&self, params: SessionListParams) -> Result<SessionListResult> {
        self.agent()?.list(params).map_err(agent_error)
    }

    async fn session_load(&self, params: SessionLoadParams) -> Result<SessionLoadResult> {
        let agent = self.agent()?;
        let result = match tokio::spawn(async move { agent.load(params).await }).await {
            Ok(result) => result.map_err(agent_error),
            Err(err) => Err(internal(format!("loading the session failed: {err}"))),
        };
        flush_updates().await;
        result
    }

    fn workspace_root(params: &InitializeParams) -> PathBuf {
        #[expect(deprecated, reason = "root_uri is what older clients (Neovim 0.7) send")]
        let root_uri = params.root_uri.as_ref();
        params
            .workspace_folders
            .as_ref()
            .and_then(|folders| folders.first())
            .map(|folder| &folder.uri)
            .or(root_uri)
            .and_then(|uri| uri.to_file_path().map(|p| p.into_owned()))
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_else(|| PathBuf::from("/"))
    }
}

impl LanguageServer for Backend {
    async fn initialize(&self, params: InitializeParams) -> Result<InitializeResult> {
        let root = Self::workspace_root(&params);
        let init: Option<InitializationOptions> = match params.initialization_options.clone() {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                serde_json::from_value(value)
                    .map_err(|err| Error::invalid_params(format!("initializationOptions: {err}")))?,
            ),
        };
        let config = Config::load(&root, init.as_ref()).map_err(|err| Error::invalid_params(format!("{err:#}")))?;
        for warning in &config.warnings {
            tracing::warn!("{warning}");
        }
        let workspace = Workspace::new(&root, &config.allowed_paths)
            .map_err(|err| internal(format!("cannot open the workspace at {}: {err}", root.display())))?;
        tracing::info!(root = %workspace.root().display(), profile = %config.tools.profile, "initialize");

        let offered =
            params.capabilities.general.as_ref().and_then(|g| g.position_encodings.clone()).unwrap_or_default();
        let (encoding, kind) = if offered.contains(&PositionEncodingKind::UTF8) {
            (PositionEncoding::Utf8, PositionEncodingKind::UTF8)
        } else {
            (PositionEncoding::Utf16, PositionEncodingKind::UTF16)
        };
        *self.encoding.write().unwrap_or_else(PoisonError::into_inner) = encoding;

        let workspace_caps = params.capabilities.workspace.as_ref();
        let document_changes =
            workspace_caps.and_then(|w| w.workspace_edit.as_ref()).and_then(|e| e.document_changes).unwrap_or(false);
        let agent_config = config.provider_settings().map(|p| config.agent_config(p)).map_err(|err| format!("{err:#}"));
        let full_profile = config.tools.profile == tandem_tools::Profile::Full;
        let registry = Arc::new(Registry::builtin(config.tools));
        let mcp = tandem_mcp::McpManager::from_workspace(workspace.root(), Arc::clone(&registry), full_profile);
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        let (progress_tx, progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let intel = match LspProxy::new(
            workspace.root().to_path_buf(),
            Arc::clone(&self.cache),
            &config.lsp,
            progress.then_some(progress_tx),
        ) {
            Ok(proxy) => Some(Arc::new(proxy)),
            Err(err) => {
                tracing::error!("language servers are off: {err}");
                None
            }
        };
        if progress {
            tokio::spawn(forward_progress(self.client.clone(), progress_rx));
        }
        *self.servers.lock().unwrap_or_else(PoisonError::into_inner) = intel.clone();
        let tool_names: Vec<String> = registry.infos().into_iter().map(|t| t.name).collect();
        let editor = Arc::new(LspEditor {
            client: self.client.clone(),
            uris: Arc::clone(&self.uris),
            encoding,
            document_changes,
        });
        let workspace = Arc::new(workspace);
        let agent = agent_config.and_then(|config| {
            Agent::new(
                Arc::clone(&workspace),
                Arc::clone(&self.cache),
                Arc::clone(&registry),
                Some(Arc::clone(&editor) as Arc<dyn EditorClient>),
                intel.clone().map(|proxy| proxy as Arc<dyn CodeIntel>),
                Arc::new(LspSessionClient { client: self.client.clone() }),
                config,
            )
            .map_err(|err| err.to_string())
        });
        if let Err(err) = &agent {
            tracing::warn!("agent sessions are unavailable: {err}");
        }
        *self.ready.write().unwrap_or_else(PoisonError::into_inner) =
            Some(Arc::new(Ready { workspace, registry, mcp, editor, agent, intel }));

        let tandem =
            TandemCapabilities { version: PROTOCOL_VERSION.to_owned(), tools: tool_names, modes: ModeId::ALL.to_vec() };
        let experimental = serde_json::json!({ "tandem": tandem });
        Ok(InitializeResult {
            capabilities: ServerCapabilities {
                position_encoding: Some(kind),
                text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::INCREMENTAL),
                    save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                    ..Default::default()
                })),
                experimental: Some(experimental),
                ..Default::default()
            },
            server_info: Some(ServerInfo {
                name: "tandem".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            offset_encoding: None,
        })
    }

    async fn shutdown(&self) -> Result<()> {
        tracing::info!("shutdown");
        let proxy = self.servers.lock().unwrap_or_else(PoisonError::into_inner).clone();
        if let Some(proxy) = proxy {
            proxy.shutdown().await;
        }
        Ok(())
    }

    // The sync handlers never await: tower-lsp-server polls handlers concurrently, and a
    // handler that finishes on its first poll keeps the editor's changes in order.
    async fn did_open(&self, params: lsp::DidOpenTextDocumentParams) {
        let doc = params.text_document;
        let Some(path) = cache_path(&doc.uri) else { return };
        tracing::debug!(path = %path.display(), version = doc.version, "didOpen");
        self.uris.lock().unwrap_or_else(PoisonError::into_inner).insert(path.clone(), doc.uri);
        self.cache.open(path, doc.version, doc.language_id, &doc.text);
    }

    async fn did_change(&self, params: lsp::DidChangeTextDocumentParams) {
        let Some(path) = cache_path(&params.text_document.uri) else { return };
        let changes: Vec<ContentChange> = params
            .content_changes
            .into_iter()
            .map(|change| ContentChange {
                range: change.range.map(|r| {
                    (
                        Position { line: r.start.line, character: r.start.character },
                        Position { line: r.end.line, character: r.end.character },
                    )
                }),
                text: change.text,
            })
            .collect();
        if let Err(err) = self.cache.change(&path, params.text_document.version, &changes, self.encoding()) {
            // Out of sync with the editor: forget the buffer so reads fall back to the disk
            // rather than showing the model text the person does not see.
            tracing::error!(path = %path.display(), "didChange could not be applied ({err}); dropping the buffer");
            self.cache.close(&path);
        }
    }

    async fn did_close(&self, params: lsp::DidCloseTextDocumentParams) {
        let Some(path) = cache_path(&params.text_document.uri) else { return };
        self.uris.lock().unwrap_or_else(PoisonError::into_inner).remove(&path);
        self.cache.close(&path);
    }

    async fn did_save(&self, params: lsp::DidSaveTextDocumentParams) {
        tracing::debug!(uri = params.text_document.uri.as_str(), "didSave");
    }
}

/// Forwards the language servers' start-up and work (indexing, checks) to the editor as
/// work-done progress: one token per piece of work, created with
/// `window/workDoneProgress/create`.
async fn forward_progress(client: Client, mut rx: tokio::sync::mpsc::UnboundedReceiver<ProgressEvent>) {
    use lsp::{NumberOrString, ProgressParams, ProgressParamsValue, WorkDoneProgress};
    let mut open: HashMap<String, Vec<NumberOrString>> = HashMap::new();
    let mut next = 0u64;
    while let Some(event) = rx.recv().await {
        let stack = open.entry(event.server.clone()).or_default();
        let (token, value) = match event.kind {
            ProgressKind::Begin { title } => {
                next += 1;
                let token = NumberOrString::String(format!("tandem/lsp/{}/{next}", event.server));
                let create =
                    client.send_request::<lsp::request::WorkDoneProgressCreate>(lsp::WorkDoneProgressCreateParams {
                        token: token.clone(),
                    });
                if !matches!(tokio::time::timeout(Duration::from_secs(5), create).await, Ok(Ok(()))) {
                    continue;
                }
                stack.push(token.clone());
                (token, WorkDoneProgress::Begin(lsp::WorkDoneProgressBegin { title, ..Default::default() }))
            }
            ProgressKind::Report { message } => {
                let Some(token) = stack.last().cloned() else { continue };
                (
                    token,
                    WorkDoneProgress::Report(lsp::WorkDoneProgressReport {
                        message: Some(message),
                        ..Default::default()
                    }),
                )
            }
            ProgressKind::End => {
                let Some(token) = stack.pop() else { continue };
                (token, WorkDoneProgress::End(lsp::WorkDoneProgressEnd { message: None }))
            }
        };
        client
            .send_notification::<lsp::notification::Progress>(ProgressParams {
                token,
                value: ProgressParamsValue::WorkDone(value),
            })
            .await;
    }
}

/// `tandem/session/update`.
enum SessionUpdateNotification {}

impl lsp::notification::Notification for SessionUpdateNotification {
    type Params = SessionNotification;
    const METHOD: &'static str = methods::SESSION_UPDATE;
}

/// `tandem/session/requestPermission`.
enum RequestPermission {}

impl lsp::request::Request for RequestPermission {
    type Params = RequestPermissionParams;
    type Result = RequestPermissionResult;
    const METHOD: &'static str = methods::SESSION_REQUEST_PERMISSION;
}

/// `tandem/session/askUser`.
enum AskUser {}

impl lsp::request::Request for AskUser {
    type Params = AskUserParams;
    type Result = AskUserResult;
    const METHOD: &'static str = methods::SESSION_ASK_USER;
}

/// Sessions as the editor sees them: notifications and permission requests.
struct LspSessionClient {
    client: Client,
}

#[async_trait]
impl SessionClient for LspSessionClient {
    async fn update(&self, session_id: &str, update: SessionUpdate) {
        self.client
            .send_notification::<SessionUpdateNotification>(SessionNotification {
                session_id: session_id.to_owned(),
                update,
            })
            .await;
    }

    async fn request_permission(
        &self,
        params: RequestPermissionParams,
    ) -> std::result::Result<RequestPermissionResult, String> {
        self.client.send_request::<RequestPermission>(params).await.map_err(|err| match err.code {
            ErrorCode::MethodNotFound => "the editor does not implement tandem/session/requestPermission".to_owned(),
            _ => err.message.into_owned(),
        })
    }

    async fn ask_user(&self, params: AskUserParams) -> std::result::Result<AskUserResult, String> {
        self.client.send_request::<AskUser>(params).await.map_err(|err| match err.code {
            ErrorCode::MethodNotFound => "the editor does not implement tandem/session/askUser".to_owned(),
            _ => err.message.into_owned(),
        })
    }
}

/// The editor as tools see it: `workspace/applyEdit` and `tandem/document/save`.
struct LspEditor {
    client: Client,
    uris: Arc<Mutex<HashMap<PathBuf, Uri>>>,
    encoding: PositionEncoding,
    document_changes: bool,
}

impl LspEditor {
    fn uri(&self, path: &Path) -> std::result::Result<Uri, String> {
        if let Some(uri) = self.uris.lock().unwrap_or_else(PoisonError::into_inner).get(path) {
            return Ok(uri.clone());
        }
        Uri::from_file_path(path).ok_or_else(|| format!("cannot make a URI of {}", path.display()))
    }
}

/// `tandem/document/save`.
enum DocumentSave {}

impl lsp::request::Request for DocumentSave {
    type Params = DocumentSaveParams;
    type Result = DocumentSaveResult;
    const METHOD: &'static str = methods::DOCUMENT_SAVE;
}

fn lsp_position(p: Position) -> lsp::Position {
    lsp::Position { line: p.line, character: p.character }
}

#[async_trait]
impl EditorClient for LspEditor {
    fn position_encoding(&self) -> PositionEncoding {
        self.encoding
    }

    async fn apply_edit(&self, edit: DocumentEdit) -> std::result::Result<bool, String> {
        let uri = self.uri(&edit.path)?;
        let text_edit = lsp::TextEdit {
            range: lsp::Range { start: lsp_position(edit.start), end: lsp_position(edit.end) },
            new_text: edit.new_text,
        };
        let workspace_edit = if self.document_changes {
            lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Edits(vec![lsp::TextDocumentEdit {
                    text_document: lsp::OptionalVersionedTextDocumentIdentifier { uri, version: Some(edit.version) },
                    edits: vec![OneOf::Left(text_edit)],
                }])),
                ..Default::default()
            }
        } else {
            lsp::WorkspaceEdit { changes: Some(HashMap::from([(uri, vec![text_edit])])), ..Default::default() }
        };
        match tokio::time::timeout(EDITOR_REQUEST_TIMEOUT, self.client.apply_edit(workspace_edit)).await {
            Err(_) => Err(format!(
                "the editor did not answer workspace/applyEdit within {}s",
                EDITOR_REQUEST_TIMEOUT.as_secs()
            )),
            Ok(Err(err)) => Err(err.message.into_owned()),
            Ok(Ok(response)) => {
                if !response.applied {
                    tracing::warn!(reason = ?response.failure_reason, "editor refused applyEdit");
                }
                Ok(response.applied)
            }
        }
    }

    async fn save(&self, path: &Path) -> std::result::Result<bool, String> {
        let uri = self.uri(path)?;
        let request = self.client.send_request::<DocumentSave>(DocumentSaveParams { uri: uri.as_str().to_owned() });
        match tokio::time::timeout(EDITOR_REQUEST_TIMEOUT, request).await {
            Err(_) => Err("the editor did not answer tandem/document/save in time".to_owned()),
            // An editor without the method cannot save on request: we write the file instead.
            Ok(Err(err)) if err.code == ErrorCode::MethodNotFound => Ok(false),
            Ok(Err(err)) => Err(err.message.into_owned()),
            Ok(Ok(result)) => Ok(result.saved),
        }
    }
}

// `tandem/session/compact`, kept apart from the handlers above.
impl Backend {
    async fn session_compact(
        &self,
        params: tandem_protocol::SessionCompactParams,
    ) -> Result<tandem_protocol::SessionCompactResult> {
        let agent = self.agent()?;
        let result = match tokio::spawn(async move { agent.compact(params).await }).await {
            Ok(result) => result.map_err(agent_error),
            Err(err) => Err(internal(format!("the compaction was lost: {err}"))),
        };
        flush_updates().await;
        result
    }
}
