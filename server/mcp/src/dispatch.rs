//! One MCP call through the resilience chain, as stages: loop check → gate (approval) →
//! circuit breaker → bulkhead → call → classified retry → result, or degradation (a cached
//! identical read-only result, clearly marked; else an error naming the server's state). Each
//! stage is a small function of [`Call`]; [`call`] runs them in order.

use std::collections::{HashMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{Map, Value};
use tandem_tool_api::{CommandDecision, ToolCheck, ToolContext, ToolError, ToolOutput};
use tokio::sync::OwnedSemaphorePermit;

use crate::resilience::{Admission, FailureClass, backoff};
use crate::server::{Failure, McpServer, RemoteTool};

/// Retries of a transient failure (so at most 3 attempts).
const MAX_RETRIES: u32 = 2;
/// The same tool with the same arguments this many times among a session's last
/// [`LOOP_WINDOW`] calls is refused.
const LOOP_REPEATS: usize = 3;
const LOOP_WINDOW: usize = 6;
/// Results kept for the degradation chain.
const CACHE_ENTRIES: usize = 128;

/// A cached result.
#[derive(Clone, Debug)]
struct Cached {
    output: String,
    at: SystemTime,
}

/// The latest results of read-only calls by tool and arguments (at most [`CACHE_ENTRIES`],
/// the oldest dropped first): what the degradation chain serves when the server fails.
#[derive(Debug, Default)]
pub(crate) struct ResultCache {
    entries: HashMap<String, Cached>,
    order: VecDeque<String>,
}

impl ResultCache {
    fn get(&self, key: &str) -> Option<Cached> {
        self.entries.get(key).cloned()
    }

    fn put(&mut self, key: &str, output: String) {
        if self.entries.insert(key.to_owned(), Cached { output, at: SystemTime::now() }).is_none() {
            self.order.push_back(key.to_owned());
            if self.order.len() > CACHE_ENTRIES
                && let Some(old) = self.order.pop_front()
            {
                self.entries.remove(&old);
            }
        }
    }
}

/// What the chain needs of the client around it (the manager): where servers run, the
/// session's recent calls, the result cache, and where each outcome is recorded.
pub(crate) trait Ledger: Send + Sync {
    /// The workspace root (stdio servers start there).
    fn root(&self) -> &Path;
    /// A number not handed out before (for idempotency keys).
    fn next_key(&self) -> u64;
    /// How many of `session`'s last `window` calls had this tool and these arguments (`key`).
    fn repeats(&self, session: &str, key: &str, window: usize) -> usize;
    /// The results of read-only calls, for degradation.
    fn cache(&self) -> &parking_lot::Mutex<ResultCache>;
    /// Records how a call ended (ranking, the session's calls, the tracking files).
    #[expect(clippy::too_many_arguments, reason = "one call's outcome, recorded in three places")]
    fn finish(&self, ctx: &ToolContext, tool: &str, key: &str, arguments: &Value, status: &str, ok: bool, ms: u64);
}

/// Calls `remote` of `server` on behalf of `ctx`.
pub(crate) async fn call(
    manager: &dyn Ledger,
    server: &McpServer,
    remote: &RemoteTool,
    arguments: Value,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let mut call = Call::new(manager, server, remote, arguments, ctx);
    call.loop_check()?;
    call.gate().await?;
    match call.send().await {
        Ok(result) => call.succeeded(&result),
        Err(failure) => call.degrade(failure).await,
    }
}

/// One call on its way through the chain.
struct Call<'a> {
    manager: &'a dyn Ledger,
    server: &'a McpServer,
    remote: &'a RemoteTool,
    arguments: Value,
    ctx: &'a ToolContext,
    /// Tool and arguments: what loop detection and the result cache compare.
    key: String,
    started: Instant,
    /// The call's timeout, from its start: waiting for a bulkhead slot counts against it.
    deadline: Instant,
    /// Sent with every attempt, so a server can recognise a retry.
    idempotency_key: String,
    /// Retries made so far.
    retries: u32,
}

impl<'a> Call<'a> {
    fn new(
        manager: &'a dyn Ledger,
        server: &'a McpServer,
        remote: &'a RemoteTool,
        arguments: Value,
        ctx: &'a ToolContext,
    ) -> Self {
        let started = Instant::now();
        let session = ctx.session_id.as_deref().unwrap_or("cli");
        let n = manager.next_key();
        Self {
            key: format!("{}\u{0}{arguments}", remote.exposed),
            idempotency_key: format!("tandem-{}-{session}-{n}", std::process::id()),
            deadline: started + server.config.timeout,
            manager,
            server,
            remote,
            arguments,
            ctx,
            started,
            retries: 0,
        }
    }

    fn tool(&self) -> &str {
        &self.remote.exposed
    }

    /// Records how the call ended (ranking, the session's calls, the tracking files).
    fn finish(&self, status: &str, ok: bool, ms: u64) {
        self.manager.finish(self.ctx, self.tool(), &self.key, &self.arguments, status, ok, ms);
    }

    fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// Loop detection: the same call again and again will not give another answer.
    fn loop_check(&self) -> Result<(), ToolError> {
        let session = self.ctx.session_id.as_deref().unwrap_or("cli");
        let repeats = self.manager.repeats(session, &self.key, LOOP_WINDOW);
        if repeats < LOOP_REPEATS {
            return Ok(());
        }
        self.finish("refused (loop)", false, 0);
        Err(ToolError::new(format!(
            "`{}` was already called {repeats} times with these exact arguments in this session; calling it again will not change the answer. Use the earlier result, change the arguments, or try another approach",
            self.tool()
        ))
        .with("loopDetected", true))
    }

    /// Approval: tools that do not declare themselves read-only ask like a command.
    async fn gate(&self) -> Result<(), ToolError> {
        let tool = self.tool();
        let Some(approver) = self.ctx.approver.as_ref().filter(|_| !self.remote.read_only) else { return Ok(()) };
        let check = ToolCheck {
            tool: tool.to_owned(),
            server: Some(self.server.name().to_owned()),
            arguments: self.arguments.clone(),
            reason: "the server does not mark this tool read-only, so it may change things".to_owned(),
        };
        match approver.confirm_tool(&check).await {
            CommandDecision::Allow => Ok(()),
            CommandDecision::Reject { reason } => {
                self.finish("rejected by the person", false, 0);
                let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
                Err(ToolError::new(format!(
                    "the person did not allow `{tool}` to run{why}. Do not retry it unchanged; ask or take another approach"
                )))
            }
            CommandDecision::Cancelled => Err(ToolError::new("cancelled while waiting for approval")),
            // Only a command can run in a sandbox: fail closed if an approver offers it here.
            CommandDecision::RunSandboxed => {
                Err(ToolError::new(format!("`{tool}` cannot run in a sandbox and was not approved")))
            }
        }
    }

    /// Breaker → bulkhead → call, retried while [`Call::retry_delay`] allows.
    async fn send(&mut self) -> Result<Value, Failure> {
        loop {
            let probe = self.breaker().await?;
            let permit = self.bulkhead(probe).await?;
            // Queueing for a slot counted against the timeout; a (re)connection does not.
            let left = self.deadline.saturating_duration_since(Instant::now());
            let result = self
                .server
                .call_once(self.manager.root(), &self.remote.name, self.arguments.clone(), &self.idempotency_key, left)
                .await;
            drop(permit);
            match result {
                Ok(result) => {
                    self.server.breaker().success();
                    self.server.set_error(None);
                    return Ok(serde_json::to_value(&result).unwrap_or_default());
                }
                Err(failure) => {
                    let Some(delay) = self.retry_delay(&failure) else { return Err(failure) };
                    self.retries += 1;
                    tracing::info!(
                        server = self.server.name(),
                        attempt = self.retries,
                        ?delay,
                        "retrying: {}",
                        failure.message
                    );
                    tokio::time::sleep(delay).await;
                }
            }
        }
    }

    /// The circuit breaker: whether this attempt is the half-open probe, or a failure at once
    /// when the circuit is open.
    async fn breaker(&self) -> Result<bool, Failure> {
        // The breaker's lock is released before anything awaits.
        let admission = self.server.breaker().admit(Instant::now());
        match admission {
            Admission::Go => Ok(false),
            Admission::Probe => Ok(true),
            Admission::Reject(wait) => {
                let health = self.server.health().await;
                Err(Failure {
                    class: FailureClass::Transient,
                    message: format!(
                        "the circuit is open after repeated failures, so the call was not sent (next probe in {:.1}s; last error: {})",
                        wait.as_secs_f64(),
                        health.last_error.unwrap_or_default()
                    ),
                    reached: false,
                })
            }
        }
    }

    /// The bulkhead: a call slot, waited for until the deadline.
    async fn bulkhead(&self, probe: bool) -> Result<OwnedSemaphorePermit, Failure> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, Arc::clone(&self.server.bulkhead).acquire_owned()).await {
            Ok(Ok(permit)) => Ok(permit),
            _ => {
                if probe {
                    self.server.breaker().probe_abandoned(Instant::now());
                }
                Err(Failure {
                    class: FailureClass::Server,
                    message: format!(
                        "all {} call slots (max_concurrent) stayed busy for {:.1}s",
                        self.server.config.max_concurrent,
                        self.server.config.timeout.as_secs_f64()
                    ),
                    reached: false,
                })
            }
        }
    }

    /// Records a failed attempt with the breaker and the server; how long to wait before the
    /// next attempt, or `None` when the failure is final: not transient, not safe to repeat
    /// (it reached the server and the tool is neither read-only nor idempotent), out of
    /// retries or time, or the circuit just opened.
    fn retry_delay(&self, failure: &Failure) -> Option<Duration> {
        let opened = self.server.breaker().failure(failure.class, Instant::now());
        if opened {
            tracing::warn!(server = self.server.name(), "circuit opened: {}", failure.message);
        }
        if failure.class != FailureClass::Client {
            self.server.set_error(Some(failure.message.clone()));
        }
        let safe = !failure.reached || self.remote.idempotent;
        let seed = self.started.elapsed().as_nanos() as u64 ^ u64::from(self.retries);
        let delay = backoff(self.retries + 1, seed);
        let time_left = self.deadline.saturating_duration_since(Instant::now()) > delay;
        let retry =
            failure.class == FailureClass::Transient && safe && self.retries < MAX_RETRIES && time_left && !opened;
        retry.then_some(delay)
    }

    /// The server, tool, attempts and idempotency key, added to a result's metadata.
    fn meta(&self, mut out: Map<String, Value>) -> Map<String, Value> {
        out.insert("server".into(), self.server.name().into());
        out.insert("tool".into(), self.remote.name.clone().into());
        out.insert("attempts".into(), (self.retries + 1).into());
        out.insert("idempotencyKey".into(), self.idempotency_key.clone().into());
        out
    }

    /// A result: redacted like a command's output before the model, the session store or the
    /// editor see it; an error when the server marked it as one; cached when the tool only reads.
    fn succeeded(&self, result: &Value) -> Result<ToolOutput, ToolError> {
        let ms = self.elapsed_ms();
        let tool = self.tool();
        self.server.count(true);
        let text = tandem_tool_exec::redact::redact(&result_text(result)).text;
        if result.get("isError").and_then(Value::as_bool).unwrap_or(false) {
            self.finish("tool error", false, ms);
            let mut error = ToolError::new(format!("`{tool}` reported an error: {text}"));
            error.metadata = self.meta(error.metadata);
            return Err(error);
        }
        self.finish("ok", true, ms);
        if self.remote.read_only {
            self.manager.cache().lock().put(&self.key, text.clone());
        }
        let mut out = ToolOutput::new(tool, text);
        if let Some(structured) = result.get("structuredContent") {
            out.metadata.insert("structuredContent".into(), structured.clone());
        }
        out.metadata = self.meta(out.metadata);
        Ok(out)
    }

    /// Degradation: an identical earlier read-only call's result, marked as such; else an
    /// error that names the server's state and what to do.
    async fn degrade(&self, failure: Failure) -> Result<ToolOutput, ToolError> {
        let ms = self.elapsed_ms();
        let tool = self.tool();
        self.server.count(false);
        let state = self.server.health().await.state;
        let cached = self.manager.cache().lock().get(&self.key);
        if failure.class != FailureClass::Client
            && let Some(cached) = cached
        {
            self.finish("served from cache", false, ms);
            let age = cached.at.elapsed().map_or(0, |d| d.as_secs());
            let text = format!(
                "[CACHED RESULT from {age}s ago: MCP server `{}` failed now ({}; state: {state}). This may be out of date.]\n{}",
                self.server.name(),
                failure.message,
                cached.output
            );
            let mut out = ToolOutput::new(format!("{tool} (cached)"), text).with("cached", true);
            out.metadata = self.meta(out.metadata);
            return Ok(out);
        }
        self.finish(&format!("failed ({})", failure.class.as_str()), false, ms);
        let mut error = failure_error(self.server, tool, &failure, &state);
        error.metadata = self.meta(error.metadata);
        Err(error)
    }
}

/// What a failed call returns to the model.
fn failure_error(server: &McpServer, tool: &str, failure: &Failure, state: &str) -> ToolError {
    let next = match failure.class {
        FailureClass::Client => "Check the arguments against the tool's schema (mcp_discover shows it) and try again",
        FailureClass::Transient | FailureClass::Server => {
            "Try again later, use another tool, or ask the person to check the server (`tandem doctor`)"
        }
    };
    ToolError::new(format!(
        "MCP server `{}` could not run `{tool}`: {} ({} error; server state: {state}). {next}.",
        server.name(),
        failure.message,
        failure.class.as_str()
    ))
    .with("server", server.name())
    .with("errorClass", failure.class.as_str())
    .with("serverState", state)
}

/// The text of a `tools/call` result: text blocks as they are, other blocks described.
fn result_text(result: &Value) -> String {
    let mut parts = Vec::new();
    for block in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        let field = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or_default();
        match field("type") {
            "text" => parts.push(field("text").to_owned()),
            "image" | "audio" => parts.push(format!(
                "[{} {}, {} bytes of base64]",
                field("type"),
                field("mimeType"),
                field("data").len()
            )),
            "resource" => {
                let resource = block.get("resource").cloned().unwrap_or_default();
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => parts.push(text.to_owned()),
                    None => parts.push(format!(
                        "[resource {}]",
                        resource.get("uri").and_then(Value::as_str).unwrap_or_default()
                    )),
                }
            }
            "resource_link" => parts.push(format!("[resource link: {} {}]", field("uri"), field("name"))),
            other => parts.push(format!("[{other} content]")),
        }
    }
    if parts.is_empty()
        && let Some(structured) = result.get("structuredContent")
    {
        return serde_json::to_string_pretty(structured).unwrap_or_default();
    }
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn result_text_describes_every_block() {
        let result = json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "file:///a", "text": "inside"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"}
        ]});
        assert_eq!(
            result_text(&result),
            "hello\n[image image/png, 4 bytes of base64]\ninside\n[resource link: file:///b b]"
        );
        assert_eq!(result_text(&json!({"content": [], "structuredContent": {"a": 1}})), "{\n  \"a\": 1\n}");
    }
}
