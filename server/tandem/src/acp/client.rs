//! The ACP client as the agent and the tools see it: session updates, permission requests and
//! questions ([`SessionClient`]); file reads and writes and terminals when the client offers
//! them ([`EditorClient`]: `fs/read_text_file`, `fs/write_text_file`, `terminal/*`).

use parking_lot::Mutex;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tandem_agent::{ClientError, SessionClient};
use tandem_protocol::{
    AskUserParams, AskUserResult, RequestPermissionParams, RequestPermissionResult, SessionUpdate, ToolCallContent,
    ToolCallUpdate,
};
use tandem_text::PositionEncoding;
use tandem_tools::{CommandOutcome, CommandRun, DocumentEdit, EditorClient, EditorError};

use super::mapping;
use crate::rpc::{Connection, RpcError};

/// How long the client gets to answer a file request.
const FILE_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Extra time after a command's timeout for the client to report its exit.
const TERMINAL_GRACE: Duration = Duration::from_secs(10);

/// What the client said it can do in `initialize`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCaps {
    pub read_text_file: bool,
    pub write_text_file: bool,
    pub terminal: bool,
    pub elicitation_form: bool,
}

impl ClientCaps {
    /// From `initialize`'s `clientCapabilities`.
    pub fn from_json(caps: Option<&Value>) -> Self {
        let flag = |pointer: &str| caps.and_then(|c| c.pointer(pointer)).and_then(Value::as_bool).unwrap_or(false);
        Self {
            read_text_file: flag("/fs/readTextFile"),
            write_text_file: flag("/fs/writeTextFile"),
            terminal: flag("/terminal"),
            elicitation_form: caps.and_then(|c| c.pointer("/elicitation/form")).is_some_and(Value::is_object),
        }
    }
}

/// The ACP client of one connection.
pub struct AcpClient {
    pub conn: Arc<Connection>,
    pub caps: ClientCaps,
    /// Sessions whose updates are not sent (`session/resume` restores without replaying).
    muted: Mutex<HashSet<String>>,
    /// The tool call running in each session (the last one reported in progress): a question
    /// asked through `session/request_permission` is shown as that call.
    running: Mutex<HashMap<String, String>>,
}

/// The client's id of a session: sub-agents' sessions (`<id>.a1`) act under their top session.
fn top_session(session_id: &str) -> &str {
    session_id.split('.').next().unwrap_or(session_id)
}

fn rpc_message(method: &str, err: RpcError) -> ClientError {
    if err.code == RpcError::METHOD_NOT_FOUND {
        ClientError::NotImplemented(method.to_owned())
    } else {
        ClientError::Failed { method: method.to_owned(), message: format!("{} (code {})", err.message, err.code) }
    }
}

/// The client answered a request of a tool with an error, or went away.
fn editor_error(method: &str, err: RpcError) -> EditorError {
    if err.code == RpcError::METHOD_NOT_FOUND {
        EditorError::NotImplemented { method: method.to_owned() }
    } else if err.is_disconnected() {
        EditorError::StreamClosed { method: method.to_owned() }
    } else {
        EditorError::Rejected {
            method: method.to_owned(),
            message: format!("{method} failed: {} (code {})", err.message, err.code),
        }
    }
}

impl AcpClient {
    pub fn new(conn: Arc<Connection>, caps: ClientCaps) -> Self {
        Self { conn, caps, muted: Mutex::new(HashSet::new()), running: Mutex::new(HashMap::new()) }
    }

    /// Stops (`true`) or resumes sending the updates of `session_id`.
    pub fn mute(&self, session_id: &str, muted: bool) {
        let mut set = self.muted.lock();
        if muted {
            set.insert(session_id.to_owned());
        } else {
            set.remove(session_id);
        }
    }

    /// Sends one `session/update`.
    pub fn send_update(&self, session_id: &str, update: &SessionUpdate) {
        if self.muted.lock().contains(session_id) {
            return;
        }
        if let SessionUpdate::ToolCallUpdate(ToolCallUpdate {
            tool_call_id,
            status: Some(tandem_protocol::ToolCallStatus::InProgress),
            ..
        }) = update
        {
            self.running.lock().insert(top_session(session_id).to_owned(), tool_call_id.clone());
        }
        // A provider that reports no usage: saying "0 tokens used" would mislead.
        if let SessionUpdate::UsageUpdate(usage) = update
            && usage.input_tokens + usage.output_tokens == 0
        {
            return;
        }
        self.conn.notify("session/update", json!({ "sessionId": session_id, "update": mapping::update(update) }));
    }

    async fn call(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, ClientError> {
        match tokio::time::timeout(timeout, self.conn.request(method, params)).await {
            Err(_) => Err(ClientError::Unavailable(format!(
                "the client did not answer {method} within {}s",
                timeout.as_secs()
            ))),
            Ok(Err(err)) => Err(rpc_message(method, err)),
            Ok(Ok(value)) => Ok(value),
        }
    }

    /// A request of a tool (files, terminals), bounded by `timeout`.
    async fn editor_call(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, EditorError> {
        match tokio::time::timeout(timeout, self.conn.request(method, params)).await {
            Err(_) => {
                Err(EditorError::Timeout { peer: "client", method: method.to_owned(), seconds: timeout.as_secs() })
            }
            Ok(Err(err)) => Err(editor_error(method, err)),
            Ok(Ok(value)) => Ok(value),
        }
    }

    /// `ask_user` through `elicitation/create` (a form with one field per question).
    async fn elicit(&self, params: &AskUserParams) -> Result<AskUserResult, ClientError> {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (i, q) in params.questions.iter().enumerate() {
            let key = format!("q{}", i + 1);
            let options: Vec<Value> = q
                .options
                .iter()
                .map(|o| json!({ "const": o.label, "title": o.label, "description": o.description }))
                .collect();
            let title = if q.header.is_empty() { q.question.clone() } else { q.header.clone() };
            let schema = match (options.is_empty(), q.multi_select) {
                (true, _) => json!({ "type": "string", "title": title, "description": q.question }),
                (false, false) => {
                    json!({ "type": "string", "title": title, "description": q.question, "oneOf": options })
                }
                (false, true) => {
                    json!({ "type": "array", "title": title, "description": q.question, "items": { "anyOf": options } })
                }
            };
            properties.insert(key.clone(), schema);
            required.push(key);
        }
        let message = params.questions.iter().map(|q| q.question.as_str()).collect::<Vec<_>>().join("\n");
        let session_id = top_session(&params.session_id);
        let tool_call_id = self.running.lock().get(session_id).cloned();
        let request = json!({
            "sessionId": session_id,
            "toolCallId": tool_call_id,
            "mode": "form",
            "message": message,
            "requestedSchema": { "type": "object", "properties": properties, "required": required },
        });
        // The person takes their time: the agent bounds the wait and cancels.
        let answer = self.call("elicitation/create", request, Duration::from_secs(3600)).await?;
        match answer.get("action").and_then(Value::as_str) {
            Some("accept") => {
                let content = answer.get("content").cloned().unwrap_or(Value::Null);
                let answers = (1..=params.questions.len())
                    .map(|i| match content.get(format!("q{i}")) {
                        Some(Value::String(s)) => vec![s.clone()],
                        Some(Value::Array(items)) => {
                            items.iter().filter_map(Value::as_str).map(str::to_owned).collect()
                        }
                        Some(other) if !other.is_null() => vec![other.to_string()],
                        _ => Vec::new(),
                    })
                    .collect();
                Ok(AskUserResult { answers: Some(answers), cancelled: None })
            }
            Some("decline" | "cancel") => Ok(AskUserResult { answers: None, cancelled: Some(true) }),
            other => {
                Err(ClientError::InvalidAnswer(format!("elicitation/create answered with an unknown action {other:?}")))
            }
        }
    }
}

impl AcpClient {
    /// Without elicitation, one single-choice question is asked as a permission request whose
    /// options are the answers (every ACP client shows those); anything else cannot be asked.
    async fn ask_as_permission(&self, params: &AskUserParams) -> Result<AskUserResult, ClientError> {
        const CANNOT: &str = "this editor cannot show questions with free or multiple answers (no ACP elicitation support): ask in your answer instead and end the turn";
        let cannot = || ClientError::Unavailable(CANNOT.to_owned());
        let [question] = params.questions.as_slice() else { return Err(cannot()) };
        if question.options.is_empty() || question.multi_select {
            return Err(cannot());
        }
        let session_id = top_session(&params.session_id).to_owned();
        let tool_call_id = self
            .running
            .lock()
            .get(&session_id)
            .cloned()
            .ok_or_else(|| ClientError::Unavailable("no tool call is running to ask from".to_owned()))?;
        let mut text = question.question.clone();
        for option in question.options.iter().filter(|o| !o.description.is_empty()) {
            text.push_str(&format!("\n- {}: {}", option.label, option.description));
        }
        let mut options: Vec<Value> = question
            .options
            .iter()
            .enumerate()
            .map(|(i, o)| json!({ "optionId": format!("answer-{i}"), "name": o.label, "kind": "allow_once" }))
            .collect();
        options.push(json!({ "optionId": "dismiss", "name": "Dismiss", "kind": "reject_once" }));
        let request = json!({
            "sessionId": session_id,
            "toolCall": {
                "toolCallId": tool_call_id,
                "title": question.question,
                "kind": "other",
                "status": "pending",
                "content": [{ "type": "content", "content": { "type": "text", "text": text } }],
            },
            "options": options,
        });
        let answer = self
            .conn
            .request("session/request_permission", request)
            .await
            .map_err(|err| rpc_message("session/request_permission", err))?;
        let chosen = answer.pointer("/outcome/optionId").and_then(Value::as_str).unwrap_or("dismiss");
        let label = chosen
            .strip_prefix("answer-")
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| question.options.get(i))
            .map(|o| o.label.clone());
        Ok(match label {
            Some(label) => AskUserResult { answers: Some(vec![vec![label]]), cancelled: None },
            None => AskUserResult { answers: None, cancelled: Some(true) },
        })
    }
}

#[async_trait]
impl SessionClient for AcpClient {
    async fn update(&self, session_id: &str, update: SessionUpdate) {
        self.send_update(session_id, &update);
    }

    async fn request_permission(
        &self,
        params: RequestPermissionParams,
    ) -> Result<RequestPermissionResult, ClientError> {
        let mut params = params;
        params.session_id = top_session(&params.session_id).to_owned();
        // No timeout here: the approver bounds the wait and cancels.
        let answer = self
            .conn
            .request("session/request_permission", mapping::permission_request(&params))
            .await
            .map_err(|err| rpc_message("session/request_permission", err))?;
        mapping::permission_result(&answer)
    }

    async fn ask_user(&self, params: AskUserParams) -> Result<AskUserResult, ClientError> {
        if self.caps.elicitation_form {
            return self.elicit(&params).await;
        }
        self.ask_as_permission(&params).await
    }
}

/// Kills and releases a terminal when its command is abandoned (the turn was cancelled).
struct TerminalGuard {
    conn: Arc<Connection>,
    session_id: String,
    terminal_id: String,
    done: bool,
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let conn = Arc::clone(&self.conn);
        let params = json!({ "sessionId": self.session_id, "terminalId": self.terminal_id });
        tokio::spawn(async move {
            let _kill = tokio::time::timeout(FILE_REQUEST_TIMEOUT, conn.request("terminal/kill", params.clone())).await;
            let _release = tokio::time::timeout(FILE_REQUEST_TIMEOUT, conn.request("terminal/release", params)).await;
        });
    }
}

#[async_trait]
impl EditorClient for AcpClient {
    fn position_encoding(&self) -> PositionEncoding {
        PositionEncoding::Utf16
    }

    // ACP has no buffer-level edits: nothing is in the buffer cache, so tools never ask.
    async fn apply_edit(&self, edit: DocumentEdit) -> Result<bool, EditorError> {
        Err(EditorError::Unsupported(format!(
            "ACP clients take whole-file writes, not edits of {}",
            edit.path.display()
        )))
    }

    async fn save(&self, _path: &Path) -> Result<bool, EditorError> {
        Ok(false)
    }

    fn reads_files(&self) -> bool {
        self.caps.read_text_file
    }

    async fn read_file(&self, session_id: Option<&str>, path: &Path) -> Result<String, EditorError> {
        const METHOD: &str = "fs/read_text_file";
        let session_id = session_id.map(top_session).ok_or(EditorError::NoSession { what: "file read" })?;
        let params = json!({ "sessionId": session_id, "path": path });
        let answer = self.editor_call(METHOD, params, FILE_REQUEST_TIMEOUT).await?;
        answer
            .get("content")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .ok_or(EditorError::InvalidAnswer { method: METHOD.to_owned(), field: "content" })
    }

    fn writes_files(&self) -> bool {
        self.caps.write_text_file
    }

    async fn write_file(&self, session_id: Option<&str>, path: &Path, text: &str) -> Result<(), EditorError> {
        let session_id = session_id.map(top_session).ok_or(EditorError::NoSession { what: "file write" })?;
        let params = json!({ "sessionId": session_id, "path": path, "content": text });
        self.editor_call("fs/write_text_file", params, FILE_REQUEST_TIMEOUT).await.map(|_| ())
    }

    fn runs_commands(&self) -> bool {
        self.caps.terminal
    }

    async fn run_command(&self, run: CommandRun) -> Result<CommandOutcome, EditorError> {
        let session_id =
            run.session_id.as_deref().map(top_session).ok_or(EditorError::NoSession { what: "command" })?.to_owned();
        let mut argv = run.wrapper.clone();
        argv.extend(["bash".to_owned(), "-c".to_owned(), run.command.clone()]);
        let (program, args) = argv.split_first().ok_or_else(|| EditorError::Unsupported("an empty command".into()))?;
        let created = self
            .editor_call(
                "terminal/create",
                json!({
                    "sessionId": session_id,
                    "command": program,
                    "args": args,
                    "env": [],
                    "cwd": run.cwd,
                    "outputByteLimit": run.output_byte_limit,
                }),
                FILE_REQUEST_TIMEOUT,
            )
            .await?;
        let terminal_id = created
            .get("terminalId")
            .and_then(Value::as_str)
            .ok_or(EditorError::InvalidAnswer { method: "terminal/create".into(), field: "terminalId" })?
            .to_owned();
        let mut guard = TerminalGuard {
            conn: Arc::clone(&self.conn),
            session_id: session_id.clone(),
            terminal_id: terminal_id.clone(),
            done: false,
        };
        // Show the live terminal in the tool call's card.
        if let Some(tool_call_id) = &run.tool_call_id {
            self.send_update(
                &session_id,
                &SessionUpdate::ToolCallUpdate(ToolCallUpdate {
                    tool_call_id: tool_call_id.clone(),
                    content: Some(vec![ToolCallContent::Terminal { terminal_id: terminal_id.clone() }]),
                    ..Default::default()
                }),
            );
        }
        let ids = json!({ "sessionId": session_id, "terminalId": terminal_id });
        let waited = tokio::time::timeout(run.timeout, self.conn.request("terminal/wait_for_exit", ids.clone())).await;
        let timed_out = waited.is_err();
        if timed_out {
            self.editor_call("terminal/kill", ids.clone(), TERMINAL_GRACE).await?;
        }
        if let Ok(Err(err)) = waited {
            return Err(editor_error("terminal/wait_for_exit", err));
        }
        let output = self.editor_call("terminal/output", ids.clone(), TERMINAL_GRACE).await?;
        guard.done = true;
        if let Err(err) = self.call("terminal/release", ids, TERMINAL_GRACE).await {
            tracing::warn!("{err}");
        }
        let status = output.get("exitStatus").cloned().unwrap_or(Value::Null);
        let exit_code = status.get("exitCode").and_then(Value::as_i64).and_then(|c| i32::try_from(c).ok());
        let signal = status.get("signal").and_then(Value::as_str).map(str::to_owned);
        Ok(CommandOutcome {
            output: output.get("output").and_then(Value::as_str).unwrap_or_default().to_owned(),
            truncated: output.get("truncated").and_then(Value::as_bool).unwrap_or(false),
            exit_code: if timed_out { None } else { exit_code },
            signal,
            timed_out,
            terminal_id,
        })
    }
}
