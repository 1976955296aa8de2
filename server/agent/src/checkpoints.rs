//! Checkpoints of a session: a snapshot before each turn, around each tool call that can change
//! files (with what the call's commits wrote, so that what the person changed meanwhile is
//! told apart), and at each turn's end; `tandem/session/checkpoints` lists them and
//! `tandem/session/restore` goes back to one, through the same review and commit path as any
//! change, then tells the model what was undone. A restore never reads, shows or writes through
//! a file that is now a symbolic link (or under one), and names the files the agent changed
//! that checkpoints leave out.
//!
//! Snapshots are the top-level session's (a sub-agent's tool calls join its parent's chain).
//! A failed snapshot is logged and the turn goes on: checkpoints must never stop work.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_checkpoint::{Checkpoint, Effects, FileWrite, Kind, Label, LeftOut, Store, Target};
use tandem_protocol::{
    CheckpointInfo, CheckpointKind, SessionCheckpointFileParams, SessionCheckpointFileResult, SessionCheckpointsParams,
    SessionCheckpointsResult, SessionRestoreParams, SessionRestoreResult, ToolKind,
};
use tandem_tools::{RestoreFile, ToolContext, WriteLog, Written};
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, AgentError};
use crate::approver::CallApprover;
use crate::session::Session;
use crate::store::{Record, rfc3339};

/// How a restore's note to the model begins.
const RESTORE_NOTE: &str = "[The person restored the workspace to ";

/// Whether `message` is a restore's note to the model (stored as a plain message by older
/// versions): never replayed as the person's words.
pub(crate) fn is_restore_note(message: &tandem_llm::Message) -> bool {
    message.role == tandem_llm::Role::User
        && matches!(message.content.as_slice(), [tandem_llm::Part::Text { text }] if text.starts_with(RESTORE_NOTE))
}

/// The top-level session a session's snapshots belong to (`s1.a2` → `s1`).
fn top(session_id: &str) -> &str {
    session_id.split('.').next().unwrap_or(session_id)
}

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
    /// The workspace's checkpoint store, opened on first use; `None` when it cannot be (no git,
    /// no usable `.tandem`), logged once.
    pub(crate) fn checkpoint_store(&self) -> Option<Arc<Store>> {
        self.checkpoints
            .get_or_init(|| {
                if std::env::var("TANDEM_CHECKPOINTS").is_ok_and(|v| v == "off" || v == "0") {
                    tracing::info!("checkpoints are off (TANDEM_CHECKPOINTS)");
                    return None;
                }
                let opened = tandem_tools::state::state_dir(self.workspace.root(), "checkpoints")
                    .map_err(|e| e.to_string())
                    .and_then(|dir| Store::open(self.workspace.root(), &dir).map_err(|e| e.to_string()))
                    .and_then(|store| match tandem_tools::state::state_home() {
                        Some(home) => store.excluding(&home).map_err(|e| e.to_string()),
                        None => Ok(store),
                    });
                match opened {
                    Ok(store) => Some(Arc::new(store)),
                    Err(err) => {
                        tracing::warn!("checkpoints are off in this workspace: {err}");
                        None
                    }
                }
            })
            .clone()
    }

    /// The checkpoint store `session`'s snapshots go to (none for a session that is not stored).
    pub(crate) fn session_store(&self, session: &Session) -> Option<Arc<Store>> {
        if !session.is_stored() && session.depth == 0 {
            return None;
        }
        self.checkpoint_store()
    }

    /// Takes a snapshot for `session` (nothing for a session that is not stored); `effects`
    /// for one that closes a tool call's or a restore's window.
    pub(crate) async fn snapshot(
        &self,
        session: &Session,
        kind: Kind,
        call: Option<(String, String)>,
        effects: Option<Effects>,
    ) -> Option<Checkpoint> {
        let store = self.session_store(session)?;
        let id = top(&session.id).to_owned();
        let buffers: Vec<(PathBuf, String)> = self.cache.documents();
        let snapshot = tokio::task::spawn_blocking(move || {
            let turn = store.list(&id)?.last().map_or(0, |c| c.turn);
            let turn = if kind == Kind::BeforeTurn { turn + 1 } else { turn.max(1) };
            store.snapshot(&id, Label { kind, turn, call, effects }, &buffers)
        })
        .await;
        match snapshot {
            Ok(Ok(checkpoint)) => Some(checkpoint),
            Ok(Err(err)) => {
                tracing::warn!(session = session.id, "no checkpoint taken: {err}");
                None
            }
            Err(err) => {
                tracing::warn!(session = session.id, "no checkpoint taken (the task failed): {err}");
                None
            }
        }
    }

    /// `approver` checking changes against `session`'s checkpoints when the call has a
    /// `window`, and opening a command's window again once the person allowed it.
    pub(crate) fn undo_aware(
        &self,
        approver: CallApprover,
        session: &Arc<Session>,
        window: Option<&CallWindow>,
    ) -> CallApprover {
        let Some(window) = window else { return approver };
        let approver = approver.with_undo(self.session_store(session), self.workspace.root().to_path_buf());
        if window.exact {
            return approver;
        }
        let (me, session, at) = (self.me.clone(), Arc::clone(session), window.at.clone());
        approver.with_reopen(Box::new(move || {
            let (me, session, at) = (me.clone(), Arc::clone(&session), at.clone());
            Box::pin(async move {
                if let Some(agent) = me.upgrade() {
                    agent.snapshot(&session, Kind::BeforeTool, Some(at), None).await;
                }
            })
        }))
    }

    /// Opens a call's window: a snapshot before it, and the write log its commits fill.
    pub(crate) async fn open_window(&self, session: &Session, window: &CallWindow, ctx: &mut ToolContext) {
        ctx.writes = Some(Arc::clone(&window.writes));
        self.snapshot(session, Kind::BeforeTool, Some(window.at.clone()), None).await;
    }

    /// Closes a call's window: a snapshot after it, with what it wrote. A file tool that wrote
    /// nothing closes none: its window would explain no change (an `lsp` query costs one
    /// snapshot, not two).
    pub(crate) async fn close_window(&self, session: &Session, window: CallWindow) {
        let effects = if window.exact {
            let writes = file_writes(self.workspace.root(), window.writes.take());
            if writes.is_empty() {
                return;
            }
            Effects::Writes(writes)
        } else {
            Effects::Unknown
        };
        self.snapshot(session, Kind::AfterTool, Some(window.at), Some(effects)).await;
    }

    /// `tandem/session/checkpoints`.
    pub async fn checkpoints(&self, params: SessionCheckpointsParams) -> Result<SessionCheckpointsResult, AgentError> {
        let store = self.checkpoint_store().ok_or_else(unavailable)?;
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
        let store = self.checkpoint_store().ok_or_else(unavailable)?;
        let path = relative_path(self.workspace.root(), &params.path)?;
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
        let store = self.checkpoint_store().ok_or_else(unavailable)?;
        let now = self.snapshot(&session, Kind::BeforeRestore, None, None).await.ok_or_else(|| {
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
        let root = self.workspace.root().to_path_buf();
        let conflicts: Vec<String> = plan.conflicts.iter().map(|c| c.path.clone()).collect();
        let mut files = plan.files.clone();
        if params.include_conflicts {
            files.extend(plan.conflicts.iter().cloned());
        }
        // A file that is now a link, or under one, is neither read (its diff would show what
        // the link points at, maybe outside the workspace) nor written through.
        let (linked, files): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| through_link(&self.workspace, &f.path));
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
        let approver = Arc::new(CallApprover::new(
            Arc::clone(&session.gate),
            Arc::clone(&session.client),
            cancel,
            format!("restore-{}", now.id),
            format!("Restore {label}"),
            ToolKind::Edit,
            serde_json::json!({ "restore": label }),
        ));
        let mut ctx = ToolContext::new(Arc::clone(&self.workspace), Arc::clone(&self.cache));
        ctx.session_id = Some(session.id.clone());
        ctx.working_dir = session.cwd.clone();
        ctx.editor = self.editor.clone();
        ctx.approver = Some(approver as Arc<dyn tandem_tools::Approver>);
        let writes = Arc::new(WriteLog::default());
        ctx.writes = Some(Arc::clone(&writes));
        let restore: Vec<RestoreFile> =
            files.into_iter().map(|f| RestoreFile { path: root.join(&f.path), content: f.content }).collect();
        let outcome = tandem_tools::restore_files(&ctx, restore).await;
        let effects = Effects::Writes(file_writes(&root, writes.take()));
        self.snapshot(&session, Kind::AfterRestore, None, Some(effects)).await;
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

/// The checkpoint window of a tool call that can change files: from a snapshot before it to one
/// after it that says what it changed.
pub(crate) struct CallWindow {
    /// The call's id and its tool.
    at: (String, String),
    /// Its effects are its commits' writes (file tools, memories), not unknown (commands,
    /// outside tools).
    exact: bool,
    /// What its commits wrote.
    writes: Arc<WriteLog>,
}

impl CallWindow {
    /// The window of call `id` of a tool described by `spec`; none for a tool that only reads.
    pub(crate) fn of(id: &str, spec: &tandem_tools::ToolSpec) -> Option<Self> {
        (!spec.effect.is_read_only()).then(|| Self {
            at: (id.to_owned(), spec.name.to_owned()),
            exact: matches!(spec.effect, tandem_tools::Effect::Files | tandem_tools::Effect::State),
            writes: Arc::default(),
        })
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
fn through_link(workspace: &tandem_tools::Workspace, path: &str) -> bool {
    let literal = workspace.root().join(path);
    literal.to_str().is_none_or(|raw| workspace.resolve(raw, workspace.root()).map_or(true, |real| real != literal))
}

/// A call's or a restore's writes as the checkpoint store records them: workspace-relative
/// paths (writes elsewhere are never in a snapshot), the same content hashes.
pub(crate) fn file_writes(root: &Path, writes: Vec<Written>) -> Vec<FileWrite> {
    writes
        .into_iter()
        .filter_map(|w| {
            let relative = w.path.strip_prefix(root).ok()?;
            let names: Option<Vec<&str>> = relative.components().map(|c| c.as_os_str().to_str()).collect();
            Some(FileWrite { path: names?.join("/"), before: w.before.map(|h| h.0), after: w.after.map(|h| h.0) })
        })
        .collect()
}

/// Why a file is not covered by undo, in words.
pub(crate) fn left_out_reason(why: LeftOut) -> String {
    match why {
        LeftOut::TooLarge => {
            format!("over the {} MB checkpoint limit", tandem_checkpoint::DEFAULT_MAX_FILE_BYTES / (1024 * 1024))
        }
        LeftOut::Ignored => "ignored: .gitignore or a default exclude".to_owned(),
    }
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
        kind: match checkpoint.kind {
            Kind::BeforeTurn => CheckpointKind::BeforeTurn,
            Kind::BeforeTool => CheckpointKind::BeforeTool,
            Kind::AfterTool => CheckpointKind::AfterTool,
            Kind::AfterTurn => CheckpointKind::AfterTurn,
            Kind::BeforeRestore => CheckpointKind::BeforeRestore,
            Kind::AfterRestore => CheckpointKind::AfterRestore,
        },
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_reach_the_store_relative_with_the_hash_snapshots_are_checked_with() {
        let bytes = b"fn main() {}\n";
        assert_eq!(tandem_checkpoint::content_hash(bytes), tandem_text::ContentHash::of(bytes).0);
        let root = Path::new("/ws");
        let hash = Some(tandem_text::ContentHash::of(bytes));
        let writes = vec![
            Written { path: PathBuf::from("/ws/src/main.rs"), before: None, after: hash },
            Written { path: PathBuf::from("/elsewhere/x.rs"), before: hash, after: None },
        ];
        assert_eq!(
            file_writes(root, writes),
            [FileWrite { path: "src/main.rs".into(), before: None, after: hash.map(|h| h.0) }]
        );
    }
}
