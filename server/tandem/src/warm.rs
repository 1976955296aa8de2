//! Warm language servers for one-shot calls. `tandem tool lsp` hands its call to a background
//! `tandem` that keeps the project's language servers running and exits after some idle
//! minutes ([`IDLE_ENV`]), so that only the first call waits for rust-analyzer to index.
//!
//! - **One per project**, found through a socket in tandem's state home, never in the workspace
//!   (a clone controls what is there): `<state>/warm/<hash of the root>.sock`, in a folder only
//!   the person may enter.
//! - **The same settings or none.** Every call carries a fingerprint of what decides how the
//!   servers run (the person's and the project's configuration files, the folder's trust, the
//!   environment's `PATH` and the like, this program). A background process started under other
//!   settings answers `stale`, takes its socket away and ends; the call starts a fresh one.
//! - **The disk as it is now.** Before each call the background process looks for files that
//!   changed on disk since the last one and tells the servers (`didChangeWatchedFiles`), as an
//!   editor's file watcher would; the file asked about is sent with its current text anyway.
//! - **Never in the way.** When the background process cannot be reached or started, the call
//!   runs in this process as before, and says why on stderr. `TANDEM_LSP_IDLE=0` turns it off.
//!
//! Starting is serialized by a lock file (`.spawn`), and a background process holds another
//! (`.lock`) for as long as it lives, so that a new one waits for the old one to end: two
//! never serve the same project.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tandem_lsp_proxy::DiskChange;
use tandem_protocol::ToolResult;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use crate::workbench::{Mcp, Options, Root, Workbench};

/// Seconds a background process waits for the next call before it ends (default 300); `0`:
/// no background process, every call starts the servers itself.
pub const IDLE_ENV: &str = "TANDEM_LSP_IDLE";
const DEFAULT_IDLE: Duration = Duration::from_secs(300);
/// The tool served in the background.
pub const TOOL: &str = "lsp";
/// How long a start may take before the call gives up on it (a bound, never a wait).
const START_LIMIT: Duration = Duration::from_secs(30);
/// The largest request accepted (a tool call's arguments).
const MAX_REQUEST: u64 = 4 * 1024 * 1024;
/// Files a disk scan looks at, at most; a larger tree is not watched (the servers' own view).
const MAX_SCANNED: usize = 200_000;
/// How often it checks that its project still exists.
const ROOT_CHECK: Duration = Duration::from_secs(5);
/// The longest socket path `sockaddr_un` holds, with room to spare.
const MAX_SOCKET_PATH: usize = 100;

/// Why a call could not go to a background process.
#[derive(Debug, thiserror::Error)]
pub enum WarmError {
    /// There is no state home to keep the socket in.
    #[error("no state folder for the background language servers: {0}")]
    NoState(String),
    /// The socket's path would be too long for the system.
    #[error("the socket path {0} is too long")]
    PathTooLong(PathBuf),
    /// Starting the background process failed.
    #[error("the background language servers did not start: {0}")]
    Start(String),
    /// Talking to it failed.
    #[error("the background language servers did not answer: {0}")]
    Io(#[from] std::io::Error),
    /// It answered something unreadable.
    #[error("the background language servers answered something unreadable: {0}")]
    Reply(#[from] serde_json::Error),
}

/// How long a background process waits for the next call; `None`: off.
pub fn idle() -> Option<Duration> {
    match std::env::var(IDLE_ENV) {
        Err(_) => Some(DEFAULT_IDLE),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(0) => None,
            Ok(secs) => Some(Duration::from_secs(secs)),
            Err(_) => {
                tracing::warn!("{IDLE_ENV}={text:?} is not a number of seconds; using {}", DEFAULT_IDLE.as_secs());
                Some(DEFAULT_IDLE)
            }
        },
    }
}

/// Where a project's background process is found.
#[derive(Clone, Debug)]
pub struct Place {
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Held while a call starts one.
    spawn_lock: PathBuf,
    /// Held by the background process for as long as it lives.
    life_lock: PathBuf,
    /// Its process id, once it listens.
    pub pid_file: PathBuf,
    /// Its log (stderr).
    pub log: PathBuf,
}

impl Place {
    /// The place of the project at `root` (its folder is created, private to the person).
    pub fn of(root: &Path) -> Result<Self, WarmError> {
        let home = tandem_tools::state::state_home()
            .ok_or_else(|| WarmError::NoState("set XDG_STATE_HOME or HOME".to_owned()))?;
        let dir = home.join("warm");
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| WarmError::NoState(format!("{}: {e}", dir.display())))?;
        // A folder others may enter (made before with a laxer mode) is made private.
        let meta = std::fs::metadata(&dir).map_err(|e| WarmError::NoState(format!("{}: {e}", dir.display())))?;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| WarmError::NoState(format!("{}: {e}", dir.display())))?;
        }
        let key = format!("{:016x}", tandem_text::ContentHash::of(root.as_os_str().as_encoded_bytes()).0);
        let socket = dir.join(format!("{key}.sock"));
        if socket.as_os_str().len() > MAX_SOCKET_PATH {
            return Err(WarmError::PathTooLong(socket));
        }
        Ok(Self {
            socket,
            spawn_lock: dir.join(format!("{key}.spawn")),
            life_lock: dir.join(format!("{key}.lock")),
            pid_file: dir.join(format!("{key}.pid")),
            log: dir.join(format!("{key}.log")),
        })
    }
}

/// What decides how the servers run, as one value: a background process serves a call only
/// when its own is the same.
pub fn fingerprint(bench: &Workbench) -> String {
    let mut text = String::new();
    let root = bench.workspace.root();
    text.push_str(&format!("root {}\ntrust {:?}\n", root.display(), bench.config.trust));
    // The person's configuration, the project's, and the trust list and programs' pins.
    let config_dir = tandem_tools::trust::user_config_dir();
    let files = [
        bench.config.user_file.clone(),
        Some(root.join(".tandem").join("config.toml")),
        config_dir.as_ref().map(|dir| dir.join(tandem_tools::trust::TRUST_FILE)),
        config_dir.as_ref().map(|dir| dir.join(tandem_tools::binaries::PIN_FILE)),
    ];
    for file in files.into_iter().flatten() {
        let bytes = std::fs::read(&file).unwrap_or_default();
        text.push_str(&format!("file {} {:016x}\n", file.display(), tandem_text::ContentHash::of(&bytes).0));
    }
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(name, _)| {
            ["TANDEM_", "XDG_", "OTEL_", "RUSTUP_", "CARGO_"].iter().any(|p| name.starts_with(p))
                || ["PATH", "HOME", "VIRTUAL_ENV", "PYTHONPATH", "NODE_PATH", "GOPATH", "GOROOT", "JAVA_HOME"]
                    .contains(&name.as_str())
        })
        .collect();
    vars.sort();
    for (name, value) in vars {
        text.push_str(&format!("env {name}={value}\n"));
    }
    if let Ok(exe) = std::env::current_exe() {
        let meta = std::fs::metadata(&exe).ok();
        let modified =
            meta.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok());
        text.push_str(&format!("exe {} {:?} {:?}\n", exe.display(), meta.map(|m| m.len()), modified));
    }
    format!("{:016x}", tandem_text::ContentHash::of(text.as_bytes()).0)
}

#[derive(Serialize, Deserialize)]
struct Request {
    fingerprint: String,
    working_dir: PathBuf,
    arguments: Value,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Reply {
    /// The call's result.
    Result { result: ToolResult },
    /// Started under other settings: it is going away; start another.
    Stale,
}

/// Runs the `lsp` call `arguments` in the project's background process, starting it when
/// none runs (or the one running has other settings).
pub async fn call(bench: &Workbench, arguments: &Value) -> Result<ToolResult, WarmError> {
    let place = Place::of(bench.workspace.root())?;
    let request = Request {
        fingerprint: fingerprint(bench),
        working_dir: bench.working_dir.clone(),
        arguments: arguments.clone(),
    };
    let mut line = serde_json::to_vec(&request)?;
    line.push(b'\n');
    // A stale one ends and the next round starts a fresh one; more rounds mean a fight over
    // the socket, which a call in this process settles.
    for _ in 0..3 {
        let stream = match UnixStream::connect(&place.socket).await {
            Ok(stream) => stream,
            Err(_) => start(&place, bench.workspace.root()).await?,
        };
        match exchange(stream, &line).await? {
            Reply::Result { result } => return Ok(result),
            Reply::Stale => tracing::debug!("the background language servers had other settings; starting anew"),
        }
    }
    Err(WarmError::Start("each one started had other settings".to_owned()))
}

async fn exchange(mut stream: UnixStream, line: &[u8]) -> Result<Reply, WarmError> {
    stream.write_all(line).await?;
    let mut reader = tokio::io::BufReader::new(stream);
    let mut answer = String::new();
    if reader.read_line(&mut answer).await? == 0 {
        return Err(WarmError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            "it closed the connection without an answer",
        )));
    }
    Ok(serde_json::from_str(&answer)?)
}

/// Starts the project's background process (unless another call just did) and connects.
async fn start(place: &Place, root: &Path) -> Result<UnixStream, WarmError> {
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&place.spawn_lock)?;
    let lock = tokio::task::spawn_blocking(move || lock.lock().map(|()| lock))
        .await
        .map_err(|e| WarmError::Start(e.to_string()))??;
    if let Ok(stream) = UnixStream::connect(&place.socket).await {
        return Ok(stream);
    }
    let exe = std::env::current_exe()?;
    let log = std::fs::File::create(&place.log)?;
    let mut child = std::process::Command::new(exe)
        .arg("--root")
        .arg(root)
        .arg("lsp-warm")
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(log)
        // Its own process group: a Ctrl-C at the terminal ends the call, not the servers.
        .process_group(0)
        .spawn()
        .map_err(|e| WarmError::Start(e.to_string()))?;
    let stdout = child.stdout.take().ok_or_else(|| WarmError::Start("no pipe".to_owned()))?;
    let ready = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    });
    let line = match tokio::time::timeout(START_LIMIT, ready).await {
        Ok(Ok(Ok(line))) => line,
        Ok(Ok(Err(err))) => return Err(WarmError::Start(err.to_string())),
        Ok(Err(err)) => return Err(WarmError::Start(err.to_string())),
        Err(_) => {
            child.kill().ok();
            return Err(WarmError::Start(format!("not listening after {} s", START_LIMIT.as_secs())));
        }
    };
    if line.trim() != "ready" {
        child.wait().ok();
        let log = std::fs::read_to_string(&place.log).unwrap_or_default();
        let last = log.lines().last().unwrap_or("it ended without a word").to_owned();
        return Err(WarmError::Start(format!("{last} (log: {})", place.log.display())));
    }
    drop(lock);
    Ok(UnixStream::connect(&place.socket).await?)
}

/// Files' sizes and modification times, to tell what changed on disk between calls.
type Snapshot = HashMap<PathBuf, (u64, Option<SystemTime>)>;

fn scan(root: &Path) -> Option<Snapshot> {
    let mut out = Snapshot::new();
    for entry in ignore::WalkBuilder::new(root).follow_links(false).build().flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if out.len() >= MAX_SCANNED {
            tracing::info!("more than {MAX_SCANNED} files: changes on disk between calls are not told to the servers");
            return None;
        }
        let Ok(meta) = entry.metadata() else { continue };
        out.insert(entry.into_path(), (meta.len(), meta.modified().ok()));
    }
    Some(out)
}

fn changes(before: &Snapshot, after: &Snapshot) -> Vec<(PathBuf, DiskChange)> {
    let mut out: Vec<(PathBuf, DiskChange)> = after
        .iter()
        .filter_map(|(path, seen)| match before.get(path) {
            None => Some((path.clone(), DiskChange::Created)),
            Some(old) if old != seen => Some((path.clone(), DiskChange::Changed)),
            Some(_) => None,
        })
        .collect();
    out.extend(before.keys().filter(|p| !after.contains_key(*p)).map(|p| (p.clone(), DiskChange::Deleted)));
    out.sort();
    out
}

/// What the background process keeps between calls.
struct Serving {
    bench: Workbench,
    fingerprint: String,
    place: Place,
    /// Calls running now.
    active: AtomicUsize,
    /// When the last call ended (or the process started).
    last: parking_lot::Mutex<Instant>,
    /// The disk as the servers were last told about it.
    disk: tokio::sync::Mutex<Option<Snapshot>>,
    /// Set when it is to end (settings changed).
    stop: CancellationToken,
}

/// `tandem lsp-warm`: the background process. Prints `ready` on stdout once it listens.
pub async fn serve(root: Option<PathBuf>) -> ExitCode {
    let Some(idle) = idle() else { return ExitCode::from(2) };
    let opened =
        Root::from_cli(root).and_then(|root| Workbench::open(&root, Options { mcp: Mcp::Off, ..Options::default() }));
    let bench = match opened {
        Ok(bench) => bench,
        Err(err) => {
            tracing::error!("{err}");
            return ExitCode::FAILURE;
        }
    };
    let place = match Place::of(bench.workspace.root()) {
        Ok(place) => place,
        Err(err) => {
            tracing::error!("{err}");
            return ExitCode::FAILURE;
        }
    };
    // The one before (going away) ends first.
    let life = match std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(&place.life_lock) {
        Ok(file) => file,
        Err(err) => {
            tracing::error!("{}: {err}", place.life_lock.display());
            return ExitCode::FAILURE;
        }
    };
    let _life = match tokio::task::spawn_blocking(move || life.lock().map(|()| life)).await {
        Ok(Ok(life)) => life,
        other => {
            tracing::error!("cannot hold {}: {other:?}", place.life_lock.display());
            return ExitCode::FAILURE;
        }
    };
    let root = bench.workspace.root().to_path_buf();
    let disk = tokio::task::spawn_blocking(move || scan(&root)).await.ok().flatten();
    std::fs::remove_file(&place.socket).ok();
    let listener = match UnixListener::bind(&place.socket) {
        Ok(listener) => listener,
        Err(err) => {
            tracing::error!("cannot listen on {}: {err}", place.socket.display());
            return ExitCode::FAILURE;
        }
    };
    std::fs::write(&place.pid_file, std::process::id().to_string()).ok();
    {
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        if writeln!(stdout, "ready").and_then(|()| stdout.flush()).is_err() {
            return ExitCode::FAILURE;
        }
    }
    let serving = Arc::new(Serving {
        fingerprint: fingerprint(&bench),
        bench,
        place,
        active: AtomicUsize::new(0),
        last: parking_lot::Mutex::new(Instant::now()),
        disk: tokio::sync::Mutex::new(disk),
        stop: CancellationToken::new(),
    });
    let mut calls = tokio::task::JoinSet::new();
    let mut terminate = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(signal) => signal,
        Err(err) => {
            tracing::error!("cannot catch SIGTERM: {err}");
            return ExitCode::FAILURE;
        }
    };
    // A project that is gone (a deleted clone, a test's folder) needs no servers.
    let mut look = tokio::time::interval(ROOT_CHECK);
    loop {
        let deadline = *serving.last.lock() + idle;
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    serving.active.fetch_add(1, Ordering::SeqCst);
                    calls.spawn(Arc::clone(&serving).answer(stream));
                }
                Err(err) => tracing::warn!("accept: {err}"),
            },
            () = tokio::time::sleep_until(deadline.into()) => {
                if serving.active.load(Ordering::SeqCst) == 0 && serving.last.lock().elapsed() >= idle {
                    tracing::info!("idle for {} s: ending", idle.as_secs());
                    break;
                }
            }
            () = serving.stop.cancelled() => break,
            _ = terminate.recv() => break,
            _ = look.tick() => {
                if !serving.bench.workspace.root().is_dir() {
                    tracing::info!("the project is gone: ending");
                    break;
                }
            }
            Some(_) = calls.join_next() => {}
        }
    }
    serving.forget_socket();
    drop(listener);
    while calls.join_next().await.is_some() {}
    serving.bench.close().await;
    ExitCode::SUCCESS
}

impl Serving {
    /// Takes the socket away (when it is still this process's), so the next call starts anew.
    fn forget_socket(&self) {
        let ours =
            std::fs::read_to_string(&self.place.pid_file).is_ok_and(|pid| pid.trim() == std::process::id().to_string());
        if ours {
            std::fs::remove_file(&self.place.socket).ok();
            std::fs::remove_file(&self.place.pid_file).ok();
        }
    }

    async fn answer(self: Arc<Self>, stream: UnixStream) {
        let (read, mut write) = stream.into_split();
        let mut reader = tokio::io::BufReader::new(read.take(MAX_REQUEST));
        let mut line = String::new();
        let reply = match reader.read_line(&mut line).await {
            Ok(_) => match serde_json::from_str::<Request>(&line) {
                Ok(request) if request.fingerprint != self.fingerprint => {
                    self.forget_socket();
                    self.stop.cancel();
                    Some(Reply::Stale)
                }
                Ok(request) => {
                    // The caller hanging up cancels the call, as an editor's cancel does.
                    let mut rest = reader.into_inner().into_inner();
                    let mut byte = [0_u8; 1];
                    tokio::select! {
                        result = self.run(request) => Some(Reply::Result { result }),
                        _ = rest.read(&mut byte) => None,
                    }
                }
                Err(err) => {
                    tracing::warn!("unreadable request: {err}");
                    None
                }
            },
            Err(err) => {
                tracing::warn!("reading a request: {err}");
                None
            }
        };
        if let Some(reply) = reply
            && let Ok(mut bytes) = serde_json::to_vec(&reply)
        {
            bytes.push(b'\n');
            write.write_all(&bytes).await.ok();
            write.shutdown().await.ok();
        }
        *self.last.lock() = Instant::now();
        self.active.fetch_sub(1, Ordering::SeqCst);
    }

    async fn run(&self, request: Request) -> ToolResult {
        self.tell_disk_changes().await;
        // A server whose program changed since it was pinned answers no more calls.
        if let Some(intel) = &self.bench.intel {
            intel.recheck_programs().await;
        }
        let mut ctx = self.bench.tool_context();
        // Relative paths start where the caller stands, inside the project.
        if let Ok(dir) = request.working_dir.canonicalize()
            && dir.starts_with(self.bench.workspace.root())
        {
            ctx.working_dir = dir;
        }
        match self.bench.registry.call(TOOL, request.arguments, ctx).await {
            Ok(mut result) => {
                if result.metadata.get("kind").and_then(Value::as_str) == Some("timeout")
                    && let Some(error) = &mut result.error
                {
                    error.push_str(
                        "; the server keeps running in the background (tandem lsp-warm), so a later call finds it further along",
                    );
                }
                result
            }
            Err(err) => ToolResult { error: Some(err.to_string()), ..ToolResult::default() },
        }
    }

    /// Tells the servers of the files that changed on disk since the last call.
    async fn tell_disk_changes(&self) {
        let mut disk = self.disk.lock().await;
        let Some(before) = disk.as_ref() else { return };
        let root = self.bench.workspace.root().to_path_buf();
        let Ok(Some(after)) = tokio::task::spawn_blocking(move || scan(&root)).await else {
            *disk = None;
            return;
        };
        let changed = changes(before, &after);
        if let Some(intel) = &self.bench.intel
            && !changed.is_empty()
        {
            tracing::debug!(files = changed.len(), "changed on disk since the last call");
            intel.disk_changed(&changed).await;
        }
        *disk = Some(after);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_name_what_appeared_changed_and_went() {
        let t = Some(SystemTime::UNIX_EPOCH);
        let later = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(1));
        let before: Snapshot = [("a".into(), (1, t)), ("b".into(), (1, t)), ("c".into(), (1, t))].into_iter().collect();
        let after: Snapshot =
            [("a".into(), (1, t)), ("b".into(), (1, later)), ("d".into(), (2, t))].into_iter().collect();
        assert_eq!(
            changes(&before, &after),
            vec![
                ("b".into(), DiskChange::Changed),
                ("c".into(), DiskChange::Deleted),
                ("d".into(), DiskChange::Created),
            ]
        );
        assert!(changes(&after, &after).is_empty());
    }
}
