//! Crash-safe disk commits: a write-ahead journal in the workspace's state directory (outside
//! the workspace: see `tandem_tool_api::state`).
//!
//! A commit of several files cannot be one rename, and a process killed half-way never runs
//! its rollback. So a commit first writes its intent (every target, its staged temporary file
//! and where the content before is kept) to a journal file and syncs it; then stages the new
//! contents and keeps the old ones (a hard link next to each file, so no copy); then renames
//! and removes; then marks the journal committed; then cleans up. The committing process holds
//! an advisory lock on its journal file the whole time. Whoever finds a journal nobody holds
//! (a process that died) finishes it: without the mark, every target is put back as it was;
//! with it, only the leftovers are removed. That happens before every commit and every load of
//! a file, so no tool sees a half-made change. A commit of one file is a single rename and
//! needs no pre-image: its journal only names the temporary file to remove.
//!
//! Temporary names are short and hash-based ([`disk::temp_path`]).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use tandem_text::disk::{self, Expected};
use tandem_text::{ContentHash, FileFormat, TextError, memory};

/// Where the journals of the workspace at `root` live (not created).
pub(crate) fn journal_dir(root: &Path) -> PathBuf {
    tandem_tool_api::state::state_path(root, "journal")
}

/// Whether a journal entry only names files inside the workspace, with its temporary files
/// next to its target under Tandem's temporary names. Defence in depth: a journal is written
/// only by Tandem, in the person's state directory, yet recovery never acts on one that
/// reaches anywhere else: every existing directory on the way to a target is resolved through
/// its symlinks and must stay inside the workspace, the target itself must not be a symlink,
/// and nothing inside `.git` is ever a target.
fn confined(root: &Path, real_root: &Path, entry: &Entry) -> bool {
    let plain = |path: &Path| {
        path.is_absolute()
            && path.starts_with(root)
            && path.components().all(|c| matches!(c, std::path::Component::RootDir | std::path::Component::Normal(_)))
            && path
                .strip_prefix(root)
                .is_ok_and(|rel| !rel.components().any(|c| c.as_os_str() == std::ffi::OsStr::new(".git")))
            && resolves_inside(real_root, path)
            && !fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
    };
    let beside = |path: &Path| {
        plain(path)
            && path.parent() == entry.target.parent()
            && path.file_name().is_some_and(|name| name.to_string_lossy().starts_with(disk::TEMP_PREFIX))
    };
    plain(&entry.target)
        && entry.tmp.as_deref().is_none_or(beside)
        && match &entry.before {
            Before::Kept(pre) => beside(pre),
            Before::Absent | Before::Untracked => true,
        }
}

/// Whether the deepest existing directory above `path` resolves (through every symlink) to a
/// directory inside `real_root`.
fn resolves_inside(real_root: &Path, path: &Path) -> bool {
    path.ancestors().skip(1).find_map(|dir| dir.canonicalize().ok()).is_some_and(|real| real.starts_with(real_root))
}

/// One operation of a commit.
pub(crate) enum Op {
    /// Replace or create `path` with `text` in `format`, if it still matches `expected`;
    /// `mode_from` gives the permissions of a file being moved here.
    Write { path: PathBuf, format: FileFormat, text: String, expected: Expected, mode_from: Option<PathBuf> },
    /// Remove `path`, if it still matches `expected`.
    Remove { path: PathBuf, expected: Expected },
}

impl Op {
    fn path(&self) -> &Path {
        match self {
            Op::Write { path, .. } | Op::Remove { path, .. } => path,
        }
    }
}

/// What a target was before the commit, as the journal records it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Before {
    /// Nothing was there.
    Absent,
    /// Its content is kept at this hard link (or copy).
    Kept(PathBuf),
    /// Not kept: a one-file commit, which is a single rename.
    Untracked,
}

/// One target of a journal.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    target: PathBuf,
    /// The staged new content (none for a removal).
    tmp: Option<PathBuf>,
    before: Before,
    /// Hash of the new content (none for a removal).
    new_hash: Option<u64>,
}

/// The first line of a journal.
#[derive(Serialize, Deserialize)]
struct Intent {
    entries: Vec<Entry>,
}

/// The line that marks a journal committed.
const COMMITTED: &str = "committed";

/// How a commit failed: the error, and whether putting the files back failed for some.
pub(crate) struct Failed {
    pub error: TextError,
    /// What could not be restored (empty: every file is as it was).
    pub problems: Vec<String>,
}

impl From<TextError> for Failed {
    fn from(error: TextError) -> Self {
        Self { error, problems: Vec::new() }
    }
}

fn io_error<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> TextError + use<'a> {
    move |source| TextError::Io { action, path: path.to_path_buf(), source }
}

/// Applies `ops` in order, all or none, crash-safe (see the module documentation). The paths
/// must be resolved and confined; the caller holds their in-process locks. Returns the content
/// hash of each write, in order, taken as its bytes were written (no pass of its own).
pub(crate) fn commit(root: &Path, ops: Vec<Op>) -> Result<Vec<ContentHash>, Failed> {
    commit_until(root, ops, usize::MAX)
}

/// [`commit`], stopping dead (as a killed process would) after `steps` steps: for tests. The
/// texts are recycled afterwards (see [`memory::recycle`]): freed off this thread, a large one
/// kept a moment for the next whole-file read.
fn commit_until(root: &Path, ops: Vec<Op>, steps: usize) -> Result<Vec<ContentHash>, Failed> {
    let result = commit_ops(root, &ops, steps);
    for op in ops {
        if let Op::Write { text, .. } = op {
            memory::recycle_string(text);
        }
    }
    result
}

fn commit_ops(root: &Path, ops: &[Op], steps: usize) -> Result<Vec<ContentHash>, Failed> {
    recover(root);
    let many = ops.len() > 1;
    for op in ops {
        if let Op::Write { path, .. } = op
            && let Some(parent) = path.parent()
        {
            fs::create_dir_all(parent).map_err(io_error("cannot create directory", parent))?;
        }
    }
    let _dirs = super::lock::lock_dirs(ops.iter().map(Op::path));
    let mut entries = Vec::with_capacity(ops.len());
    for op in ops {
        let target = op.path().to_path_buf();
        let exists = fs::symlink_metadata(&target).is_ok();
        let before = match (many, exists) {
            (false, _) => Before::Untracked,
            (true, false) => Before::Absent,
            (true, true) => Before::Kept(disk::temp_path(&target, "pre")),
        };
        entries.push(match op {
            Op::Write { format, text, .. } => Entry {
                tmp: Some(disk::temp_path(&target, "tmp")),
                // Only a rollback of a kept or absent target looks at it (one pass over the text).
                new_hash: many.then(|| ContentHash::of_parts(&format.encode(text.as_str())).0),
                target,
                before,
            },
            Op::Remove { .. } => Entry { tmp: None, new_hash: None, target, before },
        });
    }
    let mut step = 0;
    let mut crash = || {
        step += 1;
        step > steps
    };
    let journal = match Journal::begin(root, &entries, many) {
        Ok(journal) => Some(journal),
        Err(err) if many => return Err(err.into()),
        Err(err) => {
            // One rename is atomic anyway; only a stray temporary file is at stake.
            tracing::warn!("no journal for this write ({err}); committing without it");
            None
        }
    };
    if crash() {
        return Ok(Vec::new());
    }
    let result = apply(ops, &entries, &mut crash);
    if crash() {
        return Ok(Vec::new());
    }
    match result {
        Ok(written) => {
            if let Some(journal) = &journal
                && many
            {
                journal.mark_committed()?;
            }
            if crash() {
                return Ok(Vec::new());
            }
            finish(&entries);
            if let Some(journal) = journal {
                journal.remove();
            }
            Ok(written)
        }
        Err(error) => {
            let problems = roll_back(&entries);
            if problems.is_empty()
                && let Some(journal) = journal
            {
                journal.remove();
            }
            Err(Failed { error, problems })
        }
    }
}

/// Stages, keeps the old contents, then renames and removes. Stops (as a crash would) when
/// `crash` says so. Returns the hash of each write's content.
fn apply(ops: &[Op], entries: &[Entry], crash: &mut impl FnMut() -> bool) -> Result<Vec<ContentHash>, TextError> {
    let mut written = Vec::new();
    for (op, entry) in ops.iter().zip(entries) {
        if let (Op::Write { path, format, text, mode_from, .. }, Some(tmp)) = (op, &entry.tmp) {
            written.push(disk::stage(path, tmp, &format.encode(text))?);
            if let Some(from) = mode_from
                && let Ok(meta) = fs::metadata(from)
            {
                // A moved file keeps its permissions, or the move fails (as a single write does).
                fs::set_permissions(tmp, meta.permissions())
                    .map_err(io_error("cannot give the moved file its permissions", tmp))?;
            }
        }
        if let Before::Kept(pre) = &entry.before {
            keep(&entry.target, pre)?;
        }
        if crash() {
            return Ok(written);
        }
    }
    for (op, entry) in ops.iter().zip(entries) {
        match (op, &entry.tmp) {
            (Op::Write { path, expected, .. }, Some(tmp)) => disk::check_and_install(tmp, path, *expected)?,
            (Op::Remove { path, expected }, _) => disk::remove(path, *expected)?,
            (Op::Write { .. }, None) => {}
        }
        if crash() {
            return Ok(written);
        }
    }
    Ok(written)
}

/// Keeps the content of `target` at `pre`: a hard link (no copy), or a copy where links are
/// not supported.
fn keep(target: &Path, pre: &Path) -> Result<(), TextError> {
    if fs::hard_link(target, pre).is_err() {
        fs::copy(target, pre).map_err(io_error("cannot keep the old content of", target))?;
        File::open(pre).and_then(|file| file.sync_all()).map_err(io_error("cannot sync", pre))?;
    }
    disk::sync_parent(pre)
}

/// After a commit: the kept contents and staged files are no longer needed.
fn finish(entries: &[Entry]) {
    for entry in entries {
        if let Before::Kept(pre) = &entry.before {
            remove_if_there(pre);
        }
        if let Some(tmp) = &entry.tmp {
            remove_if_there(tmp);
        }
    }
}

fn remove_if_there(path: &Path) {
    if let Err(err) = fs::remove_file(path)
        && err.kind() != io::ErrorKind::NotFound
    {
        tracing::warn!(path = %path.display(), "cannot remove: {err}");
    }
}

/// Puts every target back as it was before an unfinished commit, last first, and removes its
/// temporary files. Safe to run again on a commit already rolled back (in part or whole).
/// Returns what could not be restored.
fn roll_back(entries: &[Entry]) -> Vec<String> {
    let mut problems = Vec::new();
    for entry in entries.iter().rev() {
        if let Some(tmp) = &entry.tmp {
            remove_if_there(tmp);
        }
        if entry.before == Before::Untracked {
            // A one-file commit: its rename happened whole or not at all.
            continue;
        }
        let now = match disk::current_hash(&entry.target) {
            Ok(hash) => hash.map(|h| h.0),
            Err(err) => {
                problems.push(err.to_string());
                continue;
            }
        };
        // Our change is in place when the target holds what we wrote (or is gone, for a removal).
        let ours = now == entry.new_hash;
        let restored = match &entry.before {
            Before::Untracked => Ok(()),
            Before::Absent if ours && now.is_some() => fs::remove_file(&entry.target),
            Before::Absent => Ok(()),
            Before::Kept(pre) if ours && pre.exists() => fs::rename(pre, &entry.target),
            Before::Kept(_) => Ok(()),
        };
        if let Before::Kept(pre) = &entry.before {
            // A rename onto the same file leaves both names: the kept one goes either way.
            remove_if_there(pre);
        }
        let restored = restored.map_err(io_error("cannot restore", &entry.target));
        match restored.and_then(|()| disk::sync_parent(&entry.target)) {
            Ok(()) => {}
            Err(err) => problems.push(err.to_string()),
        }
    }
    problems
}

/// A journal file being written, locked by this process.
struct Journal {
    path: PathBuf,
    file: File,
}

impl Journal {
    /// Writes the intent under a temporary name, syncs it (when `durable`), then gives it its
    /// journal name: a recoverer never sees a journal whose intent is incomplete.
    fn begin(root: &Path, entries: &[Entry], durable: bool) -> Result<Self, TextError> {
        let dir = tandem_tool_api::state::state_dir(root, "journal").map_err(|err| TextError::Io {
            action: "cannot use the state directory",
            path: journal_dir(root),
            source: io::Error::other(err),
        })?;
        let dir = dir.as_path();
        let name = disk::temp_path(&dir.join("commit"), "new");
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&name)
            .map_err(io_error("cannot create", &name))?;
        file.lock().map_err(io_error("cannot lock", &name))?;
        let mut line = serde_json::to_vec(&Intent { entries: entries.to_vec() }).map_err(|e| TextError::Io {
            action: "cannot write",
            path: name.clone(),
            source: io::Error::other(e),
        })?;
        line.push(b'\n');
        file.write_all(&line).map_err(io_error("cannot write", &name))?;
        if durable {
            file.sync_all().map_err(io_error("cannot sync", &name))?;
        }
        let path = name.with_extension("journal");
        fs::rename(&name, &path).map_err(io_error("cannot rename", &name))?;
        if durable {
            disk::sync_parent(&path)?;
        }
        Ok(Self { path, file })
    }

    fn mark_committed(&self) -> Result<(), TextError> {
        let mut file = &self.file;
        file.write_all(format!("{COMMITTED}\n").as_bytes()).map_err(io_error("cannot write", &self.path))?;
        file.sync_all().map_err(io_error("cannot sync", &self.path))
    }

    fn remove(self) {
        remove_if_there(&self.path);
    }
}

/// Finishes every journal of the workspace that no live process holds: rolled back when it
/// was not marked committed, cleaned up when it was. Cheap when there is none (one directory
/// read). Anything in the journal folder that is not a regular file is skipped without being
/// opened; a journal that cannot be read, or that names anything outside the workspace, is set
/// aside (renamed `*.rejected`) and reported, never acted on. Returns what could not be
/// restored or was set aside, for the log.
pub(crate) fn recover(root: &Path) -> Vec<String> {
    let dir = journal_dir(root);
    let Ok(names) = fs::read_dir(&dir) else { return Vec::new() };
    let mut problems = Vec::new();
    for entry in names.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !name.starts_with(disk::TEMP_PREFIX) || name.ends_with(REJECTED) {
            continue;
        }
        // A FIFO, a device, a symlink or a folder: never opened (a FIFO would block the read).
        if !entry.file_type().is_ok_and(|kind| kind.is_file()) {
            continue;
        }
        if let Err(problem) = recover_one(root, &path, name.ends_with(".journal")) {
            tracing::warn!(journal = %path.display(), "{problem}");
            problems.push(problem.to_string());
        }
    }
    problems
}

/// [`recover`], the first time this process loads a file of the workspace at `root`: a commit
/// a killed process left unfinished is finished before anything of it is read. Later loads do
/// not look again (a probe per read costs a system call or more on every read); every commit
/// still recovers first, so a journal found then is finished before the files are touched.
pub(crate) fn recover_once(root: &Path) {
    static DONE: std::sync::Mutex<Vec<std::path::PathBuf>> = std::sync::Mutex::new(Vec::new());
    let mut done = DONE.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if done.iter().any(|seen| seen == root) {
        return;
    }
    recover(root);
    done.push(root.to_path_buf());
}

/// The suffix of a journal set aside.
const REJECTED: &str = ".rejected";

/// Why a journal was not finished: it was set aside, or its rollback was incomplete.
#[derive(Debug, thiserror::Error)]
enum Unrecovered {
    /// Not acted on, and renamed out of the way so it is reported once.
    #[error("{why}; set aside as {}", .aside.display())]
    SetAside { why: String, aside: PathBuf },
    /// Not acted on, and it could not be renamed.
    #[error("{why}; it could not be set aside ({err})")]
    Stuck { why: String, err: std::io::Error },
    /// Its rollback failed for some files: the journal is kept for the next try.
    #[error("an interrupted commit could not be undone everywhere: {}; the journal is kept", .problems.join("; "))]
    RollBack { problems: Vec<String> },
}

/// Renames a journal that must not be acted on out of the way, so it is reported once.
fn set_aside(path: &Path, why: String) -> Result<(), Unrecovered> {
    let mut aside = path.as_os_str().to_owned();
    aside.push(REJECTED);
    match fs::rename(path, &aside) {
        Ok(()) => Err(Unrecovered::SetAside { why, aside: PathBuf::from(aside) }),
        Err(err) => Err(Unrecovered::Stuck { why, err }),
    }
}

/// Finishes one journal (or removes an intent that never became one) unless its process holds it.
fn recover_one(root: &Path, path: &Path, journal: bool) -> Result<(), Unrecovered> {
    let Ok(mut file) = tandem_tool_api::state::open_regular(path) else { return Ok(()) };
    if file.try_lock().is_err() {
        return Ok(()); // its commit is running
    }
    // Someone else may have finished it between our open and our lock.
    let same = fs::symlink_metadata(path).ok().zip(file.metadata().ok()).is_some_and(|(a, b)| a.ino() == b.ino());
    if !same {
        return Ok(());
    }
    if !journal {
        // Died before its intent was complete: nothing was touched.
        remove_if_there(path);
        return Ok(());
    }
    let mut text = String::new();
    if let Err(err) = (&mut file).take(MAX_JOURNAL_BYTES).read_to_string(&mut text) {
        return set_aside(path, format!("an unreadable journal ({err}) was not acted on"));
    }
    let mut lines = text.lines();
    let intent: Intent = match lines.next().map(serde_json::from_str) {
        Some(Ok(intent)) => intent,
        Some(Err(err)) => return set_aside(path, format!("a corrupt journal ({err}) was not acted on")),
        None => return set_aside(path, "an empty journal was not acted on".to_owned()),
    };
    let real_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    if let Some(entry) = intent.entries.iter().find(|entry| !confined(root, &real_root, entry)) {
        return set_aside(
            path,
            format!(
                "a journal naming `{}`, outside the workspace or not a file of Tandem's, was not acted on",
                entry.target.display()
            ),
        );
    }
    let committed = match lines.next() {
        None => false,
        Some(COMMITTED) => true,
        Some(_) => return set_aside(path, "a journal with an unknown last line was not acted on".to_owned()),
    };
    if committed {
        finish(&intent.entries);
    } else {
        let problems = roll_back(&intent.entries);
        if !problems.is_empty() {
            return Err(Unrecovered::RollBack { problems });
        }
        let targets: Vec<String> = intent.entries.iter().map(|e| e.target.display().to_string()).collect();
        tracing::info!("rolled back an interrupted commit of {}", targets.join(", "));
    }
    remove_if_there(path);
    Ok(())
}

/// More than any journal Tandem writes (a few hundred bytes per file of a commit).
const MAX_JOURNAL_BYTES: u64 = 64 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    fn files(dir: &Path) -> Vec<String> {
        let mut names = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(current) = stack.pop() {
            for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    let rel = path.strip_prefix(dir).unwrap_or(&path).display().to_string();
                    if rel.starts_with(".tandem/") {
                        continue;
                    }
                    let text = fs::read_to_string(&path).unwrap_or_default();
                    names.push(format!("{rel}={text}"));
                }
            }
        }
        names.sort();
        names
    }

    fn hash(text: &str) -> Expected {
        Expected::Hash(ContentHash::of(text.as_bytes()))
    }

    fn ops(root: &Path) -> Vec<Op> {
        let write = |name: &str, text: &str, expected| Op::Write {
            path: root.join(name),
            format: FileFormat::default(),
            text: text.to_owned(),
            expected,
            mode_from: None,
        };
        vec![
            write("a.txt", "a1", hash("a0")),
            write("sub/new.txt", "n1", Expected::Absent),
            Op::Remove { path: root.join("gone.txt"), expected: hash("g0") },
            write("moved.txt", "b0", Expected::Absent),
            Op::Remove { path: root.join("b.txt"), expected: hash("b0") },
        ]
    }

    fn setup(root: &Path) {
        for (name, text) in [("a.txt", "a0"), ("gone.txt", "g0"), ("b.txt", "b0")] {
            fs::write(root.join(name), text).unwrap_or_else(|e| panic!("{e}"));
        }
    }

    /// A commit stopped dead after every possible step, then recovered: the files are either
    /// all as before or all as after, and nothing of the commit is left.
    #[test]
    fn a_commit_killed_at_any_step_is_whole_or_absent_after_recovery() {
        let before = {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            setup(dir.path());
            files(dir.path())
        };
        let after = {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            setup(dir.path());
            assert!(commit(dir.path(), ops(dir.path())).is_ok());
            files(dir.path())
        };
        assert_ne!(before, after);
        let (mut old, mut new) = (0, 0);
        for steps in 0..20 {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            setup(dir.path());
            assert!(commit_until(dir.path(), ops(dir.path()), steps).is_ok());
            assert!(recover(dir.path()).is_empty());
            let now = files(dir.path());
            if now == before {
                old += 1;
            } else {
                assert_eq!(now, after, "killed after {steps} steps");
                new += 1;
            }
        }
        assert!(old > 0 && new > 0, "{old} {new}");
    }

    #[test]
    fn a_failing_step_restores_the_ones_before_it() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        setup(dir.path());
        let before = files(dir.path());
        let mut ops = ops(dir.path());
        // b.txt changed since it was read: its removal is refused, after the others were done.
        ops[4] = Op::Remove { path: dir.path().join("b.txt"), expected: hash("b-old") };
        let failed = commit(dir.path(), ops).err().map(|f| (f.error.to_string(), f.problems));
        let (error, problems) = failed.unwrap_or_default();
        assert!(error.contains("changed since it was last read"), "{error}");
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(files(dir.path()), before);
    }

    #[test]
    fn a_journal_that_reaches_outside_the_workspace_is_ignored() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let outside = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let victim = outside.path().join("victim.txt");
        fs::write(&victim, "known").unwrap_or_else(|e| panic!("{e}"));
        // A shipped journal claiming we created the file outside: rolling it back would delete it.
        let entries = vec![Entry {
            target: victim.clone(),
            tmp: None,
            before: Before::Absent,
            new_hash: Some(ContentHash::of(b"known").0),
        }];
        drop(Journal::begin(dir.path(), &entries, true).unwrap_or_else(|e| panic!("{e}")));
        let problems = recover(dir.path());
        assert!(problems.iter().any(|p| p.contains("outside the workspace")), "{problems:?}");
        assert!(victim.exists(), "recovery acted outside the workspace");
    }

    #[test]
    fn a_journal_held_by_a_live_commit_is_left_alone() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        setup(dir.path());
        let entries = vec![Entry {
            target: dir.path().join("a.txt"),
            tmp: None,
            before: Before::Absent,
            new_hash: Some(ContentHash::of(b"a0").0),
        }];
        let journal = Journal::begin(dir.path(), &entries, true).unwrap_or_else(|e| panic!("{e}"));
        recover(dir.path());
        assert!(dir.path().join("a.txt").exists(), "a live journal was rolled back");
        drop(journal);
        // Its process is gone now: the created file (our content) is taken back.
        recover(dir.path());
        assert!(!dir.path().join("a.txt").exists());
    }
}
