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
        if !output.status.success() {
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

    /// A file's content in a tree; `None` when the tree does not hold it.
    pub(crate) fn blob(&self, tree: &str, path: &str) -> Result<Option<Vec<u8>>, CheckpointError> {
        let listed = self.run(&["ls-tree", "-z", tree, "--", path], None)?;
        if listed.is_empty() {
            return Ok(None);
        }
        self.run(&["cat-file", "blob", &format!("{tree}:{path}")], None).map(Some)
    }
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
