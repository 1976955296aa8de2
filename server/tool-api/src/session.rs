//! The agent session as the session tools see it: the [`SessionHost`] trait, which the agent
//! loop implements and puts on the [`ToolContext`](crate::ToolContext), and the plain types it
//! takes and returns (todos, questions, plan mode, sub-agents). The tools are in
//! `tandem-tool-session`.

use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tandem_protocol::ModeId;

/// Status of a todo.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (one at a time).
    InProgress,
    /// Done.
    Completed,
}

impl TodoStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::InProgress => "in_progress",
            Self::Completed => "completed",
        }
    }
}

/// One entry of the session's task list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Todo {
    /// What to do, imperative ("Run the tests").
    pub content: String,
    /// Its status.
    pub status: TodoStatus,
    /// What is being done, present continuous ("Running the tests"); shown while in progress.
    #[serde(default, alias = "active_form", skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

/// A question for the person.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// The question, ending with `?`.
    pub question: String,
    /// A short label (a few words) for the question.
    #[serde(default)]
    pub header: String,
    /// The choices; empty for a free-form answer.
    #[serde(default)]
    pub options: Vec<QuestionOption>,
    /// Whether several options may be chosen.
    #[serde(default, alias = "multi_select")]
    pub multi_select: bool,
}

/// A choice of a [`Question`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct QuestionOption {
    /// The answer as shown and returned.
    pub label: String,
    /// What choosing it means.
    #[serde(default)]
    pub description: String,
}

/// What came back from asking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AskOutcome {
    /// One list of chosen labels (or typed text) per question.
    Answered(Vec<Vec<String>>),
    /// The person dismissed the question or the turn was cancelled.
    Cancelled,
    /// Nobody can be asked (no interactive client); the reason.
    Unavailable(String),
}

/// The person's answer to a finished plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanDecision {
    /// Approved: the session is back in `restored`.
    Approved {
        /// The mode the session returned to.
        restored: ModeId,
    },
    /// Not approved; keep planning (with what they said).
    Rejected {
        /// Their words, if any.
        feedback: Option<String>,
    },
    /// The turn was cancelled while waiting.
    Cancelled,
}

/// Plan mode as the session holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanState {
    /// Why plan mode was entered.
    pub reason: String,
    /// The plan file (absolute).
    pub plan_file: PathBuf,
    /// The mode to return to.
    pub previous: ModeId,
}

/// Kinds of sub-agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AgentType {
    /// Every tool the session has.
    General,
    /// Read-only: reading, search, language servers, the web.
    Explore,
    /// Read-only, and asked for a step-by-step plan.
    Plan,
    /// Reading, search and `bash`, to check work.
    Verify,
}

impl AgentType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::General => "general",
            Self::Explore => "explore",
            Self::Plan => "plan",
            Self::Verify => "verify",
        }
    }
}

/// A sub-agent to run.
#[derive(Clone, Debug)]
pub struct SubAgentRequest {
    /// Its task.
    pub prompt: String,
    /// Its kind.
    pub agent_type: AgentType,
    /// Return at once with an id (see `agent_status`).
    pub background: bool,
    /// Its depth (the caller's depth + 1).
    pub depth: u32,
}

/// Where a sub-agent is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubAgentState {
    /// Still working.
    Running,
    /// Finished with this answer.
    Completed(String),
    /// Failed (or stopped early) with this reason.
    Failed(String),
}

/// A sub-agent's id and state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubAgentStatus {
    /// Its id.
    pub id: String,
    /// Its kind.
    pub agent_type: AgentType,
    /// Where it is.
    pub state: SubAgentState,
    /// Tool calls it has made so far.
    pub tool_calls: usize,
}

/// Why the session could not do what a session tool asked.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The agent is shutting down: no new work starts.
    #[error("the agent is shutting down")]
    ShuttingDown,
    /// The person could not be asked (the client cannot ask, or it is gone).
    #[error("{0}")]
    CannotAsk(String),
}

/// The session, as the session tools see it. Implemented by the agent loop.
#[async_trait]
pub trait SessionHost: Send + Sync {
    /// The task list.
    fn todos(&self) -> Vec<Todo>;
    /// Replaces the task list (stored with the session and shown to the editor as the plan).
    async fn set_todos(&self, todos: Vec<Todo>);
    /// Asks the person (the editor's `tandem/session/askUser`, or the terminal).
    async fn ask(&self, questions: Vec<Question>) -> AskOutcome;
    /// The current mode.
    fn mode(&self) -> ModeId;
    /// Plan mode, when the session is in it through `plan_enter`.
    fn plan_state(&self) -> Option<PlanState>;
    /// Switches to plan mode; returns the mode it left.
    async fn enter_plan(&self, reason: String, plan_file: PathBuf) -> Result<ModeId, HostError>;
    /// Asks the person to approve the plan; approval restores the previous mode.
    async fn exit_plan(&self, summary: String, plan: Option<String>) -> Result<PlanDecision, HostError>;
    /// Runs a sub-agent (or starts it, when `background`).
    async fn run_agent(&self, request: SubAgentRequest) -> Result<SubAgentStatus, HostError>;
    /// A sub-agent's state.
    fn agent_status(&self, id: &str) -> Option<SubAgentStatus>;
    /// Makes tools part of the tool list the model is offered from now on (after `tool_search`).
    fn load_tools(&self, names: &[String]);
}
