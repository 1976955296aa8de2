//! `tandem/session/checkpoints` lists a session's checkpoints and `tandem/session/restore` goes
//! back to one, through the same review and commit path as any change, then tells the model
//! what was undone. A restore never reads, shows or writes through a file that is now a
//! symbolic link (or under one), and names the files the agent changed that checkpoints leave
//! out.

use std::sync::Arc;

use tandem_checkpoint::{Checkpoint, Effects, Kind, Target};
use tandem_protocol::{
    CheckpointInfo, CheckpointKind, SessionCheckpointFileParams, SessionCheckpointFileResult, SessionCheckpointsParams,
    SessionCheckpointsResult, SessionRestoreParams, SessionRestoreResult, ToolKind,
};
use tandem_tool_api::{ToolContext, WriteLog};
use tandem_tool_fs::RestoreFile;
use tokio_util::sync::CancellationToken;

use crate::agent::Agent;
use crate::approver::{CallApprover, ShownCall};
use crate::checkpoints::{RESTORE_NOTE, file_writes, top};
use crate::config::AgentError;
use crate::store::{Record, rfc3339};

fn unavailable() -> AgentError {
    AgentError::Invalid("checkpoints are unavailable in this workspace (see the log)".into())
}

fn checkpoint_error(err: tandem_checkpoint::CheckpointError) -> AgentError {
    match err {
        tandem_checkpoint::CheckpointError::Unknown { .. } => AgentError::Invalid(err.to_string()),
        other => AgentError::Invalid(format!("checkpoints are unavailable: {other}")),
    }
}

impl Agent {
    /// `tandem/session/checkpoints`.
    pub async fn checkpoints(&self, params: SessionCheckpointsParams) -> Result<SessionCheckpointsResult, AgentError> {
        let store = self.env().checkpoint_store().ok_or_else(unavailable)?;
        let id = top(&params.session_id).to_owned();
        let (list, changes) = tokio::task::spawn_blocking(move || {
            let list = store.list(&id)?;
            let changes = store.changes(&list)?;
            Ok((list, changes))
        })
        .await
        .map_err(|e| AgentError::Invalid(e.to_string()))?
        .map_err(checkpoint_error)?;
        let checkpoints = list.iter().zip(changes).map(|(c, files)| CheckpointInfo { files, ..info(c) }).collect();
        Ok(SessionCheckpointsResult { checkpoints })
    }

    /// `tandem/session/checkpointFile`: a file's text at a checkpoint.
    pub async fn checkpoint_file(
        &self,
        params: SessionCheckpointFileParams,
    ) -> Result<SessionCheckpointFileResult, AgentError> {
        let store = self.env().checkpoint_store().ok_or_else(unavailable)?;
        let path = relative_path(self.env().workspace.root(), &params.path)?;
        let id = top(&params.session_id).to_owned();
        let checkpoint = params.checkpoint_id;
        let bytes = tokio::task::spawn_blocking(move || store.file(&id, checkpoint, &path))
            .await
            .map_err(|e| AgentError::Invalid(e.to_string()))?
            .map_err(checkpoint_error)?;
        let content = bytes
            .map(|b| String::from_utf8(b).map_err(|_| AgentError::Invalid(format!("`{}` is not text", params.path))))
            .transpose()?;
        Ok(SessionCheckpointFileResult { content })
    }

    /// `tandem/session/restore`.
    pub async fn restore(&self, params: SessionRestoreParams) -> Result<SessionRestoreResult, AgentError> {
        let session = self.session(&params.session_id)?;
        let Ok(mut history) = session.history.try_lock() else {
            return Err(AgentError::Busy(session.id.clone()));
        };
        let target = match (params.checkpoint_id, params.turn, params.tool_call_id.clone()) {
            (Some(id), None, None) => Target::Checkpoint(id),
            (None, Some(turn), None) => Target::Turn(turn),
            (None, None, Some(call)) => Target::Call(call),
            _ => return Err(AgentError::Invalid("give exactly one of checkpointId, turn and toolCallId".into())),
        };
        let store = self.env().checkpoint_store().ok_or_else(unavailable)?;
        let now = self.env().snapshot(&session, Kind::BeforeRestore, None, None).await.ok_or_else(|| {
            AgentError::Invalid(
                "cannot take a snapshot of the current state, so nothing was restored (see the log)".into(),
            )
        })?;
        let id = top(&session.id).to_owned();
        let planner = Arc::clone(&store);
        let now_for_plan = now.clone();
        let plan = tokio::task::spawn_blocking(move || planner.plan(&id, &target, &now_for_plan))
            .await
            .map_err(|e| AgentError::Invalid(e.to_string()))?
            .map_err(checkpoint_error)?;
        let root = self.env().workspace.root().to_path_buf();
        let conflicts: Vec<String> = plan.conflicts.iter().map(|c| c.path.clone()).collect();
        let mut files = plan.files.clone();
        if params.include_conflicts {
            files.extend(plan.conflicts.iter().cloned());
        }
        // A file that is now a link, or under one, is neither read (its diff would show what
        // the link points at, maybe outside the workspace) nor written through.
        let (linked, files): (Vec<_>, Vec<_>) =
            files.into_iter().partition(|f| through_link(&self.env().workspace, &f.path));
        let diff = plan_diff(&root, &files);
        let mut skipped = plan.skipped.clone();
        skipped.extend(linked.into_iter().map(|f| f.path));
        let mut result = SessionRestoreResult {
            restored: files.iter().map(|f| f.path.clone()).collect(),
            conflicts,
            skipped,
            diff,
            message: String::new(),
            redo_checkpoint_id: Some(now.id),
            not_covered: plan.not_covered.clone(),
        };
        if params.dry_run {
            result.message = format!("{} file(s) would be restored.", result.restored.len());
            result.message.push_str(&not_covered_note(&result.not_covered));
            return Ok(result);
        }
        let label = match (&params.tool_call_id, plan.target.kind) {
            (Some(call), _) => format!("undo tool call `{call}`"),
            (None, Kind::BeforeTurn) => format!("the start of turn {}", plan.target.turn),
            (None, _) => format!("checkpoint {}", plan.target.id),
        };
        let cancel = CancellationToken::new();
        let approver = Arc::new(
            CallApprover::new(
                Arc::clone(&session.gate),
                Arc::clone(&session.client),
                cancel,
                ShownCall {
                    tool_call_id: format!("restore-{}", now.id),
                    title: format!("Restore {label}"),
                    kind: ToolKind::Edit,
                    raw_input: serde_json::json!({ "restore": label }),
                },
            )
            .once_only(),
        );
        let mut ctx = ToolContext::new(Arc::clone(&self.env().workspace), Arc::clone(&self.env().cache));
        ctx.session_id = Some(session.id.clone());
        ctx.working_dir = session.cwd.clone();
        ctx.editor = self.env().editor.clone();
        ctx.approver = Some(approver as Arc<dyn tandem_tool_api::Approver>);
        let writes = Arc::new(WriteLog::default());
        ctx.writes = Some(Arc::clone(&writes));
        let restore: Vec<RestoreFile> =
            files.into_iter().map(|f| RestoreFile { path: root.join(&f.path), content: f.content }).collect();
        let outcome = tandem_tool_fs::restore_files(&ctx, restore).await;
        let effects = Effects::Writes(file_writes(&root, writes.take()));
        self.env().snapshot(&session, Kind::AfterRestore, None, Some(effects)).await;
        let (message, ok) = match outcome {
            Ok(output) => {
                for key in ["notText", "linked"] {
                    if let Some(left) = output.metadata.get(key).and_then(|v| v.as_array()) {
                        result.skipped.extend(left.iter().filter_map(|v| v.as_str().map(str::to_owned)));
                    }
                }
                result.restored.retain(|p| !result.skipped.contains(p));
                (output.output, true)
            }
            Err(err) => (err.message, false),
        };
        if !ok {
            result.restored.clear();
        }
        result.message = message + &not_covered_note(&result.not_covered);
        // The model's picture of the files must stay true: it learns what was undone.
        let mut note = format!("{RESTORE_NOTE}{label}.");
        if !result.restored.is_empty() {
            note.push_str(&format!(" Restored: {}.", result.restored.join(", ")));
        }
        if !result.conflicts.is_empty() && !params.include_conflicts {
            note.push_str(&format!(" Left as the person changed them: {}.", result.conflicts.join(", ")));
        }
        if !result.not_covered.is_empty() {
            note.push_str(&format!(
                " Changed by you earlier but not covered by undo (left out of checkpoints), so not restored: {}.",
                result.not_covered.join(", ")
            ));
        }
        if !ok {
            note.push_str(&format!(" The restore did not happen: {}.", result.message));
        }
        note.push_str(" Read files again before changing them.]");
        let message =
            tandem_llm::Message { role: tandem_llm::Role::User, content: vec![tandem_llm::Part::Text { text: note }] };
        session.record(&Record::Note { message: message.clone() });
        history.messages.push(std::sync::Arc::new(message));
        Ok(result)
    }
}

impl Agent {
    /// `/undo [turn]`: back to the start of `turn`, or of the last turn.
    pub async fn undo(&self, session_id: &str, turn: Option<u64>) -> Result<SessionRestoreResult, AgentError> {
        let turn = match turn {
            Some(turn) => turn,
            None => self
                .checkpoints(SessionCheckpointsParams { session_id: session_id.to_owned() })
                .await?
                .checkpoints
                .iter()
                .filter(|c| c.kind == CheckpointKind::BeforeTurn)
                .map(|c| c.turn)
                .max()
                .ok_or_else(|| AgentError::Invalid("this session has no turn to undo yet".into()))?,
        };
        let params = SessionRestoreParams { session_id: session_id.to_owned(), turn: Some(turn), ..Default::default() };
        self.restore(params).await
    }

    /// `/redo`: back to the state the last restore replaced.
    pub async fn redo(&self, session_id: &str) -> Result<SessionRestoreResult, AgentError> {
        let list = self.checkpoints(SessionCheckpointsParams { session_id: session_id.to_owned() }).await?.checkpoints;
        // The last restore's "before": restoring it brings back what that restore undid.
        let last_restore = list
            .iter()
            .rev()
            .skip_while(|c| c.kind != CheckpointKind::AfterRestore)
            .find(|c| c.kind == CheckpointKind::BeforeRestore)
            .ok_or_else(|| AgentError::Invalid("nothing to redo: no restore yet in this session".into()))?;
        let params = SessionRestoreParams {
            session_id: session_id.to_owned(),
            checkpoint_id: Some(last_restore.id),
            ..Default::default()
        };
        self.restore(params).await
    }
}

/// A restore's outcome in a few lines, for a chat or a terminal.
pub fn describe_restore(result: &SessionRestoreResult) -> String {
    let mut text = result.message.clone();
    if !result.conflicts.is_empty() {
        text.push_str(&format!(
            "\nLeft alone (changed by you since): {}. Restore them too with includeConflicts.",
            result.conflicts.join(", ")
        ));
    }
    if !result.skipped.is_empty() {
        text.push_str(&format!(
            "\nNot restored (too large, not text, or now a symbolic link): {}",
            result.skipped.join(", ")
        ));
    }
    text
}

/// The line naming the files no restore can bring back, for a restore's message.
fn not_covered_note(files: &[String]) -> String {
    if files.is_empty() {
        return String::new();
    }
    format!(
        "\nNot covered by undo (the agent changed them, but checkpoints leave them out: too large or ignored): {}",
        files.join(", ")
    )
}

/// Whether `path` (workspace-relative) now leads through a symbolic link: itself, or a
/// directory above it. A restore neither reads nor writes such a file.
fn through_link(workspace: &tandem_tool_api::Workspace, path: &str) -> bool {
    let literal = workspace.root().join(path);
    literal.to_str().is_none_or(|raw| workspace.resolve(raw, workspace.root()).map_or(true, |real| real != literal))
}

/// `path` (workspace-relative or absolute inside `root`) as the checkpoint store names it:
/// relative, `/`-separated, every component a plain name.
fn relative_path(root: &std::path::Path, path: &str) -> Result<String, AgentError> {
    let given = std::path::Path::new(path);
    let relative = given.strip_prefix(root).unwrap_or(given);
    let mut names = Vec::new();
    for component in relative.components() {
        match component {
            std::path::Component::Normal(name) => names.push(name.to_string_lossy().into_owned()),
            std::path::Component::CurDir => {}
            _ => {
                return Err(AgentError::Invalid(format!(
                    "`{path}`: give a path inside the workspace ({}), relative to it or absolute",
                    root.display()
                )));
            }
        }
    }
    if names.is_empty() {
        return Err(AgentError::Invalid(format!("`{path}` names no file")));
    }
    Ok(names.join("/"))
}

fn info(checkpoint: &Checkpoint) -> CheckpointInfo {
    CheckpointInfo {
        id: checkpoint.id,
        kind: checkpoint.kind,
        turn: checkpoint.turn,
        tool_call_id: checkpoint.tool_call_id.clone(),
        tool: checkpoint.tool.clone(),
        time: rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_millis(checkpoint.time_ms)),
        skipped: checkpoint.skipped.clone(),
        files: Vec::new(),
    }
}

/// The plan as one unified diff, current disk text → restored text.
fn plan_diff(root: &std::path::Path, files: &[tandem_checkpoint::Restored]) -> String {
    let mut out = String::new();
    for file in files {
        let current = std::fs::read(root.join(&file.path)).ok();
        let text = |bytes: Option<&Vec<u8>>| bytes.map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
        let (old, new) = (text(current.as_ref()), text(file.content.as_ref()));
        let diff = similar::TextDiff::from_lines(&old, &new);
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{}", file.path), &format!("b/{}", file.path))
                .to_string(),
        );
    }
    out
}
