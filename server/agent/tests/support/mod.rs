//! What the agent's integration tests share: a session client that records every update and
//! allows what it is asked, provider settings for the scripted model, the binary's built-in
//! tools, and an agent started on a workspace.

#![allow(dead_code)] // each test binary uses its own part

use parking_lot::Mutex;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use tandem_agent::{Agent, AgentConfig, SessionClient};
use tandem_llm::{ProviderKind, ProviderSettings, Reasoning, RetryPolicy, Timeouts};
use tandem_protocol::{
    ContentBlock, PermissionOutcome, RequestPermissionParams, RequestPermissionResult, SessionPromptParams,
    SessionUpdate,
};
use tandem_text::BufferCache;
use tandem_tool_api::{Registry, ToolConfig, Workspace};

/// Records every update and the title of every permission request; allows everything it is
/// asked (the first option).
#[derive(Default)]
pub struct Recorder {
    pub updates: Mutex<Vec<SessionUpdate>>,
    pub asked: Mutex<Vec<String>>,
}

impl Recorder {
    pub fn updates(&self) -> Vec<SessionUpdate> {
        self.updates.lock().clone()
    }
}

#[async_trait]
impl SessionClient for Recorder {
    async fn update(&self, _session_id: &str, update: SessionUpdate) {
        self.updates.lock().push(update);
    }

    async fn request_permission(
        &self,
        params: RequestPermissionParams,
    ) -> Result<RequestPermissionResult, tandem_agent::ClientError> {
        let option_id = params.options.first().map(|o| o.option_id.clone()).unwrap_or_default();
        self.asked.lock().push(params.tool_call.title.clone().unwrap_or_default());
        Ok(RequestPermissionResult {
            outcome: PermissionOutcome::Selected { option_id, accepted_hunks: None, message: None },
        })
    }
}

/// The scripted model (`scripted`) behind `base_url`, with a context window and no retries.
pub fn settings(kind: ProviderKind, base_url: &str, window: u32, max_tokens: u32) -> ProviderSettings {
    ProviderSettings {
        kind,
        base_url: base_url.to_owned(),
        model: "scripted".into(),
        api_key: None,
        api_key_env: None,
        max_tokens,
        reasoning: Reasoning::default(),
        context_window: Some(window),
        timeouts: Timeouts::default(),
        price: None,
        images: None,
        retry: RetryPolicy { max_retries: 0, ..RetryPolicy::default() },
    }
}

/// Every built-in tool, as the binary offers them: files, README generation, search, commands,
/// language servers, skills, the web, the session, memories.
pub fn builtin() -> Registry {
    use {tandem_tool_exec as exec, tandem_tool_fs as fs, tandem_tool_intel as intel, tandem_tool_memory as memory};
    use {tandem_tool_readme as readme, tandem_tool_search as search, tandem_tool_session as session};
    let config = ToolConfig::default();
    let families = [fs::all(), readme::all(), search::all(), exec::all(), intel::all(), tandem_tool_skill::all()];
    let rest = [tandem_tool_web::all(&config.web), session::all(), memory::all()];
    Registry::new(families.into_iter().chain(rest).flatten().collect(), config)
}

/// An agent on the workspace at `root` with the built-in tools, answering to `client`.
pub fn start(root: &Path, config: AgentConfig, client: Arc<Recorder>) -> Arc<Agent> {
    start_with(root, config, client, builtin())
}

/// An agent on the workspace at `root` with the tools of `registry`, answering to `client`.
pub fn start_with(root: &Path, config: AgentConfig, client: Arc<Recorder>, registry: Registry) -> Arc<Agent> {
    let workspace = Workspace::new(root, &[]).unwrap_or_else(|e| panic!("{e}"));
    Agent::new(
        Arc::new(workspace),
        Arc::new(BufferCache::new()),
        Arc::new(registry),
        None,
        None,
        client as Arc<dyn SessionClient>,
        config,
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A prompt of one text block.
pub fn prompt(session_id: &str, text: &str) -> SessionPromptParams {
    SessionPromptParams { session_id: session_id.to_owned(), prompt: vec![ContentBlock::text(text)] }
}

/// A new session of `agent` (default parameters), by id.
pub fn new_session(agent: &Agent) -> String {
    agent.new_session(tandem_protocol::SessionNewParams::default()).unwrap_or_else(|e| panic!("{e}")).session_id
}

/// A new session of `agent` working in `cwd` (relative to the workspace), by id.
pub fn new_session_in(agent: &Agent, cwd: &str) -> String {
    let params = tandem_protocol::SessionNewParams { cwd: Some(cwd.into()), ..Default::default() };
    agent.new_session(params).unwrap_or_else(|e| panic!("{e}")).session_id
}
