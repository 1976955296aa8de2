//! `tandem run "<prompt>"`: one agent turn in a terminal. The answer streams to stdout; tool
//! calls show as one line each; approvals are asked on the terminal (`/dev/tty`), with the diff
//! in colour and per-hunk choices.

use parking_lot::Mutex;
use std::io::{IsTerminal as _, Write as _};
use std::process::ExitCode;
use std::sync::Arc;

use crate::workbench::{Mcp, Options, Root, Workbench};
use async_trait::async_trait;
use tandem_agent::{ClientError, SessionClient};
use tandem_protocol::{
    AskUserParams, AskUserResult, ContentBlock, ModeId, PermissionOptionKind, PermissionOutcome,
    RequestPermissionParams, RequestPermissionResult, SessionNewParams, SessionPromptParams, SessionUpdate, StopReason,
    ToolCallContent, ToolCallStatus,
};

/// Options of `tandem run`.
pub struct RunArgs {
    /// The project's root (`--root`); found around the current directory without it.
    pub root: Option<std::path::PathBuf>,
    /// The prompt (`-` reads it from stdin).
    pub prompt: String,
    /// Starting mode.
    pub mode: Option<ModeId>,
    /// Model override.
    pub model: Option<String>,
    /// Answer every approval with yes (refused commands still never run).
    pub yes: bool,
    /// Resume this stored session.
    pub session: Option<String>,
}

struct Style {
    color: bool,
}

impl Style {
    fn paint(&self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
}

/// The terminal as a session client.
struct Terminal {
    style: Style,
    yes: bool,
    /// Titles of tool calls by id, for their final line.
    titles: Mutex<std::collections::HashMap<String, String>>,
    /// Serialises questions with output.
    asking: tokio::sync::Mutex<()>,
    /// The session's latest token counts, for the summary line.
    usage: Mutex<Option<tandem_protocol::Usage>>,
}

/// `12345` as `12.3k`.
fn tokens(n: u64) -> String {
    if n < 1_000 { n.to_string() } else { format!("{:.1}k", n as f64 / 1_000.0) }
}

/// The summary line's token part: the session's totals and how full the window was last.
fn usage_line(usage: &tandem_protocol::Usage) -> String {
    let totals = usage.session;
    let mut line = format!("{} tokens in", tokens(totals.input_tokens));
    if totals.cache_read_tokens > 0 {
        line.push_str(&format!(" ({} cached)", tokens(totals.cache_read_tokens)));
    }
    line.push_str(&format!(", {} out", tokens(totals.output_tokens)));
    if totals.reasoning_tokens > 0 {
        line.push_str(&format!(" ({} reasoning)", tokens(totals.reasoning_tokens)));
    }
    if usage.context_window > 0 {
        line.push_str(&format!(
            "; context {} of {}",
            tokens(usage.input_tokens + usage.output_tokens),
            tokens(usage.context_window)
        ));
    }
    line
}

fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes()).ok();
    stdout.flush().ok();
}

/// Reads one answer line from the terminal (not stdin, which may carry the prompt).
async fn ask_line(question: String) -> Option<String> {
    tokio::task::spawn_blocking(move || {
        use std::io::BufRead as _;
        let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").ok()?;
        let mut writer = tty.try_clone().ok()?;
        writer.write_all(question.as_bytes()).ok()?;
        writer.flush().ok()?;
        let mut line = String::new();
        std::io::BufReader::new(tty).read_line(&mut line).ok()?;
        Some(line.trim().to_owned())
    })
    .await
    .ok()
    .flatten()
}

impl Terminal {
    fn diff(&self, patch: &str) -> String {
        patch
            .lines()
            .map(|line| match line.as_bytes().first() {
                Some(b'+') => self.style.paint("32", line),
                Some(b'-') => self.style.paint("31", line),
                Some(b'@') => self.style.paint("36", line),
                _ => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn selected(option_id: &str, accepted_hunks: Option<Vec<String>>) -> RequestPermissionResult {
    RequestPermissionResult {
        outcome: PermissionOutcome::Selected { option_id: option_id.to_owned(), accepted_hunks, message: None },
    }
}

#[async_trait]
impl SessionClient for Terminal {
    async fn update(&self, _session_id: &str, update: SessionUpdate) {
        match update {
            SessionUpdate::AgentMessageChunk { content: ContentBlock::Text { text } } => out(&text),
            SessionUpdate::AgentThoughtChunk { content: ContentBlock::Text { text } } => {
                eprint!("{}", self.style.paint("2", &text));
            }
            SessionUpdate::ToolCall(call) => {
                self.titles.lock().insert(call.tool_call_id, call.title);
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let title = update.title.clone().or_else(|| self.titles.lock().get(&update.tool_call_id).cloned());
                let title = title.unwrap_or_default();
                match update.status {
                    Some(ToolCallStatus::Completed) => out(&format!("\n{} {title}\n", self.style.paint("32", "✓"))),
                    Some(ToolCallStatus::Failed) => {
                        let why = update
                            .content
                            .iter()
                            .flatten()
                            .find_map(|c| match c {
                                ToolCallContent::Content { content: ContentBlock::Text { text } } => {
                                    text.lines().next().map(str::to_owned)
                                }
                                _ => None,
                            })
                            .unwrap_or_default();
                        out(&format!("\n{} {title}: {why}\n", self.style.paint("31", "✗")));
                    }
                    _ => {}
                }
            }
            SessionUpdate::Plan { entries } => {
                let lines: Vec<String> = entries.iter().map(|e| format!("  [{}] {}", e.status, e.content)).collect();
                out(&format!("\nPlan:\n{}\n", lines.join("\n")));
            }
            SessionUpdate::CurrentModeUpdate { current_mode_id } => {
                out(&format!("\n(mode: {})\n", current_mode_id.as_str()));
            }
            SessionUpdate::UsageUpdate(usage) => {
                *self.usage.lock() = Some(usage);
            }
            _ => {}
        }
    }

    async fn ask_user(&self, params: AskUserParams) -> std::result::Result<AskUserResult, ClientError> {
        let _turn = self.asking.lock().await;
        let mut answers = Vec::new();
        for question in &params.questions {
            let mut shown = format!("\n{}\n", self.style.paint("1", &format!("? {}", question.question)));
            for (i, option) in question.options.iter().enumerate() {
                let description =
                    if option.description.is_empty() { String::new() } else { format!(" — {}", option.description) };
                shown.push_str(&format!("  {}. {}{description}\n", i + 1, option.label));
            }
            out(&shown);
            let hint = match (question.options.is_empty(), question.multi_select) {
                (true, _) => "answer".to_owned(),
                (false, true) => "numbers separated by commas".to_owned(),
                (false, false) => format!("1-{}", question.options.len()),
            };
            let Some(line) = ask_line(format!("{hint}> ")).await else {
                return Err(ClientError::Unavailable("no terminal to ask on".into()));
            };
            if question.options.is_empty() {
                answers.push(vec![line]);
                continue;
            }
            let chosen: Vec<String> = line
                .split(',')
                .filter_map(|n| n.trim().parse::<usize>().ok())
                .filter_map(|n| question.options.get(n.wrapping_sub(1)).map(|o| o.label.clone()))
                .take(if question.multi_select { usize::MAX } else { 1 })
                .collect();
            if chosen.is_empty() {
                return Ok(AskUserResult { answers: None, cancelled: Some(true) });
            }
            answers.push(chosen);
        }
        Ok(AskUserResult { answers: Some(answers), cancelled: None })
    }

    async fn request_permission(
        &self,
        params: RequestPermissionParams,
    ) -> std::result::Result<RequestPermissionResult, ClientError> {
        let _turn = self.asking.lock().await;
        let title = params.tool_call.title.clone().unwrap_or_default();
        let content = params.tool_call.content.clone().unwrap_or_default();
        let mut shown = format!("\n{}\n", self.style.paint("1", &format!("? {title}")));
        let mut hunks = Vec::new();
        for item in &content {
            match item {
                ToolCallContent::Diff { path, hunks: file_hunks, .. } => {
                    let path = std::env::current_dir()
                        .ok()
                        .and_then(|cwd| {
                            std::path::Path::new(path).strip_prefix(cwd).ok().map(|p| p.display().to_string())
                        })
                        .unwrap_or_else(|| path.clone());
                    shown.push_str(&format!("{}\n", self.style.paint("1", &path)));
                    for hunk in file_hunks {
                        shown.push_str(&format!("{}\n", self.diff(&hunk.patch)));
                        hunks.push(hunk.clone());
                    }
                }
                ToolCallContent::Content { content: ContentBlock::Text { text } } => {
                    shown.push_str(text);
                    shown.push('\n');
                }
                _ => {}
            }
        }
        out(&shown);
        let has = |kind| params.options.iter().find(|o| o.kind == kind).map(|o| o.option_id.clone());
        let allow = has(PermissionOptionKind::AllowOnce).unwrap_or_else(|| "allow_once".into());
        let reject = has(PermissionOptionKind::RejectOnce).unwrap_or_else(|| "reject_once".into());
        if self.yes {
            out(&self.style.paint("2", "(--yes: accepted)\n"));
            return Ok(selected(&allow, None));
        }
        let always = has(PermissionOptionKind::AllowAlways);
        let choices = match (&always, hunks.len() > 1) {
            (Some(_), true) => "[y]es / [n]o / [a]lways / [p]er hunk",
            (Some(_), false) => "[y]es / [n]o / [a]lways",
            (None, true) => "[y]es / [n]o / [p]er hunk",
            (None, false) => "[y]es / [n]o",
        };
        loop {
            let Some(answer) = ask_line(format!("{choices}? ")).await else {
                return Err(ClientError::Unavailable(
                    "no terminal to ask on: run with --yes, or in a mode that does not ask (--mode yolo)".into(),
                ));
            };
            match answer.to_lowercase().as_str() {
                "y" | "yes" => return Ok(selected(&allow, None)),
                "n" | "no" => return Ok(selected(&reject, None)),
                "a" | "always" if always.is_some() => {
                    return Ok(selected(always.as_deref().unwrap_or("allow_always"), None));
                }
                "p" if hunks.len() > 1 => {
                    let mut accepted = Vec::new();
                    for hunk in &hunks {
                        out(&format!("\n{}\n", self.diff(&hunk.patch)));
                        let answer = ask_line(format!("apply {}? [y/n] ", hunk.id)).await.map(|a| a.to_lowercase());
                        if let Some("y" | "yes") = answer.as_deref() {
                            accepted.push(hunk.id.clone());
                        }
                    }
                    return Ok(selected(&allow, Some(accepted)));
                }
                _ => out("please answer with one of the letters shown\n"),
            }
        }
    }
}

/// Runs `tandem run`.
pub async fn run(args: RunArgs) -> ExitCode {
    match run_inner(args).await {
        Ok(code) => code,
        Err(err) => {
            eprintln!("tandem run: {err:#}");
            ExitCode::from(2)
        }
    }
}

async fn run_inner(args: RunArgs) -> anyhow::Result<ExitCode> {
    let prompt = if args.prompt == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
        text
    } else {
        args.prompt.clone()
    };
    if prompt.trim().is_empty() {
        anyhow::bail!("the prompt is empty");
    }
    let mut bench =
        Workbench::open(&Root::from_cli(args.root.clone())?, Options { mcp: Mcp::Sessions, ..Options::default() })?;
    let outcome = turn(&mut bench, args, prompt).await;
    // Whatever happened, the language servers and MCP servers it started stop.
    bench.close().await;
    outcome
}

/// The session's turn (or `/compact`) in the opened workbench.
async fn turn(bench: &mut Workbench, args: RunArgs, prompt: String) -> anyhow::Result<ExitCode> {
    for warning in &bench.config.warnings {
        eprintln!("tandem: {warning}");
    }
    if let Some(model) = &args.model {
        bench.config.provider.model = Some(model.clone());
    }
    let mut agent_config = bench.agent_config()?;
    let provider = &agent_config.provider;
    if let Some(notice) = tandem_llm::profile::resolve(provider, &provider.model).notice(&provider.model) {
        eprintln!("tandem: {notice}");
    }
    if let Some(mode) = args.mode {
        agent_config.default_mode = mode;
    }
    bench.mcp_ready(std::time::Duration::from_secs(10)).await;
    let terminal = Arc::new(Terminal {
        style: Style { color: std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none() },
        yes: args.yes,
        titles: Mutex::new(Default::default()),
        asking: tokio::sync::Mutex::new(()),
        usage: Mutex::new(None),
    });
    let agent = bench.agent(None, Arc::clone(&terminal) as Arc<dyn SessionClient>, agent_config)?;
    let session_id = match args.session {
        Some(id) => {
            agent
                .load(tandem_protocol::SessionLoadParams { session_id: id.clone(), cwd: None, mcp_servers: None })
                .await?;
            if let Some(mode) = args.mode {
                agent.set_mode(tandem_protocol::SessionSetModeParams { session_id: id.clone(), mode_id: mode }).await?;
            }
            id
        }
        None => {
            let cwd = Some(bench.working_dir.display().to_string());
            agent.new_session(SessionNewParams { mode: args.mode, cwd, ..Default::default() })?.session_id
        }
    };
    let cancel_agent = Arc::clone(&agent);
    let cancel_id = session_id.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\ntandem: cancelling…");
            cancel_agent.cancel(&cancel_id);
        }
    });
    if prompt.trim() == "/compact" {
        let params = tandem_protocol::SessionCompactParams { session_id: session_id.clone() };
        let done = agent.compact(params).await?;
        let how = if done.summarized { "older turns summarised" } else { "nothing to summarise" };
        eprintln!(
            "tandem: session {session_id} compacted: about {} → {} tokens ({how})",
            done.tokens_before, done.tokens_after
        );
        return Ok(ExitCode::SUCCESS);
    }
    let result = agent
        .prompt(SessionPromptParams { session_id: session_id.clone(), prompt: vec![ContentBlock::text(prompt)] })
        .await?;
    ctrl_c.abort();
    out("\n");
    let stop =
        serde_json::to_value(result.stop_reason).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
    let usage = terminal.usage.lock().map(|u| format!(" — {}", usage_line(&u)));
    eprintln!(
        "tandem: session {session_id} ended: {stop}{} (continue it with --session {session_id})",
        usage.unwrap_or_default()
    );
    if result.stop_reason == StopReason::MaxTokens {
        eprintln!("tandem: the answer was cut at the output limit; go on with --session {session_id} \"continue\"");
    }
    Ok(match result.stop_reason {
        StopReason::EndTurn => ExitCode::SUCCESS,
        StopReason::Error => {
            eprintln!("tandem: {}", result.error.unwrap_or_default());
            ExitCode::FAILURE
        }
        StopReason::MaxTurns => ExitCode::from(3),
        StopReason::Refusal => ExitCode::from(4),
        StopReason::MaxTokens => ExitCode::from(5),
        StopReason::Cancelled => ExitCode::from(130),
    })
}
