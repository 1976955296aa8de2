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
    /// Offer only `always_load` tools (and those found with `tool_search`) to the model.
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
            repo_map: false,
            untrusted_settings: Vec::new(),
            fix_first: false,
            append_system_prompt: None,
            policy: std::sync::Arc::default(),
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
