//! The LSP door's handlers: `initialize`, text sync into the buffer cache, `tandem/tools/*`
//! (tools with the authority of the person at the editor) and `tandem/session/*` (the agent).

use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ls_types::{
    self as lsp, InitializeParams, InitializeResult, PositionEncodingKind, ServerCapabilities, ServerInfo,
    TextDocumentSyncCapability, TextDocumentSyncKind, TextDocumentSyncOptions, Uri,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tandem_agent::{Agent, AgentError};
use tandem_protocol::{
    InitializationOptions, ModeId, PROTOCOL_VERSION, SessionCancelParams, SessionCheckpointsParams, SessionListParams,
    SessionLoadParams, SessionNewParams, SessionPromptParams, SessionRestoreParams, SessionSetModeParams,
    TandemCapabilities, ToolGroup, ToolResult, ToolsCallParams, ToolsListParams, ToolsListResult, methods,
};
use tandem_text::{BufferCache, ContentChange, Position, PositionEncoding};
use tandem_tools::EditorClient;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use super::editor::{LspEditor, LspSessionClient, forward_progress};
use crate::rpc::{Connection, RpcError, WriteJson};
use crate::workbench::{Mcp, Options, Root, Workbench, WorkbenchError};

/// How long `session/new` waits for MCP servers that are still connecting.
const MCP_READY_WAIT: Duration = Duration::from_secs(10);

/// A request's result: a tool's goes out as it is, without a `Value` made of it first (a `read`
/// result carries the whole text it read).
pub enum Answer {
    Json(Value),
    Tool(ToolResult),
}

impl WriteJson for Answer {
    fn write_json(&self, out: &mut Vec<u8>) {
        match self {
            Self::Json(value) => value.write_json(out),
            Self::Tool(result) => result.write_json(out),
        }
    }

    fn size_hint(&self) -> usize {
        match self {
            Self::Json(_) => 0,
            Self::Tool(result) => result.size_hint(),
        }
    }
}

/// What exists once `initialize` has run.
struct Ready {
    /// The project: workspace, tools, MCP servers, language servers.
    bench: Workbench,
    editor: Arc<LspEditor>,
    /// The sessions, or why there are none (an invalid provider configuration).
    agent: Result<Arc<Agent>, String>,
    /// The editor's `initializationOptions`, for the workbenches of worktrees.
    init: Option<InitializationOptions>,
}

/// The state behind the handlers.
pub struct Backend {
    conn: Arc<Connection>,
    cache: Arc<BufferCache>,
    /// The editor's URI for each open document's canonical path, so edits go back under the
    /// name the editor knows.
    uris: Arc<Mutex<HashMap<PathBuf, Uri>>>,
    ready: RwLock<Option<Arc<Ready>>>,
    encoding: RwLock<PositionEncoding>,
    /// Sessions started in an agent worktree: the worktrees opened so far, by name.
    places: super::worktrees::Places,
}

/// Params of type `T`; absent params read as `{}`.
pub fn parse<T: DeserializeOwned>(params: Value) -> Result<T, RpcError> {
    let params = if params.is_null() { Value::Object(serde_json::Map::new()) } else { params };
    serde_json::from_value(params).map_err(|err| RpcError::invalid_params(format!("invalid params: {err}")))
}

fn to_json(result: impl Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(result).map_err(|err| RpcError::internal(format!("cannot encode the result: {err}")))
}

fn agent_error(err: AgentError) -> RpcError {
    RpcError::invalid_params(err.to_string())
}

/// `work`, unless the request is cancelled first: then -32800 and `work` is dropped.
async fn abortable<T>(cancel: &CancellationToken, work: impl Future<Output = T>) -> Result<T, RpcError> {
    tokio::select! {
        biased;
        done = work => Ok(done),
        () = cancel.cancelled() => Err(RpcError::new(RpcError::REQUEST_CANCELLED, "cancelled")),
    }
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

/// The client's first workspace folder, else its `rootUri`; else the project around the
/// sidecar's current directory.
fn workspace_root(params: &InitializeParams) -> Result<Root, RpcError> {
    #[expect(deprecated, reason = "root_uri is what older clients (Neovim 0.7) send")]
    let root_uri = params.root_uri.as_ref();
    let given = params
        .workspace_folders
        .as_ref()
        .and_then(|folders| folders.first())
        .map(|folder| &folder.uri)
        .or(root_uri)
        .and_then(|uri| uri.to_file_path().map(|p| p.into_owned()));
    match given {
        Some(root) => Ok(Root::Given { root, cwd: None }),
        None => Root::from_cli(None).map_err(|err| RpcError::internal(err.to_string())),
    }
}

impl Backend {
    pub fn new(conn: Arc<Connection>) -> Self {
        Self {
            conn,
            cache: Arc::new(BufferCache::new()),
            uris: Arc::new(Mutex::new(HashMap::new())),
            ready: RwLock::new(None),
            encoding: RwLock::new(PositionEncoding::Utf16),
            places: super::worktrees::Places::default(),
        }
    }

    fn ready(&self) -> Result<Arc<Ready>, RpcError> {
        self.ready.read().clone().ok_or_else(|| RpcError::new(RpcError::RESOURCE_NOT_FOUND, "initialize first"))
    }

    fn encoding(&self) -> PositionEncoding {
        *self.encoding.read()
    }

    fn agent(&self) -> Result<Arc<Agent>, RpcError> {
        self.ready()?.agent.clone().map_err(RpcError::invalid_params)
    }

    /// The agent of session `session_id`: the one of its worktree, else the workspace's.
    fn agent_of(&self, session_id: &str) -> Result<Arc<Agent>, RpcError> {
        match self.places.agent_of(session_id) {
            Some(agent) => Ok(agent),
            None => self.agent(),
        }
    }

    /// Stops the language servers (at `shutdown`, and when the session ends without it).
    pub async fn stop_language_servers(&self) {
        let ready = self.ready.read().clone();
        if let Some(ready) = ready {
            ready.bench.stop_language_servers().await;
        }
        self.places.stop_language_servers().await;
    }

    /// A request, in its own task. What `$/cancelRequest` does depends on the method: a turn is
    /// cancelled as `tandem/session/cancel` would (it ends with its updates and a response); a
    /// command or MCP call is stopped; file tools, mode changes, loads, checkpoint lists, checkpoint files and
    /// restores finish what they started; the rest is dropped and answered -32800.
    pub async fn handle(&self, method: &str, params: Value, cancel: &CancellationToken) -> Result<Answer, RpcError> {
        match method {
            // The hot path stays inline; the others run boxed, so that this future (which every
            // request's task holds and moves) stays the size of a tool call, not of the largest
            // handler (about 14 KB, copied several times per request).
            methods::TOOLS_CALL => self.tools_call(parse(params)?, cancel).await.map(Answer::Tool),
            _ => Box::pin(self.handle_other(method, params, cancel)).await.map(Answer::Json),
        }
    }

    async fn handle_other(&self, method: &str, params: Value, cancel: &CancellationToken) -> Result<Value, RpcError> {
        match method {
            "shutdown" => {
                tracing::info!("shutdown");
                self.stop_language_servers().await;
                Ok(Value::Null)
            }
            methods::TOOLS_LIST => abortable(cancel, async { self.tools_list(parse(params)?) }).await?,
            methods::SESSION_NEW => abortable(cancel, self.session_new(parse(params)?)).await?,
            methods::SESSION_PROMPT => self.session_prompt(parse(params)?, cancel).await,
            methods::SESSION_SET_MODE => self.session_set_mode(parse(params)?).await,
            methods::SESSION_LIST => self.session_list(parse(params)?),
            methods::SESSION_LOAD => self.session_load(parse(params)?).await,
            methods::SESSION_DELETE => {
                let params: tandem_protocol::SessionDeleteParams = parse(params)?;
                self.agent_of(&params.session_id)?.delete(params).map_err(agent_error)?;
                Ok(serde_json::json!({}))
            }
            methods::SESSION_CHECKPOINTS => self.session_checkpoints(parse(params)?).await,
            methods::SESSION_RESTORE => self.session_restore(parse(params)?).await,
            methods::SESSION_CHECKPOINT_FILE => {
                let params: tandem_protocol::SessionCheckpointFileParams = parse(params)?;
                to_json(self.agent_of(&params.session_id)?.checkpoint_file(params).await.map_err(agent_error)?)
            }
            methods::SESSION_COMPACT => self.session_compact(parse(params)?).await,
            methods::SESSION_CONFIG_OPTIONS => self.session_config_options(parse(params)?, cancel).await,
            methods::SESSION_SET_CONFIG_OPTION => {
                let params: tandem_protocol::SessionSetConfigOptionParams = parse(params)?;
                to_json(self.agent_of(&params.session_id)?.set_config_option(params).await.map_err(agent_error)?)
            }
            methods::COMMANDS_LIST => {
                let params: tandem_protocol::CommandsListParams = parse(params)?;
                let commands = self.agent()?.commands(params.cwd.as_deref()).map_err(agent_error)?;
                to_json(tandem_protocol::CommandsListResult { commands })
            }
            methods::WORKTREE_LIST => to_json(super::worktrees::list(&self.ready()?.bench).await?),
            // Runs to its end once started, as a restore does: its review waits on the editor,
            // and `$/cancelRequest` ends that review (nothing is written then).
            methods::WORKTREE_REVIEW => {
                let ready = self.ready()?;
                let editor = Arc::clone(&ready.editor) as Arc<dyn EditorClient>;
                let client = Arc::new(LspSessionClient::new(Arc::clone(&self.conn)));
                to_json(super::worktrees::review(&ready.bench, editor, client, parse(params)?, cancel).await?)
            }
            _ => Err(RpcError::new(RpcError::METHOD_NOT_FOUND, format!("unknown method `{method}`"))),
        }
    }

    fn tools_list(&self, _params: ToolsListParams) -> Result<Value, RpcError> {
        let ready = self.ready()?;
        let registry = &ready.bench.registry;
        to_json(ToolsListResult { tools: registry.infos(), profile: registry.config().profile.to_string() })
    }

    async fn tools_call(&self, params: ToolsCallParams, cancel: &CancellationToken) -> Result<ToolResult, RpcError> {
        let ready = self.ready()?;
        let mut ctx = ready.bench.tool_context();
        ctx.session_id = params.session_id;
        ctx.editor = Some(Arc::clone(&ready.editor) as Arc<dyn EditorClient>);
        // A cancelled command stops with its process group, an MCP call at once; file tools
        // finish what they started, so a multi-file change is never cut in half.
        let cancellable = ready
            .bench
            .registry
            .find(&params.name)
            .is_some_and(|tool| matches!(tool.spec().group, ToolGroup::Exec | ToolGroup::Mcp));
        let span = tracing::info_span!("tool", name = %params.name);
        let call = ready.bench.registry.call(&params.name, params.arguments, ctx).instrument(span);
        let result = if cancellable { abortable(cancel, call).await? } else { call.await };
        result.map_err(|err| RpcError::invalid_params(err.to_string()))
    }

    async fn session_new(&self, params: SessionNewParams) -> Result<Value, RpcError> {
        let ready = self.ready()?;
        if let Some(name) = params.worktree.clone() {
            let editor = Arc::clone(&ready.editor) as Arc<dyn EditorClient>;
            let client = Arc::new(LspSessionClient::new(Arc::clone(&self.conn)));
            let opened = self.places.open(&ready.bench, ready.init.clone(), &self.cache, editor, client, &name).await?;
            let result = self.places.new_session(opened, params)?;
            return to_json(result);
        }
        let agent = self.agent()?;
        // Servers the editor passes join the process's; then the session's first turn waits
        // (bounded) for the servers to list their tools.
        if let (Some(servers), Some(mcp)) = (&params.mcp_servers, &ready.bench.mcp) {
            for warning in mcp.add_session_servers(servers).await {
                tracing::warn!("{warning}");
            }
        }
        ready.bench.mcp_ready(MCP_READY_WAIT).await;
        to_json(agent.new_session(params).map_err(agent_error)?)
    }

    /// Answered when the turn has ended: every update it sent is queued before the response.
    async fn session_prompt(&self, params: SessionPromptParams, cancel: &CancellationToken) -> Result<Value, RpcError> {
        let agent = self.agent_of(&params.session_id)?;
        let session_id = params.session_id.clone();
        let turn = agent.prompt(params);
        tokio::pin!(turn);
        let result = tokio::select! {
            result = &mut turn => result,
            () = cancel.cancelled() => {
                agent.cancel(&session_id);
                turn.await
            }
        };
        to_json(result.map_err(agent_error)?)
    }

    pub fn session_cancel(&self, params: SessionCancelParams) -> Result<(), RpcError> {
        self.agent_of(&params.session_id)?.cancel(&params.session_id);
        Ok(())
    }

    /// Answered after the `current_mode_update` it sends is queued.
    async fn session_set_mode(&self, params: SessionSetModeParams) -> Result<Value, RpcError> {
        self.agent_of(&params.session_id)?.set_mode(params).await.map_err(agent_error)?;
        Ok(serde_json::json!({}))
    }

    fn session_list(&self, params: SessionListParams) -> Result<Value, RpcError> {
        to_json(self.agent()?.list(params).map_err(agent_error)?)
    }

    /// Answered after the replayed history is queued.
    async fn session_load(&self, params: SessionLoadParams) -> Result<Value, RpcError> {
        to_json(self.agent()?.load(params).await.map_err(agent_error)?)
    }

    async fn session_checkpoints(&self, params: SessionCheckpointsParams) -> Result<Value, RpcError> {
        to_json(self.agent_of(&params.session_id)?.checkpoints(params).await.map_err(agent_error)?)
    }

    /// Runs to its end once started (its review waits on the editor; a half-restored workspace
    /// helps nobody), so `$/cancelRequest` does not cut it.
    async fn session_restore(&self, params: SessionRestoreParams) -> Result<Value, RpcError> {
        to_json(self.agent_of(&params.session_id)?.restore(params).await.map_err(agent_error)?)
    }

    /// Reads the provider's model list (once per process) unless cancelled.
    async fn session_config_options(
        &self,
        params: tandem_protocol::SessionConfigOptionsParams,
        cancel: &CancellationToken,
    ) -> Result<Value, RpcError> {
        let agent = self.agent_of(&params.session_id)?;
        let options = abortable(cancel, agent.config_options(&params.session_id, true)).await?;
        to_json(options.map_err(agent_error)?)
    }

    async fn session_compact(&self, params: tandem_protocol::SessionCompactParams) -> Result<Value, RpcError> {
        to_json(self.agent_of(&params.session_id)?.compact(params).await.map_err(agent_error)?)
    }

    /// `initialize`: opens the workspace, the tools, the language servers and the agent.
    pub fn initialize(&self, params: Value) -> Result<Value, RpcError> {
        let params: InitializeParams = parse(params)?;
        let root = workspace_root(&params)?;
        let init: Option<InitializationOptions> = match params.initialization_options.clone() {
            None | Some(Value::Null) => None,
            Some(value) => Some(
                serde_json::from_value(value)
                    .map_err(|err| RpcError::invalid_params(format!("initializationOptions: {err}")))?,
            ),
        };
        let progress = params.capabilities.window.as_ref().and_then(|w| w.work_done_progress).unwrap_or(false);
        let (progress_tx, progress_rx) = tokio::sync::mpsc::unbounded_channel();
        let options = Options {
            init: init.clone(),
            progress: progress.then_some(progress_tx),
            mcp: Mcp::Sessions,
            cache: Some(Arc::clone(&self.cache)),
            ..Options::default()
        };
        let bench = Workbench::open(&root, options).map_err(|err| match err {
            WorkbenchError::Config(_) => RpcError::invalid_params(err.to_string()),
            _ => RpcError::internal(err.to_string()),
        })?;
        bench.log_warnings();
        if progress {
            tokio::spawn(forward_progress(Arc::clone(&self.conn), progress_rx));
        }
        let (encoding, kind) = position_encoding(&params);
        *self.encoding.write() = encoding;
        let ready = self.open(&params, bench, encoding, init);
        let tool_names: Vec<String> = ready.bench.registry.infos().into_iter().map(|t| t.name).collect();
        *self.ready.write() = Some(Arc::new(ready));
        to_json(capabilities(kind, tool_names))
    }

    /// The editor and the agent over the workbench, from the client's capabilities.
    fn open(
        &self,
        params: &InitializeParams,
        bench: Workbench,
        encoding: PositionEncoding,
        init: Option<InitializationOptions>,
    ) -> Ready {
        let workspace_caps = params.capabilities.workspace.as_ref();
        let document_changes =
            workspace_caps.and_then(|w| w.workspace_edit.as_ref()).and_then(|e| e.document_changes).unwrap_or(false);
        let editor =
            Arc::new(LspEditor::new(Arc::clone(&self.conn), Arc::clone(&self.uris), encoding, document_changes));
        let agent = bench
            .agent_config()
            .and_then(|config| {
                bench.agent(
                    Some(Arc::clone(&editor) as Arc<dyn EditorClient>),
                    Arc::new(LspSessionClient::new(Arc::clone(&self.conn))),
                    config,
                )
            })
            .map_err(|err| err.to_string());
        if let Err(err) = &agent {
            tracing::warn!("agent sessions are unavailable: {err}");
        }
        Ready { bench, editor, agent, init }
    }

    // Text sync: called on the read loop, in the editor's order; none of them awaits.

    pub fn did_open(&self, params: lsp::DidOpenTextDocumentParams) -> Result<(), RpcError> {
        let doc = params.text_document;
        let Some(path) = cache_path(&doc.uri) else { return Ok(()) };
        tracing::debug!(path = %path.display(), version = doc.version, "didOpen");
        self.uris.lock().insert(path.clone(), doc.uri);
        self.cache.open(path, doc.version, doc.language_id, &doc.text);
        Ok(())
    }

    pub fn did_change(&self, params: lsp::DidChangeTextDocumentParams) -> Result<(), RpcError> {
        let Some(path) = cache_path(&params.text_document.uri) else { return Ok(()) };
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
        Ok(())
    }

    pub fn did_close(&self, params: lsp::DidCloseTextDocumentParams) -> Result<(), RpcError> {
        let Some(path) = cache_path(&params.text_document.uri) else { return Ok(()) };
        self.uris.lock().remove(&path);
        self.cache.close(&path);
        Ok(())
    }

    pub fn did_save(&self, params: lsp::DidSaveTextDocumentParams) -> Result<(), RpcError> {
        tracing::debug!(uri = params.text_document.uri.as_str(), "didSave");
        Ok(())
    }
}

/// UTF-8 when the client offers it, else UTF-16 (LSP's default).
fn position_encoding(params: &InitializeParams) -> (PositionEncoding, PositionEncodingKind) {
    let offered = params.capabilities.general.as_ref().and_then(|g| g.position_encodings.clone()).unwrap_or_default();
    if offered.contains(&PositionEncodingKind::UTF8) {
        (PositionEncoding::Utf8, PositionEncodingKind::UTF8)
    } else {
        (PositionEncoding::Utf16, PositionEncodingKind::UTF16)
    }
}

fn capabilities(kind: PositionEncodingKind, tools: Vec<String>) -> InitializeResult {
    let tandem = TandemCapabilities { version: PROTOCOL_VERSION.to_owned(), tools, modes: ModeId::ALL.to_vec() };
    InitializeResult {
        capabilities: ServerCapabilities {
            position_encoding: Some(kind),
            text_document_sync: Some(TextDocumentSyncCapability::Options(TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(TextDocumentSyncKind::INCREMENTAL),
                save: Some(lsp::TextDocumentSyncSaveOptions::Supported(true)),
                ..Default::default()
            })),
            experimental: Some(serde_json::json!({ "tandem": tandem })),
            ..Default::default()
        },
        server_info: Some(ServerInfo {
            name: "tandem".to_owned(),
            version: Some(env!("CARGO_PKG_VERSION").to_owned()),
        }),
        offset_encoding: None,
    }
}
