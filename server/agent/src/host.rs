//! The session as the session tools see it ([`SessionHost`]): the task list, questions to the
//! person, plan mode, sub-agents and tool loading.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use tandem_protocol::{
    AskOption, AskQuestion, AskUserParams, AskUserResult, ContentBlock, ModeId, PermissionOption, PermissionOptionKind,
    PermissionOutcome, RequestPermissionParams, RequestPermissionResult, SessionUpdate, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, ToolGroup, ToolKind,
};
use tandem_tool_api::{
    AgentType, AskOutcome, HostError, PlanDecision, PlanState, Question, Registry, SessionHost, SubAgentRequest,
    SubAgentState, SubAgentStatus, Todo,
};
use tokio_util::sync::CancellationToken;

use crate::client::{ClientError, SessionClient};
use crate::env::Env;
use crate::session::{History, Session, SubAgent};
use crate::store::Record;

/// The host of one tool call.
pub(crate) struct Host {
    pub env: std::sync::Weak<Env>,
    pub session: Arc<Session>,
    pub cancel: CancellationToken,
    pub tool_call_id: String,
}

impl Host {
    fn record(&self, record: Record) {
        self.session.record(&record);
    }

    async fn set_mode(&self, mode: ModeId) {
        self.session.gate.set_mode(mode);
        self.record(Record::Mode { mode });
        self.session.client.update(&self.session.id, SessionUpdate::CurrentModeUpdate { current_mode_id: mode }).await;
    }
}

#[async_trait]
impl SessionHost for Host {
    fn todos(&self) -> Vec<Todo> {
        self.session.todos.lock().clone()
    }

    async fn set_todos(&self, todos: Vec<Todo>) {
        *self.session.todos.lock() = todos.clone();
        self.record(Record::Todos { todos: todos.clone() });
        self.session.client.update(&self.session.id, crate::session::plan_update(&todos)).await;
    }

    async fn ask(&self, questions: Vec<Question>) -> AskOutcome {
        let count = questions.len();
        let params = AskUserParams {
            session_id: self.session.id.clone(),
            questions: questions
                .into_iter()
                .map(|q| AskQuestion {
                    question: q.question,
                    header: q.header,
                    options: q
                        .options
                        .into_iter()
                        .map(|o| AskOption { label: o.label, description: o.description })
                        .collect(),
                    multi_select: q.multi_select,
                })
                .collect(),
        };
        let asked = self.session.client.ask_user(params);
        tokio::select! {
            () = self.cancel.cancelled() => AskOutcome::Cancelled,
            answer = tokio::time::timeout(std::time::Duration::from_secs(3600), asked) => match answer {
                Err(_) => AskOutcome::Unavailable("nobody answered within an hour".into()),
                Ok(Err(why)) => AskOutcome::Unavailable(why.to_string()),
                Ok(Ok(AskUserResult { cancelled: Some(true), .. })) => AskOutcome::Cancelled,
                Ok(Ok(AskUserResult { answers: Some(mut answers), .. })) => {
                    answers.resize(count, Vec::new());
                    AskOutcome::Answered(answers)
                }
                Ok(Ok(_)) => AskOutcome::Cancelled,
            },
        }
    }

    fn mode(&self) -> ModeId {
        self.session.gate.mode()
    }

    fn plan_state(&self) -> Option<PlanState> {
        self.session.gate.plan_state()
    }

    async fn enter_plan(&self, reason: String, plan_file: PathBuf) -> Result<ModeId, HostError> {
        let previous = self.session.gate.mode();
        *self.session.gate.plan.lock() = Some(PlanState { reason, plan_file, previous });
        self.set_mode(ModeId::Plan).await;
        Ok(previous)
    }

    async fn exit_plan(&self, summary: String, plan: Option<String>) -> Result<PlanDecision, HostError> {
        let mut content = vec![ToolCallContent::Content { content: ContentBlock::text(summary) }];
        if let Some(plan) = plan {
            content.push(ToolCallContent::Content { content: ContentBlock::text(plan) });
        }
        let params = RequestPermissionParams {
            session_id: self.session.id.clone(),
            tool_call: ToolCallUpdate {
                tool_call_id: self.tool_call_id.clone(),
                title: Some("Approve the plan?".to_owned()),
                kind: Some(ToolKind::Think),
                status: Some(ToolCallStatus::Pending),
                content: Some(content),
                ..Default::default()
            },
            options: vec![
                PermissionOption {
                    option_id: "allow_once".into(),
                    name: "Approve the plan and start".into(),
                    kind: PermissionOptionKind::AllowOnce,
                },
                PermissionOption {
                    option_id: "reject_once".into(),
                    name: "Keep planning".into(),
                    kind: PermissionOptionKind::RejectOnce,
                },
            ],
            diagnostics: None,
        };
        let answer = tokio::select! {
            () = self.cancel.cancelled() => return Ok(PlanDecision::Cancelled),
            answer = self.session.client.request_permission(params) => answer.map_err(|err| HostError::CannotAsk(err.to_string()))?,
        };
        match answer.outcome {
            PermissionOutcome::Cancelled => Ok(PlanDecision::Cancelled),
            PermissionOutcome::Selected { option_id, message, .. } if option_id.starts_with("allow") => {
                let _ = message;
                let state = self.session.gate.plan.lock().take();
                let restored = match state.map(|s| s.previous) {
                    Some(ModeId::Plan) | None => ModeId::Default,
                    Some(mode) => mode,
                };
                self.set_mode(restored).await;
                Ok(PlanDecision::Approved { restored })
            }
            PermissionOutcome::Selected { message, .. } => Ok(PlanDecision::Rejected { feedback: message }),
        }
    }

    async fn run_agent(&self, request: SubAgentRequest) -> Result<SubAgentStatus, HostError> {
        let env = self.env.upgrade().ok_or(HostError::ShuttingDown)?;
        Ok(run_subagent(env, Arc::clone(&self.session), request, self.cancel.clone()).await)
    }

    fn agent_status(&self, id: &str) -> Option<SubAgentStatus> {
        let agents = self.session.subagents.lock();
        agents.get(id).map(|a| SubAgentStatus {
            id: id.to_owned(),
            agent_type: a.agent_type,
            state: a.state.lock().clone(),
            tool_calls: a.tool_calls.load(Ordering::Relaxed) as usize,
        })
    }

    fn load_tools(&self, names: &[String]) {
        self.session.loaded_tools.lock().extend(names.iter().cloned());
    }
}

/// A sub-agent's client: its updates stay inside (only its tool calls are counted); its
/// permission requests and questions go to the person under the top-level session's id.
struct ChildClient {
    parent: Arc<dyn SessionClient>,
    parent_session: String,
    tool_calls: Arc<AtomicU64>,
}

#[async_trait]
impl SessionClient for ChildClient {
    async fn update(&self, _session_id: &str, update: SessionUpdate) {
        // What the person's hooks did stays visible: a hook's card goes to the parent.
        let hook_card = match &update {
            SessionUpdate::ToolCall(call) => crate::policy::is_hook_card(&call.tool_call_id),
            SessionUpdate::ToolCallUpdate(call) => crate::policy::is_hook_card(&call.tool_call_id),
            _ => false,
        };
        if hook_card {
            self.parent.update(&self.parent_session, update).await;
            return;
        }
        if matches!(update, SessionUpdate::ToolCall(_)) {
            self.tool_calls.fetch_add(1, Ordering::Relaxed);
        }
    }

    async fn request_permission(
        &self,
        mut params: RequestPermissionParams,
    ) -> Result<RequestPermissionResult, ClientError> {
        params.session_id = self.parent_session.clone();
        self.parent.request_permission(params).await
    }

    async fn ask_user(&self, mut params: AskUserParams) -> Result<AskUserResult, ClientError> {
        params.session_id = self.parent_session.clone();
        self.parent.ask_user(params).await
    }
}

/// The tools a sub-agent of `kind` gets from its parent's.
fn child_registry(parent: &Registry, kind: AgentType, may_nest: bool) -> Registry {
    let read_only = |spec: &tandem_tool_api::ToolSpec| {
        !spec.can_write && matches!(spec.group, ToolGroup::Fs | ToolGroup::Search | ToolGroup::Web | ToolGroup::Lsp)
            || spec.name == "memory_read"
    };
    let tools = parent
        .enabled()
        .filter(|tool| {
            let spec = tool.spec();
            let nesting = spec.group == ToolGroup::Agent;
            match kind {
                AgentType::Explore | AgentType::Plan => read_only(spec),
                AgentType::Verify => read_only(spec) || matches!(spec.name, "bash" | "bash_output"),
                AgentType::General => !nesting || may_nest,
            }
        })
        .collect();
    Registry::new(tools, parent.config().clone()).at_door(parent.door())
}

fn instructions(kind: AgentType) -> &'static str {
    match kind {
        AgentType::General => {
            "You are a sub-agent: do the task below completely, then answer with what you did and found. Your answer is all the caller sees."
        }
        AgentType::Explore => {
            "You are a read-only exploration sub-agent: find what the task asks for (files, symbols, how things work) and answer with the facts, paths and line numbers. You cannot change anything."
        }
        AgentType::Plan => {
            "You are a read-only planning sub-agent: investigate, then answer with a concrete step-by-step plan (files, changes, how to verify). You cannot change anything."
        }
        AgentType::Verify => {
            "You are a verification sub-agent: check the work described below (read the code, run the tests or commands that prove it) and answer with what passes, what fails and why. Do not change files."
        }
    }
}

/// The final text of a sub-agent's conversation.
fn final_answer(history: &History) -> String {
    history
        .messages
        .iter()
        .rev()
        .find(|m| m.role == tandem_llm::Role::Assistant)
        .map(|m| tandem_llm::text_of(&m.content, ""))
        .unwrap_or_default()
}

/// Runs (or starts) a sub-agent of `parent`.
pub(crate) async fn run_subagent(
    env: Arc<Env>,
    parent: Arc<Session>,
    request: SubAgentRequest,
    cancel: CancellationToken,
) -> SubAgentStatus {
    let n = parent.next_agent.fetch_add(1, Ordering::Relaxed);
    let id = format!("{}a{n}", parent.call_prefix);
    let tool_calls = Arc::new(AtomicU64::new(0));
    let may_nest = request.depth < env.config.max_agent_depth;
    let registry = Arc::new(child_registry(&parent.registry, request.agent_type, may_nest));
    let root_session = parent.gate.session_id.clone();
    let client = Arc::new(ChildClient {
        parent: Arc::clone(&parent.client),
        parent_session: root_session,
        tool_calls: Arc::clone(&tool_calls),
    });
    let child = Arc::new(Session::child(&parent, &id, registry, client, request.depth));
    let state = Arc::new(Mutex::new(SubAgentState::Running));
    parent.subagents.lock().insert(
        id.clone(),
        SubAgent { agent_type: request.agent_type, state: Arc::clone(&state), tool_calls: Arc::clone(&tool_calls) },
    );
    let prompt = vec![ContentBlock::text(format!("{}\n\nTask:\n{}", instructions(request.agent_type), request.prompt))];
    let kind = request.agent_type;
    let work = {
        let state = Arc::clone(&state);
        async move {
            let mut history = child.history.lock().await;
            let result = crate::turn::run(&env, &child, &mut history, prompt, &cancel).await;
            let answer = final_answer(&history);
            let outcome = match result.stop_reason {
                tandem_protocol::StopReason::EndTurn if !answer.trim().is_empty() => SubAgentState::Completed(answer),
                tandem_protocol::StopReason::EndTurn => {
                    SubAgentState::Failed("the sub-agent finished without an answer".to_owned())
                }
                other => {
                    let why = result.error.unwrap_or_else(|| format!("{other:?}"));
                    SubAgentState::Failed(format!(
                        "the sub-agent stopped early ({why}).{}",
                        if answer.trim().is_empty() { String::new() } else { format!(" Its last words: {answer}") }
                    ))
                }
            };
            *state.lock() = outcome.clone();
            outcome
        }
    };
    let status = |state: SubAgentState| SubAgentStatus {
        id: id.clone(),
        agent_type: kind,
        state,
        tool_calls: tool_calls.load(Ordering::Relaxed) as usize,
    };
    if request.background {
        tokio::spawn(work);
        return status(SubAgentState::Running);
    }
    let outcome = work.await;
    status(outcome)
}
