//! Tandem's own directory in a workspace, `.tandem/`: sessions, command logs, scripts,
//! memories, MCP logs. A cloned repository may ship a `.tandem`; Tandem keeps state in it only
//! when it and every directory below it that Tandem uses are real directories (not symlinks),
//! and opens its state files without following a symlink, so nothing it writes can land
//! outside the workspace.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

/// The name of the state directory at the workspace root.
pub const STATE_DIR: &str = ".tandem";

/// What `.gitignore` in a new state directory holds: sessions keep whole files, so nothing in
/// it belongs in the repository.
const GITIGNORE: &str = "# Tandem's sessions, logs and memories: local to this machine.\n*\n";

/// Why the state directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A component is a symlink or not a directory.
    #[error(
        "`{path}` is {what}; tandem keeps its state only in real directories inside the workspace. Remove it (tandem creates it again), then retry"
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
    /// Creating or inspecting failed.
    #[error("cannot create `{path}`: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// `<root>/.tandem/<sub>` (`sub` may be empty or nest: `"sessions"`, `"mcp/logs"`), each
/// directory created when missing and refused when it is a symlink or not a directory. A new
/// `.tandem` gets a `.gitignore` that keeps it out of git.
pub fn state_dir(root: &Path, sub: &str) -> Result<PathBuf, StateError> {
    let base = root.join(STATE_DIR);
    if real_dir(&base)? {
        let ignore = base.join(".gitignore");
        // A failure here only costs the ignore file; the state directory itself is sound.
        if let Err(err) = create_new(&ignore).and_then(|mut file| io::Write::write_all(&mut file, GITIGNORE.as_bytes()))
        {
            tracing::warn!("cannot write {}: {err}", ignore.display());
        }
    }
    let mut dir = base;
    for component in Path::new(sub).components() {
        let Component::Normal(name) = component else {
            return Err(StateError::BadName(sub.to_owned()));
        };
        dir.push(name);
        real_dir(&dir)?;
    }
    Ok(dir)
}

/// Makes sure `dir` is a real directory, creating it when missing. Returns whether it was
/// created.
fn real_dir(dir: &Path) -> Result<bool, StateError> {
    let refuse = |what| StateError::NotARealDirectory { path: dir.to_path_buf(), what };
    let io_error = |source| StateError::Io { path: dir.to_path_buf(), source };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if meta.file_type().is_symlink() => Err(refuse("a symbolic link")),
        Ok(meta) if meta.is_dir() => Ok(false),
        Ok(_) => Err(refuse("not a directory")),
        Err(err) if err.kind() == io::ErrorKind::NotFound => match std::fs::create_dir(dir) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_shipped_symlink_is_never_used() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (root, outside) = (dir.path().join("ws"), dir.path().join("outside"));
        std::fs::create_dir_all(&root)?;
        std::fs::create_dir_all(&outside)?;
        symlink(&outside, root.join(STATE_DIR))?;
        assert!(matches!(state_dir(&root, "outputs"), Err(StateError::NotARealDirectory { .. })));
        std::fs::remove_file(root.join(STATE_DIR))?;
        std::fs::create_dir(root.join(STATE_DIR))?;
        symlink(&outside, root.join(".tandem/memory"))?;
        assert!(matches!(state_dir(&root, "memory"), Err(StateError::NotARealDirectory { .. })));
        symlink(outside.join("log"), root.join(".tandem/log"))?;
        assert!(open_append(&root.join(".tandem/log")).is_err());
        assert!(create_new(&root.join(".tandem/log")).is_err());
        assert!(!outside.join("log").exists());
        assert_eq!(std::fs::read_dir(&outside)?.count(), 0);
        assert!(matches!(state_dir(&root, "../x"), Err(StateError::BadName(_))));
        Ok(())
    }

    #[test]
    fn a_new_state_directory_keeps_itself_out_of_git() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let sessions = state_dir(dir.path(), "sessions")?;
        assert_eq!(sessions, dir.path().join(".tandem/sessions"));
        assert_eq!(std::fs::read_to_string(dir.path().join(".tandem/.gitignore"))?, GITIGNORE);
        // An existing `.tandem` (a repository's own, with a committed config) is left as it is.
        let other = tempfile::tempdir()?;
        std::fs::create_dir(other.path().join(STATE_DIR))?;
        state_dir(other.path(), "outputs")?;
        assert!(!other.path().join(".tandem/.gitignore").exists());
        Ok(())
    }
}
