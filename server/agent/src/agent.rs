//! The sessions of one workspace and the requests that manage them.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tandem_llm::{Message, Part, Role};
use tandem_protocol::{
    ContentBlock, ModeId, SessionCompactParams, SessionCompactResult, SessionDeleteParams, SessionListParams,
    SessionListResult, SessionLoadParams, SessionLoadResult, SessionNewParams, SessionNewResult, SessionPromptParams,
    SessionPromptResult, SessionSetModeParams, SessionUpdate, StopReason, ToolCall, ToolCallStatus, ToolCallUpdate,
    UsageTotals,
};
use tandem_text::BufferCache;
use tandem_tool_api::{EditorClient, Registry, Workspace};
use tokio_util::sync::CancellationToken;

use crate::SessionClient;
use crate::config::{AgentConfig, AgentError};
use crate::env::Env;
use crate::modes::modes_of;
use crate::session::{History, Session};
use crate::store::{Record, Store, rfc3339, valid_id};

/// The sessions of one workspace, and the environment their turns run in.
pub struct Agent {
    /// What turns read; replaced as a whole when the person trusts the folder (a turn keeps
    /// the one it started with).
    env: parking_lot::RwLock<Arc<Env>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
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
        intel: Option<Arc<dyn tandem_tool_api::CodeIntel>>,
        client: Arc<dyn SessionClient>,
        config: AgentConfig,
    ) -> Result<Arc<Self>, AgentError> {
        let llm = tandem_llm::Client::new(config.provider.clone()).map_err(|e| AgentError::Invalid(e.message))?;
        let model = &config.provider.model;
        if let Some(notice) = tandem_llm::profile::resolve(&config.provider, model).notice(model) {
            tracing::warn!("{notice}");
        }
        let store = Store::in_workspace(workspace.root());
        let env = Arc::new_cyclic(|me| Env {
            workspace,
            cache,
            registry,
            editor,
            intel,
            client,
            llm,
            config,
            store,
            me: me.clone(),
            trust_asked: std::sync::atomic::AtomicBool::new(false),
            checkpoints: std::sync::OnceLock::new(),
        });
        Ok(Arc::new(Self {
            env: parking_lot::RwLock::new(env),
            sessions: Mutex::new(HashMap::new()),
            models: tokio::sync::Mutex::new(None),
        }))
    }

    /// The folder was just trusted: its own settings count now. The provider's settings are read
    /// again and a new environment replaces the old one for the turns that start from now on;
    /// sessions on the old configured model move to the new one.
    fn reload_trusted(&self) {
        let old = self.env();
        let Some(provider) = old.config.reload.as_ref().and_then(|reload| (reload.0)()) else { return };
        let llm = match tandem_llm::Client::new(provider.clone()) {
            Ok(llm) => llm,
            Err(err) => {
                tracing::warn!("the trusted folder's provider settings cannot be used: {}", err.message);
                return;
            }
        };
        let mut config = old.config.clone();
        config.untrusted_settings.clear();
        config.provider = provider;
        let (was, now) = (old.config.provider.model.clone(), config.provider.model.clone());
        let env = Arc::new_cyclic(|me| Env {
            workspace: Arc::clone(&old.workspace),
            cache: Arc::clone(&old.cache),
            registry: Arc::clone(&old.registry),
            editor: old.editor.clone(),
            intel: old.intel.clone(),
            client: Arc::clone(&old.client),
            llm,
            config,
            store: old.store.clone(),
            me: me.clone(),
            trust_asked: std::sync::atomic::AtomicBool::new(true),
            // The same workspace's store, if it was opened already.
            checkpoints: old
                .checkpoints
                .get()
                .cloned()
                .map_or_else(std::sync::OnceLock::new, std::sync::OnceLock::from),
        });
        *self.env.write() = env;
        if let Ok(mut kept) = self.models.try_lock() {
            // The old provider's list.
            *kept = None;
        }
        for session in self.sessions.lock().values() {
            let mut model = session.model.lock();
            if *model == was {
                model.clone_from(&now);
            }
        }
        tracing::info!(model = now, "the folder is trusted: its settings apply from this turn");
    }

    /// What turns read now.
    pub(crate) fn env(&self) -> Arc<Env> {
        Arc::clone(&self.env.read())
    }

    pub(crate) fn session(&self, id: &str) -> Result<Arc<Session>, AgentError> {
        self.sessions.lock().get(id).cloned().ok_or_else(|| AgentError::UnknownSession(id.to_owned()))
    }

    /// A stored session of this workspace, with the configured review precheck.
    fn top_session(&self, id: String, cwd: PathBuf, model: String, mode: ModeId) -> Session {
        let env = self.env();
        let session =
            Session::top(id, cwd, model, mode, Arc::clone(&env.registry), Arc::clone(&env.client), env.store.clone());
        if env.config.fix_first {
            session.gate.fix_first();
        }
        session
    }

    fn cwd(&self, cwd: Option<&str>) -> Result<PathBuf, AgentError> {
        let root = self.env().workspace.root().to_path_buf();
        let Some(raw) = cwd else { return Ok(root) };
        let dir = self.env().workspace.resolve(raw, &root).map_err(|e| AgentError::Invalid(format!("cwd: {e}")))?;
        if !dir.is_dir() {
            return Err(AgentError::Invalid(format!("cwd `{raw}` is not a directory")));
        }
        Ok(dir)
    }

    /// `tandem/session/new`.
    pub fn new_session(&self, params: SessionNewParams) -> Result<SessionNewResult, AgentError> {
        let cwd = self.cwd(params.cwd.as_deref())?;
        let mode = params.mode.unwrap_or(self.env().config.default_mode);
        let model = params.model.unwrap_or_else(|| self.env().config.provider.model.clone());
        let id = new_session_id();
        let meta = Record::Meta {
            session_id: id.clone(),
            cwd: cwd.display().to_string(),
            model: model.clone(),
            mode,
            created_at: rfc3339(std::time::SystemTime::now()),
        };
        if let Err(err) = self.env().store.append(&id, &meta) {
            tracing::warn!(session = id, "cannot store the session (it works, but cannot be resumed): {err}");
        }
        let session = self.top_session(id.clone(), cwd, model.clone(), mode);
        self.sessions.lock().insert(id.clone(), Arc::new(session));
        tracing::info!(session = id, mode = mode.as_str(), "session/new");
        Ok(SessionNewResult { session_id: id, modes: modes_of(mode), model: Some(model), worktree: None })
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
        // Images go to a model that takes them, or the prompt is refused, naming the model.
        crate::images::admit(self.env().provider(), &session.model(), &params.prompt)
            .map_err(|err| AgentError::Invalid(err.to_string()))?;
        // `/init`, `/context` and the project's and person's own commands.
        let (prompt, model) = match crate::guidance::prepare(&self.env(), &session, params.prompt)? {
            crate::guidance::Prepared::Plain(prompt) => (prompt, None),
            crate::guidance::Prepared::Reply { typed, text } => {
                session.record(&Record::Command { text: typed });
                self.env()
                    .client
                    .update(&session.id, SessionUpdate::AgentMessageChunk { content: ContentBlock::text(text) })
                    .await;
                return Ok(SessionPromptResult { stop_reason: tandem_protocol::StopReason::EndTurn, error: None });
            }
            crate::guidance::Prepared::Command { typed, prompt, model, mode, card } => {
                session.record(&Record::Command { text: typed });
                if let Some(mode) = mode.filter(|m| *m != session.gate.mode()) {
                    self.set_mode(SessionSetModeParams { session_id: session.id.clone(), mode_id: mode }).await?;
                }
                crate::guidance::show_command(&session, card.0, card.1).await;
                (prompt, model)
            }
        };
        // A command's `model` holds for its turn only.
        let before = model.map(|model| std::mem::replace(&mut *session.model.lock(), model));
        let cancel = CancellationToken::new();
        *session.cancel.lock() = Some(cancel.clone());
        if session.depth == 0 && crate::trust::ask_once(&self.env(), &session.id).await {
            self.reload_trusted();
        }
        // The turn keeps the environment it starts with.
        let env = self.env();
        env.snapshot(&session, tandem_checkpoint::Kind::BeforeTurn, None, None).await;
        let prompt_text: String = prompt
            .iter()
            .filter_map(|block| match block {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let span = crate::otel::turn(&session.id, &session.model(), session.depth, &prompt_text);
        let run = crate::turn::run(&env, &session, &mut history, prompt, &cancel);
        let result = tracing::Instrument::instrument(run, span.clone()).await;
        let stop = serde_json::to_value(result.stop_reason).ok().and_then(|v| v.as_str().map(str::to_owned));
        crate::otel::end_turn(&span, stop.as_deref().unwrap_or_default(), result.stop_reason == StopReason::Error);
        env.snapshot(&session, tandem_checkpoint::Kind::AfterTurn, None, None).await;
        if let Some(before) = before {
            *session.model.lock() = before;
        }
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
        let env = self.env();
        history.size_images_for(env.provider().kind);
        let budget = crate::context::budget(env.provider(), &model, history.stated_window);
        let instructions = crate::guidance::budget(&env, &model);
        let (mut system, guidance) =
            crate::prompt::system_prompt(env.workspace.root(), &session.cwd, session.gate.mode(), instructions);
        crate::prompt::append(&mut system, env.config.append_system_prompt.as_deref());
        let tools = crate::turn::tool_defs(env.config.defer_tools, &session, budget, guidance.skills > 0);
        let fixed = system.len() + tools.bytes;
        let report =
            crate::context::fit(&env, &session, &mut history, fixed, budget, crate::context::Force::Person, &cancel)
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
        if let Err(err) = self.env().store.append(&session.id, &Record::Mode { mode: params.mode_id }) {
            tracing::warn!(session = session.id, "the mode change was not stored: {err}");
        }
        self.env()
            .client
            .update(&session.id, SessionUpdate::CurrentModeUpdate { current_mode_id: params.mode_id })
            .await;
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
        if !self.env().store.exists(&id) {
            return Err(AgentError::UnknownSession(id));
        }
        self.env().store.remove(&id).map_err(|e| AgentError::Invalid(format!("cannot delete session `{id}`: {e}")))
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
        let mut sessions = self.env().store.list();
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
        if !self.env().store.exists(&params.session_id) {
            return Err(AgentError::UnknownSession(params.session_id));
        }
        let records = self.env().store.read(&params.session_id).map_err(AgentError::Invalid)?;
        let (mut mode, mut cwd, mut model) =
            (self.env().config.default_mode, None, self.env().config.provider.model.clone());
        let mut messages = Vec::new();
        let mut replay = Vec::new();
        let mut calls = 0u64;
        // The person's prompts so far (each replayed with its own message id).
        let mut prompts = 0u64;
        let mut todos = Vec::new();
        let mut totals = UsageTotals::default();
        // The tool each of the model's calls named (by the provider's call id), for the replay.
        let mut tool_names: HashMap<String, String> = HashMap::new();
        for record in records {
            match record {
                Record::Meta { cwd: dir, model: m, mode: md, .. } => {
                    cwd = Some(dir);
                    model = m;
                    mode = md;
                }
                Record::Mode { mode: md } => mode = md,
                Record::Model { model: m } => model = m,
                Record::Todos { todos: list } => todos = list,
                // From here on the model sees the compacted conversation; the person's replay
                // keeps everything.
                Record::Compaction { messages: compacted, .. } => messages = compacted,
                Record::Usage { totals: stored } => totals = stored,
                Record::Note { message } => messages.push(message),
                Record::Command { text } => {
                    prompts += 1;
                    replay.push(SessionUpdate::UserMessageChunk {
                        content: ContentBlock::text(&text),
                        message_id: Some(format!("prompt-{prompts}")),
                    })
                }
                Record::Message { message } => {
                    for part in &message.content {
                        if let Part::ToolCall { id, name, .. } = part {
                            tool_names.insert(id.clone(), name.clone());
                        }
                    }
                    if crate::session::is_interruption(&message)
                        || crate::checkpoints::is_restore_note(&message)
                        || crate::guidance::is_command_message(&message)
                    {
                        // Said to the model, not by the person: not replayed.
                    } else if message.role == Role::User {
                        // Tool results and what came with them (instruction files now in force)
                        // are Tandem's; a prompt is the person's, replayed as they typed it.
                        let results = message.content.iter().any(|part| matches!(part, Part::ToolResult { .. }));
                        // Each prompt its own message: one the model never answered (a cancelled
                        // turn) stays apart from the next.
                        prompts += 1;
                        let message_id = Some(format!("prompt-{prompts}"));
                        for part in &message.content {
                            match part {
                                Part::Text { text } if !results => {
                                    if let Some(block) = crate::turn::as_typed(text) {
                                        replay.push(SessionUpdate::UserMessageChunk {
                                            content: block,
                                            message_id: message_id.clone(),
                                        });
                                    }
                                }
                                // The person's images; a tool's come right after its result.
                                Part::Image(image) if !results => replay.push(SessionUpdate::UserMessageChunk {
                                    content: crate::images::block(image),
                                    message_id: message_id.clone(),
                                }),
                                _ => {}
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
                Record::Call {
                    tool_call_id,
                    call_id,
                    title,
                    kind,
                    status,
                    raw_input,
                    content,
                    locations,
                    raw_output,
                } => {
                    calls += 1;
                    let tool_name = tool_names.get(&call_id).map(|name| {
                        self.env().registry.find(name).map_or_else(|| name.clone(), |tool| tool.spec().name.to_owned())
                    });
                    let status = if status == ToolCallStatus::Completed { status } else { ToolCallStatus::Failed };
                    match raw_output {
                        // As it went live: the call, then its end with the result's rawOutput (an
                        // exit code, a diff), so an editor draws the same card from the same updates.
                        Some(raw_output) => {
                            replay.push(SessionUpdate::ToolCall(ToolCall {
                                tool_call_id: tool_call_id.clone(),
                                title: title.clone(),
                                kind,
                                status: ToolCallStatus::InProgress,
                                content: Vec::new(),
                                locations,
                                raw_input: Some(raw_input),
                                tool_name,
                            }));
                            replay.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate {
                                tool_call_id,
                                status: Some(status),
                                content: Some(content),
                                title: Some(title),
                                raw_output: Some(raw_output),
                                ..Default::default()
                            }));
                        }
                        None => replay.push(SessionUpdate::ToolCall(ToolCall {
                            tool_call_id,
                            title,
                            kind,
                            status,
                            content,
                            locations,
                            raw_input: Some(raw_input),
                            tool_name,
                        })),
                    }
                }
            }
        }
        // The stored mode never raises the person's current choice: a session file may say
        // `yolo` (a session from another time, or one that did not come from this person).
        let stored_mode = mode;
        let mode = if stored_mode.laxness() > self.env().config.default_mode.laxness() {
            self.env().config.default_mode
        } else {
            stored_mode
        };
        // A stored directory is confined like a new session's (a session file may come from
        // anywhere); one that is gone or outside falls back to the root.
        let cwd =
            cwd.and_then(|dir| self.cwd(Some(&dir)).ok()).unwrap_or_else(|| self.env().workspace.root().to_path_buf());
        // A turn that ended in a crash may leave tool calls without results: close them.
        close_dangling_calls(&mut messages);
        let id = params.session_id.clone();
        let mut session = self.top_session(id.clone(), cwd, model, mode);
        let total_tokens = totals.input_tokens + totals.output_tokens;
        let messages: Vec<Arc<Message>> = messages.into_iter().map(Arc::new).collect();
        crate::guidance::remember(&self.env(), &session, &messages);
        session.history = tokio::sync::Mutex::new(History { messages, totals, total_tokens, ..History::default() });
        session.next_call = AtomicU64::new(calls + 1);
        if !todos.is_empty() {
            replay.push(crate::session::plan_update(&todos));
        }
        session.todos = Mutex::new(todos);
        if totals != UsageTotals::default() {
            // The cost meter goes on from the session's totals.
            let window = crate::context::budget(self.env().provider(), &session.model(), None).window;
            replay.push(SessionUpdate::UsageUpdate(tandem_protocol::Usage {
                input_tokens: 0,
                output_tokens: 0,
                cache_read_tokens: 0,
                total_tokens,
                reasoning_tokens: 0,
                context_window: window,
                session: totals,
            }));
        }
        self.sessions.lock().insert(id.clone(), Arc::new(session));
        for update in replay {
            self.env().client.update(&id, update).await;
        }
        if mode != stored_mode {
            let note = format!(
                "[This session was stored in {} mode; it continues in {} mode, your current choice. Switch modes \
                 to go back to it.]",
                stored_mode.as_str(),
                mode.as_str()
            );
            tracing::warn!(session = id, "{note}");
            self.env().client.update(&id, SessionUpdate::AgentMessageChunk { content: ContentBlock::text(note) }).await;
        }
        self.env().client.update(&id, SessionUpdate::CurrentModeUpdate { current_mode_id: mode }).await;
        Ok(SessionLoadResult { modes: modes_of(mode) })
    }

    /// Changes the model of the session's next turns (stored: a loaded session goes on with it).
    pub fn set_model(&self, session_id: &str, model: &str) -> Result<(), AgentError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(AgentError::Invalid("the model name is empty".into()));
        }
        let session = self.session(session_id)?;
        *session.model.lock() = model.to_owned();
        session.record(&Record::Model { model: model.to_owned() });
        tracing::info!(session = session_id, model, "model changed");
        Ok(())
    }

    /// The session's working directory, when there is such a session.
    pub fn session_cwd(&self, session_id: &str) -> Option<String> {
        self.session(session_id).ok().map(|s| s.cwd.display().to_string())
    }

    /// The session's model.
    pub fn model(&self, session_id: &str) -> Result<String, AgentError> {
        Ok(self.session(session_id)?.model())
    }

    /// The configured model (of new sessions).
    pub fn default_model(&self) -> String {
        self.env().config.provider.model.clone()
    }

    /// What is in force in the session (or, without one, for a session at the root):
    /// instruction files, rules, commands and skills with their token costs (`/context`,
    /// `tandem context`).
    pub fn context_report(&self, session_id: Option<&str>) -> Result<String, AgentError> {
        let session = session_id.map(|id| self.session(id)).transpose()?;
        Ok(crate::guidance::report(&self.env(), session.as_deref()))
    }

    /// The slash commands the agent answers in a session working in `cwd` (default: the root):
    /// `/context`, `/init` and the project's and person's own.
    pub fn commands(&self, cwd: Option<&str>) -> Result<Vec<tandem_protocol::AvailableCommand>, AgentError> {
        let cwd = self.cwd(cwd)?;
        Ok(crate::guidance::commands(&tandem_guidance::Places::new(self.env().workspace.root(), &cwd)))
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
