//! Checkpoints on the wire: `tandem/session/checkpoints` lists a session's snapshots of the
//! workspace, `tandem/session/restore` brings files back to one of them (or undoes one tool
//! call), previewed as a review and never overwriting the person's own later changes unless
//! asked to.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `tandem/session/checkpoints` params.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCheckpointsParams {
    /// The session.
    pub session_id: String,
}

/// What was about to happen when a checkpoint was taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CheckpointKind {
    /// A turn started.
    BeforeTurn,
    /// A tool call that can change files started (again once the person allowed a command:
    /// what changed while they were asked is theirs).
    BeforeTool,
    /// A tool call that can change files ended.
    AfterTool,
    /// A turn ended.
    AfterTurn,
    /// A restore started (restoring this one is a redo).
    BeforeRestore,
    /// A restore ended.
    AfterRestore,
}

/// One checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CheckpointInfo {
    /// Its id in the session (from 1).
    pub id: u64,
    /// What was about to happen.
    pub kind: CheckpointKind,
    /// The session's turn (from 1).
    pub turn: u64,
    /// The tool call about to run or that ended (`beforeTool`, `afterTool`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Its tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// When, RFC 3339.
    pub time: String,
    /// Files the snapshot left out (over the size cap).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
    /// Files that changed between this checkpoint and the next one (what the tool call, the
    /// restore or, after a turn, the person changed then), workspace-relative.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// `tandem/session/checkpoints` result, oldest first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCheckpointsResult {
    /// The checkpoints.
    pub checkpoints: Vec<CheckpointInfo>,
}

/// `tandem/session/restore` params: exactly one of `checkpointId`, `turn` and `toolCallId`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRestoreParams {
    /// The session.
    pub session_id: String,
    /// Back to this checkpoint's state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<u64>,
    /// Back to the state before this turn (`1`: the start of the session).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<u64>,
    /// Undo only what this tool call changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// Only say what would change (the diff), change nothing.
    #[serde(default)]
    pub dry_run: bool,
    /// Also restore the files the person changed after the checkpoint (left alone by default).
    #[serde(default)]
    pub include_conflicts: bool,
}

/// `tandem/session/restore` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionRestoreResult {
    /// Files restored (or, with `dryRun`, that would be).
    pub restored: Vec<String>,
    /// Files the person changed after the checkpoint: left alone unless `includeConflicts`.
    pub conflicts: Vec<String>,
    /// Files not restored: the checkpoint does not hold them (over the size cap), they are not
    /// text, or they are now a symbolic link or inside one (a restore never reads or writes
    /// through a link).
    pub skipped: Vec<String>,
    /// Files the agent changed or removed after the checkpoint that checkpoints leave out (over
    /// the size cap, ignored): not covered by undo, so no restore can bring them back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_covered: Vec<String>,
    /// The change as a unified diff (current → restored).
    pub diff: String,
    /// What the restore did, in words (the review's outcome included).
    pub message: String,
    /// The checkpoint holding the state before this restore: restoring it is the redo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redo_checkpoint_id: Option<u64>,
}

/// `tandem/session/checkpointFile` params: one file's text at a checkpoint (to compare it with
/// the file now).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCheckpointFileParams {
    /// The session.
    pub session_id: String,
    /// The checkpoint.
    pub checkpoint_id: u64,
    /// The file: workspace-relative, or absolute inside the workspace.
    pub path: String,
}

/// `tandem/session/checkpointFile` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionCheckpointFileResult {
    /// The file's text at the checkpoint; absent when the checkpoint does not hold the file (it
    /// did not exist then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
}
