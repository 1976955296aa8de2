//! One configured MCP server: its connection (spawned child or streamable HTTP, made on demand and
//! made again after the server dies), its tool list, its circuit breaker and its bulkhead.

use parking_lot::Mutex;
use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;
use tokio::sync::{Semaphore, mpsc};

use tandem_tool_api::binaries::{Binaries, BinaryError, Lookup};

use crate::config::{ServerConfig, Transport};
use crate::resilience::{Breaker, BreakerConfig, CircuitState, FailureClass};

/// Longest a connection (spawn or HTTP handshake plus `tools/list`) may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Lines of a stdio server's stderr kept for error messages.
const STDERR_LINES: usize = 12;

/// A tool as a server declares it.
#[derive(Clone, Debug)]
pub struct RemoteTool {
    /// Name on the server.
    pub name: String,
    /// Name the model sees: `mcp__<server>__<tool>` (sanitized, at most 64 characters).
    pub exposed: String,
    /// Description.
    pub description: String,
    /// JSON Schema of the arguments.
    pub schema: Value,
    /// `annotations.readOnlyHint`.
    pub read_only: bool,
    /// `annotations.idempotentHint` (or read-only): safe to retry after a dropped connection.
    pub idempotent: bool,
}

/// A failed request, classified.
#[derive(Clone, Debug)]
pub struct Failure {
    /// The class.
    pub class: FailureClass,
    /// What happened, for the model and the person (no secrets).
    pub message: String,
    /// Whether the request may have reached the server.
    pub reached: bool,
}

impl Failure {
    fn new(class: FailureClass, message: impl Into<String>, reached: bool) -> Self {
        Self { class, message: message.into(), reached }
    }
}

/// The client side of one connection: tells the manager when the server's tool list changed.
pub struct Handler {
    server: String,
    changed: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        tracing::info!(server = self.server, "notifications/tools/list_changed");
        self.changed.send(self.server.clone()).ok();
    }
}

/// A running client connection.
pub type Service = RunningService<RoleClient, Handler>;

/// What `tandem doctor` and `mcp_server_manage health` show.
#[derive(Clone, Debug)]
pub struct Health {
    /// `connected`, `not connected`, `disabled`, `circuit open (next probe in 3s)`, `half-open`.
    pub state: String,
    /// Tools listed at the last connection.
    pub tools: usize,
    /// The last error, if the last attempt failed.
    pub last_error: Option<String>,
    /// Calls made / failed.
    pub calls: (u64, u64),
}

/// One server.
pub struct McpServer {
    /// Its configuration.
    pub config: ServerConfig,
    service: tokio::sync::Mutex<Option<Arc<Service>>>,
    tools: Mutex<Vec<RemoteTool>>,
    breaker: Mutex<Breaker>,
    /// Calls in flight at most `max_concurrent`.
    pub bulkhead: Arc<Semaphore>,
    last_error: Mutex<Option<String>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    counts: Mutex<(u64, u64)>,
    changed: mpsc::UnboundedSender<String>,
}

/// `mcp__<server>__<tool>`, with characters providers refuse replaced by `_`, cut to 64.
pub fn exposed_name(server: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
    };
    let full = format!("mcp__{}__{}", clean(server), clean(tool));
    if full.len() <= 64 {
        return full;
    }
    // Keep it unique: a short hash of the full name at the end.
    let hash = full.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3));
    format!("{}_{:08x}", &full[..55], hash as u32)
}

fn classify(err: &ServiceError) -> Failure {
    match err {
        ServiceError::McpError(data) => {
            let code = data.code.0;
            // -32602 invalid params, -32601 method not found, -32600 invalid request: our side.
            let class = if matches!(code, -32602..=-32600) { FailureClass::Client } else { FailureClass::Server };
            Failure::new(class, format!("the server answered with error {code}: {}", data.message), true)
        }
        ServiceError::TransportSend(e) => {
            Failure::new(FailureClass::Transient, format!("could not send the request ({e})"), false)
        }
        ServiceError::TransportClosed => {
            Failure::new(FailureClass::Transient, "the connection to the server closed during the call", true)
        }
        ServiceError::Timeout { timeout } => {
            Failure::new(FailureClass::Server, format!("no answer within {}s", timeout.as_secs_f64()), true)
        }
        other => Failure::new(FailureClass::Server, other.to_string(), true),
    }
}

/// How the program of a stdio server for the workspace at `root` is found and checked: the
/// folder's trust and the person's pins, and the `PATH` the server is given (its configured
/// `PATH`, else Tandem's).
pub fn stdio_binaries(root: &Path, env: &std::collections::BTreeMap<String, crate::config::Secret>) -> Binaries {
    let binaries = Binaries::new(root, tandem_tool_api::trust::trust_of(root));
    match env.get("PATH") {
        Some(path) => binaries.with_search_path(std::ffi::OsStr::new(path.expose())),
        None => binaries,
    }
}

impl McpServer {
    /// A server that is not connected yet.
    pub fn new(config: ServerConfig, breaker: BreakerConfig, changed: mpsc::UnboundedSender<String>) -> Self {
        Self {
            bulkhead: Arc::new(Semaphore::new(config.max_concurrent)),
            config,
            service: tokio::sync::Mutex::new(None),
            tools: Mutex::new(Vec::new()),
            breaker: Mutex::new(Breaker::new(breaker)),
            last_error: Mutex::new(None),
            stderr: Arc::new(Mutex::new(VecDeque::new())),
            counts: Mutex::new((0, 0)),
            changed,
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// The tools listed at the last connection.
    pub fn tools(&self) -> Vec<RemoteTool> {
        self.tools.lock().clone()
    }

    /// The breaker (for admission and outcomes).
    pub fn breaker(&self) -> parking_lot::MutexGuard<'_, Breaker> {
        self.breaker.lock()
    }

    /// Counts a call's outcome.
    pub fn count(&self, ok: bool) {
        let mut counts = self.counts.lock();
        counts.0 += 1;
        if !ok {
            counts.1 += 1;
        }
    }

    /// The state, for people.
    pub async fn health(&self) -> Health {
        let connected = self.service.lock().await.as_ref().is_some_and(|s| !s.is_closed());
        let state = if !self.config.enabled {
            "disabled".to_owned()
        } else {
            match self.breaker().state() {
                CircuitState::Open { until } => format!(
                    "circuit open (next probe in {:.1}s)",
                    until.saturating_duration_since(Instant::now()).as_secs_f64()
                ),
                CircuitState::HalfOpen => "half-open (probing)".to_owned(),
                CircuitState::Closed if connected => "connected".to_owned(),
                CircuitState::Closed => "not connected".to_owned(),
            }
        };
        Health {
            state,
            tools: self.tools().len(),
            last_error: self.last_error.lock().clone(),
            calls: *self.counts.lock(),
        }
    }

    /// Records the last error (shown by health) or clears it.
    pub fn set_error(&self, error: Option<String>) {
        *self.last_error.lock() = error;
    }

    fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock();
        if lines.is_empty() {
            return String::new();
        }
        let tail: Vec<&str> = lines.iter().map(String::as_str).collect();
        format!("; its stderr ended with: {}", tail.join(" | "))
    }

    /// The live connection, connecting (and listing tools) when there is none or it closed.
    /// Returns whether the tool list was (re)loaded.
    pub async fn connection(&self, root: &Path) -> Result<(Arc<Service>, bool), Failure> {
        let mut slot = self.service.lock().await;
        if let Some(service) = slot.as_ref()
            && !service.is_closed()
        {
            return Ok((Arc::clone(service), false));
        }
        if slot.take().is_some() {
            tracing::warn!(server = self.name(), "the connection closed; reconnecting");
        }
        let connect = async {
            let service = self.connect(root).await?;
            let tools = service
                .list_all_tools()
                .await
                .map_err(|e| Failure::new(FailureClass::Transient, format!("tools/list failed: {e}"), true))?;
            Ok::<_, Failure>((service, tools))
        };
        let (service, tools) = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
            Ok(Ok(done)) => done,
            Ok(Err(mut failure)) => {
                failure.message = format!("{}{}", failure.message, self.stderr_tail());
                return Err(failure);
            }
            Err(_) => {
                return Err(Failure::new(
                    FailureClass::Transient,
                    format!("connecting took longer than {}s{}", CONNECT_TIMEOUT.as_secs(), self.stderr_tail()),
                    false,
                ));
            }
        };
        let tools: Vec<RemoteTool> = tools
            .into_iter()
            .map(|tool| {
                let annotations = tool.annotations.as_ref();
                let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
                RemoteTool {
                    exposed: exposed_name(self.name(), &tool.name),
                    name: tool.name.to_string(),
                    description: tool.description.as_deref().unwrap_or_default().to_owned(),
                    schema: Value::Object((*tool.input_schema).clone()),
                    read_only,
                    idempotent: read_only || annotations.and_then(|a| a.idempotent_hint).unwrap_or(false),
                }
            })
            .collect();
        tracing::info!(server = self.name(), tools = tools.len(), "connected");
        *self.tools.lock() = tools;
        let service = Arc::new(service);
        *slot = Some(Arc::clone(&service));
        Ok((service, true))
    }

    /// Lists the tools again (after `notifications/tools/list_changed`).
    pub async fn refresh_tools(&self, root: &Path) -> Result<(), Failure> {
        let (service, fresh) = self.connection(root).await?;
        if fresh {
            return Ok(());
        }
        let listed = tokio::time::timeout(self.config.timeout, service.list_all_tools())
            .await
            .map_err(|_| Failure::new(FailureClass::Server, "tools/list timed out", true))?
            .map_err(|e| classify(&e))?;
        let mut tools = self.tools.lock();
        let old: HashMap<String, RemoteTool> = tools.drain(..).map(|t| (t.name.clone(), t)).collect();
        *tools = listed
            .into_iter()
            .map(|tool| {
                let annotations = tool.annotations.as_ref();
                let read_only = annotations.and_then(|a| a.read_only_hint).unwrap_or(false);
                old.get(tool.name.as_ref())
                    .cloned()
                    .unwrap_or(RemoteTool {
                        exposed: exposed_name(self.name(), &tool.name),
                        name: tool.name.to_string(),
                        description: String::new(),
                        schema: json!({}),
                        read_only,
                        idempotent: read_only,
                    })
                    .with_declared(&tool)
            })
            .collect();
        Ok(())
    }

    async fn connect(&self, root: &Path) -> Result<Service, Failure> {
        let handler = Handler { server: self.name().to_owned(), changed: self.changed.clone() };
        match &self.config.transport {
            Transport::Stdio { command, args, env, cwd } => {
                let dir = cwd.as_deref().map_or_else(|| root.to_path_buf(), |c| root.join(c));
                // A program in the workspace runs only once the folder is trusted, and only as
                // pinned; the server's `PATH` then leaves the workspace out too.
                let binaries = stdio_binaries(root, env);
                let program = match binaries.find(command, &dir, &[]) {
                    Lookup::Found(program) => program,
                    Lookup::InRepository(path) => {
                        let err = BinaryError::Untrusted { path, root: binaries.root().to_path_buf() };
                        return Err(Failure::new(FailureClass::Client, err.to_string(), false));
                    }
                    Lookup::Missing => {
                        return Err(Failure::new(
                            FailureClass::Transient,
                            format!(
                                "cannot start `{command}`: not found (on PATH, or as a path from {})",
                                dir.display()
                            ),
                            false,
                        ));
                    }
                };
                binaries.check(&program).map_err(|err| Failure::new(FailureClass::Client, err.to_string(), false))?;
                let mut cmd = tokio::process::Command::new(&program.path);
                cmd.args(args).envs(env.iter().map(|(k, v)| (k, v.expose())));
                if let Some(path) = binaries.child_path() {
                    cmd.env("PATH", path);
                }
                cmd.current_dir(&dir)
                    // A group of its own: whatever the server starts is stopped with it, and
                    // tandem's exit stops the group even if the server ignores the shutdown.
                    .process_group(0)
                    .kill_on_drop(true);
                let (transport, stderr) =
                    TokioChildProcess::builder(cmd).stderr(std::process::Stdio::piped()).spawn().map_err(|e| {
                        Failure::new(FailureClass::Transient, format!("cannot start `{command}`: {e}"), false)
                    })?;
                if let Some(pgid) = transport.id() {
                    tandem_tool_exec::track_group(pgid as i32);
                }
                if let Some(stderr) = stderr {
                    let (server, tail) = (self.name().to_owned(), Arc::clone(&self.stderr));
                    tail.lock().clear();
                    tokio::spawn(async move {
                        let mut lines = tokio::io::BufReader::new(stderr).lines();
                        while let Ok(Some(line)) = lines.next_line().await {
                            tracing::debug!(server, "stderr: {line}");
                            let mut tail = tail.lock();
                            if tail.len() == STDERR_LINES {
                                tail.pop_front();
                            }
                            tail.push_back(line.chars().take(300).collect());
                        }
                    });
                }
                handler.serve(transport).await.map_err(|e| {
                    Failure::new(
                        FailureClass::Transient,
                        format!("the MCP handshake with `{command}` failed: {e}"),
                        false,
                    )
                })
            }
            Transport::Http { url, headers } => {
                let mut custom = HashMap::new();
                for (key, value) in headers {
                    if value.expose().is_empty() {
                        continue;
                    }
                    let name = http::HeaderName::from_bytes(key.as_bytes()).map_err(|_| {
                        Failure::new(FailureClass::Client, format!("header name `{key}` is not valid"), false)
                    })?;
                    let value = http::HeaderValue::from_str(value.expose()).map_err(|_| {
                        Failure::new(FailureClass::Client, format!("the value of header `{key}` is not valid"), false)
                    })?;
                    custom.insert(name, value);
                }
                crate::install_crypto();
                let client = reqwest::Client::builder()
                    .connect_timeout(Duration::from_secs(10))
                    .pool_max_idle_per_host(0)
                    .build()
                    .map_err(|e| Failure::new(FailureClass::Transient, format!("HTTP client: {e}"), false))?;
                let config = StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
                let transport = StreamableHttpClientTransport::with_client(client, config);
                handler.serve(transport).await.map_err(|e| {
                    Failure::new(FailureClass::Transient, format!("the MCP handshake with {url} failed: {e}"), false)
                })
            }
        }
    }

    /// Ends the connection and waits until it is closed. For a child process that is the MCP
    /// stdio shutdown: its stdin closed, a wait, SIGTERM, a wait, SIGKILL (the SDK's
    /// `graceful_shutdown`, run when the service stops). What is left of its process group is
    /// stopped when tandem exits ([`tandem_tool_exec::stop_all`]).
    pub async fn disconnect(&self) {
        let Some(service) = self.service.lock().await.take() else { return };
        match std::sync::Arc::try_unwrap(service) {
            Ok(service) => {
                if let Err(err) = service.cancel().await {
                    tracing::warn!(server = self.name(), "the MCP connection did not close cleanly: {err}");
                }
            }
            // A call still holds it: it closes in the background when that call ends.
            Err(service) => service.cancellation_token().cancel(),
        }
    }

    /// One `tools/call`, bounded by `timeout`; dropping it sends `notifications/cancelled`.
    pub async fn call_once(
        &self,
        root: &Path,
        tool: &str,
        arguments: Value,
        idempotency_key: &str,
        timeout: Duration,
    ) -> Result<CallToolResult, Failure> {
        // Connecting has its own bound (CONNECT_TIMEOUT): `timeout` is the request's.
        let (service, _) = self.connection(root).await?;
        let params: CallToolRequestParams = serde_json::from_value(json!({
            "name": tool,
            "arguments": arguments,
            "_meta": { "tandem/idempotencyKey": idempotency_key },
        }))
        .map_err(|e| Failure::new(FailureClass::Client, format!("arguments must be a JSON object ({e})"), false))?;
        match tokio::time::timeout(timeout, service.call_tool(params)).await {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(err)) => {
                let failure = classify(&err);
                if matches!(err, ServiceError::TransportClosed | ServiceError::TransportSend(_)) {
                    drop(service);
                    self.disconnect().await;
                }
                Err(Failure { message: format!("{}{}", failure.message, self.stderr_tail()), ..failure })
            }
            Err(_) => Err(Failure::new(
                FailureClass::Server,
                format!("no answer within {:.1}s (the call was cancelled)", timeout.as_secs_f64()),
                true,
            )),
        }
    }
}

impl RemoteTool {
    fn with_declared(mut self, tool: &rmcp::model::Tool) -> Self {
        self.description = tool.description.as_deref().unwrap_or_default().to_owned();
        self.schema = Value::Object((*tool.input_schema).clone());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exposed_names_are_what_providers_accept() {
        assert_eq!(exposed_name("everything", "get-sum"), "mcp__everything__get-sum");
        assert_eq!(exposed_name("fs", "read file/v2"), "mcp__fs__read_file_v2");
        let long = exposed_name("a-very-long-server-name", "an_even_longer_tool_name_that_goes_on_and_on");
        assert_eq!(long.len(), 64);
        assert_ne!(long, exposed_name("a-very-long-server-name", "an_even_longer_tool_name_that_goes_on_and_ox"));
    }
}
