//! How the agent runs, and the requests it cannot serve.

use tandem_llm::ProviderSettings;
use tandem_protocol::ModeId;

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
    /// Offer the always-loaded core set, the tools found with `tool_search` and the MCP servers'
    /// tools up front, not every built-in tool (the default).
    pub defer_tools: bool,
    /// `[agent] repo_map`: the first request of a session carries a small map of the codebase,
    /// ranked for the first prompt, a few hundred tokens within the model's budget.
    pub repo_map: bool,
    /// The workspace's own settings that were ignored because the folder is not trusted; when
    /// there are any, the first prompt asks the person whether to trust the folder.
    pub untrusted_settings: Vec<String>,
    /// `[review] precheck = "fix-first"`: a change the language servers say introduces errors
    /// goes back to the model once before the person is asked.
    pub fix_first: bool,
    /// Text added at the end of the system prompt (`tandem run --append-system-prompt`).
    pub append_system_prompt: Option<String>,
    /// The person's policy: permission rules, hooks, the verify loop.
    pub policy: std::sync::Arc<tandem_policy::Policy>,
    /// Reads the provider's settings again once the person trusts the folder from the prompt,
    /// so its own settings apply from that turn on, without a restart.
    pub reload: Option<Reload>,
}

/// Reads the provider's settings again (`None`: they cannot be read; the current ones stay).
#[derive(Clone)]
pub struct Reload(pub std::sync::Arc<dyn Fn() -> Option<ProviderSettings> + Send + Sync>);

impl std::fmt::Debug for Reload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Reload")
    }
}

impl AgentConfig {
    /// Defaults around `provider`.
    pub fn new(provider: ProviderSettings) -> Self {
        Self {
            provider,
            default_mode: ModeId::Default,
            max_turns: 50,
            max_agent_depth: 2,
            defer_tools: true,
            repo_map: false,
            untrusted_settings: Vec::new(),
            fix_first: false,
            append_system_prompt: None,
            policy: std::sync::Arc::default(),
            reload: None,
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
    #[error(
        "a turn is already running in this session (`{0}`), maybe waiting for your review; finish or cancel it, then try again"
    )]
    Busy(String),
    /// Bad parameters.
    #[error("{0}")]
    Invalid(String),
}
