//! Workspace trust. A cloned repository can ship settings (`.tandem/config.toml`, `.mcp.json`,
//! `.tandem/mcp.json`); the ones that would raise privileges (a laxer mode, more tools, roots
//! outside the workspace, private network access, programs to start, another model provider)
//! take effect only once the person trusts the folder. Trust is kept per folder in the
//! person's own configuration, `~/.config/tandem/trusted-folders` (one absolute path per line;
//! a folder is trusted when it or a folder above it is listed), given with `tandem trust` or an
//! editor's prompt, or for one process with `TANDEM_TRUST_WORKSPACE=1`.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The variable that trusts the workspace for one process (CI, scripts).
pub const TRUST_ENV: &str = "TANDEM_TRUST_WORKSPACE";
/// The file, in Tandem's user configuration directory, that lists trusted folders.
pub const TRUST_FILE: &str = "trusted-folders";

/// Whether the repository's own settings may raise privileges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Trust {
    /// The person trusts this folder.
    Trusted,
    /// Nobody said so: privilege-raising settings from the repository are ignored.
    #[default]
    Untrusted,
}

/// Tandem's user configuration directory: `$XDG_CONFIG_HOME/tandem`, else `~/.config/tandem`.
pub fn user_config_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".config")))
        .map(|dir| dir.join("tandem"))
}

/// The trust of the workspace at `root`, from the environment and the person's list.
pub fn trust_of(root: &Path) -> Trust {
    if std::env::var(TRUST_ENV).is_ok_and(|v| v == "1") {
        return Trust::Trusted;
    }
    match user_config_dir() {
        Some(dir) => trust_in(&dir, root),
        None => Trust::Untrusted,
    }
}

/// The trust of `root` according to the list in `config_dir`.
pub fn trust_in(config_dir: &Path, root: &Path) -> Trust {
    let Ok(root) = root.canonicalize() else { return Trust::Untrusted };
    let Ok(text) = std::fs::read_to_string(config_dir.join(TRUST_FILE)) else { return Trust::Untrusted };
    let listed = text
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(Path::new)
        .filter(|path| path.is_absolute())
        .any(|path| root.starts_with(path));
    if listed { Trust::Trusted } else { Trust::Untrusted }
}

/// Adds `root` to the list in `config_dir` (creating it). Returns the list's path.
pub fn grant_in(config_dir: &Path, root: &Path) -> io::Result<PathBuf> {
    let root = root.canonicalize()?;
    let line = root.to_str().filter(|s| !s.contains('\n')).ok_or_else(|| {
        io::Error::new(io::ErrorKind::InvalidInput, "the folder's path cannot be written on one line of UTF-8")
    })?;
    std::fs::create_dir_all(config_dir)?;
    let file = config_dir.join(TRUST_FILE);
    if trust_in(config_dir, &root) == Trust::Trusted {
        return Ok(file);
    }
    let mut list = std::fs::OpenOptions::new().create(true).append(true).open(&file)?;
    writeln!(list, "{line}")?;
    Ok(file)
}

/// Removes `root` (exactly that folder) from the list in `config_dir`. Returns whether it was
/// listed.
pub fn revoke_in(config_dir: &Path, root: &Path) -> io::Result<bool> {
    let root = root.canonicalize()?;
    let file = config_dir.join(TRUST_FILE);
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(err) => return Err(err),
    };
    let kept: Vec<&str> = text.lines().filter(|line| Path::new(line.trim()) != root).collect();
    let removed = kept.len() != text.lines().count();
    if removed {
        let mut rest = kept.join("\n");
        if !rest.is_empty() {
            rest.push('\n');
        }
        std::fs::write(&file, rest)?;
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_is_per_folder_and_covers_what_is_below() -> io::Result<()> {
        let config = tempfile::tempdir()?;
        let projects = tempfile::tempdir()?;
        let (a, b) = (projects.path().join("a"), projects.path().join("b"));
        std::fs::create_dir_all(a.join("sub"))?;
        std::fs::create_dir_all(&b)?;
        assert_eq!(trust_in(config.path(), &a), Trust::Untrusted);
        grant_in(config.path(), &a)?;
        grant_in(config.path(), &a)?;
        assert_eq!(trust_in(config.path(), &a), Trust::Trusted);
        assert_eq!(trust_in(config.path(), &a.join("sub")), Trust::Trusted);
        assert_eq!(trust_in(config.path(), &b), Trust::Untrusted);
        // A sibling whose name starts the same is not covered.
        let ab = projects.path().join("a-b");
        std::fs::create_dir_all(&ab)?;
        assert_eq!(trust_in(config.path(), &ab), Trust::Untrusted);
        let list = std::fs::read_to_string(config.path().join(TRUST_FILE))?;
        assert_eq!(list.lines().count(), 1, "{list}");
        assert!(revoke_in(config.path(), &a)?);
        assert_eq!(trust_in(config.path(), &a), Trust::Untrusted);
        assert!(!revoke_in(config.path(), &a)?);
        Ok(())
    }
}
