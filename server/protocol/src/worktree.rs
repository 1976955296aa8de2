//! Agents' git worktrees seen from the editor: `tandem/worktree/list` and
//! `tandem/worktree/review` (a worktree's changes against its base, brought over into the
//! workspace through the per-hunk review).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tandem/worktree/list` params.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeListParams {}

/// One agent worktree of the workspace's repository.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeInfo {
    /// Its name (`tandem run --worktree NAME`).
    pub name: String,
    /// Its folder (absolute).
    pub path: String,
    /// Its branch (`tandem/NAME`).
    pub branch: String,
    /// How many sessions worked in it.
    pub sessions: u32,
    /// The newest of them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_session: Option<String>,
    /// How many files differ from its base (committed or not, new files included).
    pub changes: u32,
}

/// `tandem/worktree/list` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WorktreeListResult {
    /// The agent worktrees, by name.
    pub worktrees: Vec<WorktreeInfo>,
}

/// `tandem/worktree/review` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeReviewParams {
    /// The worktree's name.
    pub name: String,
}

/// A file of the worktree's change that was not brought over, and why.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeLeftFile {
    /// Workspace-relative path.
    pub path: String,
    /// Why (a conflict with the person's own change since the base, not text, ...).
    pub reason: String,
}

/// `tandem/worktree/review` result, sent once the review is over and the accepted hunks are
/// written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeReviewResult {
    /// The base commit the worktree's change was taken against (the merge base of the
    /// workspace's `HEAD` and the worktree's).
    pub base: String,
    /// Files changed in the workspace (in whole or in part).
    pub applied: Vec<String>,
    /// Files not brought over: refused before the review, or rejected in it.
    pub left: Vec<WorktreeLeftFile>,
    /// What happened, in words.
    pub message: String,
}

/// Where a session started with `worktree` works.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WorktreePlace {
    /// The worktree's name.
    pub name: String,
    /// Its folder (absolute): the session's workspace.
    pub path: String,
    /// Its branch (`tandem/NAME`).
    pub branch: String,
    /// Whether this session created it (else it was reused).
    pub created: bool,
}
