//! Files a repository shares with the agent (`AGENTS.md`, `CLAUDE.md`, rules, commands,
//! skills): read only when, after every symlink is resolved, they are regular files inside the
//! workspace (never in `.git`), and never more than a cap. A clone can ship
//! `AGENTS.md -> ~/.aws/credentials` or `CLAUDE.md -> /proc/self/environ`; neither is read,
//! and a FIFO never blocks the read.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A shared file as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedText {
    /// The text (lossy UTF-8), at most the cap, cut at a character boundary.
    pub text: String,
    /// Whether the file was longer than the cap.
    pub cut: bool,
    /// The file's real path.
    pub path: PathBuf,
}

/// Why a shared file was not read (`None` from [`read_shared`] means it is not there).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SharedError {
    /// It resolves outside the workspace (or into `.git`).
    #[error("`{shown}` was not read: it resolves to `{resolved}`, outside the workspace")]
    Outside {
        /// The name as asked.
        shown: String,
        /// Where it resolves.
        resolved: PathBuf,
    },
    /// It is a folder, a FIFO, a device or a socket.
    #[error("`{0}` was not read: it is not a regular file")]
    NotRegular(String),
    /// Reading failed.
    #[error("`{shown}` could not be read: {message}")]
    Io {
        /// The name as asked.
        shown: String,
        /// The error.
        message: String,
    },
}

/// Reads `path` (absolute, or relative to `root`) as a shared file of the workspace at `root`,
/// at most `cap` bytes. `Ok(None)` when nothing is there (a dangling symlink included).
pub fn read_shared(root: &Path, path: &Path, cap: usize) -> Result<Option<SharedText>, SharedError> {
    let shown = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let joined = root.join(path);
    if std::fs::symlink_metadata(&joined).is_err() {
        return Ok(None);
    }
    let Ok(real) = joined.canonicalize() else { return Ok(None) };
    let real_root =
        root.canonicalize().map_err(|e| SharedError::Io { shown: shown.clone(), message: e.to_string() })?;
    let inside = real.strip_prefix(&real_root).is_ok_and(|rel| !rel.components().any(|c| c.as_os_str() == ".git"));
    if !inside {
        return Err(SharedError::Outside { shown, resolved: real });
    }
    // The resolved path has no symlink left: open it without following one (a swap in
    // between fails), without blocking on a FIFO, then look at what was opened.
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits() as i32)
        .open(&real)
        .map_err(|e| SharedError::Io { shown: shown.clone(), message: e.to_string() })?;
    let meta = file.metadata().map_err(|e| SharedError::Io { shown: shown.clone(), message: e.to_string() })?;
    if !meta.is_file() {
        return Err(SharedError::NotRegular(shown));
    }
    let (text, cut) =
        read_capped(file, cap).map_err(|e| SharedError::Io { shown: shown.clone(), message: e.to_string() })?;
    Ok(Some(SharedText { text, cut, path: real }))
}

/// At most `cap` bytes of `reader` as text (invalid UTF-8 replaced), and whether there was more.
/// A character the cap cuts in two is dropped rather than shown as a replacement character.
pub fn read_capped(reader: impl Read, cap: usize) -> std::io::Result<(String, bool)> {
    let mut bytes = Vec::new();
    reader.take(cap as u64 + 1).read_to_end(&mut bytes)?;
    let cut = bytes.len() > cap;
    bytes.truncate(cap);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if cut {
        while text.ends_with('\u{fffd}') {
            text.pop();
        }
    }
    Ok((text, cut))
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::symlink;

    use proptest::prelude::*;

    use super::*;

    #[test]
    fn a_symlink_out_of_the_workspace_is_never_read() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let (root, outside) = (dir.path().join("ws"), dir.path().join("secret"));
        std::fs::create_dir_all(root.join("docs"))?;
        std::fs::create_dir_all(root.join(".git"))?;
        std::fs::write(&outside, "API_KEY=sk-123")?;
        std::fs::write(root.join(".git/config"), "[core]")?;
        std::fs::write(root.join("docs/rules.md"), "be kind")?;
        symlink(&outside, root.join("AGENTS.md"))?;
        symlink("/proc/self/environ", root.join("CLAUDE.md"))?;
        symlink(".git/config", root.join("GIT.md"))?;
        symlink("docs/rules.md", root.join("INSIDE.md"))?;
        symlink("nowhere", root.join("DANGLING.md"))?;
        assert!(matches!(read_shared(&root, Path::new("AGENTS.md"), 100), Err(SharedError::Outside { .. })));
        assert!(matches!(read_shared(&root, Path::new("CLAUDE.md"), 100), Err(SharedError::Outside { .. })));
        assert!(matches!(read_shared(&root, Path::new("GIT.md"), 100), Err(SharedError::Outside { .. })));
        assert_eq!(read_shared(&root, Path::new("INSIDE.md"), 100)?.map(|s| s.text), Some("be kind".into()));
        assert_eq!(read_shared(&root, Path::new("DANGLING.md"), 100)?, None);
        assert_eq!(read_shared(&root, Path::new("MISSING.md"), 100)?, None);
        Ok(())
    }

    #[test]
    fn a_fifo_or_a_folder_is_refused_without_blocking() -> Result<(), Box<dyn std::error::Error>> {
        let dir = tempfile::tempdir()?;
        let fifo = dir.path().join("AGENTS.md");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::RUSR, 0)?;
        std::fs::create_dir(dir.path().join("CLAUDE.md"))?;
        assert!(matches!(read_shared(dir.path(), Path::new("AGENTS.md"), 10), Err(SharedError::NotRegular(_))));
        assert!(read_shared(dir.path(), Path::new("CLAUDE.md"), 10).is_err());
        Ok(())
    }

    proptest! {
        /// Whatever the text and the cap: the result is a prefix of the file, at most the
        /// cap, cut exactly when the file is longer.
        #[test]
        fn the_cap_holds_and_cuts_at_a_character(text in "\\PC{0,300}", cap in 0usize..400) {
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            std::fs::write(dir.path().join("AGENTS.md"), &text).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let read = read_shared(dir.path(), Path::new("AGENTS.md"), cap)
                .map_err(|e| TestCaseError::fail(e.to_string()))?
                .ok_or_else(|| TestCaseError::fail("missing"))?;
            prop_assert!(read.text.len() <= cap);
            prop_assert!(text.starts_with(&read.text));
            prop_assert_eq!(read.cut, text.len() > cap);
        }
    }
}
