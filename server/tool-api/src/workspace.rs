//! Workspace confinement: every path a tool touches is resolved, symlinks included, before it
//! is checked against the workspace root and the configured extra roots.

use std::ffi::OsStr;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Longest path accepted (Linux `PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;
/// Longest component accepted (Linux `NAME_MAX`).
const MAX_COMPONENT_BYTES: usize = 255;
/// Symlinks followed in one resolution before giving up (Linux `MAXSYMLINKS`).
const MAX_SYMLINKS: usize = 40;
/// errno values (Linux) that std does not name on stable.
const ELOOP: i32 = 40;
const ENOTDIR: i32 = 20;

/// Why a path was refused.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// Empty path.
    #[error("the path is empty; give a file path relative to the workspace root `{root}`")]
    Empty {
        /// Workspace root.
        root: PathBuf,
    },
    /// NUL byte.
    #[error("the path contains a NUL byte, which no file name can hold; remove it")]
    Nul,
    /// Too long.
    #[error("the path is {len} bytes long; the limit is {MAX_PATH_BYTES} bytes (and {MAX_COMPONENT_BYTES} per name)")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// Resolves outside every allowed root.
    #[error(
        "`{raw}` resolves to `{resolved}`, which is outside the workspace `{root}`; use a path inside the workspace (relative paths start at its root), or allow the directory with `allowed_paths` in .tandem/config.toml"
    )]
    OutsideWorkspace {
        /// The path as given.
        raw: String,
        /// Where it really points.
        resolved: PathBuf,
        /// Workspace root.
        root: PathBuf,
    },
    /// A symlink loop or chain too long.
    #[error("`{raw}` goes through more than {MAX_SYMLINKS} symbolic links (a loop?)")]
    SymlinkLoop {
        /// The path as given.
        raw: String,
    },
    /// Inside `.git` or another protected location.
    #[error("`{path}` is inside `.git`; tandem never changes a repository's internals (use git commands through bash)")]
    Protected {
        /// The path.
        path: PathBuf,
    },
    /// An IO error while resolving.
    #[error("cannot resolve `{raw}`: {source}")]
    Io {
        /// The path as given.
        raw: String,
        /// The error.
        source: io::Error,
    },
}

/// The workspace: its canonical root and any extra roots configuration allows.
#[derive(Clone, Debug)]
pub struct Workspace {
    root: PathBuf,
    allowed: Vec<PathBuf>,
}

impl Workspace {
    /// A workspace at `root` (which must exist), with extra `allowed` roots. Both are
    /// canonicalized; allowed roots that do not exist are ignored.
    pub fn new(root: &Path, allowed: &[PathBuf]) -> io::Result<Self> {
        let root = root.canonicalize()?;
        let allowed = allowed
            .iter()
            .map(|p| if p.is_absolute() { p.clone() } else { root.join(p) })
            .filter_map(|p| p.canonicalize().ok())
            .collect();
        Ok(Self { root, allowed })
    }

    /// The canonical root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a resolved path is inside the workspace or an allowed root.
    pub fn contains(&self, resolved: &Path) -> bool {
        resolved.starts_with(&self.root) || self.allowed.iter().any(|a| resolved.starts_with(a))
    }

    /// Resolves `raw` (absolute, or relative to `base`) to a real path, following every
    /// symlink that exists, and refuses it when it ends up outside the workspace. The path
    /// itself need not exist (a file about to be created).
    pub fn resolve(&self, raw: &str, base: &Path) -> Result<PathBuf, PathError> {
        self.resolve_seen(raw, base).map(|(resolved, _)| resolved)
    }

    /// [`Workspace::resolve`], with what resolving learnt of the last component: its metadata
    /// when it exists (it is not a symlink: those are followed), as `stat` would give it. A
    /// reader can use it instead of asking again.
    pub fn resolve_seen(&self, raw: &str, base: &Path) -> Result<(PathBuf, Option<std::fs::Metadata>), PathError> {
        if raw.is_empty() {
            return Err(PathError::Empty { root: self.root.clone() });
        }
        if raw.contains('\0') {
            return Err(PathError::Nul);
        }
        let too_long = raw.len() > MAX_PATH_BYTES
            || Path::new(raw).components().any(|c| c.as_os_str().len() > MAX_COMPONENT_BYTES);
        if too_long {
            return Err(PathError::TooLong { len: raw.len() });
        }
        let raw_path = raw.strip_prefix("file://").unwrap_or(raw);
        let joined = if Path::new(raw_path).is_absolute() { PathBuf::from(raw_path) } else { base.join(raw_path) };
        let mut links = 0;
        // The root is canonical: a path under it resolves from there, without looking at the
        // directories above it again (a `..` climbing out of it is still followed for real).
        let resolved = match joined.strip_prefix(&self.root) {
            Ok(rest) => resolve_from(self.root.clone(), 0, rest, &mut links),
            Err(_) => resolve_from(PathBuf::from("/"), 0, &joined, &mut links),
        };
        let (resolved, _, seen) = resolved.map_err(|err| match err.raw_os_error() {
            Some(ELOOP) => PathError::SymlinkLoop { raw: raw.to_owned() },
            _ => PathError::Io { raw: raw.to_owned(), source: err },
        })?;
        if !self.contains(&resolved) && !self.is_own_output(&resolved) {
            return Err(PathError::OutsideWorkspace { raw: raw.to_owned(), resolved, root: self.root.clone() });
        }
        Ok((resolved, seen))
    }

    /// Whether a resolved path is one of the full command outputs Tandem keeps for this
    /// workspace (in its state directory, outside the workspace): readable, never writable.
    fn is_own_output(&self, resolved: &Path) -> bool {
        crate::state::state_path(&self.root, "outputs").canonicalize().is_ok_and(|dir| resolved.starts_with(dir))
    }

    /// Like [`Workspace::resolve`], and also refuses paths inside `.git` (for tools that write).
    pub fn resolve_writable(&self, raw: &str, base: &Path) -> Result<PathBuf, PathError> {
        let path = self.resolve(raw, base)?;
        self.check_writable(&path)?;
        Ok(path)
    }

    /// Refuses a resolved path that is outside the roots or inside `.git`.
    pub fn check_writable(&self, path: &Path) -> Result<(), PathError> {
        if !self.contains(path) {
            return Err(PathError::OutsideWorkspace {
                raw: path.display().to_string(),
                resolved: path.to_path_buf(),
                root: self.root.clone(),
            });
        }
        let relative = path.strip_prefix(&self.root).unwrap_or(path);
        if relative.components().any(|c| c.as_os_str() == OsStr::new(".git")) {
            return Err(PathError::Protected { path: relative.to_path_buf() });
        }
        Ok(())
    }

    /// `path` relative to the root when inside it, for messages.
    pub fn display(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
            Ok(rel) => rel.display().to_string(),
            Err(_) => path.display().to_string(),
        }
    }
}

/// Resolves an absolute path component by component, as the kernel would, but without
/// requiring the path to exist: every existing component is followed through symlinks. Once a
/// component is missing, the names after it are appended as they are (they cannot be
/// symlinks: nothing exists below a missing directory), and a `..` removes the last missing
/// name only. A `..` that climbs back to an existing directory resumes resolving on the real
/// file system, so `missing/../link` follows `link` like any other path does. The result has
/// no `..`, `.` or symlink in any existing component: the kernel sees exactly this path.
///
/// Starts from `resolved` (`/` for an absolute path), whose last `missing` names do not exist.
/// Returns the result, how many of its last names do not exist, and the metadata of its last
/// component when it was looked at and exists.
fn resolve_from(
    mut resolved: PathBuf,
    mut missing: usize,
    path: &Path,
    links: &mut usize,
) -> io::Result<(PathBuf, usize, Option<std::fs::Metadata>)> {
    let mut seen = None;
    for component in path.components() {
        match component {
            Component::Prefix(_) | Component::RootDir => {
                resolved = PathBuf::from("/");
                missing = 0;
                seen = None;
            }
            Component::CurDir => {}
            // `resolved` holds no symlink, so its lexical parent is its real parent.
            Component::ParentDir => {
                resolved.pop();
                missing = missing.saturating_sub(1);
                seen = None;
            }
            Component::Normal(name) => {
                let candidate = resolved.join(name);
                if missing > 0 {
                    resolved = candidate;
                    missing += 1;
                    seen = None;
                    continue;
                }
                match std::fs::symlink_metadata(&candidate) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        *links += 1;
                        if *links > MAX_SYMLINKS {
                            return Err(io::Error::from_raw_os_error(ELOOP));
                        }
                        let target = std::fs::read_link(&candidate)?;
                        // A relative target is relative to the link's directory.
                        (resolved, missing, seen) = resolve_from(resolved, 0, &target, links)?;
                    }
                    Ok(meta) => {
                        resolved = candidate;
                        seen = Some(meta);
                    }
                    // Missing, or a file used as a directory (`a.txt/b`): nothing exists below.
                    Err(err) if err.kind() == io::ErrorKind::NotFound || err.raw_os_error() == Some(ENOTDIR) => {
                        resolved = candidate;
                        missing = 1;
                        seen = None;
                    }
                    Err(err) => return Err(err),
                }
            }
        }
    }
    Ok((resolved, missing, seen))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A workspace `ws` beside a folder `outside` (canonical) in a temporary directory.
    pub(super) struct Tree {
        _dir: tempfile::TempDir,
        pub(super) ws: Workspace,
        pub(super) outside: PathBuf,
    }

    /// A [`Tree`] whose workspace root and outside folder `fill` makes.
    pub(super) fn tree_with(fill: impl FnOnce(&Path, &Path) -> io::Result<()>) -> io::Result<Tree> {
        let dir = tempfile::tempdir()?;
        let (root, outside) = (dir.path().join("ws"), dir.path().join("outside"));
        fill(&root, &outside)?;
        let ws = Workspace::new(&root, &[])?;
        let outside = outside.canonicalize()?;
        Ok(Tree { _dir: dir, ws, outside })
    }

    fn fixture() -> io::Result<Tree> {
        tree_with(|root, outside| {
            std::fs::create_dir_all(root.join("src"))?;
            std::fs::create_dir_all(outside)?;
            std::fs::write(outside.join("secret.txt"), "s")?;
            std::fs::write(root.join("src/lib.rs"), "x")?;
            symlink(outside.join("secret.txt"), root.join("link-out"))?;
            symlink(outside, root.join("dir-out"))?;
            symlink("src/lib.rs", root.join("link-in"))?;
            symlink(root.join("loop-a"), root.join("loop-b"))?;
            symlink(root.join("loop-b"), root.join("loop-a"))?;
            symlink(outside.join("not-yet"), root.join("dangling-out"))?;
            Ok(())
        })
    }

    fn verdict(f: &Tree, raw: &str) -> String {
        match f.ws.resolve(raw, f.ws.root()) {
            Ok(path) => format!("ok {}", f.ws.display(&path)),
            Err(PathError::OutsideWorkspace { .. }) => "outside".into(),
            Err(PathError::SymlinkLoop { .. }) => "loop".into(),
            Err(PathError::Nul) => "nul".into(),
            Err(PathError::TooLong { .. }) => "too long".into(),
            Err(PathError::Empty { .. }) => "empty".into(),
            Err(other) => format!("error {other}"),
        }
    }

    #[test]
    fn escape_attempts_are_refused() -> io::Result<()> {
        let f = fixture()?;
        let outside = f.outside.display().to_string();
        let root = f.ws.root().display().to_string();
        let cases = [
            "src/lib.rs".to_owned(),
            "./src/../src/new.rs".to_owned(),
            format!("{root}/src/lib.rs"),
            "link-in".to_owned(),
            "new/deep/file.txt".to_owned(),
            "new/../../outside/x".to_owned(),
            "../outside/secret.txt".to_owned(),
            "src/../../outside".to_owned(),
            format!("{outside}/secret.txt"),
            "/etc/passwd".to_owned(),
            "link-out".to_owned(),
            "dir-out/secret.txt".to_owned(),
            "dir-out/new-file".to_owned(),
            "dangling-out".to_owned(),
            "/proc/self/root/etc/passwd".to_owned(),
            format!("/proc/self/root{root}/src/lib.rs"),
            "/proc/self/cwd/../../../../etc".to_owned(),
            "loop-a".to_owned(),
            "src/lib.rs\0.txt".to_owned(),
            "a/".repeat(2100),
            "x".repeat(300),
            String::new(),
            "file:///etc/passwd".to_owned(),
            "src/lib.rs/inner".to_owned(),
            "nonexist/../dir-out/secret.txt".to_owned(),
            "nonexist/deeper/../../dir-out/new".to_owned(),
            "src/lib.rs/../../link-out".to_owned(),
            "nonexist/../src/lib.rs".to_owned(),
        ];
        let got: Vec<String> = cases.iter().map(|c| verdict(&f, c)).collect();
        expect_test::expect![[r#"
            ok src/lib.rs
            ok src/new.rs
            ok src/lib.rs
            ok src/lib.rs
            ok new/deep/file.txt
            outside
            outside
            outside
            outside
            outside
            outside
            outside
            outside
            outside
            outside
            ok src/lib.rs
            outside
            loop
            nul
            too long
            too long
            empty
            outside
            ok src/lib.rs/inner
            outside
            outside
            outside
            ok src/lib.rs"#]]
        .assert_eq(&got.join("\n"));
        Ok(())
    }

    #[test]
    fn allowed_roots_and_protected_git() -> io::Result<()> {
        let f = fixture()?;
        let ws = Workspace::new(f.ws.root(), std::slice::from_ref(&f.outside))?;
        assert!(ws.resolve("link-out", ws.root()).is_ok());
        std::fs::create_dir_all(ws.root().join(".git"))?;
        assert!(matches!(ws.resolve_writable(".git/config", ws.root()), Err(PathError::Protected { .. })));
        assert!(ws.resolve(".git/config", ws.root()).is_ok());
        assert!(ws.resolve_writable(".gitignore", ws.root()).is_ok());
        Ok(())
    }
}

/// The property: whatever path a tool is given, what `resolve` accepts lies inside the workspace
/// as the kernel sees it (no component of the result is a symlink, no `..` is left in it), and
/// a path the kernel can resolve is accepted exactly when its real location is inside.
#[cfg(test)]
mod property {
    use super::tests::{Tree, tree_with};
    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::symlink;

    /// Names that exist in the tree below (dirs, files, links in and out), names that do not,
    /// and the navigation components.
    const NAMES: &[&str] = &[
        "a",
        "b",
        "file.txt",
        "link-in",
        "link-out",
        "dir-out",
        "up",
        "rel-out",
        "dangling-out",
        "chain",
        "nonexist",
        "new",
        "..",
        ".",
        "",
    ];

    fn tree() -> io::Result<Tree> {
        tree_with(|root, outside| {
            std::fs::create_dir_all(root.join("a/b"))?;
            std::fs::create_dir_all(outside.join("a"))?;
            std::fs::write(root.join("file.txt"), "in")?;
            std::fs::write(root.join("a/file.txt"), "in")?;
            std::fs::write(outside.join("file.txt"), "secret")?;
            symlink("a", root.join("link-in"))?;
            symlink(outside, root.join("dir-out"))?;
            symlink(outside.join("file.txt"), root.join("link-out"))?;
            symlink("../..", root.join("a/up"))?;
            symlink("../../outside", root.join("a/rel-out"))?;
            symlink(outside.join("none"), root.join("dangling-out"))?;
            symlink("link-in/up", root.join("chain"))?;
            symlink("../ws/a", outside.join("back-in"))?;
            Ok(())
        })
    }

    fn raw_path() -> impl Strategy<Value = (u8, Vec<&'static str>)> {
        (0u8..6, proptest::collection::vec(proptest::sample::select(NAMES), 1..7))
    }

    fn spell(tree: &Tree, prefix: u8, parts: &[&str]) -> String {
        let rel = parts.join("/");
        let root = tree.ws.root().display();
        match prefix {
            0 | 1 => rel,
            2 => format!("{root}/{rel}"),
            3 => format!("/proc/self/root{root}/{rel}"),
            4 => format!("{}/{rel}", tree.outside.display()),
            _ => format!("{}/back-in/{rel}", tree.outside.display()),
        }
    }

    /// The kernel's view of `path`: the longest existing prefix, canonicalized, then the rest.
    fn kernel_view(path: &Path) -> Option<PathBuf> {
        let mut existing = path.to_path_buf();
        let mut rest = Vec::new();
        loop {
            if let Ok(real) = existing.canonicalize() {
                return Some(rest.iter().rev().fold(real, |acc: PathBuf, name: &std::ffi::OsString| acc.join(name)));
            }
            rest.push(existing.file_name()?.to_owned());
            existing = existing.parent()?.to_path_buf();
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]
        #[test]
        fn nothing_resolved_lies_outside((prefix, parts) in raw_path()) {
            let tree = tree().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let raw = spell(&tree, prefix, &parts);
            let base = if prefix == 1 { tree.ws.root().join("a") } else { tree.ws.root().to_path_buf() };
            if let Ok(path) = tree.ws.resolve(&raw, &base) {
                prop_assert!(path.starts_with(tree.ws.root()), "{raw} -> {}", path.display());
                prop_assert!(path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))), "{raw} -> {}", path.display());
                let seen = kernel_view(&path);
                prop_assert_eq!(seen.as_deref(), Some(path.as_path()), "{} -> {} is not what the kernel sees", raw, path.display());
                // What resolving says of the last component is what `stat` says of the path.
                let (again, meta) = tree.ws.resolve_seen(&raw, &base).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!(&again, &path);
                if let Some(meta) = meta {
                    use std::os::unix::fs::MetadataExt as _;
                    let stat = std::fs::metadata(&path).map_err(|e| TestCaseError::fail(format!("{raw}: seen, yet {e}")))?;
                    prop_assert_eq!((meta.dev(), meta.ino(), meta.mode()), (stat.dev(), stat.ino(), stat.mode()), "{}", raw);
                }
            }
            // A path the kernel resolves fully is accepted exactly when it lands inside.
            let joined = if Path::new(&raw).is_absolute() { PathBuf::from(&raw) } else { base.join(&raw) };
            if let Ok(real) = joined.canonicalize().map_err(|_| ()).and_then(|r| if raw.is_empty() { Err(()) } else { Ok(r) }) {
                let verdict = tree.ws.resolve(&raw, &base);
                if real.starts_with(tree.ws.root()) {
                    prop_assert_eq!(verdict.ok(), Some(real), "{}", raw);
                } else {
                    prop_assert!(verdict.is_err(), "{raw} -> {} accepted", real.display());
                }
            }
        }
    }
}
