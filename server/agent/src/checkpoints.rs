//! Checkpoints of a session: a snapshot before each turn, around each tool call that can change
//! files (with what the call's commits wrote, so that what the person changed meanwhile is
//! told apart), and at each turn's end. Listing and restoring them is `restore.rs`.
//!
//! Snapshots are the top-level session's (a sub-agent's tool calls join its parent's chain).
//! A failed snapshot is logged and the turn goes on: checkpoints must never stop work.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tandem_checkpoint::{Checkpoint, Effects, FileWrite, Kind, Label, Store};
use tandem_tool_api::{ToolContext, WriteLog, Written};

use crate::approver::CallApprover;
use crate::env::Env;
use crate::session::Session;

/// How a restore's note to the model begins.
pub(crate) const RESTORE_NOTE: &str = "[The person restored the workspace to ";

/// Whether `message` is a restore's note to the model (stored as a plain message by older
/// versions): never replayed as the person's words.
pub(crate) fn is_restore_note(message: &tandem_llm::Message) -> bool {
    message.role == tandem_llm::Role::User
        && matches!(message.content.as_slice(), [tandem_llm::Part::Text { text }] if text.starts_with(RESTORE_NOTE))
}

/// The top-level session a session's snapshots belong to (`s1.a2` → `s1`).
pub(crate) fn top(session_id: &str) -> &str {
    session_id.split('.').next().unwrap_or(session_id)
}

impl Env {
    /// The workspace's checkpoint store, opened on first use; `None` when it cannot be (no git,
    /// no usable `.tandem`), logged once.
    pub(crate) fn checkpoint_store(&self) -> Option<Arc<Store>> {
        self.checkpoints
            .get_or_init(|| {
                if std::env::var("TANDEM_CHECKPOINTS").is_ok_and(|v| v == "off" || v == "0") {
                    tracing::info!("checkpoints are off (TANDEM_CHECKPOINTS)");
                    return None;
                }
                let opened = tandem_tool_api::state::state_dir(self.workspace.root(), "checkpoints")
                    .map_err(|e| e.to_string())
                    .and_then(|dir| Store::open(self.workspace.root(), &dir).map_err(|e| e.to_string()))
                    .and_then(|store| match tandem_tool_api::state::state_home() {
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
                if let Some(env) = me.upgrade() {
                    env.snapshot(&session, Kind::BeforeTool, Some(at), None).await;
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
    pub(crate) fn of(id: &str, spec: &tandem_tool_api::ToolSpec) -> Option<Self> {
        (!spec.effect.is_read_only()).then(|| Self {
            at: (id.to_owned(), spec.name.to_owned()),
            exact: matches!(spec.effect, tandem_tool_api::Effect::Files | tandem_tool_api::Effect::State),
            writes: Arc::default(),
        })
    }
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
