//! The MCP servers of one workspace: connects them (eagerly or lazily), keeps the registry's
//! `mcp__*` tools in step with what they list, and runs every call through the resilience chain:
//! loop check → approval → circuit breaker → bulkhead → timeout → classified retry → result,
//! with a degradation chain (cached identical read-only result, clearly marked; else an error
//! naming the server's state) and tracking.

use parking_lot::{Mutex, RwLock};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;
use tandem_tool_api::{Registry, Tool, ToolContext};
use tokio::sync::mpsc;

use crate::config::{McpConfig, ServerConfig, Startup};
use crate::dispatch::{Ledger, ResultCache};
use crate::error::McpError;
use crate::meta::Servers;
use crate::ranking::{Doc, Ranked, Ranker};
use crate::resilience::BreakerConfig;
use crate::server::{McpServer, RemoteTool};
use crate::tool::{Dispatcher, McpTool};
use crate::tracking::{CallRecord, Entry, Tracker};

/// The MCP servers of a workspace.
pub struct McpManager {
    root: PathBuf,
    registry: Arc<Registry>,
    servers: RwLock<BTreeMap<String, Arc<McpServer>>>,
    startup: Startup,
    max_tools: usize,
    breaker: BreakerConfig,
    ranker: Mutex<Ranker>,
    /// Results of read-only calls, for the degradation chain.
    cache: Mutex<ResultCache>,
    sessions: Mutex<HashMap<String, Vec<CallRecord>>>,
    tracker: Tracker,
    changed: mpsc::UnboundedSender<String>,
    started: AtomicBool,
    next_key: AtomicU64,
    manage_tool: bool,
    me: Weak<Self>,
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
                cache: Mutex::new(ResultCache::default()),
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
        let trust = tandem_tool_api::trust::trust_of(root);
        let config = McpConfig::load(root, home.as_deref(), &|name| std::env::var(name).ok(), trust);
        Self::new(root, registry, config, manage_tool)
    }

    fn register_meta_tools(&self) {
        let tools = if self.servers.read().is_empty() && !self.manage_tool {
            Vec::new()
        } else {
            let client: Weak<dyn Servers> = self.me.clone();
            crate::meta::all(client, self.manage_tool)
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
        // A first attempt that fails at once (a program refused, not found) is said at once,
        // not only once the background attempt has recorded it.
        let all = futures_util::future::join_all(servers.iter().map(|s| async move {
            if let Err(failure) = s.connection(&self.root).await {
                s.set_error(Some(failure.message));
            }
        }));
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
                        let dispatcher: Weak<dyn Dispatcher> = self.me.clone();
                        Arc::new(McpTool::new(dispatcher, server.name(), &server.config.tags, t)) as Arc<dyn Tool>
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
}

impl Dispatcher for McpManager {
    fn server(&self, name: &str) -> Option<Arc<McpServer>> {
        McpManager::server(self, name)
    }
}

#[async_trait::async_trait]
impl Servers for McpManager {
    fn servers(&self) -> Vec<Arc<McpServer>> {
        McpManager::servers(self)
    }

    async fn ready(&self, wait: Duration) {
        McpManager::ready(self, wait).await;
    }

    fn rank(&self, query: &str) -> Vec<(Ranked, Arc<McpServer>, RemoteTool)> {
        McpManager::rank(self, query)
    }

    fn lookup(&self, name: &str) -> Option<(Arc<McpServer>, RemoteTool)> {
        McpManager::lookup(self, name)
    }

    async fn add_server(&self, config: ServerConfig) -> Result<usize, McpError> {
        McpManager::add_server(self, config).await
    }

    async fn remove_server(&self, name: &str) -> bool {
        McpManager::remove_server(self, name).await
    }

    fn session_calls(&self, session: Option<&str>) -> Vec<CallRecord> {
        McpManager::session_calls(self, session)
    }

    fn log_path(&self, session: Option<&str>) -> PathBuf {
        self.tracker().log_path(session)
    }
}

impl Ledger for McpManager {
    fn root(&self) -> &Path {
        &self.root
    }

    fn next_key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }

    fn repeats(&self, session: &str, key: &str, window: usize) -> usize {
        let sessions = self.sessions.lock();
        let recent = sessions.get(session).map(Vec::as_slice).unwrap_or_default();
        recent.iter().rev().take(window).filter(|c| c.key == key).count()
    }

    fn cache(&self) -> &Mutex<ResultCache> {
        &self.cache
    }

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
}
