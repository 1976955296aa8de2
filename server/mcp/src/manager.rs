//! The MCP servers of one workspace: connects them (eagerly or lazily), keeps the registry's
//! `mcp__*` tools in step with what they list, and runs every call through the resilience chain:
//! loop check → approval → circuit breaker → bulkhead → timeout → classified retry → result,
//! with a degradation chain (cached identical read-only result, clearly marked; else an error
//! naming the server's state) and tracking.

use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant, SystemTime};

#[cfg(test)]
use serde_json::json;
use serde_json::{Map, Value};
use tandem_tools::{CommandDecision, Registry, Tool, ToolCheck, ToolContext, ToolError, ToolOutput};
use tokio::sync::mpsc;

use crate::config::{McpConfig, ServerConfig, Startup};
use crate::ranking::{Doc, Ranked, Ranker};
use crate::resilience::{Admission, BreakerConfig, FailureClass, backoff};
use crate::server::{Failure, McpServer, RemoteTool};
use crate::tool::McpTool;
use crate::tracking::{Entry, Tracker};

/// Retries of a transient failure (so at most 3 attempts).
const MAX_RETRIES: u32 = 2;
/// The same tool with the same arguments this many times among a session's last
/// [`LOOP_WINDOW`] calls is refused.
const LOOP_REPEATS: usize = 3;
const LOOP_WINDOW: usize = 6;
/// Results kept for the degradation chain.
const CACHE_ENTRIES: usize = 128;

/// A cached result.
#[derive(Clone, Debug)]
struct Cached {
    output: String,
    at: SystemTime,
}

/// One call of a session, for loop detection and `mcp_session_summary`.
#[derive(Clone, Debug)]
pub struct CallRecord {
    /// Tool.
    pub tool: String,
    /// Tool + arguments.
    key: String,
    /// Succeeded.
    pub ok: bool,
    /// Latency.
    pub ms: u64,
}

/// A request of the MCP layer that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The server did not connect or list its tools (the message says why, without secrets).
    #[error("{message}")]
    Unavailable {
        /// The server's name.
        server: String,
        /// What happened.
        message: String,
    },
}

/// The MCP servers of a workspace.
pub struct McpManager {
    root: PathBuf,
    registry: Arc<Registry>,
    servers: RwLock<BTreeMap<String, Arc<McpServer>>>,
    startup: Startup,
    max_tools: usize,
    breaker: BreakerConfig,
    ranker: Mutex<Ranker>,
    cache: Mutex<(HashMap<String, Cached>, VecDeque<String>)>,
    sessions: Mutex<HashMap<String, Vec<CallRecord>>>,
    tracker: Tracker,
    changed: mpsc::UnboundedSender<String>,
    started: AtomicBool,
    next_key: AtomicU64,
    manage_tool: bool,
    me: Weak<Self>,
}

/// What a failed call returns to the model.
fn failure_error(server: &McpServer, tool: &str, failure: &Failure, state: &str) -> ToolError {
    let next = match failure.class {
        FailureClass::Client => "Check the arguments against the tool's schema (mcp_discover shows it) and try again",
        FailureClass::Transient | FailureClass::Server => {
            "Try again later, use another tool, or ask the person to check the server (`tandem doctor`)"
        }
    };
    ToolError::new(format!(
        "MCP server `{}` could not run `{tool}`: {} ({} error; server state: {state}). {next}.",
        server.name(),
        failure.message,
        failure.class.as_str()
    ))
    .with("server", server.name())
    .with("errorClass", failure.class.as_str())
    .with("serverState", state)
}

/// The text of a `tools/call` result: text blocks as they are, other blocks described.
fn result_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let field = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text" => parts.push(field("text").to_owned()),
            "image" | "audio" => parts.push(format!(
                "[{} {}, {} bytes of base64]",
                field("type"),
                field("mimeType"),
                field("data").len()
            )),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => parts.push(text.to_owned()),
                    None => parts.push(format!(
                        "[resource {}]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or_default()
                    )),
                }
            }
            "resource_link" => parts.push(format!("[resource link: {} {}]", field("uri"), field("name"))),
            other => parts.push(format!("[{other} content]")),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        return serde_json::to_string_pretty(structured).unwrap_or_default();
    }
    parts.join("\n")
}

impl McpManager {
    /// A manager for `root` that registers its tools in `registry`. Needs a tokio runtime.
    /// `manage_tool`: offer `mcp_server_manage` (the full profile).
    pub fn new(root: &Path, registry: Arc<Registry>, config: McpConfig, manage_tool: bool) -> Arc<Self> {
        for warning in &config.warnings {
            tracing::warn!("MCP configuration: {warning}");
        }
        let (changed, mut changes) = mpsc::unbounded_channel::<String>();
        let manager = Arc::new_cyclic(|me| {
            let servers = config
                .servers
                .into_iter()
                .map(|(name, server)| {
                    (name, Arc::new(McpServer::new(server, BreakerConfig::default(), changed.clone())))
                })
                .collect();
            Self {
                root: root.to_path_buf(),
                registry,
                servers: RwLock::new(servers),
                startup: config.startup,
                max_tools: config.max_tools.max(1),
                breaker: BreakerConfig::default(),
                ranker: Mutex::new(Ranker::default()),
                cache: Mutex::new((HashMap::new(), VecDeque::new())),
                sessions: Mutex::new(HashMap::new()),
                tracker: Tracker::new(root),
                changed,
                started: AtomicBool::new(false),
                next_key: AtomicU64::new(1),
                manage_tool,
                me: me.clone(),
            }
        });
        let weak = Arc::downgrade(&manager);
        tokio::spawn(async move {
            while let Some(name) = changes.recv().await {
                let Some(manager) = weak.upgrade() else { return };
                let Some(server) = manager.server(&name) else { continue };
                match server.refresh_tools(&manager.root).await {
                    Ok(()) => manager.sync_registry(),
                    Err(failure) => tracing::warn!(server = name, "re-listing tools failed: {}", failure.message),
                }
            }
        });
        manager.register_meta_tools();
        if manager.startup == Startup::Eager {
            manager.start();
        }
        manager
    }

    /// A manager for the workspace's configuration files (and the environment).
    pub fn from_workspace(root: &Path, registry: Arc<Registry>, manage_tool: bool) -> Arc<Self> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let trust = tandem_tools::trust::trust_of(root);
        let config = McpConfig::load(root, home.as_deref(), &|name| std::env::var(name).ok(), trust);
        Self::new(root, registry, config, manage_tool)
    }

    fn register_meta_tools(&self) {
        let tools = if self.servers.read().is_empty() && !self.manage_tool {
            Vec::new()
        } else {
            crate::meta::all(self.me.clone(), self.manage_tool)
        };
        self.registry.set_dynamic("mcp", tools);
    }

    /// The server called `name`.
    pub fn server(&self, name: &str) -> Option<Arc<McpServer>> {
        self.servers.read().get(name).cloned()
    }

    /// Every server, by name.
    pub fn servers(&self) -> Vec<Arc<McpServer>> {
        self.servers.read().values().cloned().collect()
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The tracker (log paths).
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Starts connecting every enabled server in the background (once).
    pub fn start(&self) {
        if self.started.swap(true, Ordering::SeqCst) {
            return;
        }
        for server in self.servers().into_iter().filter(|s| s.config.enabled) {
            let me = self.me.clone();
            tokio::spawn(async move {
                if let Some(manager) = me.upgrade() {
                    manager.connect(&server).await;
                }
            });
        }
    }

    /// Starts the servers (if lazy and not yet started) and waits up to `wait` for the first
    /// connection attempts, so that a session's first turn sees their tools.
    pub async fn ready(&self, wait: Duration) {
        self.start();
        let servers: Vec<_> = self.servers().into_iter().filter(|s| s.config.enabled).collect();
        let all = futures_util::future::join_all(servers.iter().map(|s| s.connection(&self.root)));
        if tokio::time::timeout(wait, all).await.is_err() {
            tracing::warn!(
                "some MCP servers are still connecting after {}s; their tools join when ready",
                wait.as_secs()
            );
        }
        self.sync_registry();
    }

    async fn connect(&self, server: &McpServer) {
        match server.connection(&self.root).await {
            Ok((_, fresh)) => {
                server.set_error(None);
                server.breaker().success();
                if fresh {
                    self.sync_registry();
                }
            }
            Err(failure) => {
                tracing::warn!(server = server.name(), "cannot connect: {}", failure.message);
                server.breaker().failure(failure.class, Instant::now());
                server.set_error(Some(failure.message));
            }
        }
    }

    /// Every known tool with its server, in server order.
    pub fn all_tools(&self) -> Vec<(Arc<McpServer>, RemoteTool)> {
        self.servers()
            .into_iter()
            .filter(|s| s.config.enabled)
            .flat_map(|s| s.tools().into_iter().map(move |t| (Arc::clone(&s), t)))
            .collect()
    }

    fn docs(tools: &[(Arc<McpServer>, RemoteTool)]) -> Vec<Doc> {
        tools
            .iter()
            .map(|(s, t)| Doc {
                name: t.exposed.clone(),
                text: crate::tool::rank_document(s.name(), &s.config.tags, t),
            })
            .collect()
    }

    /// Ranks every known tool for `query`.
    pub fn rank(&self, query: &str) -> Vec<(Ranked, Arc<McpServer>, RemoteTool)> {
        let tools = self.all_tools();
        let ranked = self.ranker.lock().rank(&Self::docs(&tools), query);
        let mut by_name: HashMap<String, (Arc<McpServer>, RemoteTool)> =
            tools.into_iter().map(|(s, t)| (t.exposed.clone(), (s, t))).collect();
        ranked.into_iter().filter_map(|r| by_name.remove(&r.name).map(|(s, t)| (r, s, t))).collect()
    }

    /// Puts the best-ranked `max_tools` MCP tools into the registry (the model's tool list);
    /// the others stay reachable through the meta-tools.
    pub fn sync_registry(&self) {
        let ranked = self.rank("");
        let offered: std::collections::HashSet<String> =
            ranked.iter().take(self.max_tools).map(|(r, _, _)| r.name.clone()).collect();
        for server in self.servers() {
            let tools: Vec<Arc<dyn Tool>> = if server.config.enabled {
                server
                    .tools()
                    .into_iter()
                    .filter(|t| offered.contains(&t.exposed))
                    .map(|t| {
                        Arc::new(McpTool::new(self.me.clone(), server.name(), &server.config.tags, t)) as Arc<dyn Tool>
                    })
                    .collect()
            } else {
                Vec::new()
            };
            self.registry.set_dynamic(&format!("mcp:{}", server.name()), tools);
        }
    }

    /// Finds a tool by its exposed name (`mcp__<server>__<tool>`) or as `<server>/<tool>`.
    pub fn lookup(&self, name: &str) -> Option<(Arc<McpServer>, RemoteTool)> {
        if let Some((server, tool)) = name.split_once('/')
            && let Some(server) = self.server(server)
        {
            return server.tools().into_iter().find(|t| t.name == tool).map(|t| (server, t));
        }
        self.all_tools().into_iter().find(|(_, t)| t.exposed == name)
    }

    /// Adds (or replaces) a server and connects it; its tool count, or why it is not usable
    /// (it stays configured, and is connected again on demand).
    pub async fn add_server(&self, config: ServerConfig) -> Result<usize, McpError> {
        let name = config.name.clone();
        let server = Arc::new(McpServer::new(config, self.breaker, self.changed.clone()));
        let old = self.servers.write().insert(name.clone(), Arc::clone(&server));
        if let Some(old) = old {
            old.disconnect().await;
        }
        self.register_meta_tools();
        self.connect(&server).await;
        let health = server.health().await;
        match health.last_error {
            Some(message) => Err(McpError::Unavailable { server: name, message }),
            None => Ok(health.tools),
        }
    }

    /// Adds servers an editor passed to `session/new` (ACP or common shape); returns warnings.
    /// They join the process's servers (a server of the same name is replaced when its
    /// configuration differs).
    pub async fn add_session_servers(&self, value: &Value) -> Vec<String> {
        let mut config = McpConfig::default();
        config.merge(value, "session/new", &|name| std::env::var(name).ok());
        for (name, server) in config.servers {
            if self.server(&name).is_some_and(|s| s.config.transport == server.transport) {
                continue;
            }
            if let Err(err) = self.add_server(server).await {
                config.warnings.push(format!("MCP server `{name}` from session/new: {err}"));
            }
        }
        config.warnings
    }

    /// Closes every connection (for stdio servers the MCP shutdown: stdin closed, a wait,
    /// SIGTERM, SIGKILL), all at once, and waits for them.
    pub async fn shutdown(&self) {
        let servers = self.servers();
        futures_util::future::join_all(servers.iter().map(|server| server.disconnect())).await;
    }

    /// Removes a server (its process is stopped, its tools leave the registry).
    pub async fn remove_server(&self, name: &str) -> bool {
        let removed = self.servers.write().remove(name);
        let Some(server) = removed else { return false };
        server.disconnect().await;
        self.registry.set_dynamic(&format!("mcp:{name}"), Vec::new());
        self.sync_registry();
        true
    }

    /// The calls `session` made.
    pub fn session_calls(&self, session: Option<&str>) -> Vec<CallRecord> {
        let sessions = self.sessions.lock();
        sessions.get(session.unwrap_or("cli")).cloned().unwrap_or_default()
    }

    /// Stats of a tool: (ok, failed, mean ms).
    pub fn stats(&self, tool: &str) -> (u64, u64, Option<f64>) {
        let ranker = self.ranker.lock();
        ranker.stats.get(tool).map_or((0, 0, None), |s| (s.ok, s.failed, s.mean_ms()))
    }

    #[expect(clippy::too_many_arguments, reason = "one call's outcome, recorded in three places")]
    fn finish(&self, ctx: &ToolContext, tool: &str, key: &str, arguments: &Value, status: &str, ok: bool, ms: u64) {
        self.ranker.lock().record(tool, ok, ms);
        let session = ctx.session_id.clone().unwrap_or_else(|| "cli".to_owned());
        self.sessions.lock().entry(session).or_default().push(CallRecord {
            tool: tool.to_owned(),
            key: key.to_owned(),
            ok,
            ms,
        });
        self.tracker.record(&Entry { session: ctx.session_id.as_deref(), tool, arguments, status, ms });
        let ranked: Vec<Ranked> = self.rank("").into_iter().map(|(r, _, _)| r).collect();
        self.tracker.snapshot(&ranked, &|name| self.stats(name));
    }

    /// Calls `remote` of `server` on behalf of `ctx`, through the whole resilience chain.
    pub async fn call(
        &self,
        server: &McpServer,
        remote: &RemoteTool,
        arguments: Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let tool = remote.exposed.as_str();
        let key = format!("{tool}\u{0}{arguments}");
        let session = ctx.session_id.as_deref().unwrap_or("cli");

        // Loop detection: the same call again and again will not give another answer.
        let repeats = {
            let sessions = self.sessions.lock();
            let recent = sessions.get(session).map(Vec::as_slice).unwrap_or_default();
            recent.iter().rev().take(LOOP_WINDOW).filter(|c| c.key == key).count()
        };
        if repeats >= LOOP_REPEATS {
            let error = ToolError::new(format!(
                "`{tool}` was already called {repeats} times with these exact arguments in this session; calling it again will not change the answer. Use the earlier result, change the arguments, or try another approach"
            ))
            .with("loopDetected", true);
            self.finish(ctx, tool, &key, &arguments, "refused (loop)", false, 0);
            return Err(error);
        }

        // Approval: tools that do not declare themselves read-only ask like a command.
        if !remote.read_only
            && let Some(approver) = &ctx.approver
        {
            let check = ToolCheck {
                tool: tool.to_owned(),
                server: Some(server.name().to_owned()),
                arguments: arguments.clone(),
                reason: "the server does not mark this tool read-only, so it may change things".to_owned(),
            };
            match approver.confirm_tool(&check).await {
                CommandDecision::Allow => {}
                CommandDecision::Reject { reason } => {
                    self.finish(ctx, tool, &key, &arguments, "rejected by the person", false, 0);
                    let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
                    return Err(ToolError::new(format!(
                        "the person did not allow `{tool}` to run{why}. Do not retry it unchanged; ask or take another approach"
                    )));
                }
                CommandDecision::Cancelled => {
                    return Err(ToolError::new("cancelled while waiting for approval"));
                }
                // Only a command can run in a sandbox: fail closed if an approver offers it here.
                CommandDecision::RunSandboxed => {
                    return Err(ToolError::new(format!("`{tool}` cannot run in a sandbox and was not approved")));
                }
            }
        }

        let idempotency_key =
            format!("tandem-{}-{}-{}", std::process::id(), session, self.next_key.fetch_add(1, Ordering::Relaxed));
        let deadline = started + server.config.timeout;
        let mut attempt = 0u32;
        let outcome: Result<Value, Failure> = loop {
            // Circuit breaker.
            let admission = server.breaker().admit(Instant::now());
            let probe = match admission {
                Admission::Go => false,
                Admission::Probe => true,
                Admission::Reject(wait) => {
                    let health = server.health().await;
                    break Err(Failure {
                        class: FailureClass::Transient,
                        message: format!(
                            "the circuit is open after repeated failures, so the call was not sent (next probe in {:.1}s; last error: {})",
                            wait.as_secs_f64(),
                            health.last_error.unwrap_or_default()
                        ),
                        reached: false,
                    });
                }
            };
            // Bulkhead: waiting for a slot counts against the call's timeout.
            let left = deadline.saturating_duration_since(Instant::now());
            let permit = match tokio::time::timeout(left, Arc::clone(&server.bulkhead).acquire_owned()).await {
                Ok(Ok(permit)) => permit,
                _ => {
                    if probe {
                        server.breaker().probe_abandoned(Instant::now());
                    }
                    break Err(Failure {
                        class: FailureClass::Server,
                        message: format!(
                            "all {} call slots (max_concurrent) stayed busy for {:.1}s",
                            server.config.max_concurrent,
                            server.config.timeout.as_secs_f64()
                        ),
                        reached: false,
                    });
                }
            };
            // Queueing for a slot counted against the timeout; a (re)connection does not.
            let left = deadline.saturating_duration_since(Instant::now());
            let result = server.call_once(&self.root, &remote.name, arguments.clone(), &idempotency_key, left).await;
            drop(permit);
            match result {
                Ok(result) => {
                    server.breaker().success();
                    server.set_error(None);
                    break Ok(serde_json::to_value(&result).unwrap_or_default());
                }
                Err(failure) => {
                    let opened = server.breaker().failure(failure.class, Instant::now());
                    if opened {
                        tracing::warn!(server = server.name(), "circuit opened: {}", failure.message);
                    }
                    if failure.class != FailureClass::Client {
                        server.set_error(Some(failure.message.clone()));
                    }
                    let safe = !failure.reached || remote.idempotent;
                    let seed = started.elapsed().as_nanos() as u64 ^ attempt as u64;
                    let delay = backoff(attempt + 1, seed);
                    let time_left = deadline.saturating_duration_since(Instant::now()) > delay;
                    if failure.class == FailureClass::Transient && safe && attempt < MAX_RETRIES && time_left && !opened
                    {
                        attempt += 1;
                        tracing::info!(server = server.name(), attempt, ?delay, "retrying: {}", failure.message);
                        tokio::time::sleep(delay).await;
                        continue;
                    }
                    break Err(failure);
                }
            }
        };
        let ms = started.elapsed().as_millis() as u64;
        let meta = |mut out: Map<String, Value>| {
            out.insert("server".into(), server.name().into());
            out.insert("tool".into(), remote.name.clone().into());
            out.insert("attempts".into(), (attempt + 1).into());
            out.insert("idempotencyKey".into(), idempotency_key.clone().into());
            out
        };
        match outcome {
            Ok(result) => {
                server.count(true);
                // Another server's output is redacted like a command's before the model, the
                // session store or the editor see it.
                let text = tandem_tools::exec::redact::redact(&result_text(&result)).text;
                if result.get("isError").and_then(Value::as_bool).unwrap_or(false) {
                    self.finish(ctx, tool, &key, &arguments, "tool error", false, ms);
                    let mut error = ToolError::new(format!("`{tool}` reported an error: {text}"));
                    error.metadata = meta(error.metadata);
                    return Err(error);
                }
                self.finish(ctx, tool, &key, &arguments, "ok", true, ms);
                if remote.read_only {
                    let mut cache = self.cache.lock();
                    let (entries, order) = &mut *cache;
                    if entries.insert(key.clone(), Cached { output: text.clone(), at: SystemTime::now() }).is_none() {
                        order.push_back(key.clone());
                        if order.len() > CACHE_ENTRIES
                            && let Some(old) = order.pop_front()
                        {
                            entries.remove(&old);
                        }
                    }
                }
                let mut out = ToolOutput::new(tool, text);
                if let Some(structured) = result.get("structuredContent") {
                    out.metadata.insert("structuredContent".into(), structured.clone());
                }
                out.metadata = meta(out.metadata);
                Ok(out)
            }
            Err(failure) => {
                server.count(false);
                let state = server.health().await.state;
                // Degradation: an identical earlier read-only call's result, marked as such.
                let cached = self.cache.lock().0.get(&key).cloned();
                if failure.class != FailureClass::Client
                    && let Some(cached) = cached
                {
                    self.finish(ctx, tool, &key, &arguments, "served from cache", false, ms);
                    let age = cached.at.elapsed().map_or(0, |d| d.as_secs());
                    let text = format!(
                        "[CACHED RESULT from {age}s ago: MCP server `{}` failed now ({}; state: {state}). This may be out of date.]\n{}",
                        server.name(),
                        failure.message,
                        cached.output
                    );
                    let mut out = ToolOutput::new(format!("{tool} (cached)"), text).with("cached", true);
                    out.metadata = meta(out.metadata);
                    return Ok(out);
                }
                let status = format!("failed ({})", failure.class.as_str());
                self.finish(ctx, tool, &key, &arguments, &status, false, ms);
                let mut error = failure_error(server, tool, &failure, &state);
                error.metadata = meta(error.metadata);
                Err(error)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_text_describes_every_block() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"}
        ]});
        assert_eq!(
            result_text(&result),
            "hello\n[image image/png, 4 bytes of base64]\ninside\n[resource link: file:///b b]"
        );
        assert_eq!(result_text(&json!({"content": [], "structuredContent": {"a": 1}})), "{\n  \"a\": 1\n}");
    }
}
