//! The shadow repository's git: every call hermetic (no global or system configuration, no
//! inherited `GIT_*` variables), so the person's settings, hooks and filters never run and the
//! person's own repository is never touched.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::CheckpointError;

/// The id of git's empty tree (SHA-1, the format the shadow repository is created with).
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// Variables that would point git somewhere else than the shadow repository.
const INHERITED: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_EXTERNAL_DIFF",
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
            .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for name in INHERITED {
            command.env_remove(name);
        }
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

    /// A file's content in a tree; `None` when the tree does not hold it.
    pub(crate) fn blob(&self, tree: &str, path: &str) -> Result<Option<Vec<u8>>, CheckpointError> {
        let listed = self.run(&["ls-tree", "-z", tree, "--", path], None)?;
        if listed.is_empty() {
            return Ok(None);
        }
        self.run(&["cat-file", "blob", &format!("{tree}:{path}")], None).map(Some)
    }
}

pub(crate) fn split_nul(bytes: &[u8]) -> Vec<String> {
    bytes.split(|&b| b == 0).filter(|s| !s.is_empty()).map(|s| String::from_utf8_lossy(s).into_owned()).collect()
}
