//! Approvals: how a session's person is asked before a change reaches a file or a command runs.
//!
//! The tools stage their work and ask an [`Approver`] (set on [`ToolContext`](crate::ToolContext)
//! by the agent loop) right before committing: every writing tool goes through the commit path,
//! which calls [`Approver::review_changes`]; `bash` calls [`Approver::confirm_command`]. Without an
//! approver (a call made by the person through `tandem/tools/call` or `tandem tool`) nothing asks.

use std::path::PathBuf;

use async_trait::async_trait;
use tandem_text::hunks::Hunk;

/// One file of a staged change, as the person reviews it.
#[derive(Clone, Debug)]
pub struct StagedFile {
    /// Absolute path (for a move: the source).
    pub path: PathBuf,
    /// Workspace-relative path for display.
    pub display: String,
    /// For a move: the destination.
    pub moved_to: Option<PathBuf>,
    /// Text before the change; `None` when the file is created.
    pub old_text: Option<String>,
    /// Text after the change; `None` when the file is deleted.
    pub new_text: Option<String>,
    /// Hunks of the change with ids unique within the whole review (`h1`, `h2`, … across files).
    pub hunks: Vec<Hunk>,
}

/// The person's answer to a staged change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeDecision {
    /// Apply the hunks named (ids of the review), or all of them when `None`.
    Accept {
        /// Accepted hunk ids; `None` means all.
        hunks: Option<Vec<String>>,
    },
    /// Apply nothing.
    Reject {
        /// What the person said, if anything.
        reason: Option<String>,
    },
    /// The turn was cancelled while waiting.
    Cancelled,
}

/// A command waiting for approval.
#[derive(Clone, Debug)]
pub struct CommandCheck {
    /// The command line.
    pub command: String,
    /// Where it runs (workspace-relative for display).
    pub working_dir: String,
    /// `None` for a command the classifier knows is read-only; else why it needs approval.
    pub needs_approval: Option<String>,
    /// Whether it would run in the background.
    pub background: bool,
}

/// The person's answer to a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandDecision {
    /// Run it.
    Allow,
    /// Do not run it.
    Reject {
        /// What the person said, if anything.
        reason: Option<String>,
    },
    /// The turn was cancelled while waiting.
    Cancelled,
}

/// Decides, asking the person when the session's mode says so.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Reviews a staged change (one or more files) of the call this approver belongs to.
    async fn review_changes(&self, files: &[StagedFile]) -> ChangeDecision;
    /// Confirms a command before `bash` runs it (refused commands never get here).
    async fn confirm_command(&self, check: &CommandCheck) -> CommandDecision;
}
