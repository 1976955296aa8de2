//! `tandem mcp`: Tandem's own tools as an MCP server over stdio, so other agents use the
//! buffer-staged edits, confinement and search. The registry's profile decides which tools are
//! listed (MCP tools of other servers are not re-exported). Writes and commands that are not
//! known to be read-only are refused unless the server runs with `--allow-writes`.

use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool as McpToolDef,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tandem_policy::{HookEvent, Verdict};
use tandem_protocol::{DiagnosticsPreview, ToolGroup};
use tandem_tool_api::{
    Approver, ChangeDecision, CommandCheck, CommandDecision, Effect, Registry, StagedFile, ToolContext,
};

/// Refuses or allows writes and commands for `tandem mcp`, after the person's rules: a deny
/// rule refuses in any case, and so does an ask rule (nobody can be asked here).
pub struct ServeApprover {
    allow_writes: bool,
    /// The person's rules and the tool being called (its canonical name).
    policy: Option<(Arc<tandem_policy::Policy>, String)>,
}

const REFUSED: &str = "tandem mcp was started without --allow-writes, so changes and commands that are not read-only are refused; restart it with `tandem mcp --allow-writes` to allow them";

impl ServeApprover {
    /// The rules' refusal of a call, if they refuse it.
    fn refused(&self, verdict: impl FnOnce(&tandem_policy::Rules, &str) -> Verdict) -> Option<String> {
        let (policy, tool) = self.policy.as_ref()?;
        match verdict(&policy.rules(), tool) {
            Verdict::Deny { reason } => Some(reason),
            Verdict::Ask { reason } => Some(format!("{reason}, and tandem mcp cannot ask the person")),
            Verdict::Allow { .. } | Verdict::Unruled => None,
        }
    }
}

#[async_trait]
impl Approver for ServeApprover {
    async fn review_changes(&self, files: &[StagedFile], _: Option<&DiagnosticsPreview>) -> ChangeDecision {
        let paths: Vec<std::path::PathBuf> =
            files.iter().flat_map(|f| std::iter::once(f.path.clone()).chain(f.moved_to.clone())).collect();
        if let Some(reason) = self.refused(|rules, tool| rules.decide_paths(tool, &paths)) {
            return ChangeDecision::Reject { reason: Some(reason) };
        }
        if self.allow_writes {
            ChangeDecision::Accept { hunks: None }
        } else {
            ChangeDecision::Reject { reason: Some(REFUSED.into()) }
        }
    }

    async fn confirm_command(&self, check: &CommandCheck) -> CommandDecision {
        let parts = tandem_tool_exec::safety::parts(&check.command);
        let cwd = self.policy.as_ref().map(|(p, _)| p.rules().root().join(&check.working_dir)).unwrap_or_default();
        if let Some(reason) = self.refused(|rules, tool| rules.decide_command(tool, parts.as_deref(), &cwd)) {
            return CommandDecision::Reject { reason: Some(reason) };
        }
        if self.allow_writes || check.needs_approval.is_none() {
            CommandDecision::Allow
        } else {
            CommandDecision::Reject { reason: Some(REFUSED.into()) }
        }
    }

    async fn confirm_tool(&self, check: &tandem_tool_api::ToolCheck) -> CommandDecision {
        if let Some(reason) = self.refused(|rules, _| rules.decide_tool(&check.tool)) {
            return CommandDecision::Reject { reason: Some(reason) };
        }
        if self.allow_writes {
            CommandDecision::Allow
        } else {
            CommandDecision::Reject { reason: Some(REFUSED.into()) }
        }
    }
}

/// MCP tool annotations, from the tool's declared effect. `destructiveHint` and
/// `idempotentHint` only mean something for a tool that is not read-only (MCP spec).
/// `tandem tools --json` prints the same, so the command line and MCP clients agree.
pub fn annotations(spec: &tandem_tool_api::ToolSpec) -> Value {
    let read_only = spec.effect.is_read_only();
    let open_world = matches!(spec.effect, Effect::Network | Effect::Commands | Effect::External);
    if read_only {
        json!({ "readOnlyHint": true, "openWorldHint": open_world })
    } else {
        json!({ "readOnlyHint": false, "destructiveHint": spec.destructive, "openWorldHint": open_world })
    }
}

/// Why `tandem mcp` stopped serving.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The client's `initialize` did not complete.
    #[error("MCP handshake failed: {0}")]
    Handshake(String),
    /// The connection failed while serving.
    #[error("MCP server stopped: {0}")]
    Stopped(String),
}

/// The MCP server.
pub struct TandemServer {
    registry: Arc<Registry>,
    ctx: ToolContext,
    allow_writes: bool,
    /// The person's rules and hooks (none: only `allow_writes` decides).
    policy: Option<Arc<tandem_policy::Policy>>,
}

impl TandemServer {
    /// Serves `registry`'s tools, each call run with a clone of `ctx` (whose approver is replaced
    /// by one that follows `allow_writes`).
    pub fn new(registry: Arc<Registry>, mut ctx: ToolContext, allow_writes: bool) -> Self {
        ctx.approver = Some(Arc::new(ServeApprover { allow_writes, policy: None }));
        // One client per process (stdio): its reads are stamped like a session's, and a file
        // it has not read (or that changed since) is not changed.
        ctx.session_id = Some(format!("mcp-{}", std::process::id()));
        ctx.require_read = true;
        ctx.user_confirmed = false;
        Self { registry, ctx, allow_writes, policy: None }
    }

    /// Applies the person's rules and `PreToolUse` / `PostToolUse` hooks to every call.
    pub fn with_policy(mut self, policy: Arc<tandem_policy::Policy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// The hooks of `event` for a call of `tool`, with the call's input (and its result).
    async fn hooks(
        &self,
        event: HookEvent,
        tool: &str,
        arguments: &Value,
        response: Option<Value>,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> tandem_policy::HookOutcome {
        let Some(policy) = self.policy.as_ref().filter(|p| p.hooks.any(event, Some(tool))) else {
            return tandem_policy::HookOutcome::default();
        };
        let root = self.ctx.workspace.root().to_path_buf();
        let mut input = json!({
            "session_id": self.ctx.session_id,
            "cwd": self.ctx.working_dir,
            "hook_event_name": event.as_str(),
            "permission_mode": if self.allow_writes { "allow-writes" } else { "read-only" },
            "tool_name": tandem_policy::hooks::claude_name(tool).unwrap_or(tool),
            "tandem_tool_name": tool,
            "tool_input": arguments,
        });
        if let Some(response) = response {
            input["tool_response"] = response;
        }
        policy.hooks.run(event, Some(tool), &input, &root, cancel).await
    }

    fn definitions(&self) -> Vec<McpToolDef> {
        self.registry
            .enabled()
            .filter(|t| t.spec().group != ToolGroup::Mcp)
            .filter_map(|t| {
                let spec = t.spec();
                let read_only = spec.effect.is_read_only();
                let mut description = spec.description.to_owned();
                if !read_only && !self.allow_writes {
                    description.push_str(" (In this server, changes and non-read-only commands are refused: it runs without --allow-writes.)");
                }
                serde_json::from_value(json!({
                    "name": spec.name,
                    "description": description,
                    "inputSchema": spec.parameters,
                    "annotations": annotations(spec),
                }))
                .ok()
            })
            .collect()
    }

    /// Serves over stdin/stdout until the client disconnects.
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve_io(tokio::io::stdin(), tokio::io::stdout()).await
    }

    /// Serves over `input`/`output` (newline-delimited JSON-RPC) until the input ends. Lines
    /// are checked before the SDK sees them: a line that is not JSON gets a -32700 error and a
    /// request that is not JSON-RPC 2.0 a -32600 error, as JSON-RPC says, instead of being
    /// dropped (the client would wait forever).
    pub async fn serve_io(
        self,
        input: impl tokio::io::AsyncRead + Unpin + Send + 'static,
        output: impl tokio::io::AsyncWrite + Unpin + Send + 'static,
    ) -> Result<(), ServeError> {
        let (sdk_in, mut feed) = tokio::io::duplex(1 << 16);
        let (sdk_out, from_sdk) = tokio::io::duplex(1 << 16);
        let (errors, error_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        let reader = tokio::spawn(async move {
            use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
            let mut input = tokio::io::BufReader::new(input);
            let mut line = Vec::new();
            loop {
                line.clear();
                match input.read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                match check_line(line.trim_ascii()) {
                    Check::Skip => {}
                    Check::Pass => {
                        if !line.ends_with(b"\n") {
                            line.push(b'\n');
                        }
                        if feed.write_all(&line).await.is_err() {
                            break;
                        }
                    }
                    Check::Answer(error) => {
                        errors.send(error).ok();
                    }
                }
            }
            feed.shutdown().await.ok();
        });
        let writer = tokio::spawn(write_out(from_sdk, error_rx, output));
        let (sdk_read, _) = tokio::io::split(sdk_in);
        let (_, sdk_write) = tokio::io::split(sdk_out);
        let service = self.serve((sdk_read, sdk_write)).await.map_err(|e| ServeError::Handshake(e.to_string()))?;
        let served = service.waiting().await.map_err(|e| ServeError::Stopped(e.to_string()));
        reader.abort();
        writer.await.ok();
        served.map(|_| ())
    }
}

/// What to do with one line of input.
enum Check {
    /// A blank line.
    Skip,
    /// For the SDK.
    Pass,
    /// Answered here with this error response (a JSON line).
    Answer(String),
}

fn check_line(line: &[u8]) -> Check {
    if line.is_empty() {
        return Check::Skip;
    }
    let error = |id: &Value, code: i64, message: String| {
        Check::Answer(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string())
    };
    let message: Value = match serde_json::from_slice(line) {
        Ok(message) => message,
        Err(err) => return error(&Value::Null, -32700, format!("parse error: not JSON ({err})")),
    };
    let Some(object) = message.as_object() else {
        return error(&Value::Null, -32600, "invalid request: a message must be a JSON object".to_owned());
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return match object.get("id") {
            Some(id) if object.contains_key("method") => {
                error(id, -32600, "invalid request: `jsonrpc` must be \"2.0\"".to_owned())
            }
            _ => Check::Skip,
        };
    }
    Check::Pass
}

/// Writes the SDK's output and our own error answers, one whole line at a time, until the
/// SDK's output ends.
async fn write_out(
    from_sdk: tokio::io::DuplexStream,
    mut errors: tokio::sync::mpsc::UnboundedReceiver<String>,
    mut output: impl tokio::io::AsyncWrite + Unpin,
) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let mut lines = tokio::io::BufReader::new(from_sdk).lines();
    let mut typed = None;
    loop {
        let line = tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(line)) => with_result_type(line, &mut typed),
                _ => break,
            },
            Some(error) = errors.recv() => error,
        };
        if output.write_all(format!("{line}\n").as_bytes()).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

/// The first protocol version whose results must say what they are (`resultType`).
const RESULT_TYPE_SINCE: &str = "2026-07-28";

/// Adds `"resultType": "complete"` to a result that lacks it, once the protocol negotiated
/// (`typed`: unknown until the `initialize` result goes out) requires it on every result: the
/// SDK sets it on some results but not on `tools/call`'s, and clients of that version reject a
/// result without it.
fn with_result_type(line: String, typed: &mut Option<bool>) -> String {
    // Once an older version was negotiated, nothing is looked at again.
    if *typed == Some(false) || !line.contains("\"result\"") {
        return line;
    }
    let Ok(mut message) = serde_json::from_str::<Value>(&line) else { return line };
    let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else { return line };
    if let Some(version) = result.get("protocolVersion").and_then(Value::as_str)
        && result.contains_key("capabilities")
    {
        *typed = Some(version >= RESULT_TYPE_SINCE);
    }
    if *typed != Some(true) || result.contains_key("resultType") {
        return line;
    }
    result.insert("resultType".to_owned(), Value::from("complete"));
    message.to_string()
}

impl ServerHandler for TandemServer {
    fn get_info(&self) -> ServerConfig {
        let info: Implementation =
            serde_json::from_value(json!({"name": "tandem", "version": env!("CARGO_PKG_VERSION")}))
                .unwrap_or_else(|_| Implementation::from_build_env());
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(info)
            .with_instructions(
                "Tandem's coding tools over a workspace: read, edit (fuzzy but unambiguous matching), multiedit, apply_patch, glob, grep, bash … Paths are relative to the workspace root. Read a file before changing it.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.definitions()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if self.registry.find(&name).is_some_and(|t| t.spec().group == ToolGroup::Mcp) {
            return Err(ErrorData::invalid_params(format!("unknown tool `{name}`"), None));
        }
        let arguments = request.arguments.map(Value::Object).unwrap_or_else(|| json!({}));
        let tool = self.registry.find(&name).map_or_else(|| name.clone(), |t| t.spec().name.to_owned());
        let mut ctx = self.ctx.clone();
        if let Some(policy) = &self.policy {
            let resolve = |raw: &str| ctx.workspace.resolve(raw, &ctx.working_dir).ok();
            let verdict = policy.rules().decide_call(
                &tool,
                &arguments,
                &ctx.working_dir,
                &resolve,
                &tandem_tool_exec::safety::parts,
            );
            let refused = match verdict {
                Verdict::Deny { reason } => Some(reason),
                Verdict::Ask { reason } => Some(format!("{reason}, and tandem mcp cannot ask the person")),
                Verdict::Allow { .. } | Verdict::Unruled => None,
            };
            if let Some(reason) = refused {
                return Ok(CallToolResponse::Complete(error_result(format!("`{tool}` was not run: {reason}"))));
            }
            ctx.approver = Some(Arc::new(ServeApprover {
                allow_writes: self.allow_writes,
                policy: Some((Arc::clone(policy), tool.clone())),
            }));
        }
        let pre = self.hooks(HookEvent::PreToolUse, &tool, &arguments, None, &context.ct).await;
        if let Some(block) = pre.block {
            return Ok(CallToolResponse::Complete(error_result(format!("`{tool}` was not run: {block}"))));
        }
        let hook_arguments = arguments.clone();
        // `notifications/cancelled` stops a command (its process group) or an MCP call at once;
        // file tools finish what they started, so a multi-file change is never cut in half.
        let cancellable =
            self.registry.find(&name).is_some_and(|t| matches!(t.spec().group, ToolGroup::Exec | ToolGroup::Mcp));
        let call = self.registry.call(&name, arguments, ctx);
        let outcome = if cancellable {
            tokio::select! {
                outcome = call => outcome,
                () = context.ct.cancelled() => {
                    return Err(ErrorData::internal_error(format!("`{name}` was cancelled by the client"), None));
                }
            }
        } else {
            call.await
        };
        let result = match outcome {
            Ok(result) => result,
            Err(err) => return Err(ErrorData::invalid_params(err.to_string(), None)),
        };
        let is_error = result.error.is_some();
        let mut text = match &result.error {
            Some(error) => format!("Error: {error}"),
            None => result.output.clone(),
        };
        let response =
            json!({ "output": result.output, "error": result.error, "success": !is_error, "title": result.title });
        let post = self.hooks(HookEvent::PostToolUse, &tool, &hook_arguments, Some(response), &context.ct).await;
        if let Some(block) = &post.block {
            text.push_str(&format!("\n\n[{block}]"));
        }
        for context in pre.context.iter().chain(&post.context) {
            text.push_str(&format!("\n\n[Hook context: {context}]"));
        }
        // An image a tool returned (`read` of a PNG) goes as MCP image content, which has the
        // protocol's shape: `{"type": "image", "data", "mimeType"}`.
        let images = result.attachments.iter().filter(|a| a.get("type").and_then(Value::as_str) == Some("image")).map(
            |a| json!({"type": "image", "data": a.get("data").cloned().unwrap_or_default(), "mimeType": a.get("mimeType").cloned().unwrap_or_default()}),
        );
        let content: Vec<Value> = std::iter::once(json!({"type": "text", "text": text})).chain(images).collect();
        let value = json!({
            "content": content,
            "isError": is_error,
            "_meta": {"tandem/title": result.title, "tandem/metadata": result.metadata},
        });
        let result: CallToolResult = serde_json::from_value(value)
            .map_err(|e| ErrorData::internal_error(format!("cannot encode the result: {e}"), None))?;
        Ok(CallToolResponse::Complete(result))
    }
}

/// A failed call's result: the model reads `text`.
fn error_result(text: String) -> CallToolResult {
    let value = json!({ "content": [{ "type": "text", "text": text }], "isError": true });
    serde_json::from_value(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent(lines: &[Value]) -> Vec<Value> {
        let mut typed = None;
        lines
            .iter()
            .map(|l| serde_json::from_str(&with_result_type(l.to_string(), &mut typed)).unwrap_or(Value::Null))
            .collect()
    }

    #[test]
    fn every_result_says_complete_from_2026_07_28_on() {
        let init = |version: &str| json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": version, "capabilities": {}, "serverInfo": {"name": "tandem"}}});
        let call = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "\"result\": x"}], "isError": true}});
        let listed = json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": [], "resultType": "complete"}});
        let error = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "no"}});
        let note = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let new = sent(&[init("2026-07-28"), call.clone(), listed.clone(), error.clone(), note.clone()]);
        assert_eq!(new[0]["result"]["resultType"], "complete");
        assert_eq!(new[1]["result"]["resultType"], "complete", "an error result too");
        assert_eq!(new[1]["result"]["content"], call["result"]["content"]);
        assert_eq!(new[2], listed);
        assert_eq!(new[3], error);
        assert_eq!(new[4], note);
        // Older versions get exactly what the SDK wrote.
        let old = sent(&[init("2025-06-18"), call.clone()]);
        assert!(old[0]["result"].get("resultType").is_none());
        assert_eq!(old[1], call);
    }
}
