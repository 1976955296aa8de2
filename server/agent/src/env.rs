//! What a turn reads: the provider, the tools, the editor's services, the session store, the
//! limits. Handed to the loop (`turn`, `call`, `context`, `host`) instead of the [`Agent`]
//! (crate::agent::Agent), which holds it beside the sessions it manages, so the loop never
//! reaches back into the requests that manage sessions.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock, Weak};

use tandem_llm::ProviderSettings;
use tandem_text::BufferCache;
use tandem_tool_api::{CodeIntel, EditorClient, Registry, Workspace};

use crate::SessionClient;
use crate::config::AgentConfig;
use crate::store::Store;

/// The environment of every turn of one agent's sessions.
pub(crate) struct Env {
    pub(crate) workspace: Arc<Workspace>,
    pub(crate) cache: Arc<BufferCache>,
    /// Every tool of the workspace (a sub-agent's session holds fewer).
    pub(crate) registry: Arc<Registry>,
    pub(crate) editor: Option<Arc<dyn EditorClient>>,
    /// Language servers (the `lsp` tool and diagnostics after edits), when running.
    pub(crate) intel: Option<Arc<dyn CodeIntel>>,
    pub(crate) client: Arc<dyn SessionClient>,
    pub(crate) llm: tandem_llm::Client,
    pub(crate) config: AgentConfig,
    pub(crate) store: Store,
    /// This environment, for the tasks it spawns (background sub-agents, reopened windows).
    pub(crate) me: Weak<Env>,
    /// The person was asked to trust the folder (once per process).
    pub(crate) trust_asked: AtomicBool,
    /// The workspace's checkpoint store, opened on first use (`None`: unavailable).
    pub(crate) checkpoints: OnceLock<Option<Arc<tandem_checkpoint::Store>>>,
}

impl Env {
    /// The provider's settings.
    pub(crate) fn provider(&self) -> &ProviderSettings {
        &self.config.provider
    }

    /// The price of `model`: the configured one for the configured model, else the price table's.
    pub(crate) fn price_of(&self, model: &str) -> Option<tandem_llm::price::Price> {
        let settings = self.provider();
        settings.price.filter(|_| settings.model == model).or_else(|| tandem_llm::price::lookup(model))
    }
}
