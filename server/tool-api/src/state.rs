//! Where Tandem keeps its own state: outside the workspace, in the person's state directory,
//! `$XDG_STATE_HOME/tandem` (else `~/.local/state/tandem`), one folder per workspace under
//! `projects/`, named after the workspace's real path. Sessions, the write-ahead journal, the
//! checkpoint store, command output logs, scripts and MCP logs live there, as Codex keeps
//! `~/.codex/sessions` and Claude Code `~/.claude/projects`.
//!
//! A cloned repository can ship anything, a `.tandem/` folder included, so nothing under the
//! workspace is ever read as Tandem's state. What a repository may share in `.tandem/` is
//! configuration, never state: `config.toml`, `mcp.json`, memories. State written by an older
//! version into `<workspace>/.tandem/` is moved once, when the person trusts the workspace
//! ([`legacy`]).
//!
//! The state directory is the person's own: a sandboxed command cannot write there (the
//! sandbox allows writes under the workspace and the temporary directories only), so nothing a
//! command plants can become state. Directories Tandem uses below a project's folder must be
//! real directories, and state files are opened without following a symlink.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

/// The name of the folder in a workspace that holds its shareable settings (`config.toml`,
/// `mcp.json`, `memory/`). Never state.
pub const STATE_DIR: &str = ".tandem";

/// Variable naming Tandem's state home directly (tests, portable installs); else
/// `$XDG_STATE_HOME/tandem`, else `~/.local/state/tandem`.
pub const STATE_HOME_ENV: &str = "TANDEM_STATE_HOME";

/// The state kinds an older version kept under `<workspace>/.tandem/`.
pub const LEGACY_KINDS: &[&str] = &["sessions", "journal", "checkpoints", "outputs", "scripts", "mcp"];

/// Why the state directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A component is a symlink or not a directory.
    #[error(
        "`{path}` is {what}; tandem keeps its state only in real directories. Remove it (tandem creates it again), then retry"
    )]
    NotARealDirectory {
        /// The offending path.
        path: PathBuf,
        /// "a symbolic link", "a file", ...
        what: &'static str,
    },
    /// The name asked for is not a plain relative path.
    #[error("`{0}` is not a plain name inside the state directory")]
    BadName(String),
    /// Neither `TANDEM_STATE_HOME`, `XDG_STATE_HOME` nor `HOME` is set.
    #[error(
        "there is nowhere to keep tandem's state: set XDG_STATE_HOME (or HOME, or TANDEM_STATE_HOME) to a directory of yours"
    )]
    NoHome,
    /// Creating or inspecting failed.
    #[error("cannot create `{path}`: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

fn non_empty(name: &str) -> Option<PathBuf> {
    std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from).filter(|p| p.is_absolute())
}

/// Tandem's state home (not created): `$TANDEM_STATE_HOME`, else `$XDG_STATE_HOME/tandem`,
/// else `~/.local/state/tandem`.
pub fn state_home() -> Option<PathBuf> {
    non_empty(STATE_HOME_ENV)
        .or_else(|| non_empty("XDG_STATE_HOME").map(|dir| dir.join("tandem")))
        .or_else(|| non_empty("HOME").map(|home| home.join(".local/state/tandem")))
}

/// The name of a workspace's folder under `projects/`: the last name of its real path (for
/// people looking) and a hash of the whole path (so two `app` folders never share one).
///
/// Journal recovery asks for it before every read and commit, so each root's key is resolved
/// once per process (the real path of a workspace root does not change while it is open).
pub fn project_key(root: &Path) -> String {
    static KEYS: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<PathBuf, String>>> =
        std::sync::LazyLock::new(Default::default);
    let keys = || KEYS.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(key) = keys().get(root) {
        return key.clone();
    }
    match root.canonicalize() {
        Ok(real) => {
            let key = key_of(&real);
            keys().insert(root.to_path_buf(), key.clone());
            key
        }
        // Not there (yet): not remembered, so the key follows once it exists.
        Err(_) => key_of(root),
    }
}

/// [`project_key`] of a real path.
fn key_of(real: &Path) -> String {
    let bytes = real.as_os_str().as_encoded_bytes();
    // FNV-1a, 64 bits: stable across versions and platforms, which a key on disk must be.
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let name: String = real
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' })
        .take(40)
        .collect();
    let name = name.trim_start_matches('.');
    if name.is_empty() { format!("root-{hash:016x}") } else { format!("{name}-{hash:016x}") }
}

/// The state folder of the workspace at `root` (not created): `<state home>/projects/<key>`.
pub fn project_dir(root: &Path) -> Option<PathBuf> {
    Some(state_home()?.join("projects").join(project_key(root)))
}

/// `<state home>/projects/<key>/<sub>` (`sub` may be empty or nest: `"sessions"`,
/// `"mcp/logs"`), each directory created when missing (private to the person) and refused when
/// it is a symlink or not a directory. A new project folder records the workspace's path in
/// `root`, for people looking.
pub fn state_dir(root: &Path, sub: &str) -> Result<PathBuf, StateError> {
    let home = state_home().ok_or(StateError::NoHome)?;
    let projects = home.join("projects");
    let dir = projects.join(project_key(root));
    // The project's folder is there after its first use: only then is anything created.
    if std::fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir()) {
        return below(dir, sub);
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&projects)
        .map_err(|source| StateError::Io { path: projects.clone(), source })?;
    // A state home inside a repository (a workspace opened at the home directory) stays out
    // of git; a failure only costs that.
    if let Ok(mut ignore) = create_new(&home.join(".gitignore")) {
        io::Write::write_all(&mut ignore, b"# Tandem's state: local to this machine.\n*\n").ok();
    }
    if real_dir(&dir)? {
        let real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
        let note = format!("{}\n", real.display());
        // A failure here only costs the note; the state directory itself is sound.
        if let Err(err) = create_new(&dir.join("root")).and_then(|mut f| io::Write::write_all(&mut f, note.as_bytes()))
        {
            tracing::warn!("cannot write {}: {err}", dir.join("root").display());
        }
    }
    below(dir, sub)
}

/// `<root>/.tandem/<sub>` for the shareable files a repository may carry (`memory`), each
/// directory created when missing and refused when it is a symlink or not a directory, so
/// nothing Tandem writes there lands outside the workspace. Never used for state.
pub fn workspace_dir(root: &Path, sub: &str) -> Result<PathBuf, StateError> {
    let dir = root.join(STATE_DIR);
    real_dir(&dir)?;
    below(dir, sub)
}

/// `dir/sub`, each directory below `dir` made a real directory ([`real_dir`]).
fn below(mut dir: PathBuf, sub: &str) -> Result<PathBuf, StateError> {
    for component in Path::new(sub).components() {
        let Component::Normal(name) = component else {
            return Err(StateError::BadName(sub.to_owned()));
        };
        dir.push(name);
        real_dir(&dir)?;
    }
    Ok(dir)
}

/// [`state_dir`]'s path without creating anything. Without a state home it is a path under
/// `/dev/null`, where nothing can exist or be created, so readers find nothing.
pub fn state_path(root: &Path, sub: &str) -> PathBuf {
    project_dir(root).unwrap_or_else(|| PathBuf::from("/dev/null/tandem-state")).join(sub)
}

/// Makes sure `dir` is a real directory, creating it when missing (mode 0700 before the umask). Returns whether
/// it was created.
fn real_dir(dir: &Path) -> Result<bool, StateError> {
    let refuse = |what| StateError::NotARealDirectory { path: dir.to_path_buf(), what };
    let io_error = |source| StateError::Io { path: dir.to_path_buf(), source };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(refuse("a symbolic link")),
        Ok(meta) if meta.is_dir() => Ok(false),
        Ok(_) => Err(refuse("not a directory")),
        Err(err) if err.kind() == io::ErrorKind::NotFound => match std::fs::DirBuilder::new().mode(0o700).create(dir) {
            Ok(()) => Ok(true),
            // Created by someone else meanwhile: check what it is.
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => real_dir(dir).map(|_| false),
            Err(err) => Err(io_error(err)),
        },
        Err(err) => Err(io_error(err)),
    }
}

/// Opens a state file for appending (created when missing), never through a symlink.
pub fn open_append(path: &Path) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32).open(path)
}

/// Creates a new state file, failing when anything (a symlink included) is already there.
pub fn create_new(path: &Path) -> io::Result<File> {
    OpenOptions::new().write(true).create_new(true).open(path)
}

/// Opens an existing state file for reading and writing only when it is a regular file: never
/// through a symlink, and never blocking on a FIFO or a device (which is refused).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = OpenOptions::new().read(true).write(true).custom_flags(flags.bits() as i32).open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    Ok(file)
}

pub mod legacy;

#[cfg(test)]
mod tests;
