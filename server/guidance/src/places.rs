//! Where guidance files are looked for, how each is read, and the problems found on the way.

use std::fmt;
use std::path::{Path, PathBuf};

use tandem_tool_api::shared::{read_capped, read_shared};

/// Longest guidance file read (bytes); a longer one is cut, with a note.
pub(crate) const MAX_FILE: usize = 64 * 1024;

/// Whose file it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// The repository's (`.tandem/`, `.claude/`, `AGENTS.md`, …): hostile until trusted.
    Project,
    /// The person's own, under `~/.config/tandem/`.
    User,
}

/// The places of one session: the workspace root, the working directory, the person's
/// configuration directory and whether the person trusts the workspace.
#[derive(Clone, Debug)]
pub struct Places {
    /// The workspace root.
    pub root: PathBuf,
    /// The working directory (inside the root).
    pub cwd: PathBuf,
    /// `$XDG_CONFIG_HOME/tandem` or `~/.config/tandem`; `None` when neither is set.
    pub user_dir: Option<PathBuf>,
    /// The person trusts the workspace (skills from an untrusted one are marked).
    pub trusted: bool,
}

impl Places {
    /// The places of a session in `cwd` of the workspace at `root`, with the person's
    /// configuration directory and the workspace's trust as Tandem finds them.
    pub fn new(root: &Path, cwd: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            cwd: cwd.to_path_buf(),
            user_dir: tandem_tool_api::trust::user_config_dir(),
            trusted: tandem_tool_api::trust::trust_of(root) == tandem_tool_api::trust::Trust::Trusted,
        }
    }

    /// How `path` is shown: relative to the root for the repository's files, whole for others.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root).unwrap_or(path).display().to_string()
    }
}

/// How bad a [`Problem`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    /// The file was not used.
    Error,
    /// The file was used; something in it was ignored or shadowed.
    Warning,
}

/// Something wrong with a guidance file: which file, which line, what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// Error (the file is not used) or warning.
    pub severity: Severity,
    /// The file as shown ([`Places::shown`]).
    pub file: String,
    /// The 1-based line, when one is to blame.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl Problem {
    pub(crate) fn error(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Self { severity: Severity::Error, file: file.into(), line, message: message.into() }
    }

    pub(crate) fn warning(file: impl Into<String>, line: Option<usize>, message: impl Into<String>) -> Self {
        Self { severity: Severity::Warning, file: file.into(), line, message: message.into() }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.line {
            Some(line) => write!(f, "{}:{line}: {what}: {}", self.file, self.message),
            None => write!(f, "{}: {what}: {}", self.file, self.message),
        }
    }
}

/// A file as read.
pub(crate) struct FileText {
    pub text: String,
    pub cut: bool,
}

/// Reads a guidance file: a repository's through `read_shared` (inside the workspace, regular,
/// capped), the person's own as a regular file, capped. `Ok(None)`: not there.
pub(crate) fn read(places: &Places, origin: Origin, path: &Path) -> Result<Option<FileText>, Problem> {
    match origin {
        Origin::Project => match read_shared(&places.root, path, MAX_FILE) {
            Ok(Some(read)) => Ok(Some(FileText { text: read.text, cut: read.cut })),
            Ok(None) => Ok(None),
            Err(err) => Err(Problem::error(places.shown(path), None, err.to_string())),
        },
        Origin::User => {
            let shown = places.shown(path);
            let Ok(meta) = std::fs::metadata(path) else { return Ok(None) };
            if !meta.is_file() {
                return Err(Problem::error(shown, None, "not a regular file"));
            }
            let file = std::fs::File::open(path).map_err(|e| Problem::error(&shown, None, e.to_string()))?;
            let (text, cut) = read_capped(file, MAX_FILE).map_err(|e| Problem::error(&shown, None, e.to_string()))?;
            Ok(Some(FileText { text, cut }))
        }
    }
}

/// The text of a guidance file; `None` when nothing is there or it cannot be read (the problem
/// is added to `problems`).
pub(crate) fn text_or_problem(
    places: &Places,
    origin: Origin,
    path: &Path,
    problems: &mut Vec<Problem>,
) -> Option<String> {
    match read(places, origin, path) {
        Ok(read) => read.map(|r| r.text),
        Err(problem) => {
            problems.push(problem);
            None
        }
    }
}

/// The `*.md` files of a folder, sorted by name (none when it is missing).
pub(crate) fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    files.sort();
    files
}

/// The sub-folders of a folder, sorted by name.
pub(crate) fn folders(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut dirs: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|entry| entry.path()).filter(|path| path.is_dir()).collect();
    dirs.sort();
    dirs
}

/// The folders of guidance of `kind` (`rules`, `commands`, `skills`) in priority order: the
/// repository's `.tandem/<kind>`, then (for commands and skills) `.claude/<kind>`, then the
/// person's `~/.config/tandem/<kind>`.
pub(crate) fn folders_of(places: &Places, kind: &str, claude: bool) -> Vec<(Origin, PathBuf)> {
    let mut out = vec![(Origin::Project, places.root.join(".tandem").join(kind))];
    if claude {
        out.push((Origin::Project, places.root.join(".claude").join(kind)));
    }
    if let Some(user) = &places.user_dir {
        out.push((Origin::User, user.join(kind)));
    }
    out
}
