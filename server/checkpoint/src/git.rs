//! The shadow repository's git: every call hermetic (no global or system configuration, no
//! inherited `GIT_*` variables), so the person's settings, hooks and filters never run and the
//! person's own repository is never touched.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::CheckpointError;

/// The id of git's empty tree (SHA-1, the format the shadow repository is created with).
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Settings given on every command line, above any config file: no file system monitor, no
/// hooks, no attributes file of the person's, no protocol that could fetch, no pager.
const HERMETIC: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "core.untrackedCache=true",
    "core.pager=cat",
    "protocol.allow=never",
    "gc.auto=0",
    "maintenance.auto=false",
];

pub(crate) struct Git {
    git_dir: PathBuf,
    work_tree: PathBuf,
}

impl Git {
    pub(crate) fn new(git_dir: PathBuf, work_tree: PathBuf) -> Self {
        Self { git_dir, work_tree }
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// Runs `git ARGS` with `input` on stdin; its stdout.
    pub(crate) fn run(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, CheckpointError> {
        self.run_allowing(args, input, 0)
    }

    /// [`Git::run`], where exit status `also_ok` is an answer too (`check-ignore`: 1 when
    /// nothing is ignored).
    pub(crate) fn run_allowing(
        &self,
        args: &[&str],
        input: Option<&[u8]>,
        also_ok: i32,
    ) -> Result<Vec<u8>, CheckpointError> {
        let mut command = Command::new("git");
        // No inherited `GIT_*` variable (`GIT_DIR`, `GIT_CONFIG_*`, `GIT_EXTERNAL_DIFF`, ...:
        // none of them is the store's), removed before the store's own are set.
        for (name, _) in std::env::vars_os() {
            if name.as_encoded_bytes().starts_with(b"GIT_") {
                command.env_remove(name);
            }
        }
        // The store's own settings, whatever its config file says: a store is only ever one
        // Tandem created, but should its config be changed behind its back, still nothing runs.
        for setting in HERMETIC {
            command.arg("-c").arg(setting);
        }
        command
            .arg("--git-dir")
            .arg(&self.git_dir)
            .arg("--work-tree")
            .arg(&self.work_tree)
            .args(args)
            .current_dir(&self.work_tree)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "tandem")
            .env("GIT_AUTHOR_EMAIL", "checkpoints@tandem.invalid")
            .env("GIT_COMMITTER_NAME", "tandem")
            .env("GIT_COMMITTER_EMAIL", "checkpoints@tandem.invalid")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(CheckpointError::GitMissing)?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin.write_all(input)?;
        }
        let output = child.wait_with_output()?;
        if !output.status.success() && output.status.code() != Some(also_ok) {
            return Err(CheckpointError::Git {
                command: args.first().copied().unwrap_or_default().to_owned(),
                stderr: String::from_utf8_lossy(&output.stderr).trim().to_owned(),
            });
        }
        Ok(output.stdout)
    }

    /// [`Git::run`] for a one-line answer (an object id).
    pub(crate) fn line(&self, args: &[&str], input: Option<&[u8]>) -> Result<String, CheckpointError> {
        Ok(String::from_utf8_lossy(&self.run(args, input)?).trim().to_owned())
    }

    /// The paths that differ between two trees (relative, `/`-separated).
    pub(crate) fn changed(&self, from: &str, to: &str) -> Result<Vec<String>, CheckpointError> {
        if from == to {
            return Ok(Vec::new());
        }
        let out = self.run(&["diff-tree", "-r", "-z", "--name-only", "--no-renames", from, to], None)?;
        Ok(split_nul(&out))
    }

    /// For each pair of trees, the paths that differ: one `git diff-tree --stdin` per
    /// [`PAIRS_PER_CALL`] pairs (equal trees cost nothing), instead of a process per pair.
    pub(crate) fn changed_pairs(&self, pairs: &[(&str, &str)]) -> Result<Vec<Vec<String>>, CheckpointError> {
        let mut out = vec![Vec::new(); pairs.len()];
        let differing: Vec<usize> = (0..pairs.len()).filter(|&i| pairs[i].0 != pairs[i].1).collect();
        for batch in differing.chunks(PAIRS_PER_CALL) {
            // git echoes each input line, then that pair's paths, each ending in NUL.
            let headers: Vec<String> = batch.iter().map(|&i| format!("{} {}\n", pairs[i].0, pairs[i].1)).collect();
            let args = ["diff-tree", "--stdin", "-r", "-z", "--name-only", "--no-renames"];
            let stdout = self.run(&args, Some(headers.concat().as_bytes()))?;
            let unexpected =
                || CheckpointError::Git { command: "diff-tree".into(), stderr: "unexpected output for --stdin".into() };
            let mut rest = stdout.as_slice();
            for (k, &i) in batch.iter().enumerate() {
                rest = rest.strip_prefix(headers[k].as_bytes()).ok_or_else(unexpected)?;
                let end = match headers.get(k + 1) {
                    Some(next) => next_header(rest, next.as_bytes()).ok_or_else(unexpected)?,
                    None => rest.len(),
                };
                out[i] = split_nul(&rest[..end]);
                rest = &rest[end..];
            }
        }
        Ok(out)
    }

    /// A file's content in a tree; `None` when the tree holds no file there (nothing, or a
    /// directory).
    pub(crate) fn blob(&self, tree: &str, path: &str) -> Result<Option<Vec<u8>>, CheckpointError> {
        Ok(self.contents(&[(tree, path)])?.pop().flatten())
    }

    /// For each `(tree, path)`, the file's content there; `None` when the tree holds no file
    /// there. One `git cat-file --batch` per [`BATCH_INPUT_BYTES`] of names.
    pub(crate) fn contents(&self, files: &[(&str, &str)]) -> Result<Vec<Option<Vec<u8>>>, CheckpointError> {
        let mut out = Vec::with_capacity(files.len());
        for batch in batches(files) {
            let (names, asked) = batch_input(batch);
            let stdout = if names.is_empty() { Vec::new() } else { self.run(&["cat-file", "--batch"], Some(&names))? };
            let mut rest = stdout.as_slice();
            for ask in asked {
                if !ask {
                    out.push(None);
                    continue;
                }
                let (header, after) = split_line(rest).ok_or_else(unexpected_batch)?;
                rest = after;
                match found(header) {
                    Some((kind, size)) => {
                        let content = rest.get(..size).ok_or_else(unexpected_batch)?;
                        out.push((kind == "blob").then(|| content.to_vec()));
                        // The content, then a newline.
                        rest = rest.get(size + 1..).ok_or_else(unexpected_batch)?;
                    }
                    None => out.push(None),
                }
            }
        }
        Ok(out)
    }

    /// For each `(tree, path)`, whether the tree holds a file there. One `git cat-file
    /// --batch-check` per [`BATCH_INPUT_BYTES`] of names.
    pub(crate) fn holds(&self, files: &[(&str, &str)]) -> Result<Vec<bool>, CheckpointError> {
        let mut out = Vec::with_capacity(files.len());
        for batch in batches(files) {
            let (names, asked) = batch_input(batch);
            let stdout =
                if names.is_empty() { Vec::new() } else { self.run(&["cat-file", "--batch-check"], Some(&names))? };
            let mut lines = stdout.split(|&b| b == b'\n');
            for ask in asked {
                let held =
                    ask && found(lines.next().ok_or_else(unexpected_batch)?).is_some_and(|(kind, _)| kind == "blob");
                out.push(held);
            }
        }
        Ok(out)
    }
}

/// Input per `cat-file --batch` call: far under a pipe's 64 KiB, so writing it all never waits
/// for git's output (which may be large) to be read.
const BATCH_INPUT_BYTES: usize = 32 * 1024;

/// `files` in runs whose names fit [`BATCH_INPUT_BYTES`].
fn batches<'a>(files: &'a [(&'a str, &'a str)]) -> impl Iterator<Item = &'a [(&'a str, &'a str)]> {
    let mut rest = files;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut bytes = 0;
        let mut take = 0;
        while take < rest.len()
            && (take == 0 || bytes + rest[take].0.len() + rest[take].1.len() + 2 <= BATCH_INPUT_BYTES)
        {
            bytes += rest[take].0.len() + rest[take].1.len() + 2;
            take += 1;
        }
        let (batch, after) = rest.split_at(take);
        rest = after;
        Some(batch)
    })
}

/// The `tree:path` lines of a batch, and which entries were asked (a name with a newline
/// cannot be: it counts as not held).
fn batch_input(batch: &[(&str, &str)]) -> (Vec<u8>, Vec<bool>) {
    let mut names = Vec::new();
    let mut asked = Vec::with_capacity(batch.len());
    for (tree, path) in batch {
        let ok = !path.contains('\n') && !path.is_empty();
        if ok {
            names.extend_from_slice(format!("{tree}:{path}\n").as_bytes());
        }
        asked.push(ok);
    }
    (names, asked)
}

/// A `cat-file` header line's type and size, or `None` for `<name> missing` (and the like).
fn found(header: &[u8]) -> Option<(&str, usize)> {
    let header = std::str::from_utf8(header).ok()?;
    let mut fields = header.split(' ');
    let (id, kind, size) = (fields.next()?, fields.next()?, fields.next()?);
    let is_id = id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit());
    (is_id && fields.next().is_none()).then_some(())?;
    Some((kind, size.parse().ok()?))
}

fn split_line(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    Some((&bytes[..end], &bytes[end + 1..]))
}

fn unexpected_batch() -> CheckpointError {
    CheckpointError::Git { command: "cat-file".into(), stderr: "unexpected output for --batch".into() }
}

/// Pairs per `diff-tree --stdin`: their input (at most 130 bytes a line, SHA-256 ids included)
/// stays under a pipe's 64 KiB, so writing it never waits for git's output to be read.
const PAIRS_PER_CALL: usize = 400;

/// Where `header` starts in `bytes`, at the start or right after a path's NUL.
fn next_header(bytes: &[u8], header: &[u8]) -> Option<usize> {
    (0..=bytes.len().checked_sub(header.len())?)
        .find(|&at| (at == 0 || bytes[at - 1] == 0) && bytes[at..].starts_with(header))
}

pub(crate) fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}
