//! One session (a top-level one, or a sub-agent's): its conversation, its gate (mode and
//! rules), its tools and client, and where it is stored. Built by [`Session::top`] and
//! [`Session::child`]; every record of it goes through [`Session::record`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use parking_lot::Mutex;
use tandem_llm::{Message, Part, Role};
use tandem_protocol::{ModeId, PlanEntry, SessionUpdate, UsageTotals};
use tandem_tool_api::{AgentType, Registry, SubAgentState, Todo, TodoStatus};
use tokio_util::sync::CancellationToken;

use crate::SessionClient;
use crate::approver::SessionGate;
use crate::store::{Record, Store};

/// A conversation and what the loop remembers about it.
pub(crate) struct History {
    /// The conversation, shared with the requests made of it (each request copies pointers).
    pub messages: Vec<Arc<Message>>,
    /// Failures per (tool, arguments), for loop detection.
    pub failures: HashMap<String, u32>,
    /// Tokens over the whole session.
    pub total_tokens: u64,
    /// Token totals over the whole session, by kind.
    pub totals: UsageTotals,
    /// Size in bytes of each message as JSON (measured once, for estimates).
    pub sizes: Vec<usize>,
    /// Bytes per token of this conversation, learnt from the provider's counts.
    pub bytes_per_token: f64,
    /// The context window the provider stated when it refused a request as too long (smaller
    /// than the model profile's): budgets use it from then on.
    pub stated_window: Option<u64>,
    /// The provider whose per-image token estimate sizes images (`None`: the larger of both).
    pub image_kind: Option<tandem_llm::ProviderKind>,
}

impl Default for History {
    fn default() -> Self {
        Self {
            messages: Vec::new(),
            failures: HashMap::new(),
            total_tokens: 0,
            totals: UsageTotals::default(),
            sizes: Vec::new(),
            bytes_per_token: crate::tokens::DEFAULT_BYTES_PER_TOKEN,
            stated_window: None,
            image_kind: None,
        }
    }
}

impl History {
    /// Adds a model turn's counts to the session's totals, and its cost when the model's price
    /// is known.
    pub fn add_usage(&mut self, usage: &tandem_llm::Usage, price: Option<tandem_llm::price::Price>) {
        self.total_tokens += usage.input_tokens + usage.output_tokens;
        self.totals.add(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens, usage.reasoning_tokens);
        if let Some(price) = price {
            self.totals.add_cost(price.cost(usage));
        }
    }
}

/// A sub-agent of a session.
pub(crate) struct SubAgent {
    pub agent_type: AgentType,
    pub state: Arc<Mutex<SubAgentState>>,
    pub tool_calls: Arc<AtomicU64>,
}

/// One session (a top-level one, or a sub-agent's).
pub(crate) struct Session {
    pub id: String,
    pub gate: Arc<SessionGate>,
    pub cwd: PathBuf,
    /// The model its turns use (changed with [`Agent::set_model`](crate::Agent::set_model)).
    pub model: Mutex<String>,
    /// Held for the whole of a turn: one turn at a time.
    pub history: tokio::sync::Mutex<History>,
    /// The running turn's cancel token.
    pub cancel: Mutex<Option<CancellationToken>>,
    pub next_call: AtomicU64,
    /// Prefix of tool-call ids (`""`, or `a1.` for a sub-agent's calls).
    pub call_prefix: String,
    /// The tools this session may use.
    pub registry: Arc<Registry>,
    /// Where its updates and questions go.
    pub client: Arc<dyn SessionClient>,
    /// Sub-agent depth (0 at the top).
    pub depth: u32,
    /// Where the session is stored (the state directory's `sessions/`); `None` for a sub-agent's.
    store: Option<Store>,
    pub todos: Mutex<Vec<Todo>>,
    pub subagents: Mutex<HashMap<String, SubAgent>>,
    pub next_agent: AtomicU64,
    /// Tools found with `tool_search` (offered to the model from then on).
    pub loaded_tools: Mutex<std::collections::HashSet<String>>,
    /// The tool definitions of recent requests, shared by the next ones.
    pub(crate) tool_sets: Mutex<crate::offer::ToolSets>,
    /// Nested instruction files and scoped rules that came into force.
    pub guidance: Mutex<tandem_guidance::Tracker>,
    /// The last notice about cut or malformed guidance the person got.
    pub guidance_notice: Mutex<String>,
}

impl Session {
    /// The model its turns use.
    pub fn model(&self) -> String {
        self.model.lock().clone()
    }

    /// A fresh top-level session, stored in `store`.
    pub fn top(
        id: String,
        cwd: PathBuf,
        model: String,
        mode: ModeId,
        registry: Arc<Registry>,
        client: Arc<dyn SessionClient>,
        store: Store,
    ) -> Self {
        let gate = Arc::new(SessionGate::new(id.clone(), mode));
        Self::new(id, gate, cwd, model, String::new(), registry, client, 0, Some(store))
    }

    /// A sub-agent of `parent` named `name` (`a1`, `a1.a2`, ...): the parent's gate (mode and
    /// rules), directory and model; its own conversation, tools and client; never stored.
    pub fn child(
        parent: &Session,
        name: &str,
        registry: Arc<Registry>,
        client: Arc<dyn SessionClient>,
        depth: u32,
    ) -> Self {
        let id = format!("{}.{name}", parent.id);
        let gate = Arc::clone(&parent.gate);
        let prefix = format!("{name}.");
        Self::new(id, gate, parent.cwd.clone(), parent.model(), prefix, registry, client, depth, None)
    }

    #[expect(clippy::too_many_arguments, reason = "private: the two constructors above name them")]
    fn new(
        id: String,
        gate: Arc<SessionGate>,
        cwd: PathBuf,
        model: String,
        call_prefix: String,
        registry: Arc<Registry>,
        client: Arc<dyn SessionClient>,
        depth: u32,
        store: Option<Store>,
    ) -> Self {
        Self {
            id,
            gate,
            cwd,
            model: Mutex::new(model),
            history: tokio::sync::Mutex::new(History::default()),
            cancel: Mutex::new(None),
            next_call: AtomicU64::new(1),
            call_prefix,
            registry,
            client,
            depth,
            store,
            todos: Mutex::new(Vec::new()),
            subagents: Mutex::new(HashMap::new()),
            next_agent: AtomicU64::new(1),
            loaded_tools: Mutex::new(Default::default()),
            tool_sets: Mutex::new(Default::default()),
            guidance: Mutex::new(Default::default()),
            guidance_notice: Mutex::new(String::new()),
        }
    }

    /// Whether the session is stored.
    pub fn is_stored(&self) -> bool {
        self.store.is_some()
    }

    /// Appends `record` to the session's file (nothing for a sub-agent); a failure is logged,
    /// the session goes on.
    pub fn record(&self, record: &Record) {
        let Some(store) = &self.store else { return };
        if let Err(err) = store.append(&self.id, record) {
            tracing::warn!(session = self.id, "cannot store the session: {err}");
        }
    }
}

/// The `plan` update for a task list.
pub(crate) fn plan_update(todos: &[Todo]) -> SessionUpdate {
    SessionUpdate::Plan {
        entries: todos
            .iter()
            .map(|t| PlanEntry {
                content: match (&t.active_form, t.status) {
                    (Some(active), TodoStatus::InProgress) => active.clone(),
                    _ => t.content.clone(),
                },
                priority: "medium".to_owned(),
                status: t.status.as_str().to_owned(),
            })
            .collect(),
    }
}

/// What the model is told, as a message of the person, where they cancelled a turn.
pub(crate) const INTERRUPTED: &str = "[The person interrupted this turn: it was cancelled, and whatever was running was stopped. Do not carry on with it unless they ask you to.]";

/// Whether `message` is the note that a turn was interrupted.
pub(crate) fn is_interruption(message: &Message) -> bool {
    message.role == Role::User && matches!(message.content.as_slice(), [Part::Text { text }] if text == INTERRUPTED)
}

/// A tool call of the model, with our id.
#[derive(Clone)]
pub(crate) struct PlannedCall {
    pub tool_call_id: String,
    pub provider_id: String,
    pub name: String,
    pub arguments: serde_json::Value,
}
