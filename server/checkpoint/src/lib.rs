//! Checkpoints: snapshots of the workspace before each turn and around each tool call that can
//! change files (commands included, whose effects cannot be predicted), kept in a shadow git
//! repository in the workspace's state directory (outside the workspace) that never touches the person's own `.git`; and
//! restore plans that bring files back to a checkpoint without overwriting what the person
//! changed since.
//!
//! **Why git:** it already does what a snapshot needs, fast: its index remembers each file's
//! size and time, so a snapshot of an unchanged 10,000-file tree reads directories and stats
//! files but hashes nothing; identical content is stored once; `.gitignore` is honoured. Each
//! call is hermetic (see `git.rs`). Files over a size cap are left out and listed; so are
//! ignored files, nested repositories' contents, and anything in `.git` or `.tandem`.
//!
//! **Who changed what:** Tandem changes files only inside a *window*: from the snapshot that
//! starts a tool call ([`Kind::BeforeTool`], taken again once the person allowed a command) or
//! a restore to the one that ends it ([`Kind::AfterTool`], [`Kind::AfterRestore`]), which says
//! what Tandem knows it did ([`Effects`]). A command's effects are unknown, so whatever changed
//! in its window is its own; a file tool's and a restore's are exact (every write, with the hash
//! of what it replaced and what it left), so a change in their window that the writes do not
//! explain is the person's. Every change outside a window is the person's: between turns,
//! between the agent's calls while the model thinks, while a command waits for approval. A
//! restore plan treats a file the person changed after the checkpoint as a [`Conflict`], never
//! as something to overwrite.

mod git;
mod large;
mod plan;

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use git::{EMPTY_TREE, Git, split_nul};

/// Files larger than this are left out of snapshots (and listed as skipped).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Sessions whose checkpoints are kept; older ones are pruned.
pub const DEFAULT_KEEP_SESSIONS: usize = 20;

/// Patterns never snapshotted, beside the workspace's own ignore files: Tandem's state, and
/// dependency and build directories that are regenerated, not edited.
const EXCLUDED: &str = "/.tandem/\n.git\nnode_modules/\n/target/\n.venv/\n__pycache__/\n";

/// Why a checkpoint operation failed.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// git could not be started.
    #[error("checkpoints need git, which could not be started: {0}")]
    GitMissing(#[source] io::Error),
    /// A git command failed.
    #[error("the checkpoint store's `git {command}` failed: {stderr}")]
    Git {
        /// The git subcommand.
        command: String,
        /// What it printed.
        stderr: String,
    },
    /// Reading or writing the store failed.
    #[error("the checkpoint store: {0}")]
    Io(#[from] io::Error),
    /// No such checkpoint.
    #[error("this session has no checkpoint {what}; list them first")]
    Unknown {
        /// What was asked for.
        what: String,
    },
}

/// What was about to happen when a snapshot was taken: the wire's kind of checkpoint, one type
/// for the store and the editor protocol. `BeforeTool` opens a tool call's window (taken again
/// when the person allowed a command, so the wait is not part of it) and `AfterTool` closes it,
/// carrying its [`Effects`]; `BeforeRestore` (the state a restore replaces: what a redo brings
/// back) and `AfterRestore` do the same for a restore.
pub use tandem_protocol::CheckpointKind as Kind;

/// What Tandem knows it changed in a window (a tool call, a restore), given on the snapshot
/// that closes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Effects {
    /// Unknown (a command, an outside server's tool): whatever changed in the window is the
    /// call's.
    Unknown,
    /// Exactly these writes, in order: a change in the window they do not explain is the
    /// person's.
    Writes(Vec<FileWrite>),
}

/// One file Tandem wrote or removed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FileWrite {
    /// Workspace-relative, `/`-separated.
    pub path: String,
    /// [`content_hash`] of what it replaced; `None`: nothing was there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<u64>,
    /// [`content_hash`] of what it left; `None`: the file was removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u64>,
}

/// The hash [`FileWrite`]s carry: xxh3-64 of the bytes, the same as `tandem_text::ContentHash`.
pub fn content_hash(bytes: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(bytes)
}

/// Why a file is left out of snapshots, so that undo cannot bring it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeftOut {
    /// Larger than the size cap.
    TooLarge,
    /// Ignored (`.gitignore`, the default excludes, or once over the cap).
    Ignored,
}

/// One snapshot of a session.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Checkpoint {
    /// Its number in the session, from 1.
    pub id: u64,
    /// What was about to happen.
    pub kind: Kind,
    /// The session's turn it belongs to (from 1).
    pub turn: u64,
    /// The tool call about to run ([`Kind::BeforeTool`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Its tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The shadow repository's commit.
    pub commit: String,
    /// Its tree.
    pub tree: String,
    /// Milliseconds since the Unix epoch.
    pub time_ms: u64,
    /// Files left out because they are larger than the cap (workspace-relative).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// On a snapshot that closes a window ([`Kind::AfterTool`], [`Kind::AfterRestore`]): what
    /// Tandem knows it changed in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effects: Option<Effects>,
    /// Files left out for their size that changed (or went) since the previous snapshot: what
    /// a restore cannot bring back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub large_changed: Vec<String>,
}

/// What a new snapshot is of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// What is about to happen.
    pub kind: Kind,
    /// The turn.
    pub turn: u64,
    /// The tool call about to run (or that ended), and its tool.
    pub call: Option<(String, String)>,
    /// For [`Kind::AfterTool`] and [`Kind::AfterRestore`]: what Tandem knows it changed.
    pub effects: Option<Effects>,
}

impl Label {
    /// A label without a call.
    pub fn new(kind: Kind, turn: u64) -> Self {
        Self { kind, turn, call: None, effects: None }
    }
}

/// What a restore goes back to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// The state at this checkpoint.
    Checkpoint(u64),
    /// The state before this turn started.
    Turn(u64),
    /// Only what this tool call changed.
    Call(String),
}

/// A file a restore would write, and its content there (`None`: the file is removed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Restored {
    /// Workspace-relative path.
    pub path: String,
    /// Its content at the target.
    pub content: Option<Vec<u8>>,
}

/// A file the person changed after the checkpoint: left alone unless they choose otherwise.
pub type Conflict = Restored;

/// What a restore would do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The checkpoint the files go back to.
    pub target: Checkpoint,
    /// Files to restore.
    pub files: Vec<Restored>,
    /// Files changed by the person since the checkpoint, left alone by default.
    pub conflicts: Vec<Conflict>,
    /// Files the target's snapshot left out (over the size cap): not restored.
    pub skipped: Vec<String>,
    /// Files Tandem changed or removed after the target that snapshots leave out (over the size
    /// cap, ignored): no restore can bring them back.
    pub not_covered: Vec<String>,
}

/// The file that marks a store Tandem made.
const OWNED: &str = "tandem-store";

/// A workspace's checkpoint store.
pub struct Store {
    root: PathBuf,
    dir: PathBuf,
    git: Git,
    max_file_bytes: u64,
}

impl Store {
    /// Opens (creating when new) the store in `dir` (a real directory the caller made, in the
    /// workspace's state directory) for the workspace at `root`. A store is opened only when
    /// Tandem created it (its [`OWNED`] mark, written last when it is made): anything else
    /// found in `dir` — a half-made store, or one put there by someone else, with its own git
    /// config, hooks or filters — is set aside (`dir` renamed `<dir>.foreign-<time>`), never
    /// run, and a new store is made.
    pub fn open(root: &Path, dir: &Path) -> Result<Self, CheckpointError> {
        let owned = dir.join(OWNED);
        if !std::fs::symlink_metadata(&owned).is_ok_and(|m| m.is_file())
            && std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_some())
        {
            let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
            let mut aside = dir.as_os_str().to_owned();
            aside.push(format!(".foreign-{stamp}"));
            std::fs::rename(dir, &aside)?;
            std::fs::create_dir(dir)?;
            tracing::warn!(
                "set aside a checkpoint store Tandem did not create ({}); a new one is made",
                Path::new(&aside).display()
            );
        }
        std::fs::create_dir_all(dir.join("sessions"))?;
        let store = Self {
            root: root.to_path_buf(),
            dir: dir.to_path_buf(),
            git: Git::new(dir.join("git"), root.to_path_buf()),
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
        };
        if !owned.exists() {
            let _lock = store.lock()?;
            if !owned.exists() {
                store.git.run(&["init", "-q"], None)?;
                for (key, value) in [
                    ("core.autocrlf", "false"),
                    ("core.fsmonitor", "false"),
                    ("core.untrackedCache", "true"),
                    ("core.quotePath", "false"),
                    ("core.symlinks", "true"),
                    ("index.version", "4"),
                    ("gc.auto", "0"),
                ] {
                    store.git.run(&["config", key, value], None)?;
                }
                std::fs::create_dir_all(store.git.git_dir().join("info"))?;
                std::fs::write(store.git.git_dir().join("info/exclude"), EXCLUDED)?;
                std::fs::write(&owned, "a checkpoint store made by Tandem\n")?;
            }
        }
        Ok(store)
    }

    /// Leaves `path` out of every snapshot when it lies inside the workspace: Tandem's own
    /// state folder, when the workspace holds it (a workspace opened at the home directory).
    pub fn excluding(self, path: &Path) -> Result<Self, CheckpointError> {
        let (Ok(root), Ok(path)) = (self.root.canonicalize(), path.canonicalize()) else { return Ok(self) };
        let Ok(relative) = path.strip_prefix(&root) else { return Ok(self) };
        let Some(relative) = relative.to_str().filter(|r| !r.is_empty() && !r.contains('\n')) else { return Ok(self) };
        let line = format!("/{relative}/\n");
        let exclude = self.git.git_dir().join("info/exclude");
        let current = std::fs::read_to_string(&exclude).unwrap_or_default();
        if !current.lines().any(|l| format!("{l}\n") == line) {
            std::fs::write(&exclude, format!("{current}{line}"))?;
        }
        Ok(self)
    }

    /// Sets the size cap per file.
    pub fn with_max_file_bytes(mut self, bytes: u64) -> Self {
        self.max_file_bytes = bytes;
        self
    }

    /// Serialises snapshots of this workspace (they share the shadow index) across sessions and
    /// processes.
    fn lock(&self) -> Result<File, CheckpointError> {
        let file = OpenOptions::new().create(true).truncate(false).write(true).open(self.dir.join("lock"))?;
        file.lock()?;
        Ok(file)
    }

    fn log_path(&self, session: &str) -> PathBuf {
        self.dir.join("sessions").join(format!("{}.jsonl", ref_name(session)))
    }

    /// The session's checkpoints, oldest first.
    pub fn list(&self, session: &str) -> Result<Vec<Checkpoint>, CheckpointError> {
        let file = match File::open(self.log_path(session)) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(err) => return Err(err.into()),
        };
        let mut list = Vec::new();
        for line in io::BufReader::new(file).lines() {
            // A line cut by a crash is skipped: the checkpoints before it stand.
            if let Ok(checkpoint) = serde_json::from_str::<Checkpoint>(&line?) {
                list.push(checkpoint);
            }
        }
        Ok(list)
    }

    /// Takes a snapshot of the workspace for `session`. `buffers` are documents open in the
    /// editor with the text the person sees (unsaved changes included), which the snapshot
    /// holds instead of the disk's.
    pub fn snapshot(
        &self,
        session: &str,
        label: Label,
        buffers: &[(PathBuf, String)],
    ) -> Result<Checkpoint, CheckpointError> {
        let _lock = self.lock()?;
        let previous = self.list(session)?;
        let parent = previous.last();
        self.git.run(&["add", "-A", "--ignore-errors", "--", "."], None).or_else(|err| match err {
            // Unreadable files are left out (git says which); the rest is staged.
            CheckpointError::Git { ref stderr, .. } if stderr.contains("unable to index") => Ok(Vec::new()),
            other => Err(other),
        })?;
        // Only buffers with unsaved changes differ from what `add` just staged: one object each,
        // then one index update for all (a snapshot runs before every changing tool call).
        let mut index_info = String::new();
        for (path, text) in buffers {
            let Ok(relative) = path.strip_prefix(&self.root) else { continue };
            let Some(relative) = relative.to_str() else { continue };
            if std::fs::read(path).is_ok_and(|disk| disk == text.as_bytes()) {
                continue;
            }
            let blob = self.git.line(&["hash-object", "-w", "--stdin"], Some(text.as_bytes()))?;
            let mode = if is_executable(path) { "100755" } else { "100644" };
            index_info.push_str(&format!("{mode} {blob}\t{relative}\0"));
        }
        if !index_info.is_empty() {
            self.git.run(&["update-index", "-z", "--index-info"], Some(index_info.as_bytes()))?;
        }
        let mut tree = self.git.line(&["write-tree"], None)?;
        let mut skipped = Vec::new();
        let commit = match parent {
            // Nothing changed since the last snapshot (the common case: a turn that only read,
            // a tool call that changed nothing yet): the same commit serves, two git calls in all.
            Some(parent) if parent.tree == tree => parent.commit.clone(),
            _ => {
                skipped = self.leave_out_large(parent.map_or(EMPTY_TREE, |p| p.tree.as_str()))?;
                if !skipped.is_empty() {
                    tree = self.git.line(&["write-tree"], None)?;
                }
                let message = format!("{:?} turn {}", label.kind, label.turn);
                let mut args = vec!["commit-tree", tree.as_str(), "-m", message.as_str()];
                if let Some(parent) = parent {
                    args.extend(["-p", parent.commit.as_str()]);
                }
                let commit = self.git.line(&args, None)?;
                // The ref keeps the session's chain reachable.
                self.git.run(&["update-ref", &format!("refs/sessions/{}", ref_name(session)), &commit], None)?;
                commit
            }
        };
        let large_changed = large::update(&self.dir, &self.root, &ref_name(session), &skipped)?;
        let (tool_call_id, tool) = label.call.map_or((None, None), |(id, tool)| (Some(id), Some(tool)));
        let checkpoint = Checkpoint {
            id: previous.last().map_or(1, |p| p.id + 1),
            kind: label.kind,
            turn: label.turn,
            tool_call_id,
            tool,
            commit,
            tree,
            time_ms: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
            skipped,
            effects: label.effects,
            large_changed,
        };
        let mut line = serde_json::to_string(&checkpoint).map_err(io::Error::other)?;
        line.push('\n');
        OpenOptions::new().create(true).append(true).open(self.log_path(session))?.write_all(line.as_bytes())?;
        Ok(checkpoint)
    }

    /// Unstages files over the cap that are new or changed since `since`, and excludes them
    /// from later snapshots (cheaper than finding them again each time).
    fn leave_out_large(&self, since: &str) -> Result<Vec<String>, CheckpointError> {
        let changed = split_nul(
            &self.git.run(&["diff-index", "--cached", "-z", "--name-only", "--diff-filter=AM", since], None)?,
        );
        let large: Vec<String> = changed
            .into_iter()
            .filter(|p| std::fs::metadata(self.root.join(p)).is_ok_and(|m| m.len() > self.max_file_bytes))
            .collect();
        if large.is_empty() {
            return Ok(large);
        }
        let mut list = Vec::new();
        for path in &large {
            list.extend_from_slice(path.as_bytes());
            list.push(0);
        }
        self.git.run(
            &["rm", "--cached", "-q", "--ignore-unmatch", "--pathspec-from-file=-", "--pathspec-file-nul"],
            Some(&list),
        )?;
        let mut exclude = OpenOptions::new().append(true).open(self.git.git_dir().join("info/exclude"))?;
        for path in &large {
            writeln!(exclude, "/{}", escape_pattern(path))?;
        }
        Ok(large)
    }

    /// For each checkpoint of `list` (a session's, oldest first), the files that changed between
    /// it and the next one; none for the last. One git call for up to 400 checkpoints.
    pub fn changes(&self, list: &[Checkpoint]) -> Result<Vec<Vec<String>>, CheckpointError> {
        let pairs: Vec<(&str, &str)> = list.windows(2).map(|w| (w[0].tree.as_str(), w[1].tree.as_str())).collect();
        let mut out = self.git.changed_pairs(&pairs)?;
        if !list.is_empty() {
            out.push(Vec::new());
        }
        Ok(out)
    }

    /// A file's content at checkpoint `id` of `session` (`path` workspace-relative, `/`-separated,
    /// without `..`); `None` when the checkpoint does not hold it.
    pub fn file(&self, session: &str, id: u64, path: &str) -> Result<Option<Vec<u8>>, CheckpointError> {
        let list = self.list(session)?;
        let checkpoint =
            list.iter().find(|c| c.id == id).ok_or_else(|| CheckpointError::Unknown { what: id.to_string() })?;
        self.git.blob(&checkpoint.tree, path)
    }

    /// Which of `paths` (workspace-relative, `/`-separated) exist but are left out of snapshots,
    /// and why: what a change to them could not be undone for. A directory is named when it is
    /// ignored, and so are the files over the cap under it.
    pub fn left_out(&self, paths: &[String]) -> Result<Vec<(String, LeftOut)>, CheckpointError> {
        let mut out = Vec::new();
        let mut ask = Vec::new();
        let large = large::paths(&self.dir);
        for path in paths {
            // Under a link nothing is in a snapshot (git holds the link), and git refuses the name.
            let through_link =
                Path::new(path).ancestors().skip(1).filter(|dir| !dir.as_os_str().is_empty()).any(|dir| {
                    std::fs::symlink_metadata(self.root.join(dir)).is_ok_and(|m| m.file_type().is_symlink())
                });
            if through_link {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(self.root.join(path)) else { continue };
            if meta.is_file() && meta.len() > self.max_file_bytes {
                out.push((path.clone(), LeftOut::TooLarge));
                continue;
            }
            if meta.is_dir() {
                let under = format!("{path}/");
                out.extend(large.iter().filter(|p| p.starts_with(&under)).map(|p| (p.clone(), LeftOut::TooLarge)));
            }
            ask.push(path.as_str());
        }
        if !ask.is_empty() {
            let mut input = Vec::new();
            for path in &ask {
                input.extend_from_slice(path.as_bytes());
                input.push(0);
            }
            // Exit status 1: none of them is ignored.
            let ignored = self.git.run_allowing(&["check-ignore", "-z", "--stdin"], Some(&input), 1)?;
            out.extend(split_nul(&ignored).into_iter().map(|path| (path, LeftOut::Ignored)));
        }
        Ok(out)
    }

    /// Removes the checkpoints of all but the `keep` most recently used sessions.
    pub fn prune(&self, keep: usize) -> Result<usize, CheckpointError> {
        let _lock = self.lock()?;
        let mut logs: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(self.dir.join("sessions"))?
            .filter_map(Result::ok)
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .collect();
        logs.sort();
        let old = logs.len().saturating_sub(keep);
        for (_, path) in &logs[..old] {
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                self.git.run(&["update-ref", "-d", &format!("refs/sessions/{stem}")], None).ok();
                std::fs::remove_file(large::stamps_path(&self.dir, stem)).ok();
            }
            std::fs::remove_file(path)?;
        }
        if old > 0 {
            self.git.run(&["reflog", "expire", "--expire=now", "--all"], None)?;
            self.git.run(&["gc", "-q", "--prune=now"], None)?;
        }
        Ok(old)
    }
}

/// A session id as a ref and file name.
fn ref_name(session: &str) -> String {
    session.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// A path as a gitignore pattern that matches only itself.
fn escape_pattern(path: &str) -> String {
    let mut out = String::new();
    for c in path.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '!' | '#' | ' ') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests;
