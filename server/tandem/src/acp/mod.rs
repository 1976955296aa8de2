//! `tandem acp`: the Agent Client Protocol front door (ACP v1: newline-delimited JSON-RPC 2.0
//! over stdio), for Zed, JetBrains, CodeCompanion.nvim, avante.nvim and other ACP clients.
//!
//! The same [`Agent`] serves it as the LSP front door; only the transport ([`transport`]) and
//! the mapping of names and shapes ([`mapping`]) differ. ACP sessions carry their working
//! directory, so workspaces are opened on `session/new` / `session/load` (one per root, shared
//! by the sessions inside it). When the client offers them, files are read and written through
//! it (`fs/*`: unsaved buffers are seen, and its review records the change) and `bash` runs in
//! its terminals (`terminal/*`); see [`client`].
//!
//! The wire types are written here against the ACP v1 schema rather than taken from the
//! `agent-client-protocol-schema` crate: that crate turns on serde_json's `preserve_order` for
//! the whole binary, and our session types already have ACP's shapes. The end-to-end tests
//! check the wire against the official Python SDK's models.

mod client;
mod mapping;

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tandem_agent::{Agent, AgentError};
use tandem_protocol::{
    ModeId, SessionListParams, SessionLoadParams, SessionNewParams, SessionPromptParams, SessionSetConfigOptionParams,
    SessionSetModeParams, SessionUpdate, StopReason,
};
use tandem_text::BufferCache;
use tandem_tools::EditorClient;
use tokio::io::{AsyncRead, BufReader};
use tracing::Instrument as _;

use self::client::{AcpClient, ClientCaps};
use self::mapping::string_param;
use crate::rpc::ndjson::{self, Line};
use crate::rpc::{Connection, Framing, Incoming, RpcError};
use crate::workbench::{Mcp, Options, Root, Workbench, WorkbenchError};

/// How long `session/new` waits for MCP servers that are still connecting.
const MCP_READY_WAIT: Duration = Duration::from_secs(10);

/// Runs the server until stdin ends.
pub async fn serve() -> ExitCode {
    let (conn, writer) = Connection::new(crate::stdio::stdout(), Framing::Lines);
    let server = Arc::new(Server::new(Arc::new(conn)));
    let end = server.run(crate::stdio::stdin()).await;
    // The client is gone: end the running turns, stop the language servers, and give the
    // writer a moment to flush what was queued (nobody may be reading any more).
    server.shutdown().await;
    drop(server);
    if tokio::time::timeout(WRITER_DRAIN, writer).await.is_err() {
        tracing::warn!("turns were still ending when the client left; exiting anyway");
    }
    end
}

/// How long the end of input waits for running turns to wind down and the output to flush.
const WRITER_DRAIN: Duration = Duration::from_secs(3);

/// One workspace (a root directory) and the agent serving its sessions.
struct Ready {
    /// The project: workspace, tools, MCP servers, language servers.
    bench: Workbench,
    agent: Arc<Agent>,
}

struct Server {
    conn: Arc<Connection>,
    cache: Arc<BufferCache>,
    /// Set by `initialize`.
    client: Mutex<Option<Arc<AcpClient>>>,
    workspaces: tokio::sync::Mutex<Vec<Arc<Ready>>>,
    sessions: Mutex<HashMap<String, Arc<Ready>>>,
}

fn workbench_error(err: WorkbenchError) -> RpcError {
    match err {
        WorkbenchError::Agent(err) => agent_error(err),
        WorkbenchError::Config(_) | WorkbenchError::Provider(_) => RpcError::invalid_params(err.to_string()),
        _ => RpcError::internal(err.to_string()),
    }
}

fn agent_error(err: AgentError) -> RpcError {
    let code = match err {
        AgentError::UnknownSession(_) => RpcError::RESOURCE_NOT_FOUND,
        _ => RpcError::INVALID_PARAMS,
    };
    RpcError::new(code, err.to_string().replace("tandem/session/", "session/"))
}

/// Whether the configured model takes images (its profile, or `[provider] images`), as the
/// configuration where the agent starts says: what `initialize` advertises. A session whose
/// model does not take them refuses an image with a message naming the model.
fn images_supported() -> bool {
    let Ok(dir) = std::env::current_dir() else { return false };
    crate::config::Config::load(&dir, None)
        .ok()
        .and_then(|config| config.provider_settings().ok())
        .is_some_and(|settings| tandem_llm::profile::resolve(&settings, &settings.model).profile.images)
}

/// Slash commands: the door's own (answered without the model), then the agent's (`/context`,
/// `/init`, the project's and the person's custom commands; built-in names win).
fn available_commands(ready: &Ready, session_id: &str) -> Value {
    let mut commands = builtin_commands();
    let cwd = ready.agent.session_cwd(session_id);
    let agent_commands = ready.agent.commands(cwd.as_deref()).unwrap_or_default();
    if let (Value::Array(list), Ok(Value::Array(more))) = (&mut commands, serde_json::to_value(agent_commands)) {
        list.extend(more);
    }
    commands
}

/// The commands every session has.
fn builtin_commands() -> Value {
    json!([
        { "name": "mode", "description": "Switch the permission mode: default, auto-edit, plan or yolo",
          "input": { "hint": "default | auto-edit | plan | yolo" } },
        { "name": "model", "description": "Use another model of the configured provider for the next turns",
          "input": { "hint": "model name" } },
        { "name": "undo", "description": "Restore the files to before the last turn (or turn N), reviewed like any change; what you changed since is left alone",
          "input": { "hint": "turn number (optional)" } },
        { "name": "redo", "description": "Bring back what the last undo restored" },
        { "name": "compact", "description": "Shorten the conversation the model sees: old tool outputs elided, older turns summarised" },
        { "name": "permissions", "description": "The permission rules, hooks and verify commands in force, with their files; `check tool(call)` says what they decide",
          "input": { "hint": "check bash(npm test) (optional)" } },
    ])
}

impl Server {
    fn new(conn: Arc<Connection>) -> Self {
        Self {
            conn,
            cache: Arc::new(BufferCache::new()),
            client: Mutex::new(None),
            workspaces: tokio::sync::Mutex::new(Vec::new()),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Reads messages until the end of input. A line that is not JSON-RPC gets an error
    /// response and the connection goes on.
    async fn run(self: &Arc<Self>, input: impl AsyncRead + Unpin) -> ExitCode {
        let mut reader = BufReader::new(input);
        let mut line = Vec::new();
        loop {
            match ndjson::read_line(&mut reader, &mut line, ndjson::MAX_LINE).await {
                Ok(Line::End) => break,
                Ok(Line::Read) => {}
                Ok(Line::TooLong(len)) => {
                    let message = format!(
                        "message of {len} bytes skipped: messages are limited to {} MB per line",
                        ndjson::MAX_LINE >> 20
                    );
                    tracing::warn!("{message}");
                    self.conn.respond(Value::Null, Err(RpcError::new(RpcError::INVALID_REQUEST, message)));
                    continue;
                }
                Err(err) => {
                    tracing::error!("cannot read stdin: {err}");
                    return ExitCode::FAILURE;
                }
            }
            let text = line.trim_ascii();
            if text.is_empty() {
                continue;
            }
            tracing::trace!(target: "tandem::acp::wire", "← {}", String::from_utf8_lossy(text));
            let message: Value = match serde_json::from_slice(text) {
                Ok(message) => message,
                Err(err) => {
                    self.conn.respond(Value::Null, Err(RpcError::new(RpcError::PARSE, format!("not JSON: {err}"))));
                    continue;
                }
            };
            self.receive(message);
        }
        self.conn.fail_pending();
        ExitCode::SUCCESS
    }

    fn receive(self: &Arc<Self>, message: Value) {
        let (id, method, params) = match Incoming::classify(message) {
            Incoming::Request { id, method, params } => (Some(id), method, params),
            Incoming::Notification { method, params } => (None, method, params),
            Incoming::Response(message) => return self.conn.resolve(&message),
            Incoming::Invalid { reply_to, error } => {
                match reply_to {
                    Some(id) => self.conn.respond(id, Err(error)),
                    None => tracing::warn!("{}; a notification was dropped", error.message),
                }
                return;
            }
        };
        let params = mapping::object_or_empty(params);
        match id {
            None => self.notification(&method, &params),
            Some(id) => {
                // Each request in a task of its own: a turn runs for long, and the client's
                // answers to our requests (permissions, files) must keep flowing meanwhile.
                let server = Arc::clone(self);
                let span = tracing::info_span!("acp", method = %method);
                let task = async move {
                    let result = server.request(&method, &params).await;
                    let announce = match (&result, method.as_str()) {
                        (Ok(value), "session/new") => value.get("sessionId").and_then(Value::as_str).map(str::to_owned),
                        (Ok(_), "session/load" | "session/resume") => {
                            params.get("sessionId").and_then(Value::as_str).map(str::to_owned)
                        }
                        _ => None,
                    };
                    if let Err(err) = &result {
                        tracing::info!(code = err.code, "{method} failed: {}", err.message);
                    }
                    server.conn.respond(id, result);
                    if let Some(session_id) = announce
                        && let Ok(ready) = server.ready_of(&session_id)
                    {
                        server.conn.notify(
                            "session/update",
                            json!({ "sessionId": session_id, "update": {
                                "sessionUpdate": "available_commands_update",
                                "availableCommands": available_commands(&ready, &session_id),
                            }}),
                        );
                    }
                };
                tokio::spawn(task.instrument(span));
            }
        }
    }

    fn notification(&self, method: &str, params: &Value) {
        match method {
            "session/cancel" => match string_param(params, "sessionId") {
                Ok(session_id) => match self.ready_of(session_id) {
                    Ok(ready) => ready.agent.cancel(session_id),
                    Err(err) => tracing::warn!("session/cancel: {}", err.message),
                },
                Err(err) => tracing::warn!("session/cancel: {err}"),
            },
            other => tracing::debug!("ignored notification {other}"),
        }
    }

    async fn request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if method != "initialize" && self.client().is_err() {
            return Err(RpcError::new(
                RpcError::INVALID_REQUEST,
                format!("{method} before initialize: initialize first"),
            ));
        }
        match method {
            "initialize" => self.initialize(params),
            "authenticate" => Ok(json!({})),
            "session/new" => self.session_new(params).await,
            "session/load" => self.session_load(params, false).await,
            "session/resume" => self.session_load(params, true).await,
            "session/list" => self.session_list(params).await,
            // A notification in ACP; sent as a request, it gets an answer.
            "session/cancel" => {
                let session_id = string_param(params, "sessionId").map_err(RpcError::invalid_params)?;
                self.ready_of(session_id)?.agent.cancel(session_id);
                Ok(json!({}))
            }
            "session/prompt" => self.session_prompt(params).await,
            "session/set_mode" => {
                let session_id = string_param(params, "sessionId").map_err(RpcError::invalid_params)?;
                let mode = parse_mode(params.get("modeId"))?;
                self.set_mode(session_id, mode).await?;
                Ok(json!({}))
            }
            "session/set_config_option" => self.set_config_option(params).await,
            // Extension methods (ACP reserves names starting with `_`): Tandem's checkpoints,
            // with the LSP door's `tandem/session/checkpoints` and `restore` shapes.
            "_tandem/checkpoints" | "_tandem/restore" => self.checkpoint_request(method, params).await,
            _ => Err(RpcError::new(RpcError::METHOD_NOT_FOUND, format!("unknown method `{method}`"))),
        }
    }

    fn client(&self) -> Result<Arc<AcpClient>, RpcError> {
        self.client.lock().clone().ok_or_else(|| RpcError::new(RpcError::INVALID_REQUEST, "initialize first"))
    }

    fn ready_of(&self, session_id: &str) -> Result<Arc<Ready>, RpcError> {
        self.sessions.lock().get(session_id).cloned().ok_or_else(|| {
            RpcError::new(
                RpcError::RESOURCE_NOT_FOUND,
                format!(
                    "no session `{session_id}`: create one with session/new, or load a stored one with session/load"
                ),
            )
        })
    }

    fn initialize(&self, params: &Value) -> Result<Value, RpcError> {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_u64)
            .ok_or_else(|| RpcError::invalid_params("`protocolVersion` is missing or not a number"))?;
        // The requested version when we speak it, else the latest we speak (ACP's rule).
        let version = if requested == mapping::PROTOCOL_VERSION { requested } else { mapping::PROTOCOL_VERSION };
        let caps = ClientCaps::from_json(params.get("clientCapabilities"));
        tracing::info!(requested, ?caps, "initialize");
        *self.client.lock() = Some(Arc::new(AcpClient::new(Arc::clone(&self.conn), caps)));
        Ok(json!({
            "protocolVersion": version,
            "agentCapabilities": {
                "loadSession": true,
                "promptCapabilities": { "image": images_supported(), "audio": false, "embeddedContext": true },
                "mcpCapabilities": { "http": true, "sse": false },
                "sessionCapabilities": { "list": {}, "resume": {} },
            },
            "authMethods": [],
            "agentInfo": { "name": "tandem", "title": "Tandem", "version": env!("CARGO_PKG_VERSION") },
        }))
    }

    /// The workspace that holds `cwd`, opened on first use.
    async fn workspace(&self, cwd: &str) -> Result<(Arc<Ready>, PathBuf), RpcError> {
        let path = Path::new(cwd);
        if !path.is_absolute() {
            return Err(RpcError::invalid_params(format!("`cwd` must be an absolute path, not `{cwd}`")));
        }
        let dir = path
            .canonicalize()
            .map_err(|err| RpcError::invalid_params(format!("`cwd` {cwd} cannot be opened: {err}")))?;
        if !dir.is_dir() {
            return Err(RpcError::invalid_params(format!("`cwd` {cwd} is not a directory")));
        }
        let mut workspaces = self.workspaces.lock().await;
        if let Some(ready) = workspaces.iter().find(|w| dir.starts_with(w.bench.workspace.root())) {
            return Ok((Arc::clone(ready), dir));
        }
        let ready = Arc::new(self.open(&dir).await?);
        workspaces.push(Arc::clone(&ready));
        Ok((ready, dir))
    }

    /// The workbench at `root` (the session's `cwd`: the client names the project) and its
    /// agent.
    async fn open(&self, root: &Path) -> Result<Ready, RpcError> {
        let client = self.client()?;
        let options = Options { mcp: Mcp::Sessions, cache: Some(Arc::clone(&self.cache)), ..Options::default() };
        let bench =
            Workbench::open(&Root::Given { root: root.to_path_buf(), cwd: None }, options).map_err(workbench_error)?;
        bench.log_warnings();
        let agent = bench
            .agent_config()
            .and_then(|config| bench.agent(Some(Arc::clone(&client) as Arc<dyn EditorClient>), client, config));
        match agent {
            Ok(agent) => {
                tracing::info!(root = %bench.workspace.root().display(), "workspace opened");
                Ok(Ready { bench, agent })
            }
            Err(err) => {
                // Nothing serves this workspace: the servers it started stop now.
                bench.close().await;
                Err(workbench_error(err))
            }
        }
    }

    async fn add_mcp_servers(&self, ready: &Ready, params: &Value) {
        let servers = params.get("mcpServers").filter(|s| s.as_array().is_some_and(|a| !a.is_empty()));
        if let (Some(servers), Some(mcp)) = (servers, &ready.bench.mcp) {
            for warning in mcp.add_session_servers(servers).await {
                tracing::warn!("{warning}");
            }
        }
        ready.bench.mcp_ready(MCP_READY_WAIT).await;
    }

    fn session_state(&self, ready: &Ready, session_id: &str) -> Result<(ModeId, String), RpcError> {
        Ok((ready.agent.mode(session_id).map_err(agent_error)?, ready.agent.model(session_id).map_err(agent_error)?))
    }

    async fn session_new(&self, params: &Value) -> Result<Value, RpcError> {
        let cwd = string_param(params, "cwd").map_err(RpcError::invalid_params)?;
        // `_meta["_tandem/worktree"]`: the session works in that agent worktree of the project
        // around `cwd` (created or reused as `tandem run --worktree` does).
        let worktree = match params.get("_meta").and_then(|meta| meta.get("_tandem/worktree")) {
            None | Some(Value::Null) => None,
            Some(Value::String(name)) => {
                let (root, name) = (Root::Given { root: PathBuf::from(cwd), cwd: None }, name.clone());
                let made = tokio::task::spawn_blocking(move || crate::worktree::prepare(&root, &name))
                    .await
                    .map_err(|err| RpcError::internal(err.to_string()))?
                    .map_err(|err| RpcError::invalid_params(format!("{err:#}")))?;
                Some(made)
            }
            Some(_) => return Err(RpcError::invalid_params("`_meta._tandem/worktree` must be a worktree's name")),
        };
        let place = worktree.as_ref().map(|w| w.path.display().to_string());
        let (ready, dir) = self.workspace(place.as_deref().unwrap_or(cwd)).await?;
        self.add_mcp_servers(&ready, params).await;
        let created = ready
            .agent
            .new_session(SessionNewParams { cwd: Some(dir.display().to_string()), ..Default::default() })
            .map_err(agent_error)?;
        self.sessions.lock().insert(created.session_id.clone(), Arc::clone(&ready));
        if ready.agent.known_models().is_empty() {
            self.announce_models_when_read(&ready, &created.session_id);
        }
        let model = created.model.clone().unwrap_or_else(|| ready.agent.default_model());
        let mut answer = json!({
            "sessionId": created.session_id,
            "modes": mapping::modes(&created.modes),
            "configOptions": mapping::config_options(created.modes.current, &model, &ready.agent),
        });
        if let Some(w) = worktree {
            answer["_meta"] = json!({ "_tandem/worktree": {
                "name": w.name, "path": w.path, "branch": w.branch, "created": w.created,
            } });
        }
        Ok(answer)
    }

    /// `session/load` (history replayed as updates) and `session/resume` (not replayed).
    async fn session_load(&self, params: &Value, resume: bool) -> Result<Value, RpcError> {
        let session_id = string_param(params, "sessionId").map_err(RpcError::invalid_params)?.to_owned();
        let cwd = string_param(params, "cwd").map_err(RpcError::invalid_params)?;
        let (ready, dir) = self.workspace(cwd).await?;
        self.add_mcp_servers(&ready, params).await;
        let client = self.client()?;
        if resume {
            client.mute(&session_id, true);
        }
        let loaded = ready
            .agent
            .load(SessionLoadParams {
                session_id: session_id.clone(),
                cwd: Some(dir.display().to_string()),
                mcp_servers: None,
            })
            .await;
        client.mute(&session_id, false);
        let loaded = loaded.map_err(agent_error)?;
        self.sessions.lock().insert(session_id.clone(), Arc::clone(&ready));
        let (mode, model) = self.session_state(&ready, &session_id)?;
        Ok(json!({
            "modes": mapping::modes(&loaded.modes),
            "configOptions": mapping::config_options(mode, &model, &ready.agent),
        }))
    }

    async fn session_list(&self, params: &Value) -> Result<Value, RpcError> {
        let cursor = params.get("cursor").and_then(Value::as_str).map(str::to_owned);
        let cwd = match params.get("cwd") {
            None | Some(Value::Null) => None,
            Some(_) => Some(string_param(params, "cwd").map_err(RpcError::invalid_params)?.to_owned()),
        };
        let ready = match &cwd {
            Some(cwd) => self.workspace(cwd).await?.0,
            None => match self.workspaces.lock().await.first() {
                Some(ready) => Arc::clone(ready),
                None => {
                    let here = std::env::current_dir()
                        .map_err(|err| RpcError::internal(format!("no working directory: {err}")))?;
                    self.workspace(&here.display().to_string()).await?.0
                }
            },
        };
        let cwd = cwd.map(|c| Path::new(&c).canonicalize().map_or(c, |p| p.display().to_string()));
        let list = ready.agent.list(SessionListParams { cwd, cursor }).map_err(agent_error)?;
        serde_json::to_value(list).map_err(|err| RpcError::internal(err.to_string()))
    }

    async fn set_mode(&self, session_id: &str, mode: ModeId) -> Result<(), RpcError> {
        let ready = self.ready_of(session_id)?;
        ready
            .agent
            .set_mode(SessionSetModeParams { session_id: session_id.to_owned(), mode_id: mode })
            .await
            .map_err(agent_error)?;
        self.announce_config(&ready, session_id)
    }

    /// Reads the provider's model list in the background; once read, the session's model option
    /// offers them (`config_option_update`). A failure only leaves the choices as they are.
    fn announce_models_when_read(&self, ready: &Arc<Ready>, session_id: &str) {
        let (conn, ready, session_id) = (Arc::clone(&self.conn), Arc::clone(ready), session_id.to_owned());
        tokio::spawn(async move {
            match ready.agent.provider_models().await {
                Ok(models) if !models.is_empty() => {
                    notify_config(&conn, &ready, &session_id).ok();
                }
                Ok(_) => {}
                Err(err) => tracing::info!("the provider's model list could not be read: {err}"),
            }
        });
    }

    fn announce_config(&self, ready: &Ready, session_id: &str) -> Result<(), RpcError> {
        notify_config(&self.conn, ready, session_id)
    }

    async fn set_config_option(&self, params: &Value) -> Result<Value, RpcError> {
        let session_id = string_param(params, "sessionId").map_err(RpcError::invalid_params)?;
        let config_id = string_param(params, "configId").map_err(RpcError::invalid_params)?;
        let value = string_param(params, "value").map_err(RpcError::invalid_params)?;
        let ready = self.ready_of(session_id)?;
        let set = SessionSetConfigOptionParams {
            session_id: session_id.to_owned(),
            config_id: config_id.to_owned(),
            value: value.to_owned(),
        };
        let options = ready.agent.set_config_option(set).await.map_err(agent_error)?;
        Ok(json!({ "configOptions": options.config_options }))
    }

    async fn session_prompt(&self, params: &Value) -> Result<Value, RpcError> {
        let session_id = string_param(params, "sessionId").map_err(RpcError::invalid_params)?.to_owned();
        let prompt = mapping::prompt(params.get("prompt").unwrap_or(&Value::Null)).map_err(RpcError::invalid_params)?;
        let ready = self.ready_of(&session_id)?;
        if let Some(reply) = self.slash_command(&ready, &session_id, &prompt).await? {
            let client = self.client()?;
            client.send_update(
                &session_id,
                &SessionUpdate::AgentMessageChunk { content: tandem_protocol::ContentBlock::text(reply) },
            );
            return Ok(json!({ "stopReason": "end_turn" }));
        }
        let agent = Arc::clone(&ready.agent);
        let turn = tokio::spawn(async move { agent.prompt(SessionPromptParams { session_id, prompt }).await });
        let result = match turn.await {
            Ok(result) => result.map_err(agent_error)?,
            Err(err) => return Err(RpcError::internal(format!("the turn was lost: {err}"))),
        };
        if result.stop_reason == StopReason::Error {
            let message = result.error.unwrap_or_else(|| "the model provider failed".to_owned());
            return Err(RpcError::internal(message));
        }
        Ok(json!({ "stopReason": mapping::stop_reason(result.stop_reason) }))
    }

    async fn checkpoint_request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        let session_id = string_param(params, "sessionId").map_err(RpcError::invalid_params)?;
        let ready = self.ready_of(session_id)?;
        let to_value = |v: Result<Value, serde_json::Error>| v.map_err(|e| RpcError::internal(e.to_string()));
        if method == "_tandem/checkpoints" {
            let params = serde_json::from_value(params.clone()).map_err(|e| RpcError::invalid_params(e.to_string()))?;
            to_value(serde_json::to_value(ready.agent.checkpoints(params).await.map_err(agent_error)?))
        } else {
            let params = serde_json::from_value(params.clone()).map_err(|e| RpcError::invalid_params(e.to_string()))?;
            to_value(serde_json::to_value(ready.agent.restore(params).await.map_err(agent_error)?))
        }
    }

    /// `/mode <id>`, `/model <name>`, `/undo [turn]`, `/redo` and `/compact`: answered here,
    /// the model is not asked.
    async fn slash_command(
        &self,
        ready: &Ready,
        session_id: &str,
        prompt: &[tandem_protocol::ContentBlock],
    ) -> Result<Option<String>, RpcError> {
        let [tandem_protocol::ContentBlock::Text { text }] = prompt else { return Ok(None) };
        let text = text.trim();
        let (command, argument) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        let argument = argument.trim();
        if matches!(command, "/mode" | "/model" | "/undo" | "/redo" | "/compact") {
            // Shown where it was typed when the session is loaded again.
            ready.agent.record_command(session_id, text).map_err(agent_error)?;
        }
        match command {
            "/mode" => {
                let mode = parse_mode(Some(&Value::String(argument.to_owned())))?;
                self.set_mode(session_id, mode).await?;
                Ok(Some(format!("Mode: {}", mode.as_str())))
            }
            "/model" if !argument.is_empty() => {
                ready.agent.set_model(session_id, argument).map_err(agent_error)?;
                self.announce_config(ready, session_id)?;
                Ok(Some(format!("Model: {argument}")))
            }
            "/model" => Ok(Some(format!("Model: {}", ready.agent.model(session_id).map_err(agent_error)?))),
            "/undo" => {
                let turn = match argument {
                    "" => None,
                    raw => Some(
                        raw.parse::<u64>()
                            .map_err(|_| RpcError::invalid_params(format!("/undo takes a turn number, not `{raw}`")))?,
                    ),
                };
                let result = ready.agent.undo(session_id, turn).await.map_err(agent_error)?;
                Ok(Some(tandem_agent::describe_restore(&result)))
            }
            "/redo" => {
                let result = ready.agent.redo(session_id).await.map_err(agent_error)?;
                Ok(Some(tandem_agent::describe_restore(&result)))
            }
            "/permissions" => Ok(Some(crate::permissions_cmd::describe(&ready.bench, argument))),
            "/compact" => {
                let params = tandem_protocol::SessionCompactParams { session_id: session_id.to_owned() };
                let done = ready.agent.compact(params).await.map_err(agent_error)?;
                let how = if done.summarized { "older turns summarised" } else { "nothing to summarise" };
                Ok(Some(format!("Compacted: about {} → {} tokens ({how}).", done.tokens_before, done.tokens_after)))
            }
            _ => Ok(None),
        }
    }

    async fn shutdown(&self) {
        let sessions: Vec<(String, Arc<Ready>)> =
            self.sessions.lock().iter().map(|(id, ready)| (id.clone(), Arc::clone(ready))).collect();
        for (id, ready) in sessions {
            ready.agent.cancel(&id);
        }
        let workspaces = std::mem::take(&mut *self.workspaces.lock().await);
        for ready in workspaces {
            ready.bench.close().await;
        }
    }
}

fn parse_mode(value: Option<&Value>) -> Result<ModeId, RpcError> {
    let raw = value.cloned().unwrap_or(Value::Null);
    serde_json::from_value(raw.clone()).map_err(|_| {
        RpcError::invalid_params(format!("unknown mode {raw}: use \"default\", \"auto-edit\", \"plan\" or \"yolo\""))
    })
}

/// `config_option_update`: the session's config options as they are now.
fn notify_config(conn: &Connection, ready: &Ready, session_id: &str) -> Result<(), RpcError> {
    let mode = ready.agent.mode(session_id).map_err(agent_error)?;
    let model = ready.agent.model(session_id).map_err(agent_error)?;
    conn.notify(
        "session/update",
        json!({ "sessionId": session_id, "update": {
            "sessionUpdate": "config_option_update",
            "configOptions": mapping::config_options(mode, &model, &ready.agent),
        }}),
    );
    Ok(())
}
