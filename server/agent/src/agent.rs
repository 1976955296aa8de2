//! The sessions of one workspace and the requests that manage them.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tandem_llm::{Message, Part, ProviderSettings, Role};
use tandem_protocol::{
    ContentBlock, ModeId, SessionCompactParams, SessionCompactResult, SessionDeleteParams, SessionListParams,
    SessionListResult, SessionLoadParams, SessionLoadResult, SessionNewParams, SessionNewResult, SessionPromptParams,
    SessionPromptResult, SessionSetModeParams, SessionUpdate, ToolCall, ToolCallStatus, UsageTotals,
};
use tandem_text::BufferCache;
use tandem_tools::{EditorClient, Registry, Workspace};
use tokio_util::sync::CancellationToken;

use crate::session::{History, Session};
use crate::store::{Record, Store, rfc3339, valid_id};
use crate::{SessionClient, modes_of};

/// How the agent runs.
#[derive(Clone, Debug)]
pub struct AgentConfig {
    /// The model provider.
    pub provider: ProviderSettings,
    /// Mode of new sessions.
    pub default_mode: ModeId,
    /// Model turns per prompt before the turn ends with `max_turns`.
    pub max_turns: u32,
    /// How deep sub-agents may nest.
    pub max_agent_depth: u32,
    /// Offer only `always_load` tools (and those found with `tool_search`) to the model.
    pub defer_tools: bool,
    /// The workspace's own settings that were ignored because the folder is not trusted; when
    /// there are any, the first prompt asks the person whether to trust the folder.
    pub untrusted_settings: Vec<String>,
    /// `[review] precheck = "fix-first"`: a change the language servers say introduces errors
    /// goes back to the model once before the person is asked.
    pub fix_first: bool,
    /// The person's policy: permission rules, hooks, the verify loop.
    pub policy: Arc<tandem_policy::Policy>,
}

impl AgentConfig {
    /// Defaults around `provider`.
    pub fn new(provider: ProviderSettings) -> Self {
        Self {
            provider,
            default_mode: ModeId::Default,
            max_turns: 50,
            max_agent_depth: 2,
            defer_tools: false,
            untrusted_settings: Vec::new(),
            fix_first: false,
            policy: Arc::default(),
        }
    }
}

/// A request the agent cannot serve.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// No such session.
    #[error("no session `{0}`: create one with tandem/session/new, or list stored ones with tandem/session/list")]
    UnknownSession(String),
    /// A turn is running.
    #[error("session `{0}` is already running a turn; wait for it to end or send tandem/session/cancel")]
    Busy(String),
    /// Bad parameters.
    #[error("{0}")]
    Invalid(String),
}

/// The sessions of one workspace, and everything a turn needs.
pub struct Agent {
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) cache: Arc<BufferCache>,
    pub(crate) registry: Arc<Registry>,
    pub(crate) editor: Option<Arc<dyn EditorClient>>,
    /// Language servers (the `lsp` tool and diagnostics after edits), when running.
    pub(crate) intel: Option<Arc<dyn tandem_tools::CodeIntel>>,
    pub(crate) client: Arc<dyn SessionClient>,
    pub(crate) llm: tandem_llm::Client,
    pub(crate) config: AgentConfig,
    pub(crate) store: Store,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    /// This agent, for the tasks it spawns (background sub-agents).
    pub(crate) me: std::sync::Weak<Agent>,
    /// The person was asked to trust the folder (once per process).
    pub(crate) trust_asked: std::sync::atomic::AtomicBool,
    /// The workspace's checkpoint store, opened on first use (`None`: unavailable).
    pub(crate) checkpoints: std::sync::OnceLock<Option<Arc<tandem_checkpoint::Store>>>,
    /// The provider's model list, once read ([`Agent::provider_models`]).
    pub(crate) models: tokio::sync::Mutex<Option<Vec<tandem_llm::ModelInfo>>>,
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

fn new_session_id() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let n = NEXT_SESSION.fetch_add(1, Ordering::Relaxed);
    format!("s{:x}{:x}{n}", nanos as u64, std::process::id())
}

impl Agent {
    /// An agent for `workspace`, storing sessions in the workspace's state directory.
    pub fn new(
        workspace: Arc<Workspace>,
        cache: Arc<BufferCache>,
        registry: Arc<Registry>,
        editor: Option<Arc<dyn EditorClient>>,
        intel: Option<Arc<dyn tandem_tools::CodeIntel>>,
        client: Arc<dyn SessionClient>,
        config: AgentConfig,
    ) -> Result<Arc<Self>, AgentError> {
        let llm = tandem_llm::Client::new(config.provider.clone()).map_err(|e| AgentError::Invalid(e.message))?;
        let model = &config.provider.model;
        if let Some(notice) = tandem_llm::profile::resolve(&config.provider, model).notice(model) {
            tracing::warn!("{notice}");
        }
        let store = Store::in_workspace(workspace.root());
        Ok(Arc::new_cyclic(|me| Self {
            workspace,
            cache,
            registry,
            editor,
            intel,
            client,
            llm,
            config,
            store,
            sessions: Mutex::new(HashMap::new()),
            me: me.clone(),
            trust_asked: std::sync::atomic::AtomicBool::new(false),
            checkpoints: std::sync::OnceLock::new(),
            models: tokio::sync::Mutex::new(None),
        }))
    }

    pub(crate) fn session(&self, id: &str) -> Result<Arc<Session>, AgentError> {
        self.sessions.lock().get(id).cloned().ok_or_else(|| AgentError::UnknownSession(id.to_owned()))
    }

    fn cwd(&self, cwd: Option<&str>) -> Result<PathBuf, AgentError> {
        let root = self.workspace.root().to_path_buf();
        let Some(raw) = cwd else { return Ok(root) };
        let dir = self.workspace.resolve(raw, &root).map_err(|e| AgentError::Invalid(format!("cwd: {e}")))?;
        if !dir.is_dir() {
            return Err(AgentError::Invalid(format!("cwd `{raw}` is not a directory")));
        }
        Ok(dir)
    }

    /// `tandem/session/new`.
    pub fn new_session(&self, params: SessionNewParams) -> Result<SessionNewResult, AgentError> {
        let cwd = self.cwd(params.cwd.as_deref())?;
        let mode = params.mode.unwrap_or(self.config.default_mode);
        let model = params.model.unwrap_or_else(|| self.config.provider.model.clone());
        let id = new_session_id();
        let meta = Record::Meta {
            session_id: id.clone(),
            cwd: cwd.display().to_string(),
            model: model.clone(),
            mode,
            created_at: rfc3339(std::time::SystemTime::now()),
        };
        if let Err(err) = self.store.append(&id, &meta) {
            tracing::warn!(session = id, "cannot store the session (it works, but cannot be resumed): {err}");
        }
        let session = Session::top(
            id.clone(),
            cwd,
            model.clone(),
            mode,
            Arc::clone(&self.registry),
            Arc::clone(&self.client),
            self.store.clone(),
        );
        if self.config.fix_first {
            session.gate.fix_first();
        }
        self.sessions.lock().insert(id.clone(), Arc::new(session));
        tracing::info!(session = id, mode = mode.as_str(), "session/new");
        Ok(SessionNewResult { session_id: id, modes: modes_of(mode), model: Some(model) })
    }

    /// `tandem/session/prompt`: runs one turn and answers when it ends.
    pub async fn prompt(&self, params: SessionPromptParams) -> Result<SessionPromptResult, AgentError> {
        let session = self.session(&params.session_id)?;
        let Ok(mut history) = session.history.try_lock() else {
            return Err(AgentError::Busy(session.id.clone()));
        };
        if params.prompt.is_empty() {
            return Err(AgentError::Invalid("the prompt is empty".into()));
        }
        let cancel = CancellationToken::new();
        *session.cancel.lock() = Some(cancel.clone());
        if session.depth == 0 {
            crate::trust::ask_once(self, &session.id).await;
        }
        self.snapshot(&session, tandem_checkpoint::Kind::BeforeTurn, None, None).await;
        let result = crate::turn::run(self, &session, &mut history, params.prompt, &cancel).await;
        self.snapshot(&session, tandem_checkpoint::Kind::AfterTurn, None, None).await;
        drop(history);
        *session.cancel.lock() = None;
        Ok(result)
    }

    /// `tandem/session/compact`: shortens what the model sees of the session now (old tool
    /// outputs elided, older turns summarised by the model), as happens by itself when the
    /// context window fills up.
    pub async fn compact(&self, params: SessionCompactParams) -> Result<SessionCompactResult, AgentError> {
        let session = self.session(&params.session_id)?;
        let Ok(mut history) = session.history.try_lock() else {
            return Err(AgentError::Busy(session.id.clone()));
        };
        let cancel = CancellationToken::new();
        *session.cancel.lock() = Some(cancel.clone());
        let model = session.model();
        let budget = crate::context::budget(self, &model, history.stated_window);
        let system = crate::prompt::system_prompt(self.workspace.root(), &session.cwd, session.gate.mode());
        let tools = crate::turn::tool_defs(self, &session, budget);
        let fixed = system.len() + tools.bytes;
        let report =
            crate::context::fit(self, &session, &mut history, fixed, budget, crate::context::Force::Person, &cancel)
                .await;
        *session.cancel.lock() = None;
        let report = report.ok_or_else(|| AgentError::Invalid("the compaction was cancelled".into()))?;
        Ok(SessionCompactResult {
            tokens_before: report.before,
            tokens_after: report.after,
            summarized: report.summarized,
        })
    }

    /// `tandem/session/cancel`: ends the running turn (a pending approval resolves as cancelled).
    pub fn cancel(&self, session_id: &str) {
        match self.session(session_id) {
            Ok(session) => {
                if let Some(token) = session.cancel.lock().as_ref() {
                    tracing::info!(session = session_id, "cancel");
                    token.cancel();
                }
            }
            Err(err) => tracing::warn!("cancel: {err}"),
        }
    }

    /// `tandem/session/setMode`.
    pub async fn set_mode(&self, params: SessionSetModeParams) -> Result<(), AgentError> {
        let session = self.session(&params.session_id)?;
        session.gate.set_mode(params.mode_id);
        if params.mode_id != ModeId::Plan {
            // Leaving plan mode by hand ends `plan_enter`'s plan mode too.
            *session.gate.plan.lock() = None;
        }
        if let Err(err) = self.store.append(&session.id, &Record::Mode { mode: params.mode_id }) {
            tracing::warn!(session = session.id, "the mode change was not stored: {err}");
        }
        self.client.update(&session.id, SessionUpdate::CurrentModeUpdate { current_mode_id: params.mode_id }).await;
        Ok(())
    }

    /// `tandem/session/delete`: deletes a stored session's file (in the state directory). A
    /// session that is running a turn is refused; one loaded but idle is forgotten too.
    pub fn delete(&self, params: SessionDeleteParams) -> Result<(), AgentError> {
        let id = params.session_id;
        if !valid_id(&id) {
            return Err(AgentError::Invalid(format!("`{id}` is not a session id")));
        }
        if let Ok(session) = self.session(&id) {
            if session.history.try_lock().is_err() {
                return Err(AgentError::Busy(id));
            }
            self.sessions.lock().remove(&id);
        }
        if !self.store.exists(&id) {
            return Err(AgentError::UnknownSession(id));
        }
        self.store.remove(&id).map_err(|e| AgentError::Invalid(format!("cannot delete session `{id}`: {e}")))
    }

    /// Stores a command the person typed that the front door answered itself (`/undo 3`), so
    /// that loading the session shows it where it was typed.
    pub fn record_command(&self, session_id: &str, text: &str) -> Result<(), AgentError> {
        self.session(session_id)?.record(&Record::Command { text: text.to_owned() });
        Ok(())
    }

    /// `tandem/session/list`: stored sessions, most recent first, 50 per page.
    pub fn list(&self, params: SessionListParams) -> Result<SessionListResult, AgentError> {
        const PAGE: usize = 50;
        let mut sessions = self.store.list();
        if let Some(cwd) = &params.cwd {
            sessions.retain(|s| &s.cwd == cwd);
        }
        let start = match &params.cursor {
            None => 0,
            Some(cursor) => cursor.parse().map_err(|_| AgentError::Invalid(format!("invalid cursor `{cursor}`")))?,
        };
        let next_cursor = (sessions.len() > start + PAGE).then(|| (start + PAGE).to_string());
        let sessions = sessions.into_iter().skip(start).take(PAGE).collect();
        Ok(SessionListResult { sessions, next_cursor })
    }

    /// `tandem/session/load`: restores a stored session and replays its history as updates.
    pub async fn load(&self, params: SessionLoadParams) -> Result<SessionLoadResult, AgentError> {
        if !valid_id(&params.session_id) {
            return Err(AgentError::Invalid(format!("`{}` is not a session id", params.session_id)));
        }
        if let Ok(session) = self.session(&params.session_id)
            && session.history.try_lock().is_err()
        {
            return Err(AgentError::Busy(session.id.clone()));
        }
        if !self.store.exists(&params.session_id) {
            return Err(AgentError::UnknownSession(params.session_id));
        }
        let records = self.store.read(&params.session_id).map_err(AgentError::Invalid)?;
        let (mut mode, mut cwd, mut model) = (self.config.default_mode, None, self.config.provider.model.clone());
        let mut messages = Vec::new();
        let mut replay = Vec::new();
        let mut calls = 0u64;
        let mut todos = Vec::new();
        let mut totals = UsageTotals::default();
        for record in records {
            match record {
                Record::Meta { cwd: dir, model: m, mode: md, .. } => {
                    cwd = Some(dir);
                    model = m;
                    mode = md;
                }
                Record::Mode { mode: md } => mode = md,
                Record::Todos { todos: list } => todos = list,
                // From here on the model sees the compacted conversation; the person's replay
                // keeps everything.
                Record::Compaction { messages: compacted, .. } => messages = compacted,
                Record::Usage { totals: stored } => totals = stored,
                Record::Note { message } => messages.push(message),
                Record::Command { text } => {
                    replay.push(SessionUpdate::UserMessageChunk { content: ContentBlock::text(&text) })
                }
                Record::Message { message } => {
                    if crate::turn::is_interruption(&message) || crate::checkpoints::is_restore_note(&message) {
                        // Said to the model, not by the person: not replayed.
                    } else if message.role == Role::User {
                        for part in &message.content {
                            if let Part::Text { text } = part {
                                replay.push(SessionUpdate::UserMessageChunk { content: ContentBlock::text(text) });
                            }
                        }
                    } else {
                        for part in &message.content {
                            match part {
                                Part::Text { text } => {
                                    replay.push(SessionUpdate::AgentMessageChunk { content: ContentBlock::text(text) })
                                }
                                Part::Thinking { text, .. } => {
                                    replay.push(SessionUpdate::AgentThoughtChunk { content: ContentBlock::text(text) })
                                }
                                _ => {}
                            }
                        }
                    }
                    messages.push(message);
                }
                Record::Call { tool_call_id, title, kind, status, raw_input, content, locations, .. } => {
                    calls += 1;
                    replay.push(SessionUpdate::ToolCall(ToolCall {
                        tool_call_id,
                        title,
                        kind,
                        status: if status == ToolCallStatus::Completed { status } else { ToolCallStatus::Failed },
                        content,
                        locations,
                        raw_input: Some(raw_input),
                    }));
                }
            }
        }
        // The stored mode never raises the person's current choice: a session file may say
        // `yolo` (a session from another time, or one that did not come from this person).
        let stored_mode = mode;
        let mode = if stored_mode.laxness() > self.config.default_mode.laxness() {
            self.config.default_mode
        } else {
            stored_mode
        };
        // A stored directory is confined like a new session's (a session file may come from
        // anywhere); one that is gone or outside falls back to the root.
        let cwd = cwd.and_then(|dir| self.cwd(Some(&dir)).ok()).unwrap_or_else(|| self.workspace.root().to_path_buf());
        // A turn that ended in a crash may leave tool calls without results: close them.
        close_dangling_calls(&mut messages);
        let id = params.session_id.clone();
        let mut session = Session::top(
            id.clone(),
            cwd,
            model,
            mode,
            Arc::clone(&self.registry),
            Arc::clone(&self.client),
            self.store.clone(),
        );
        if self.config.fix_first {
            session.gate.fix_first();
        }
        let total_tokens = totals.input_tokens + totals.output_tokens;
        let messages = messages.into_iter().map(Arc::new).collect();
        session.history = tokio::sync::Mutex::new(History { messages, totals, total_tokens, ..History::default() });
        session.next_call = AtomicU64::new(calls + 1);
        if !todos.is_empty() {
            replay.push(crate::session::plan_update(&todos));
        }
        session.todos = Mutex::new(todos);
        self.sessions.lock().insert(id.clone(), Arc::new(session));
        for update in replay {
            self.client.update(&id, update).await;
        }
        if mode != stored_mode {
            let note = format!(
                "[This session was stored in {} mode; it continues in {} mode, your current choice. Switch modes \
                 to go back to it.]",
                stored_mode.as_str(),
                mode.as_str()
            );
            tracing::warn!(session = id, "{note}");
            self.client.update(&id, SessionUpdate::AgentMessageChunk { content: ContentBlock::text(note) }).await;
        }
        self.client.update(&id, SessionUpdate::CurrentModeUpdate { current_mode_id: mode }).await;
        Ok(SessionLoadResult { modes: modes_of(mode) })
    }

    /// Changes the model of the session's next turns (not stored: a loaded session uses the one
    /// it was created with).
    pub fn set_model(&self, session_id: &str, model: &str) -> Result<(), AgentError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(AgentError::Invalid("the model name is empty".into()));
        }
        let session = self.session(session_id)?;
        *session.model.lock() = model.to_owned();
        tracing::info!(session = session_id, model, "model changed");
        Ok(())
    }

    /// The session's model.
    pub fn model(&self, session_id: &str) -> Result<String, AgentError> {
        Ok(self.session(session_id)?.model())
    }

    /// The configured model (of new sessions).
    pub fn default_model(&self) -> &str {
        &self.config.provider.model
    }

    /// The session's mode (for front doors that show it).
    pub fn mode(&self, session_id: &str) -> Result<ModeId, AgentError> {
        Ok(self.session(session_id)?.gate.mode())
    }
}

/// Appends "interrupted" results for tool calls of the last assistant message that have none.
pub(crate) fn close_dangling_calls(messages: &mut Vec<Message>) {
    let Some(last) = messages.last() else { return };
    if last.role != Role::Assistant {
        return;
    }
    let results: Vec<Part> = last
        .content
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall { id, .. } => Some(Part::ToolResult {
                call_id: id.clone(),
                content: "interrupted: the session ended before this call ran".into(),
                is_error: true,
            }),
            _ => None,
        })
        .collect();
    if !results.is_empty() {
        messages.push(Message { role: Role::User, content: results });
    }
}
