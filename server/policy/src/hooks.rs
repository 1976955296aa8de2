//! Hooks: the person's (or a trusted project's) programs run at points of a session, with
//! Claude Code's input and output so that teams' existing scripts work unchanged.
//!
//! - Input: one JSON object on stdin (`session_id`, `cwd`, `hook_event_name`, `tool_name`,
//!   `tool_input`, plus `tool_response` for `PostToolUse` and `prompt` for
//!   `UserPromptSubmit`), built by the caller.
//! - Exit 0 continues; exit 2 blocks, and stderr is the reason; any other status is an error
//!   shown to the person, and the session goes on.
//! - JSON on stdout may say `"decision": "block"` with a `reason`, `"continue": false` with a
//!   `stopReason`, `hookSpecificOutput.permissionDecision` (`allow` / `deny` / `ask`) with a
//!   `permissionDecisionReason`, and `additionalContext` (top level or in
//!   `hookSpecificOutput`). The plain stdout of `UserPromptSubmit` and `SessionStart` is
//!   context for the model.
//! - Each hook runs in its own process group under a timeout, with its output capped; a
//!   cancel or a timeout stops the whole group.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use regex::Regex;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::rule::{Action, Source};

/// When a hook runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum HookEvent {
    /// Before a tool call runs (it may block it, allow it without asking, or make it ask).
    PreToolUse,
    /// After a tool call, with its result.
    PostToolUse,
    /// When the person sends a prompt (it may block it or add context).
    UserPromptSubmit,
    /// When a session starts (its output is context).
    SessionStart,
    /// When the agent is about to end its turn (a block sends it back to work, with the reason).
    Stop,
    /// Before the conversation is compacted.
    PreCompact,
}

impl HookEvent {
    /// Every event, in the order the documentation lists them.
    pub const ALL: [HookEvent; 6] = [
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::SessionStart,
        HookEvent::Stop,
        HookEvent::PreCompact,
    ];

    /// Its name in the configuration and in `hook_event_name`.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::Stop => "Stop",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    /// The event called `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether the plain stdout of a hook of this event is context for the model.
    fn stdout_is_context(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    }
}

/// Claude Code's name of one of Tandem's tools, when it has one (hooks' matchers and
/// `tool_name` use it, so scripts written for Claude Code match).
pub fn claude_name(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "bash" | "run_shell_script" => "Bash",
        "edit" => "Edit",
        "multiedit" => "MultiEdit",
        "write" => "Write",
        "read" => "Read",
        "grep" => "Grep",
        "glob" => "Glob",
        "list" => "LS",
        "webfetch" => "WebFetch",
        "websearch" => "WebSearch",
        "agent" => "Task",
        "todowrite" => "TodoWrite",
        "bash_output" => "BashOutput",
        _ => return None,
    })
}

/// The default time a hook may run.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// How much of a hook's stdout and of its stderr is kept.
pub const OUTPUT_CAP: usize = 64 * 1024;

/// Why a hook's configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// `command` is empty.
    #[error("a {event} hook has an empty `command`")]
    EmptyCommand {
        /// The event.
        event: &'static str,
    },
    /// `matcher` is not a regular expression.
    #[error("the matcher `{pattern}` of a {event} hook is not a valid regex: {source}")]
    Matcher {
        /// As written.
        pattern: String,
        /// The event.
        event: &'static str,
        /// What the regex parser said.
        source: regex::Error,
    },
}

/// One configured hook.
#[derive(Clone, Debug)]
pub struct Hook {
    /// When it runs.
    pub event: HookEvent,
    /// The tool-name pattern as written (empty or `*`: every tool).
    pub matcher: String,
    regex: Option<Regex>,
    /// The shell command (run with `bash -c`, in the project's root).
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// Where it was configured.
    pub source: Source,
}

impl Hook {
    /// A hook for `event`; `matcher` is a regular expression over tool names, matched against
    /// the whole of Tandem's name or Claude Code's (`edit|write`, `Edit|Write`, `mcp__.*`).
    pub fn new(
        event: HookEvent,
        matcher: Option<&str>,
        command: &str,
        timeout_ms: Option<u64>,
        source: Source,
    ) -> Result<Self, HookError> {
        if command.trim().is_empty() {
            return Err(HookError::EmptyCommand { event: event.as_str() });
        }
        let matcher = matcher.unwrap_or("").trim().to_owned();
        let regex = match matcher.as_str() {
            "" | "*" => None,
            pattern => Some(Regex::new(&format!("^(?:{pattern})$")).map_err(|source| HookError::Matcher {
                pattern: pattern.to_owned(),
                event: event.as_str(),
                source,
            })?),
        };
        let timeout = timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis);
        Ok(Self { event, matcher, regex, command: command.to_owned(), timeout, source })
    }

    /// Whether it runs for a call of `tool` (its canonical name); events without a tool
    /// (`tool` is `None`) run every hook of the event.
    pub fn matches(&self, tool: Option<&str>) -> bool {
        match (&self.regex, tool) {
            (None, _) | (_, None) => true,
            (Some(regex), Some(tool)) => regex.is_match(tool) || claude_name(tool).is_some_and(|n| regex.is_match(n)),
        }
    }
}

/// How one run of a hook (or a verify command) went.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookRun {
    /// The command.
    pub command: String,
    /// Its exit status (`None`: it did not finish: timed out, cancelled, or could not start).
    pub exit: Option<i32>,
    /// Its stdout, capped.
    pub stdout: String,
    /// Its stderr, capped.
    pub stderr: String,
    /// Why it did not finish, if it did not.
    pub failure: Option<String>,
}

impl HookRun {
    /// Whether it exited 0.
    pub fn succeeded(&self) -> bool {
        self.exit == Some(0)
    }

    /// A short account for the person: the command, how it ended, and its output.
    pub fn summary(&self) -> String {
        let ended = match (self.exit, &self.failure) {
            (_, Some(failure)) => failure.clone(),
            (Some(code), None) => format!("exit {code}"),
            (None, None) => "did not finish".to_owned(),
        };
        let mut text = format!("$ {}  ({ended})", self.command);
        for stream in [&self.stdout, &self.stderr] {
            let trimmed = stream.trim();
            if !trimmed.is_empty() {
                text.push('\n');
                text.push_str(trimmed);
            }
        }
        text
    }
}

/// What the hooks of one event said together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HookOutcome {
    /// Each hook that ran, in order.
    pub runs: Vec<HookRun>,
    /// A hook blocked: why (for the model), naming the hook.
    pub block: Option<String>,
    /// A `PreToolUse` hook's permission decision (deny is reported as `block`), with its reason.
    pub permission: Option<(Action, Option<String>)>,
    /// Context for the model.
    pub context: Vec<String>,
}

impl HookOutcome {
    /// Whether any hook ran.
    pub fn ran(&self) -> bool {
        !self.runs.is_empty()
    }
}

/// The hooks in force.
#[derive(Clone, Debug, Default)]
pub struct Hooks {
    hooks: Vec<Hook>,
}

impl Hooks {
    /// These hooks.
    pub fn new(hooks: Vec<Hook>) -> Self {
        Self { hooks }
    }

    /// Every hook.
    pub fn all(&self) -> &[Hook] {
        &self.hooks
    }

    /// Whether a hook would run for `event` and `tool`.
    pub fn any(&self, event: HookEvent, tool: Option<&str>) -> bool {
        self.hooks.iter().any(|h| h.event == event && h.matches(tool))
    }

    /// Runs the hooks of `event` that match `tool`, one after another, with `input` on stdin,
    /// in `dir`. A cancel stops the one running and the rest do not start.
    pub async fn run(
        &self,
        event: HookEvent,
        tool: Option<&str>,
        input: &Value,
        dir: &Path,
        cancel: &CancellationToken,
    ) -> HookOutcome {
        let mut outcome = HookOutcome::default();
        let stdin = input.to_string();
        for hook in self.hooks.iter().filter(|h| h.event == event && h.matches(tool)) {
            if cancel.is_cancelled() {
                break;
            }
            let run = run_command(&hook.command, Some(&stdin), dir, hook.timeout, cancel).await;
            interpret(event, hook, &run, &mut outcome);
            outcome.runs.push(run);
        }
        outcome
    }
}

/// Folds what one hook's run says into `outcome`.
fn interpret(event: HookEvent, hook: &Hook, run: &HookRun, outcome: &mut HookOutcome) {
    let who = format!("the {} hook `{}` ({})", event.as_str(), hook.command, hook.source.file);
    match run.exit {
        Some(2) => {
            let reason = run.stderr.trim();
            set_block(
                outcome,
                if reason.is_empty() { format!("blocked by {who}") } else { format!("blocked by {who}: {reason}") },
            );
        }
        Some(0) => {
            let stdout = run.stdout.trim();
            let json = stdout.starts_with('{').then(|| serde_json::from_str::<Value>(stdout).ok()).flatten();
            let Some(json) = json else {
                if event.stdout_is_context() && !stdout.is_empty() {
                    outcome.context.push(stdout.to_owned());
                }
                return;
            };
            let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
            let specific = json.get("hookSpecificOutput").cloned().unwrap_or(Value::Null);
            if json.get("continue").and_then(Value::as_bool) == Some(false) {
                let why = text(&json, "stopReason").unwrap_or_else(|| "it said not to continue".to_owned());
                set_block(outcome, format!("stopped by {who}: {why}"));
            }
            match json.get("decision").and_then(Value::as_str) {
                Some("block") => {
                    let why = text(&json, "reason").unwrap_or_else(|| "no reason given".to_owned());
                    set_block(outcome, format!("blocked by {who}: {why}"));
                }
                Some("approve") => merge_permission(outcome, Action::Allow, text(&json, "reason")),
                _ => {}
            }
            let decision = specific.get("permissionDecision").and_then(Value::as_str);
            let reason = text(&specific, "permissionDecisionReason");
            match decision {
                Some("deny") => {
                    let why = reason.clone().unwrap_or_else(|| "no reason given".to_owned());
                    set_block(outcome, format!("denied by {who}: {why}"));
                    merge_permission(outcome, Action::Deny, reason);
                }
                Some("ask") => merge_permission(outcome, Action::Ask, reason),
                Some("allow") => merge_permission(outcome, Action::Allow, reason),
                _ => {}
            }
            for context in
                [text(&json, "additionalContext"), text(&specific, "additionalContext")].into_iter().flatten()
            {
                if !context.trim().is_empty() {
                    outcome.context.push(context);
                }
            }
        }
        // Another status, a timeout, a failure to start: shown to the person, not blocking.
        _ => {}
    }
}

/// The first hook that blocks gives the reason.
fn set_block(outcome: &mut HookOutcome, reason: String) {
    if outcome.block.is_none() {
        outcome.block = Some(reason);
    }
}

/// The strictest decision wins: deny, then ask, then allow.
fn merge_permission(outcome: &mut HookOutcome, action: Action, reason: Option<String>) {
    if outcome.permission.as_ref().is_none_or(|(current, _)| action > *current) {
        outcome.permission = Some((action, reason));
    }
}

/// Runs `command` with `bash -c` in `dir`, `stdin` written to it, under `timeout`; output
/// capped at [`OUTPUT_CAP`] per stream. Its process group is stopped when it ends, times out
/// or `cancel` fires, so nothing it started outlives it.
pub async fn run_command(
    command: &str,
    stdin: Option<&str>,
    dir: &Path,
    timeout: Duration,
    cancel: &CancellationToken,
) -> HookRun {
    let mut run = HookRun { command: command.to_owned(), ..HookRun::default() };
    let mut child = match tokio::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .env("CLAUDE_PROJECT_DIR", dir)
        .env("TANDEM_PROJECT_DIR", dir)
        .stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
    {
        Ok(child) => child,
        Err(err) => {
            run.failure = Some(format!("could not start: {err}"));
            return run;
        }
    };
    let group = child.id();
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        let text = text.to_owned();
        // A hook that does not read its input must not stall on a full pipe.
        tokio::spawn(async move {
            pipe.write_all(text.as_bytes()).await.ok();
            pipe.shutdown().await.ok();
        });
    }
    let stdout = child.stdout.take().map(|pipe| tokio::spawn(read_capped(pipe)));
    let stderr = child.stderr.take().map(|pipe| tokio::spawn(read_capped(pipe)));
    tokio::select! {
        status = child.wait() => {
            run.exit = status.ok().and_then(|s| s.code());
        }
        () = tokio::time::sleep(timeout) => {
            run.failure = Some(format!("timed out after {} ms", timeout.as_millis()));
        }
        () = cancel.cancelled() => {
            run.failure = Some("cancelled".to_owned());
        }
    }
    stop_group(group);
    child.kill().await.ok();
    // What it wrote is read until the pipes close (the group is gone) or briefly after.
    let grace = Duration::from_millis(500);
    if let Some(task) = stdout
        && let Ok(Ok(text)) = tokio::time::timeout(grace, task).await
    {
        run.stdout = text;
    }
    if let Some(task) = stderr
        && let Ok(Ok(text)) = tokio::time::timeout(grace, task).await
    {
        run.stderr = text;
    }
    run
}

/// Sends SIGKILL to the process group `group` (the hook's shell and what it started).
fn stop_group(group: Option<u32>) {
    let pid = group.and_then(|id| i32::try_from(id).ok()).and_then(rustix::process::Pid::from_raw);
    if let Some(pid) = pid {
        // The group may already be gone.
        rustix::process::kill_process_group(pid, rustix::process::Signal::KILL).ok();
    }
}

/// Reads all of `pipe`, keeping the first [`OUTPUT_CAP`] bytes (the rest is read and dropped,
/// so the writer never blocks).
async fn read_capped(mut pipe: impl tokio::io::AsyncRead + Unpin) -> String {
    let mut kept = Vec::new();
    let mut buffer = [0u8; 8192];
    let mut cut = false;
    while let Ok(n) = pipe.read(&mut buffer).await {
        if n == 0 {
            break;
        }
        let room = OUTPUT_CAP.saturating_sub(kept.len());
        kept.extend_from_slice(&buffer[..n.min(room)]);
        cut |= n > room;
    }
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if cut {
        text.push_str(&format!("\n[output cut at {} KiB]", OUTPUT_CAP / 1024));
    }
    text
}

#[cfg(test)]
mod tests;
