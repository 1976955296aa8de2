//! The proxy: servers per (name, project root), started lazily, restarted with backoff when
//! they die (the failed call retried once), and the [`CodeIntel`] operations on top, with
//! positions converted between the tools' chars and each server's encoding.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use async_lsp::lsp_types::{self as lsp, Url};
use async_trait::async_trait;
use serde_json::{Value, json};
use tandem_text::{BufferCache, Lines, Position, PositionEncoding, Rope, char_to_position, position_to_char};
use tandem_tool_api::binaries::{Binaries, Program};
use tandem_tool_api::intel::{
    CallDirection, CallItem, CodeIntel, Diagnostic, DiagnosticsReport, IntelError, Location, PreviewFile,
    PreviewedFile, Severity, Symbol, TextRange, TextReplacement,
};
use tandem_tool_api::trust::{Trust, trust_of};

use crate::ProgressEvent;
use crate::catalog::{Catalog, Choice, LspSettings, ServerSpec, WORKSPACE_DIRS, project_root};
use crate::restricted;
use crate::server::{DiskChange, Server, ServerError, raw};

mod preview;

/// Restarts allowed within [`RESTART_WINDOW`] before a server is given up on.
const MAX_RESTARTS: usize = 5;
const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// A (server, root) slot: the running server, and when it was restarted.
#[derive(Default)]
struct Slot {
    server: Option<Arc<Server>>,
    /// The program `server` runs.
    program: Option<Program>,
    restarts: Vec<Instant>,
    /// Documents to reopen after a restart.
    open: Vec<PathBuf>,
}

type SharedSlot = Arc<tokio::sync::Mutex<Slot>>;

/// Files whose chosen server is remembered at most (then forgotten all at once).
const MAX_CHOSEN: usize = 4096;

/// Tandem as a language client.
pub struct LspProxy {
    workspace: PathBuf,
    /// Where server programs may come from (the workspace's trust and pins).
    binaries: Arc<Binaries>,
    cache: Arc<BufferCache>,
    catalog: Catalog,
    request_timeout: Duration,
    /// How long a query waits for a server to finish indexing (at least `request_timeout`).
    ready_wait: Duration,
    diagnostics_wait: Duration,
    diagnostics_after_edit: bool,
    /// rust-analyzer may run `cargo check` for its diagnostics in a trusted folder.
    cargo_check: bool,
    /// How many files that reference a change a preview looks at besides the changed ones.
    preview_files: usize,
    slots: Mutex<HashMap<(String, PathBuf), SharedSlot>>,
    /// The slot each file's server was chosen for (server name and project root), so that a
    /// query to a running server does not search for its program and project again.
    chosen: Mutex<HashMap<PathBuf, (String, PathBuf)>>,
    progress_tx: Option<tokio::sync::mpsc::UnboundedSender<ProgressEvent>>,
    /// How long a preview waits for the servers; zero: no previews.
    preview_wait: Duration,
    /// The documents a preview handed staged text to, until it ends.
    previews: Mutex<HashMap<PathBuf, preview::Previewed>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn intel_error(err: ServerError) -> IntelError {
    match err {
        ServerError::Timeout { .. } => IntelError::Timeout(format!("{err}; try again, or use grep")),
        ServerError::NotReady { .. } => IntelError::Timeout(format!("{err}; try again in a moment, or use grep")),
        other => IntelError::Server(other.to_string()),
    }
}

/// Chars position → the server's encoding.
fn to_server(rope: &Rope, at: Position, encoding: PositionEncoding) -> lsp::Position {
    let index = position_to_char(rope, at, PositionEncoding::Utf32).unwrap_or_else(|_| rope.len_chars());
    let p = char_to_position(rope, index, encoding);
    lsp::Position { line: p.line, character: p.character }
}

/// The server's encoding → chars, over the file's `lines` (when the file could be read); the
/// server's position as it is where it does not convert.
fn from_server(lines: Option<&Lines>, p: lsp::Position, encoding: PositionEncoding) -> Position {
    let raw = Position { line: p.line, character: p.character };
    lines.and_then(|lines| lines.to_utf32(raw, encoding)).unwrap_or(raw)
}

/// Texts of result files, read once per answer, indexed by line.
struct ResultTexts<'a> {
    cache: &'a BufferCache,
    encoding: PositionEncoding,
    files: HashMap<PathBuf, Option<Lines>>,
}

impl ResultTexts<'_> {
    fn range(&mut self, path: &Path, range: &lsp::Range) -> TextRange {
        let cache = self.cache;
        let lines = self.files.entry(path.to_path_buf()).or_insert_with(|| Server::current_lines(cache, path).ok());
        TextRange {
            start: from_server(lines.as_ref(), range.start, self.encoding),
            end: from_server(lines.as_ref(), range.end, self.encoding),
        }
    }

    fn location(&mut self, uri: &Url, range: &lsp::Range) -> Option<Location> {
        let path = uri.to_file_path().ok()?;
        let range = self.range(&path, range);
        Some(Location { path, range })
    }
}

fn parse<T: serde::de::DeserializeOwned>(value: Value) -> Option<T> {
    serde_json::from_value(value).ok()
}

/// `Location | Location[] | LocationLink[] | null`, leniently.
fn locations(value: Value, texts: &mut ResultTexts<'_>) -> Vec<Location> {
    let items = match value {
        Value::Array(items) => items,
        Value::Null => Vec::new(),
        one => vec![one],
    };
    items
        .into_iter()
        .filter_map(|item| {
            // Read in place (no copy of the item per attempt); a link only when it names a target.
            if item.get("targetUri").is_some()
                && let Ok(link) = <lsp::LocationLink as serde::Deserialize>::deserialize(&item)
            {
                return texts.location(&link.target_uri, &link.target_selection_range);
            }
            let location = <lsp::Location as serde::Deserialize>::deserialize(&item).ok()?;
            texts.location(&location.uri, &location.range)
        })
        .collect()
}

/// What the server of `spec` runs without, and why, when it runs restricted.
fn restriction_note(spec: &ServerSpec) -> Option<String> {
    (!spec.restricted.is_empty()).then(|| {
        format!(
            "{} runs restricted until `tandem trust`, because this folder is not trusted and these would run the repository's code: {} off",
            spec.name,
            spec.restricted.join(", ")
        )
    })
}

fn kind_name(kind: lsp::SymbolKind) -> String {
    let name = format!("{kind:?}");
    // `SymbolKind`'s Debug is its constant name (`FUNCTION`) or a number for unknown kinds.
    name.to_lowercase().replace('_', " ")
}

fn hover_text(value: &Value) -> Option<String> {
    fn part(v: &Value) -> String {
        match v {
            Value::String(s) => s.clone(),
            Value::Object(o) => {
                let text = o.get("value").and_then(Value::as_str).unwrap_or_default();
                match o.get("language").and_then(Value::as_str) {
                    Some(language) => format!("```{language}\n{text}\n```"),
                    None => text.to_owned(),
                }
            }
            Value::Array(items) => items.iter().map(part).collect::<Vec<_>>().join("\n\n"),
            _ => String::new(),
        }
    }
    let text = part(value.get("contents")?);
    (!text.trim().is_empty()).then(|| text.trim().to_owned())
}

fn severity(s: Option<lsp::DiagnosticSeverity>) -> Severity {
    match s {
        Some(lsp::DiagnosticSeverity::WARNING) => Severity::Warning,
        Some(lsp::DiagnosticSeverity::INFORMATION) => Severity::Information,
        Some(lsp::DiagnosticSeverity::HINT) => Severity::Hint,
        _ => Severity::Error,
    }
}

/// What starting a server takes, owned: a start may outlive the call that began it (a preview
/// does not wait for a slow start, the start goes on for the next call).
struct Start {
    spec: ServerSpec,
    program: Program,
    binaries: Arc<Binaries>,
    root: PathBuf,
    request_timeout: Duration,
    ready_wait: Duration,
    progress_tx: Option<tokio::sync::mpsc::UnboundedSender<ProgressEvent>>,
    cache: Arc<BufferCache>,
}

impl Start {
    /// The running server of `slot`, started or restarted (with backoff) as needed.
    async fn run(self, slot: SharedSlot) -> Result<Arc<Server>, IntelError> {
        let Start { spec, program, binaries, root, request_timeout, ready_wait, progress_tx, cache } = self;
        let mut slot = slot.lock().await;
        if let Some(server) = &slot.server {
            if server.alive() {
                return Ok(Arc::clone(server));
            }
            // It died: restart with backoff, unless it keeps dying.
            slot.open = server.open_paths();
            let now = Instant::now();
            slot.restarts.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
            if slot.restarts.len() >= MAX_RESTARTS {
                return Err(IntelError::Server(format!(
                    "{} crashed {} times within a minute; not restarting it. Check its log (TANDEM_LOG=info)",
                    spec.name,
                    slot.restarts.len()
                )));
            }
            let backoff = Duration::from_millis(200 * (1 << slot.restarts.len()) - 200);
            tracing::warn!(server = %spec.name, ?backoff, "restarting a server that died");
            tokio::time::sleep(backoff).await;
            slot.restarts.push(now);
            slot.server = None;
        }
        // Checked at every start: a program in the workspace runs only while the folder is
        // trusted and its content is the one pinned.
        binaries.check(&program).map_err(|err| IntelError::NoServer(err.to_string()))?;
        let path = binaries.child_path();
        let server = Server::start(spec, &program.path, root, request_timeout, ready_wait, progress_tx, path)
            .await
            .map_err(intel_error)?;
        server.reopen(&cache, &slot.open);
        slot.server = Some(Arc::clone(&server));
        slot.program = Some(program);
        Ok(server)
    }
}

/// A server's diagnostic, its range already converted to chars.
fn diagnostic(d: lsp::Diagnostic, range: TextRange) -> Diagnostic {
    Diagnostic {
        range,
        severity: severity(d.severity),
        message: d.message,
        code: d.code.map(|c| match c {
            lsp::NumberOrString::Number(n) => n.to_string(),
            lsp::NumberOrString::String(s) => s,
        }),
        source: d.source,
    }
}

impl LspProxy {
    /// A proxy for the workspace at `workspace`, syncing documents from `cache`. Readiness and
    /// server progress go to `progress_tx` (for the editor's `$/progress`).
    pub fn new(
        workspace: PathBuf,
        cache: Arc<BufferCache>,
        settings: &LspSettings,
        progress_tx: Option<tokio::sync::mpsc::UnboundedSender<ProgressEvent>>,
    ) -> Result<Self, String> {
        if settings.diagnostics_from_editor == Some(true) {
            tracing::warn!("[lsp] diagnostics_from_editor is not implemented yet; using Tandem's own servers");
        }
        let binaries = Arc::new(Binaries::new(&workspace, trust_of(&workspace)));
        Ok(Self {
            workspace,
            binaries,
            cache,
            catalog: Catalog::new(settings)?,
            request_timeout: Duration::from_millis(settings.request_timeout_ms.unwrap_or(20_000)),
            ready_wait: Duration::ZERO,
            diagnostics_wait: Duration::from_millis(settings.diagnostics_wait_ms.unwrap_or(10_000)),
            diagnostics_after_edit: settings.diagnostics_after_edit.unwrap_or(true),
            cargo_check: settings.cargo_check.unwrap_or(true),
            preview_files: preview::DEFAULT_FILES,
            slots: Mutex::new(HashMap::new()),
            chosen: Mutex::new(HashMap::new()),
            progress_tx,
            preview_wait: preview::DEFAULT_WAIT,
            previews: Mutex::new(HashMap::new()),
        })
    }

    /// Sets how long a preview of a staged change waits for the servers (`[review]
    /// preview_timeout_ms`); zero turns previews off.
    #[must_use]
    pub fn with_preview_wait(mut self, wait: Duration) -> Self {
        self.preview_wait = wait;
        self
    }

    /// Lets queries wait up to `wait` for a server to finish loading the project (rust-analyzer
    /// indexing) before they are asked, instead of the request timeout: for a process that
    /// keeps its servers warm for later calls, where the first call may wait for the index.
    #[must_use]
    pub fn with_ready_wait(mut self, wait: Duration) -> Self {
        self.ready_wait = wait;
        self
    }

    /// Sets how many files that reference what a change touches (and are not open) a preview
    /// opens in the servers besides the changed ones (`[review] preview_files`); zero: none.
    #[must_use]
    pub fn with_preview_files(mut self, files: usize) -> Self {
        self.preview_files = files;
        self
    }

    /// Looks server programs up (and checks them) with `binaries` instead of this process's
    /// `PATH`, the workspace's trust and the person's pins.
    #[must_use]
    pub fn with_binaries(mut self, binaries: Binaries) -> Self {
        self.binaries = Arc::new(binaries);
        self
    }

    /// The catalog in force.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Which server serves `path`, and its root. `Ok(None)`: no server covers it (or its
    /// project marker is missing), quietly.
    /// Before trust the server is restricted ([`restricted`]).
    fn choose(&self, path: &Path) -> Result<Option<(ServerSpec, Program, PathBuf)>, IntelError> {
        let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_owned();
        let trust = self.binaries.trust();
        match self.catalog.choose(path, &self.binaries) {
            Choice::Unknown => Err(IntelError::NoServer(format!(
                "no language server for {} files; configure one in .tandem/config.toml [lsp.<name>] with `command` and `extensions`",
                if extension.is_empty() { "extension-less".to_owned() } else { format!(".{extension}") }
            ))),
            Choice::Missing { spec } => Err(IntelError::NoServer(format!(
                "{} not found on PATH{}; install with {}, or configure another server in .tandem/config.toml [lsp.<name>]",
                spec.command[0],
                match trust {
                    Trust::Trusted => format!(" (nor in {})", WORKSPACE_DIRS.join(" or ")),
                    Trust::Untrusted => String::new(),
                },
                spec.install
            ))),
            Choice::InRepository { spec, path: found } => Err(IntelError::NoServer(format!(
                "{} was found only in the repository (`{}`), and this folder is not trusted, so Tandem does not run it: a cloned repository's programs run only after `tandem trust`. If you trust this repository, run `tandem trust` in {}; otherwise install {} outside it ({})",
                spec.command[0],
                found.strip_prefix(&self.workspace).unwrap_or(&found).display(),
                self.workspace.display(),
                spec.name,
                spec.install
            ))),
            Choice::Server { mut spec, program } => match project_root(&spec, path, &self.workspace) {
                Some(root) => {
                    match trust {
                        Trust::Untrusted => restricted::restrict(&mut spec, &program.path, &root, &self.binaries)
                            .map_err(IntelError::NoServer)?,
                        Trust::Trusted => restricted::trusted_settings(&mut spec, &program.path, self.cargo_check),
                    }
                    Ok(Some((spec, program, root)))
                }
                None => Ok(None),
            },
        }
    }

    /// The running server for `path`, started or restarted as needed.
    async fn server_for(&self, path: &Path) -> Result<Arc<Server>, IntelError> {
        if let Some(server) = self.running_for(path) {
            return Ok(server);
        }
        let Some((spec, program, root)) = self.choose(path)? else {
            return Err(IntelError::NoServer(format!(
                "no project for {} above `{}` (rust-analyzer needs a Cargo.toml)",
                self.catalog.servers().iter().find(|s| s.requires_root_marker).map_or("", |s| s.name.as_str()),
                path.display()
            )));
        };
        let slot = self.slot(&spec.name, &root);
        let key = (spec.name.clone(), root.clone());
        let server = self.start(spec, program, root).run(slot).await?;
        let mut chosen = lock(&self.chosen);
        if chosen.len() >= MAX_CHOSEN {
            chosen.clear();
        }
        chosen.insert(path.to_path_buf(), key);
        Ok(server)
    }

    /// The server already chosen for `path`, while it runs: what [`Self::choose`] and
    /// [`Start::run`] would give again, without searching PATH and the folders above `path`.
    /// A server that stopped (it died, or [`Self::recheck_programs`] stopped it) is not
    /// returned, so the next query chooses and starts afresh.
    fn running_for(&self, path: &Path) -> Option<Arc<Server>> {
        let key = lock(&self.chosen).get(path).cloned()?;
        let slot = lock(&self.slots).get(&key).cloned()?;
        let slot = slot.try_lock().ok()?;
        slot.server.as_ref().filter(|server| server.alive()).cloned()
    }

    /// The slot of the server `name` for `root`.
    fn slot(&self, name: &str, root: &Path) -> SharedSlot {
        Arc::clone(lock(&self.slots).entry((name.to_owned(), root.to_path_buf())).or_default())
    }

    /// What starting `spec` for `root` takes.
    fn start(&self, spec: ServerSpec, program: Program, root: PathBuf) -> Start {
        Start {
            spec,
            program,
            binaries: Arc::clone(&self.binaries),
            root,
            request_timeout: self.request_timeout,
            ready_wait: self.ready_wait,
            progress_tx: self.progress_tx.clone(),
            cache: Arc::clone(&self.cache),
        }
    }

    /// Runs `op` on the server for `path`; if the server died meanwhile, restarts it and runs
    /// `op` once more.
    async fn with_server<T, F, Fut>(&self, path: &Path, op: F) -> Result<T, IntelError>
    where
        F: Fn(Arc<Server>) -> Fut,
        Fut: Future<Output = Result<T, ServerError>>,
    {
        let server = self.server_for(path).await?;
        match op(Arc::clone(&server)).await {
            Err(ServerError::Died { .. }) => {
                tracing::warn!(server = %server.spec.name, "died during a call; retrying once");
                let server = self.server_for(path).await?;
                op(server).await.map_err(intel_error)
            }
            other => other.map_err(intel_error),
        }
    }

    fn texts(&self, encoding: PositionEncoding) -> ResultTexts<'_> {
        ResultTexts { cache: &self.cache, encoding, files: HashMap::new() }
    }

    /// A position request (`definition`, ...): syncs, converts, asks.
    async fn at_position<R>(&self, path: &Path, at: Position, extra: Value) -> Result<(Value, Arc<Server>), IntelError>
    where
        R: lsp::request::Request<Params = Value, Result = Value>,
    {
        let extra = &extra;
        let server = self.server_for(path).await?;
        if !server.supports(R::METHOD) {
            return Err(IntelError::Unsupported(format!(
                "{} does not offer {} (its capabilities say so); try grep instead",
                server.spec.name,
                R::METHOD
            )));
        }
        self.with_server(path, |server| async move {
            let (uri, _, rope) = server.sync(&self.cache, path)?;
            let mut params = json!({
                "textDocument": { "uri": uri },
                "position": to_server(&rope, at, server.encoding),
            });
            if let (Value::Object(p), Value::Object(e)) = (&mut params, extra) {
                p.extend(e.clone());
            }
            let answer = server.ask_loaded::<R>(&uri, params).await?;
            Ok((answer, server))
        })
        .await
    }

    fn symbol_tree(&self, items: Vec<lsp::DocumentSymbol>, path: &Path, texts: &mut ResultTexts<'_>) -> Vec<Symbol> {
        items
            .into_iter()
            .map(|s| {
                let range = texts.range(path, &s.range);
                Symbol {
                    name: s.name,
                    kind: kind_name(s.kind),
                    detail: s.detail,
                    location: Location { path: path.to_path_buf(), range },
                    selection: texts.range(path, &s.selection_range),
                    children: self.symbol_tree(s.children.unwrap_or_default(), path, texts),
                }
            })
            .collect()
    }

    fn call_item(&self, item: &lsp::CallHierarchyItem, texts: &mut ResultTexts<'_>) -> Option<Symbol> {
        let location = texts.location(&item.uri, &item.range)?;
        let selection = texts.range(&location.path, &item.selection_range);
        Some(Symbol {
            name: item.name.clone(),
            kind: kind_name(item.kind),
            detail: item.detail.clone(),
            location,
            selection,
            children: Vec::new(),
        })
    }

    /// Diagnostics of `path`, fresh for its current text, waiting at most `wait`.
    async fn diagnostics_within(&self, path: &Path, wait: Duration) -> DiagnosticsReport {
        let server = match self.server_for(path).await {
            Ok(server) => server,
            Err(IntelError::NoServer(_)) => return DiagnosticsReport::NoServer,
            Err(err) => return DiagnosticsReport::Failed { message: err.to_string() },
        };
        let name = server.spec.name.clone();
        let deadline = tokio::time::Instant::now() + wait;
        let result = match server.fresh_diagnostics(&self.cache, path, deadline).await {
            Err(ServerError::Died { .. }) => match self.server_for(path).await {
                Ok(server) => server.fresh_diagnostics(&self.cache, path, deadline).await,
                Err(err) => return DiagnosticsReport::Failed { message: err.to_string() },
            },
            other => other,
        };
        match result {
            Ok(Some((items, _rope))) => {
                let mut texts = self.texts(server.encoding);
                let diagnostics = items
                    .into_iter()
                    .map(|d| {
                        let range = texts.range(path, &d.range);
                        diagnostic(d, range)
                    })
                    .collect();
                DiagnosticsReport::Fresh { server: restricted::described(&server.spec), diagnostics }
            }
            Ok(None) => DiagnosticsReport::NotReady {
                server: name,
                reason: format!("no diagnostics for the current text within {:.1} s", wait.as_secs_f64()),
            },
            Err(err) => DiagnosticsReport::Failed { message: err.to_string() },
        }
    }

    /// The server's process id for `path`'s server, if running (tests, `tandem doctor`).
    pub fn running(&self) -> Vec<(String, PathBuf, Option<u32>)> {
        let slots: Vec<_> = lock(&self.slots).iter().map(|(k, v)| (k.clone(), Arc::clone(v))).collect();
        slots
            .into_iter()
            .filter_map(|((name, root), slot)| {
                let slot = slot.try_lock().ok()?;
                let server = slot.server.as_ref()?;
                Some((name, root, server.pid))
            })
            .collect()
    }

    /// The servers running now.
    async fn running_servers(&self) -> Vec<Arc<Server>> {
        let slots: Vec<_> = lock(&self.slots).values().cloned().collect();
        let mut out = Vec::new();
        for slot in slots {
            if let Some(server) = slot.lock().await.server.clone() {
                out.push(server);
            }
        }
        out
    }

    /// Tells every running server that files changed on disk behind its back
    /// (`workspace/didChangeWatchedFiles`): what a client that watches the disk sends.
    pub async fn disk_changed(&self, changes: &[(PathBuf, DiskChange)]) {
        if changes.is_empty() {
            return;
        }
        for server in self.running_servers().await {
            server.files_changed(changes);
        }
    }

    /// Checks again, as at their start, the programs of the running servers: one that may not
    /// start now (its folder is no longer trusted, its file changed since it was pinned) is
    /// shut down, so the next request tries to start it and says why it cannot. For a process
    /// that outlives many calls (warm servers), which must refuse what a fresh one would.
    pub async fn recheck_programs(&self) {
        let slots: Vec<_> = lock(&self.slots).values().cloned().collect();
        for slot in slots {
            let mut slot = slot.lock().await;
            let Some(program) = slot.program.clone() else { continue };
            if slot.server.is_none() {
                continue;
            }
            if let Err(err) = self.binaries.check(&program) {
                tracing::warn!(program = %program.path.display(), "stopping a running server: {err}");
                slot.program = None;
                if let Some(server) = slot.server.take() {
                    server.shutdown().await;
                }
            }
        }
    }

    /// Shuts every server down (`shutdown` + `exit`, then kill what stays).
    pub async fn shutdown(&self) {
        let slots: Vec<_> = lock(&self.slots).drain().map(|(_, v)| v).collect();
        let mut tasks = Vec::new();
        for slot in slots {
            tasks.push(tokio::spawn(async move {
                let server = slot.lock().await.server.take();
                if let Some(server) = server {
                    server.shutdown().await;
                }
            }));
        }
        for task in tasks {
            task.await.ok();
        }
    }
}

#[async_trait]
impl CodeIntel for LspProxy {
    async fn definition(&self, path: &Path, at: Position) -> Result<Vec<Location>, IntelError> {
        let (answer, server) = self.at_position::<raw::Definition>(path, at, json!({})).await?;
        Ok(locations(answer, &mut self.texts(server.encoding)))
    }

    async fn implementation(&self, path: &Path, at: Position) -> Result<Vec<Location>, IntelError> {
        let (answer, server) = self.at_position::<raw::Implementation>(path, at, json!({})).await?;
        Ok(locations(answer, &mut self.texts(server.encoding)))
    }

    async fn references(
        &self,
        path: &Path,
        at: Position,
        include_declaration: bool,
    ) -> Result<Vec<Location>, IntelError> {
        let extra = json!({ "context": { "includeDeclaration": include_declaration } });
        let (answer, server) = self.at_position::<raw::References>(path, at, extra).await?;
        Ok(locations(answer, &mut self.texts(server.encoding)))
    }

    async fn hover(&self, path: &Path, at: Position) -> Result<Option<String>, IntelError> {
        let (answer, _) = self.at_position::<raw::Hover>(path, at, json!({})).await?;
        Ok(hover_text(&answer))
    }

    async fn document_symbols(&self, path: &Path) -> Result<Vec<Symbol>, IntelError> {
        let (answer, server) = self
            .with_server(path, |server| async move {
                let (uri, _, _) = server.sync(&self.cache, path)?;
                let params = json!({ "textDocument": { "uri": uri } });
                let answer = server.ask_loaded::<raw::DocumentSymbol>(&uri, params).await?;
                Ok((answer, server))
            })
            .await?;
        let mut texts = self.texts(server.encoding);
        if let Some(tree) = parse::<Vec<lsp::DocumentSymbol>>(answer.clone()) {
            return Ok(self.symbol_tree(tree, path, &mut texts));
        }
        let flat = parse::<Vec<lsp::SymbolInformation>>(answer).unwrap_or_default();
        Ok(flat
            .into_iter()
            .filter_map(|s| {
                let location = texts.location(&s.location.uri, &s.location.range)?;
                Some(Symbol {
                    name: s.name,
                    kind: kind_name(s.kind),
                    detail: s.container_name,
                    selection: location.range,
                    location,
                    children: Vec::new(),
                })
            })
            .collect())
    }

    async fn workspace_symbols(&self, hint: &Path, query: &str) -> Result<Vec<Symbol>, IntelError> {
        // A directory hint: any running server (or an error saying to name a file).
        let hint = if hint.is_dir() {
            let running = lock(&self.slots).values().cloned().collect::<Vec<_>>();
            let mut open = None;
            for slot in running {
                if let Some(path) = slot.lock().await.server.as_ref().and_then(|s| s.open_paths().into_iter().next()) {
                    open = Some(path);
                    break;
                }
            }
            open.ok_or_else(|| {
                IntelError::NoServer(
                    "no language server is running yet; give `file_path` (any file of the language) to pick one".into(),
                )
            })?
        } else {
            hint.to_path_buf()
        };
        let hint = hint.as_path();
        let (answer, server) = self
            .with_server(hint, |server| async move {
                // Opening a file makes servers like typescript-language-server load the project;
                // until it is analysed, pyright and tsserver answer with no symbols at all.
                let (uri, _, _) = server.sync(&self.cache, hint)?;
                let answer = server.ask_loaded::<raw::WorkspaceSymbol>(&uri, json!({ "query": query })).await?;
                Ok((answer, server))
            })
            .await?;
        let mut texts = self.texts(server.encoding);
        let items = match answer {
            Value::Array(items) => items,
            _ => Vec::new(),
        };
        Ok(items
            .into_iter()
            .filter_map(|item| {
                let name = item.get("name")?.as_str()?.to_owned();
                let kind = parse::<lsp::SymbolKind>(item.get("kind")?.clone()).map(kind_name).unwrap_or_default();
                let uri: Url = parse(item.get("location")?.get("uri")?.clone())?;
                // WorkspaceSymbol may omit the range (resolve later); take the file's start.
                let range: lsp::Range = item.get("location")?.get("range").cloned().and_then(parse).unwrap_or_default();
                let location = texts.location(&uri, &range)?;
                let detail = item.get("containerName").and_then(Value::as_str).map(str::to_owned);
                Some(Symbol { name, kind, detail, selection: location.range, location, children: Vec::new() })
            })
            .collect())
    }

    async fn call_hierarchy(
        &self,
        path: &Path,
        at: Position,
        direction: CallDirection,
    ) -> Result<Vec<CallItem>, IntelError> {
        let (prepared, server) = self.at_position::<raw::PrepareCallHierarchy>(path, at, json!({})).await?;
        let items: Vec<lsp::CallHierarchyItem> = parse(prepared).unwrap_or_default();
        let Some(item) = items.into_iter().next() else { return Ok(Vec::new()) };
        let params = json!({ "item": item });
        let answer = match direction {
            CallDirection::Incoming => server.ask::<raw::IncomingCalls>(params).await,
            CallDirection::Outgoing => server.ask::<raw::OutgoingCalls>(params).await,
        }
        .map_err(intel_error)?;
        let mut texts = self.texts(server.encoding);
        let mut out = Vec::new();
        match direction {
            CallDirection::Incoming => {
                for call in parse::<Vec<lsp::CallHierarchyIncomingCall>>(answer).unwrap_or_default() {
                    let Some(symbol) = self.call_item(&call.from, &mut texts) else { continue };
                    let sites = call.from_ranges.iter().filter_map(|r| texts.location(&call.from.uri, r)).collect();
                    out.push(CallItem { symbol, sites });
                }
            }
            CallDirection::Outgoing => {
                for call in parse::<Vec<lsp::CallHierarchyOutgoingCall>>(answer).unwrap_or_default() {
                    let Some(symbol) = self.call_item(&call.to, &mut texts) else { continue };
                    let origin = Url::from_file_path(path).ok();
                    let sites = match &origin {
                        Some(uri) => call.from_ranges.iter().filter_map(|r| texts.location(uri, r)).collect(),
                        None => Vec::new(),
                    };
                    out.push(CallItem { symbol, sites });
                }
            }
        }
        Ok(out)
    }

    async fn rename(
        &self,
        path: &Path,
        at: Position,
        new_name: &str,
    ) -> Result<Vec<(PathBuf, Vec<TextReplacement>)>, IntelError> {
        let (answer, server) = self.at_position::<raw::Rename>(path, at, json!({ "newName": new_name })).await?;
        if answer.is_null() {
            return Err(IntelError::Unsupported(format!(
                "{} cannot rename the symbol at this position (put it on the symbol's name)",
                server.spec.name
            )));
        }
        let mut texts = self.texts(server.encoding);
        let mut per_file: Vec<(PathBuf, Vec<TextReplacement>)> = Vec::new();
        let mut add = |uri: &Url, edits: Vec<lsp::TextEdit>, texts: &mut ResultTexts<'_>| -> Result<(), IntelError> {
            let file = uri
                .to_file_path()
                .map_err(|()| IntelError::Server(format!("the rename touches a non-file URI {uri}")))?;
            let replacements: Vec<TextReplacement> = edits
                .into_iter()
                .map(|e| TextReplacement { range: texts.range(&file, &e.range), new_text: e.new_text })
                .collect();
            match per_file.iter_mut().find(|(p, _)| *p == file) {
                Some((_, existing)) => existing.extend(replacements),
                None => per_file.push((file, replacements)),
            }
            Ok(())
        };
        // A WorkspaceEdit is parsed leniently, part by part: servers send shapes a typed parse
        // rejects whole (missing or extra fields), and one odd part must not lose the rest.
        if let Some(changes) = answer.get("changes").and_then(Value::as_object) {
            for (uri, edits) in changes {
                let uri: Url = uri.parse().map_err(|_| IntelError::Server(format!("bad URI {uri} in rename")))?;
                add(&uri, parse(edits.clone()).unwrap_or_default(), &mut texts)?;
            }
        }
        if let Some(changes) = answer.get("documentChanges").and_then(Value::as_array) {
            for change in changes {
                if change.get("kind").is_some() {
                    return Err(IntelError::Unsupported(
                        "the rename would create, rename or delete files, which tandem does not apply from a rename; rename the file with apply_patch".into(),
                    ));
                }
                let Some(uri) = change.get("textDocument").and_then(|t| t.get("uri")).cloned().and_then(parse::<Url>)
                else {
                    continue;
                };
                let edits: Vec<lsp::TextEdit> = change
                    .get("edits")
                    .and_then(Value::as_array)
                    .map(|edits| edits.iter().filter_map(|e| parse(e.clone())).collect())
                    .unwrap_or_default();
                add(&uri, edits, &mut texts)?;
            }
        }
        Ok(per_file)
    }

    async fn diagnostics(&self, path: &Path) -> DiagnosticsReport {
        match self.server_for(path).await {
            Err(IntelError::NoServer(message)) => {
                return DiagnosticsReport::Failed { message };
            }
            Err(err) => return DiagnosticsReport::Failed { message: err.to_string() },
            Ok(_) => {}
        }
        self.diagnostics_within(path, self.diagnostics_wait.max(self.request_timeout)).await
    }

    async fn preview(&self, files: &[PreviewFile]) -> Vec<PreviewedFile> {
        self.preview_files(files).await
    }

    async fn end_preview(&self, paths: &[PathBuf]) {
        self.end_preview_files(paths);
    }

    fn restrictions(&self, path: &Path) -> Option<String> {
        match self.running_for(path) {
            Some(server) => restriction_note(&server.spec),
            None => restriction_note(&self.choose(path).ok()??.0),
        }
    }

    async fn diagnostics_after_write(&self, paths: &[PathBuf]) -> Vec<(PathBuf, DiagnosticsReport)> {
        if !self.diagnostics_after_edit {
            return Vec::new();
        }
        // Every running server learns of changes on disk; the file's own server is synced.
        let changes: Vec<(PathBuf, DiskChange)> = paths.iter().map(|p| (p.clone(), DiskChange::Changed)).collect();
        self.disk_changed(&changes).await;
        let waits = paths.iter().map(|path| async move {
            let report = match self.choose(path) {
                Ok(Some(_)) => self.diagnostics_within(path, self.diagnostics_wait).await,
                _ => DiagnosticsReport::NoServer,
            };
            (path.clone(), report)
        });
        futures_util::future::join_all(waits)
            .await
            .into_iter()
            .filter(|(_, r)| !matches!(r, DiagnosticsReport::NoServer))
            .collect()
    }
}
