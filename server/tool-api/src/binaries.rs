//! Programs Tandem starts for a workspace (language servers, MCP servers), and where each may
//! come from. A cloned repository can ship a program under a name Tandem looks for
//! (`node_modules/.bin/typescript-language-server`, `.venv/bin/pyright-langserver`, a `bin/` that
//! a `PATH` entry names): none of them runs before the person trusts the folder ([`crate::trust`]).
//!
//! - Before trust, a lookup uses only `PATH` entries outside the workspace and paths outside it.
//!   A program in the workspace — found in a workspace directory, named by a relative command,
//!   on a `PATH` entry inside the workspace, or a symlink that resolves into it — is reported
//!   ([`Lookup::InRepository`]), never returned to be run; the programs Tandem starts get a
//!   `PATH` without such entries ([`Binaries::child_path`]), so a server that starts `node` or
//!   `python` by name does not pick the repository's either.
//! - After trust, a program in the workspace is pinned: its path and the SHA-256 of its content
//!   (symlinks resolved first, so a `node_modules/.bin` link pins the script it points to; a
//!   script's `#!` interpreter in the workspace is pinned too) are kept in `pinned-binaries` in
//!   the person's configuration directory, next to the trust list, when trust is given
//!   (`tandem trust`) or on first use. A pinned program whose content changed is not started
//!   until the person trusts the folder again, so nothing a (sandboxed) command writes in the
//!   workspace becomes a program Tandem starts outside the sandbox.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::trust::{Trust, user_config_dir};

/// The file, in Tandem's user configuration directory, that holds the pins.
pub const PIN_FILE: &str = "pinned-binaries";
/// How deep a chain of `#!` interpreters in the workspace is followed.
const MAX_INTERPRETERS: usize = 4;

/// A program found for a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// What is started: where it was found.
    pub path: PathBuf,
    /// It lies in the workspace (where it was found, or what it resolves to): it runs only in a
    /// trusted workspace, and only while its pin holds ([`Binaries::check`]).
    pub in_workspace: bool,
}

/// The outcome of a lookup.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A program that may be started (after [`Binaries::check`]).
    Found(Program),
    /// Found only in the workspace, which is not trusted: reported, never started.
    InRepository(PathBuf),
    /// Not found.
    Missing,
}

/// Where a program in the workspace stands with its pin (for `tandem doctor`, which changes
/// nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PinState {
    /// Its content (and its interpreter's, in the workspace) is the one pinned.
    Pinned,
    /// Not pinned yet: it is pinned on first use.
    NotYet,
    /// It changed since it was pinned.
    Changed,
}

/// Why a program found in the workspace is not started.
#[derive(Debug, thiserror::Error)]
pub enum BinaryError {
    /// The folder is not trusted.
    #[error(
        "`{}` was found in the repository, and this folder is not trusted, so Tandem does not run it (a cloned repository's programs run only after `tandem trust`). If you trust this repository, run `tandem trust` in {} (or set TANDEM_TRUST_WORKSPACE=1)",
        path.display(),
        root.display()
    )]
    Untrusted {
        /// The program.
        path: PathBuf,
        /// The workspace.
        root: PathBuf,
    },
    /// Its content is not the one pinned when the folder was trusted.
    #[error(
        "`{}` changed since it was pinned when this folder was trusted, so Tandem does not start it (whatever wrote it, it is not the program you trusted). If the change is yours, run `tandem trust` in {} again: that pins the programs as they are now",
        path.display(),
        root.display()
    )]
    Changed {
        /// The program.
        path: PathBuf,
        /// The workspace.
        root: PathBuf,
    },
    /// The pins cannot be read or written, or the program cannot be read to hash it.
    #[error("cannot check `{}` against its pin ({}): {source}", path.display(), pins.display())]
    Pins {
        /// The program.
        path: PathBuf,
        /// The pin file.
        pins: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// How programs are found and checked for one workspace.
#[derive(Clone, Debug)]
pub struct Binaries {
    root: PathBuf,
    trust: Trust,
    /// `PATH`, as the process got it.
    search_path: Vec<PathBuf>,
    /// Where relative `PATH` entries start (the process's current directory).
    cwd: PathBuf,
    /// The directory of the pin file (`None`: nowhere to keep pins).
    pins: Option<PathBuf>,
}

impl Binaries {
    /// The workspace at `root` (canonicalized when it can be), with this process's `PATH` and
    /// the person's configuration directory for pins.
    pub fn new(root: &Path, trust: Trust) -> Self {
        let search_path =
            std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect::<Vec<_>>()).unwrap_or_default();
        Self {
            root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
            trust,
            search_path,
            cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")),
            pins: user_config_dir(),
        }
    }

    /// Looks programs up on `path` (a `PATH` value) instead of this process's.
    #[must_use]
    pub fn with_search_path(mut self, path: &std::ffi::OsStr) -> Self {
        self.search_path = std::env::split_paths(path).collect();
        self
    }

    /// Keeps pins in `dir` instead of the person's configuration directory.
    #[must_use]
    pub fn with_pins_in(mut self, dir: PathBuf) -> Self {
        self.pins = Some(dir);
        self
    }

    /// The workspace's root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workspace's trust.
    pub fn trust(&self) -> Trust {
        self.trust
    }

    /// Finds `command`. With a `/` it is a path (a relative one from `base`); a bare name is
    /// looked up in `workspace_dirs` (relative to the root: `node_modules/.bin`, ...) and then on
    /// `PATH`. Before trust, the workspace directories are skipped and so is any candidate in
    /// the workspace: the first of those is reported as [`Lookup::InRepository`] when nothing
    /// outside has the name. After trust, the workspace directories come first.
    pub fn find(&self, command: &str, base: &Path, workspace_dirs: &[&str]) -> Lookup {
        if command.is_empty() {
            return Lookup::Missing;
        }
        let untrusted = self.trust == Trust::Untrusted;
        if command.contains('/') {
            let path = self.absolute(&base.join(command));
            if !is_executable(&path) {
                return Lookup::Missing;
            }
            let in_workspace = self.inside(&path);
            if in_workspace && untrusted {
                return Lookup::InRepository(path);
            }
            return Lookup::Found(Program { path, in_workspace });
        }
        let mut in_repository = None;
        for dir in workspace_dirs {
            let path = self.root.join(dir).join(command);
            if !is_executable(&path) {
                continue;
            }
            if untrusted {
                in_repository.get_or_insert(path);
                continue;
            }
            return Lookup::Found(Program { path, in_workspace: true });
        }
        for dir in &self.search_path {
            // The folder as the kernel resolves it: what is started is exactly what was judged.
            let Some(dir) = self.real_dir(dir) else { continue };
            let path = dir.join(command);
            if !is_executable(&path) {
                continue;
            }
            let in_workspace = self.inside(&path);
            if in_workspace && untrusted {
                in_repository.get_or_insert(path);
                continue;
            }
            return Lookup::Found(Program { path, in_workspace });
        }
        in_repository.map_or(Lookup::Missing, Lookup::InRepository)
    }

    /// `path` lies in the workspace: where it is (its directory with symlinks resolved), or what
    /// it resolves to.
    pub fn inside(&self, path: &Path) -> bool {
        let path = self.absolute(path);
        self.location(&path).starts_with(&self.root)
            || path.canonicalize().is_ok_and(|real| real.starts_with(&self.root))
    }

    /// Whether `program` may be started now: anything outside the workspace may; a program in
    /// the workspace only when the folder is trusted and its content is the one pinned (pinned
    /// now when it has no pin yet), and so must its `#!` interpreter when that is in the
    /// workspace too.
    pub fn check(&self, program: &Program) -> Result<(), BinaryError> {
        if !program.in_workspace && !self.inside(&program.path) {
            return Ok(());
        }
        if self.trust == Trust::Untrusted {
            return Err(BinaryError::Untrusted { path: program.path.clone(), root: self.root.clone() });
        }
        let mut next = Some(self.absolute(&program.path));
        for _ in 0..MAX_INTERPRETERS {
            let Some(path) = next.take() else { break };
            let digest = self.verify(&path)?;
            next = digest.interpreter.filter(|i| self.inside(i));
        }
        Ok(())
    }

    /// How `program` stands with its pin, without pinning anything.
    pub fn pin_state(&self, program: &Program) -> PinState {
        let Some(dir) = &self.pins else { return PinState::NotYet };
        let pins = std::fs::read_to_string(dir.join(PIN_FILE)).map(|text| parse_pins(&text)).unwrap_or_default();
        let mut state = PinState::Pinned;
        let mut next = Some(self.absolute(&program.path));
        for _ in 0..MAX_INTERPRETERS {
            let Some(path) = next.take() else { break };
            let Ok(content) = hash_program(&path) else { return PinState::NotYet };
            match pins.get(&self.location(&path)) {
                Some(digest) if *digest == content.digest => {}
                Some(_) => return PinState::Changed,
                None => state = PinState::NotYet,
            }
            next = content.interpreter.filter(|i| self.inside(i));
        }
        state
    }

    /// Pins `programs` as they are now, replacing their earlier pins (`tandem trust`). Programs
    /// outside the workspace are left out. Returns the pinned locations.
    pub fn pin(&self, programs: &[PathBuf]) -> Result<Vec<PathBuf>, BinaryError> {
        let mut entries = Vec::new();
        for program in programs {
            let mut next = Some(self.absolute(program));
            for _ in 0..MAX_INTERPRETERS {
                let Some(path) = next.take() else { break };
                if !self.inside(&path) {
                    break;
                }
                let content = self.content(&path)?;
                next = content.interpreter.clone();
                entries.push((self.location(&path), content.digest));
            }
        }
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let (file, dir) = self.pin_file(&entries[0].0)?;
        let pinned = entries.iter().map(|(location, _)| location.clone()).collect();
        update_pins(&dir, |pins| {
            for (location, digest) in entries {
                pins.insert(location, digest);
            }
            true
        })
        .map_err(|source| BinaryError::Pins { path: self.root.clone(), pins: file, source })?;
        Ok(pinned)
    }

    /// `PATH` for a program Tandem starts: before trust, without the entries in the workspace
    /// (relative entries included: a server runs in its project's root). `None`: as inherited.
    pub fn child_path(&self) -> Option<OsString> {
        if self.trust == Trust::Trusted {
            return None;
        }
        // Each kept entry is the folder it resolves to now, so the server's own lookups find
        // what was judged here.
        let kept: Vec<PathBuf> = self
            .search_path
            .iter()
            .filter(|dir| dir.is_absolute())
            .filter_map(|dir| self.real_dir(dir))
            .filter(|dir| !dir.starts_with(&self.root))
            .collect();
        // An empty `PATH` would be searched as the current directory (the project's root).
        let kept = match kept.is_empty() {
            true => ["/usr/bin", "/bin"]
                .into_iter()
                .filter_map(|dir| self.real_dir(Path::new(dir)))
                .filter(|dir| !dir.starts_with(&self.root))
                .collect(),
            false => kept,
        };
        match std::env::join_paths(kept) {
            Ok(path) if !path.is_empty() => Some(path),
            // Nothing outside the workspace to search: search nowhere.
            _ => Some(OsString::from("/nonexistent")),
        }
    }

    /// A `PATH` entry's folder, symlinks resolved (relative entries from the current directory).
    fn real_dir(&self, dir: &Path) -> Option<PathBuf> {
        let joined = if dir.is_absolute() { dir.to_path_buf() } else { self.cwd.join(dir) };
        joined.canonicalize().ok().filter(|real| real.is_dir())
    }

    fn absolute(&self, path: &Path) -> PathBuf {
        let joined = if path.is_absolute() { path.to_path_buf() } else { self.cwd.join(path) };
        normalize(&joined)
    }

    /// Where `path` is: its directory with symlinks resolved, and its name.
    fn location(&self, path: &Path) -> PathBuf {
        let path = self.absolute(path);
        match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => dir.canonicalize().map(|dir| dir.join(name)).unwrap_or(path),
            _ => path,
        }
    }

    fn pin_file(&self, path: &Path) -> Result<(PathBuf, PathBuf), BinaryError> {
        match &self.pins {
            Some(dir) => Ok((dir.join(PIN_FILE), dir.clone())),
            None => Err(BinaryError::Pins {
                path: path.to_path_buf(),
                pins: PathBuf::from(PIN_FILE),
                source: io::Error::new(
                    io::ErrorKind::NotFound,
                    "neither XDG_CONFIG_HOME nor HOME is set, so there is nowhere to keep pins",
                ),
            }),
        }
    }

    fn content(&self, path: &Path) -> Result<Content, BinaryError> {
        hash_program(path).map_err(|source| BinaryError::Pins {
            path: path.to_path_buf(),
            pins: self.pins.as_deref().map_or_else(|| PathBuf::from(PIN_FILE), |d| d.join(PIN_FILE)),
            source,
        })
    }

    /// Checks `path` against its pin, pinning it when it has none.
    fn verify(&self, path: &Path) -> Result<Content, BinaryError> {
        let content = self.content(path)?;
        let location = self.location(path);
        let (file, dir) = self.pin_file(path)?;
        let mut changed = false;
        update_pins(&dir, |pins| match pins.get(&location) {
            Some(pinned) => {
                changed = *pinned != content.digest;
                false
            }
            None => {
                tracing::info!(program = %location.display(), "pinned on first use in a trusted folder");
                pins.insert(location.clone(), content.digest.clone());
                true
            }
        })
        .map_err(|source| BinaryError::Pins { path: path.to_path_buf(), pins: file, source })?;
        if changed {
            return Err(BinaryError::Changed { path: path.to_path_buf(), root: self.root.clone() });
        }
        Ok(content)
    }
}

/// Removes every pin at or below `folder` (`tandem trust --revoke`). Returns how many.
pub fn unpin_under(config_dir: &Path, folder: &Path) -> io::Result<usize> {
    let folder = folder.canonicalize()?;
    let mut removed = 0;
    update_pins(config_dir, |pins| {
        let before = pins.len();
        pins.retain(|location, _| !location.starts_with(&folder));
        removed = before - pins.len();
        removed > 0
    })?;
    Ok(removed)
}

/// `path` with `.` and `..` removed lexically (a `..` after a symlink is taken as written: the
/// result is only compared, and a candidate that does not exist is not found anyway).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// A program's content as pinned.
struct Content {
    /// `sha256:<hex>` of the file it resolves to.
    digest: String,
    /// Its `#!` interpreter, when it is a script.
    interpreter: Option<PathBuf>,
}

/// Hashes the file `path` resolves to, in one read through one open file.
fn hash_program(path: &Path) -> io::Result<Content> {
    let mut file = File::open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a regular file"));
    }
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    let mut first = Vec::new();
    loop {
        let n = file.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        if first.len() < 256 {
            first.extend_from_slice(&buffer[..n.min(256 - first.len())]);
        }
        hasher.update(&buffer[..n]);
    }
    let digest = hasher.finalize();
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok(Content { digest: format!("sha256:{hex}"), interpreter: shebang(&first) })
}

/// The interpreter a `#!` line names (absolute paths only: `#!/usr/bin/env node` names `env`).
fn shebang(head: &[u8]) -> Option<PathBuf> {
    let rest = head.strip_prefix(b"#!")?;
    let line = rest.split(|b| *b == b'\n').next()?;
    let text = std::str::from_utf8(line).ok()?;
    let program = text.split_whitespace().next()?;
    Path::new(program).is_absolute().then(|| PathBuf::from(program))
}

type Pins = BTreeMap<PathBuf, String>;

fn parse_pins(text: &str) -> Pins {
    text.lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .filter_map(|line| {
            let (digest, path) = line.split_once(' ')?;
            (digest.starts_with("sha256:") && Path::new(path).is_absolute())
                .then(|| (PathBuf::from(path), digest.to_owned()))
        })
        .collect()
}

/// Reads the pins in `dir`, lets `change` edit them, and writes them back when it says so: under
/// an exclusive lock (other Tandem processes pin too), through a temporary file renamed over
/// the old one.
fn update_pins(dir: &Path, change: impl FnOnce(&mut Pins) -> bool) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let lock = std::fs::OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(".pins.lock"))?;
    lock.lock()?;
    let file = dir.join(PIN_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err),
    };
    let mut pins = parse_pins(&text);
    if !change(&mut pins) {
        return Ok(());
    }
    let mut out = String::from(
        "# Programs in trusted folders, pinned to their content by Tandem (`tandem trust` pins them anew).\n",
    );
    for (path, digest) in &pins {
        let Some(path) = path.to_str().filter(|p| !p.contains('\n')) else { continue };
        out.push_str(&format!("{digest} {path}\n"));
    }
    let temp = dir.join(format!(".{PIN_FILE}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = File::create(&temp)?;
        f.write_all(out.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&temp, &file)?;
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        std::fs::remove_file(&temp).ok();
    }
    written
}

#[cfg(test)]
mod tests;
