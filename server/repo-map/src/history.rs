//! What the repository's own history says about a query: each file's history is one document,
//! the messages of the commits that changed it (a recent commit's weighing more, halved every
//! [`HALF_LIFE`] commits back; a word of a body less than one of a subject), scored with BM25
//! against the query: a file whose past commits read like the task is likely the one the task
//! changes. A query with a scope (`cp: …`) is
//! also matched against the commits with the same scope: the files most of them changed are
//! where that scope lives, whatever their names.
//!
//! The history is `git log` from HEAD only (never other refs): the last [`MAX_COMMITS`]
//! commits without merges, each with its subject, the first [`MAX_BODY_BYTES`] of its body
//! and the files it changed (a commit that changed more than [`MAX_COMMIT_FILES`] files says
//! nothing about any one of them and is left out). It is read once per HEAD: kept in the process and in the state directory
//! (`repo-map/history.json`) under HEAD's commit id, so a map of an unchanged HEAD runs only
//! `git rev-parse`.
//!
//! A workspace's repository is untrusted, its `.git/config` included: git runs hermetically,
//! with no inherited `GIT_*` variable, no system or global config, and every setting through
//! which a config could make `git log` run a program (signature checks, a file system monitor,
//! a pager, external diffs and text conversions, hooks, fetches of a partial clone) overridden
//! on the command line; git that has not answered within 10 s (a config can make it
//! wait forever) is killed, and not asked again in that repository by this process. Its
//! messages can be as big as the repository wants: git's output is read up to
//! [`MAX_LOG_BYTES`], and git killed past it (the history is then the commits read whole). No
//! git, no repository, no commit or any failure: no history, and the map ranks as without it.

use std::collections::HashMap;
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::bm25::Bm25;
use crate::cache::{self, CacheDir};
use crate::words;

/// Commits read at most, newest first.
pub const MAX_COMMITS: usize = 2000;
/// A commit changing more files than this is left out.
pub const MAX_COMMIT_FILES: usize = 50;
/// A commit this many commits back weighs half as much as the newest.
pub const HALF_LIFE: f64 = 100.0;
/// A file last changed this many commits back counts as recent `1/e` as much as one the newest
/// commit changed ([`Changes::recency`]).
pub const RECENT: f64 = 5.0;
/// What `git log` may print at most, a bound on what a repository's messages cost.
#[cfg(not(test))]
pub const MAX_LOG_BYTES: usize = 16 << 20;
/// What `git log` may print at most in tests.
#[cfg(test)]
pub const MAX_LOG_BYTES: usize = 1 << 20;
/// A commit's body is read up to this many bytes.
pub const MAX_BODY_BYTES: usize = 2000;
/// A word of a commit's body weighs this much of a word of its subject: the subject says what
/// the commit is about, the body adds the words around it.
const BODY_WEIGHT: f32 = 0.3;
/// Bumped whenever the file changes meaning.
const FORMAT: u32 = 2;
const FILE: &str = "history.json";

/// Settings given on every command line, above any config file: nothing the repository's
/// config says can make git run a program or reach the network.
const HERMETIC: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.attributesFile=/dev/null",
    "core.alternateRefsCommand=",
    "log.showSignature=false",
    "gpg.program=false",
    "gpg.ssh.program=false",
    "gpg.x509.program=false",
    "diff.external=",
    "protocol.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
    "color.ui=false",
];

/// `git` in `root`, hermetic: see the module's documentation.
fn git(root: &Path) -> Command {
    let mut command = Command::new("git");
    for (name, _) in std::env::vars_os() {
        if name.as_encoded_bytes().starts_with(b"GIT_") {
            command.env_remove(name);
        }
    }
    command.arg("--no-pager");
    for setting in HERMETIC {
        command.arg("-c").arg(setting);
    }
    command
        .arg("-C")
        .arg(root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .stdin(Stdio::null())
        .stderr(Stdio::null());
    command
}

/// How long git may take to answer: a repository can make it wait forever (a config include
/// that is a FIFO), which must cost only the history. Reading 2,000 commits takes well under a
/// second.
#[cfg(not(test))]
const GIT_TIMEOUT: Duration = Duration::from_secs(10);
#[cfg(test)]
const GIT_TIMEOUT: Duration = Duration::from_secs(2);

/// Repositories (by the map's root) whose git had to be killed: not asked again by this
/// process, so that one that makes git wait costs one timeout, not one per map.
static HUNG: LazyLock<Mutex<std::collections::HashSet<std::path::PathBuf>>> = LazyLock::new(Default::default);

/// Whether git was given up on in `root`.
#[cfg(test)]
pub(crate) fn hung(root: &Path) -> bool {
    HUNG.lock().unwrap_or_else(PoisonError::into_inner).contains(root)
}

/// What git printed.
struct Output {
    bytes: Vec<u8>,
    /// Whether it was cut at [`MAX_LOG_BYTES`] (and git killed).
    cut: bool,
}

/// The stdout of `command`, git run in `root`, when it succeeds within [`GIT_TIMEOUT`]
/// (killed after it, and `root` remembered in [`HUNG`]); at most [`MAX_LOG_BYTES`] of it
/// (git killed once it has printed more).
fn run(root: &Path, mut command: Command) -> Option<Output> {
    let mut child = command.stdout(Stdio::piped()).spawn().ok()?;
    let mut stdout = child.stdout.take()?;
    let child = Arc::new(Mutex::new(child));
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = {
        let child = child.clone();
        std::thread::spawn(move || {
            let hung = finished.recv_timeout(GIT_TIMEOUT) == Err(RecvTimeoutError::Timeout);
            if hung {
                let _ = child.lock().unwrap_or_else(PoisonError::into_inner).kill();
            }
            hung
        })
    };
    let mut bytes = Vec::new();
    let read = (&mut stdout).take(MAX_LOG_BYTES as u64 + 1).read_to_end(&mut bytes);
    let cut = bytes.len() > MAX_LOG_BYTES;
    if cut {
        bytes.truncate(MAX_LOG_BYTES);
        let _ = child.lock().unwrap_or_else(PoisonError::into_inner).kill();
    }
    drop(stdout);
    // Its output closed (or the watchdog or the bound killed it): git has exited or is exiting.
    let status = child.lock().unwrap_or_else(PoisonError::into_inner).wait();
    drop(done);
    if watchdog.join().unwrap_or(false) {
        tracing::warn!(
            "git did not answer within {GIT_TIMEOUT:?} in {}: the repository map ranks without its history",
            root.display()
        );
        HUNG.lock().unwrap_or_else(PoisonError::into_inner).insert(root.to_path_buf());
        return None;
    }
    (read.is_ok() && (cut || status.ok()?.success())).then_some(Output { bytes, cut })
}

/// The history as read from git (and kept on disk).
#[derive(Debug, Default, Serialize, Deserialize)]
struct Log {
    format: u32,
    head: String,
    /// Every path a commit changed, relative to the root.
    paths: Vec<String>,
    /// Newest first; a left-out commit has no files.
    commits: Vec<Commit>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Commit {
    subject: String,
    #[serde(default)]
    body: String,
    /// Indices into the paths.
    files: Vec<u32>,
}

/// The id of the commit HEAD names in `root`'s repository.
fn head(root: &Path) -> Option<String> {
    let mut command = git(root);
    command.args(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]);
    let out = run(root, command)?;
    let out = String::from_utf8(out.bytes).ok().filter(|_| !out.cut)?;
    let id = out.trim();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_hexdigit())).then(|| id.to_owned())
}

/// The log from `head`, paths relative to `root` (changes outside it are not listed).
fn read_log(root: &Path, head: &str) -> Option<Log> {
    let mut command = git(root);
    command
        .args(["log", "--no-merges", "--no-renames", "--relative", "--name-only", "-z"])
        .args(["--no-show-signature", "--no-ext-diff", "--no-textconv", "--no-color", "-O/dev/null"])
        .arg(format!("--max-count={MAX_COMMITS}"))
        .arg("--format=%x1e%s%x1d%b%x1f")
        .arg(head)
        .arg("--");
    let out = run(root, command)?;
    let mut text = String::from_utf8_lossy(&out.bytes);
    if out.cut {
        // The last commit read may be cut short: only whole ones count.
        let whole = text.rfind('\x1e').unwrap_or(0);
        text.to_mut().truncate(whole);
        tracing::debug!("git log printed more than {MAX_LOG_BYTES} bytes: the history is its newest commits only");
    }
    Some(parse(&text, head))
}

/// Parses `git log -z --name-only --format=%x1e%s%x1d%b%x1f`.
fn parse(out: &str, head: &str) -> Log {
    let mut log = Log { format: FORMAT, head: head.to_owned(), ..Log::default() };
    let mut index: HashMap<&str, u32> = HashMap::new();
    for record in out.split('\x1e').skip(1) {
        let (message, names) = record.rsplit_once('\x1f').unwrap_or((record, ""));
        let (subject, body) = message.split_once('\x1d').unwrap_or((message, ""));
        let mut body = body.trim();
        if body.len() > MAX_BODY_BYTES {
            let end = (0..=MAX_BODY_BYTES).rev().find(|&i| body.is_char_boundary(i)).unwrap_or(0);
            body = &body[..end];
        }
        let names: Vec<&str> =
            names.split('\0').map(|n| n.trim_start_matches('\n')).filter(|n| !n.is_empty()).collect();
        if names.len() > MAX_COMMIT_FILES {
            log.commits.push(Commit::default());
            continue;
        }
        let files = names
            .into_iter()
            .map(|name| {
                *index.entry(name).or_insert_with(|| {
                    log.paths.push(name.to_owned());
                    (log.paths.len() - 1) as u32
                })
            })
            .collect();
        log.commits.push(Commit { subject: subject.trim().to_owned(), body: body.to_owned(), files });
    }
    log
}

/// The history of a repository, ready for queries.
#[derive(Debug)]
pub struct Changes {
    head: String,
    /// Per path, its index.
    index: HashMap<String, u32>,
    /// BM25 over each path's history: the messages of the commits that changed it, recent ones
    /// weighing more, subjects more than bodies.
    documents: Bm25,
    /// The commits whose subject has a scope ([`words::scopes`]: `cp` of `cp: …`), newest first.
    scoped: Vec<Scoped>,
    /// Per path, how many commits back it last changed (0: HEAD changed it).
    since: Vec<u32>,
}

/// A commit with a scope.
#[derive(Debug)]
struct Scoped {
    /// The terms of each part of its scope (`repo-map`: `repo`, `map`).
    parts: Vec<Vec<String>>,
    /// The paths it changed (indices).
    files: Vec<u32>,
}

impl Changes {
    fn new(log: &Log) -> Self {
        let index = log.paths.iter().enumerate().map(|(i, p)| (p.clone(), i as u32)).collect();
        let mut per_path: Vec<HashMap<String, f32>> = vec![HashMap::new(); log.paths.len()];
        let scoped = log
            .commits
            .iter()
            .filter(|c| !c.files.is_empty())
            .filter_map(|commit| {
                let parts: Vec<Vec<String>> =
                    words::scopes(&commit.subject).iter().map(|p| terms(p)).filter(|t| !t.is_empty()).collect();
                (!parts.is_empty()).then(|| Scoped { parts, files: commit.files.clone() })
            })
            .collect();
        let mut since = vec![u32::MAX; log.paths.len()];
        for (c, commit) in log.commits.iter().enumerate() {
            let weight = 0.5f64.powf(c as f64 / HALF_LIFE) as f32;
            let (subject, body) = (terms(&commit.subject), terms(&commit.body));
            let all = subject.iter().map(|t| (t, weight)).chain(body.iter().map(|t| (t, weight * BODY_WEIGHT)));
            for &f in &commit.files {
                // Newest first: the first commit that changed a path is its last change.
                since[f as usize] = since[f as usize].min(c as u32);
                let document = &mut per_path[f as usize];
                for (term, w) in all.clone() {
                    match document.get_mut(term) {
                        Some(x) => *x += w,
                        None => {
                            document.insert(term.clone(), w);
                        }
                    }
                }
            }
        }
        let mut documents = Bm25::builder(log.paths.len());
        for (p, document) in per_path.iter().enumerate() {
            for (term, weight) in document {
                documents.add_weight(p, term, *weight);
            }
        }
        Self { head: log.head.clone(), index, documents: documents.build(), scoped, since }
    }

    /// Per file of `rels`, its path's index (`None`: no commit read changed it).
    pub fn ids<'a>(&self, rels: impl Iterator<Item = &'a str>) -> Vec<Option<u32>> {
        rels.map(|rel| self.index.get(rel).copied()).collect()
    }

    /// Per file of `ids`, BM25 of the query's terms `listed` over its history, relative to the
    /// best file's.
    pub(crate) fn scores(&self, listed: &[String], ids: &[Option<u32>]) -> Vec<f64> {
        let documents = self.documents.scores(listed.iter().map(String::as_str));
        crate::bm25::relative(ids.iter().map(|id| id.map_or(0.0, |p| documents[p as usize])).collect())
    }

    /// Per file of `ids`, how recently it changed: `exp(-commits back / RECENT)`, 1 when HEAD
    /// changed it, 0 when no commit read did.
    pub(crate) fn recency(&self, ids: &[Option<u32>]) -> Vec<f64> {
        ids.iter()
            .map(|id| id.and_then(|id| self.since.get(id as usize)).map_or(0.0, |&c| (-f64::from(c) / RECENT).exp()))
            .collect()
    }

    /// Per file of `ids`, the share of the past commits with the query's scope that changed it:
    /// a commit counts when each word of one part of its scope is in the query's (`repo-map:`
    /// and `repo map:` commits for `repo-map history: …`; stemmed), and the best of the query's
    /// parts counts (`cp,mv: …`). One more commit counts in the denominator, so that one commit
    /// says less than many. All 0 without a scope.
    pub(crate) fn scoped(&self, query: &str, ids: &[Option<u32>]) -> Vec<f64> {
        let mut best: HashMap<u32, f64> = HashMap::new();
        for part in words::scopes(query) {
            let part = terms(&part);
            if part.is_empty() {
                continue;
            }
            let mut commits = 0u32;
            let mut changed: HashMap<u32, u32> = HashMap::new();
            for commit in &self.scoped {
                if commit.parts.iter().any(|p| p.iter().all(|t| part.contains(t))) {
                    commits += 1;
                    for &f in &commit.files {
                        *changed.entry(f).or_default() += 1;
                    }
                }
            }
            for (f, n) in changed {
                let share = f64::from(n) / f64::from(commits + 1);
                let known = best.entry(f).or_default();
                *known = known.max(share);
            }
        }
        ids.iter().map(|id| id.and_then(|id| best.get(&id).copied()).unwrap_or(0.0)).collect()
    }
}

/// The terms of a message: words split as identifiers are, stemmed, stop words out.
fn terms(text: &str) -> Vec<String> {
    tandem_rank::terms(&words::spaced(text))
}

/// The last history read per cache folder.
static CHANGES: LazyLock<Mutex<HashMap<std::path::PathBuf, Arc<Changes>>>> = LazyLock::new(Default::default);

/// Forgets the process's copy of the history kept in the cache folder `dir`.
pub(crate) fn forget(dir: &Path) {
    CHANGES.lock().unwrap_or_else(PoisonError::into_inner).remove(dir);
}

/// The history of the repository holding `root`, from HEAD: the process's when HEAD is the
/// same, else the state directory's, else read from git (and kept in both). `None` without
/// git, a repository or a commit.
pub(crate) fn changes(root: &Path, at: &CacheDir) -> Option<Arc<Changes>> {
    if HUNG.lock().unwrap_or_else(PoisonError::into_inner).contains(root) {
        return None;
    }
    let head = head(root)?;
    let known = CHANGES.lock().unwrap_or_else(PoisonError::into_inner).get(&at.dir).cloned();
    if let Some(known) = known.filter(|c| c.head == head) {
        return Some(known);
    }
    let log = match cache::read::<Log>(&at.dir, FILE).filter(|l| l.format == FORMAT && l.head == head) {
        Some(log) => log,
        None => {
            let log = read_log(root, &head)?;
            if let Err(err) = cache::write(at, FILE, &log) {
                tracing::warn!("cannot save the repository map's history: {err}");
            }
            log
        }
    };
    let changes = Arc::new(Changes::new(&log));
    CHANGES.lock().unwrap_or_else(PoisonError::into_inner).insert(at.dir.clone(), changes.clone());
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_log_parses_into_commits_and_paths() {
        let out = concat!(
            "\x1efix(parser): empty input\x1dAn empty file read as one token.\nNow none.\n\x1f\0\na.rs\0b/c.rs\0",
            "\x1edocs only\x1d\x1f\0",
            "\x1eagain\x1d\x1f\0\na.rs\0"
        );
        let log = parse(out, "abc");
        assert_eq!(log.paths, ["a.rs", "b/c.rs"]);
        assert_eq!(log.commits.len(), 3);
        assert_eq!(log.commits[0].subject, "fix(parser): empty input");
        assert_eq!(log.commits[0].body, "An empty file read as one token.\nNow none.");
        assert_eq!(log.commits[2].body, "");
        assert_eq!(log.commits[0].files, [0, 1]);
        assert!(log.commits[1].files.is_empty());
        assert_eq!(log.commits[2].files, [0]);
    }

    #[test]
    fn a_commit_changing_too_many_files_is_left_out() {
        let names: String = (0..=MAX_COMMIT_FILES).map(|i| format!("f{i}.rs\0")).collect();
        let out = format!("\x1ehuge\x1d\x1f\0\n{names}\x1esmall\x1d\x1f\0\nf1.rs\0");
        let log = parse(&out, "abc");
        assert_eq!(log.paths, ["f1.rs"]);
        assert!(log.commits[0].files.is_empty() && log.commits[0].subject.is_empty());
        assert_eq!(log.commits[1].files, [0]);
    }
}
