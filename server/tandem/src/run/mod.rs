//! `tandem run`: the agent in a terminal. With a prompt, one turn; without one, an interactive
//! session with line editing, history and slash commands. The answer streams to stdout, tool
//! calls show as cards, approvals are asked on the terminal (`/dev/tty`) with one key, the
//! diff in colour and per-hunk choices.

mod events;
mod keys;
mod repl;
mod terminal;

pub use events::OutputFormat;

use std::io::IsTerminal as _;
use std::process::ExitCode;
use std::sync::Arc;

use crate::workbench::{Mcp, Options, Root, Workbench};
use tandem_agent::{Agent, SessionClient, Store};
use tandem_protocol::{ContentBlock, ModeId, SessionNewParams, SessionPromptParams, StopReason};

use terminal::{Terminal, out};

/// Options of `tandem run` (its command line).
#[derive(clap::Args)]
pub struct RunArgs {
    /// The project's root (`--root`, a global option); found around the current directory
    /// without it.
    #[arg(skip)]
    pub root: Option<std::path::PathBuf>,
    /// What to do (`-` reads it from stdin); none starts an interactive session.
    pub prompt: Option<String>,
    /// Permission mode: default, auto-edit, plan or yolo.
    #[arg(long, value_parser = crate::parse_mode)]
    pub mode: Option<tandem_protocol::ModeId>,
    /// Model (overrides the configuration).
    #[arg(long)]
    pub model: Option<String>,
    /// Approve every edit and command without asking (refused commands still never run).
    /// Meant for unattended runs in a sandbox (a container, a scratch checkout).
    #[arg(long)]
    pub yes: bool,
    /// Continue a stored session: its id (`/sessions` in the interactive session lists them), or `last` for the
    /// latest.
    #[arg(long)]
    pub session: Option<String>,
    /// What stdout carries: `text` (for people), `json` (one result object at the end) or
    /// `stream-json` (one JSON object per line as things happen, the result last). In the
    /// JSON formats nothing else reaches stdout, and nothing is asked: approve with --yes,
    /// a mode or permission rules.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Model requests allowed in the turn before it stops (exit status 3).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Text added at the end of the system prompt.
    #[arg(long, value_name = "TEXT")]
    pub append_system_prompt: Option<String>,
    /// Permission rules that allow calls for this run, as in `[permissions] allow`
    /// (`"bash(npm test:*)"`, `"edit(src/**)"`, `read`); a deny still wins.
    #[arg(long, value_name = "RULE", num_args = 1..)]
    pub allowed_tools: Vec<String>,
    /// Permission rules that deny calls for this run, as in `[permissions] deny`
    /// (`bash`, `"bash(git push:*)"`, `webfetch`); they hold in every mode and under --yes.
    #[arg(long, value_name = "RULE", num_args = 1..)]
    pub disallowed_tools: Vec<String>,
    /// Work in the git worktree NAME (on the branch `tandem/NAME`, created or reused outside
    /// the working tree; `tandem worktrees` lists them), so that runs side by side do not
    /// touch each other or the checkout.
    #[arg(long, value_name = "NAME")]
    pub worktree: Option<String>,
    /// An image (PNG, JPEG, GIF or WebP) sent with the prompt, to a model that takes images;
    /// repeat it for several.
    #[arg(long = "image", value_name = "FILE")]
    pub images: Vec<std::path::PathBuf>,
}

/// Exit status when a change or command needed an approval (or a question an answer) and no
/// terminal could give it.
const UNANSWERED: u8 = 6;

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
    let prompt = match args.prompt.as_deref() {
        Some("-") => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)?;
            Some(text)
        }
        Some(text) => Some(text.to_owned()),
        None => None,
    };
    match &prompt {
        Some(text) if text.trim().is_empty() => anyhow::bail!("the prompt is empty"),
        None if args.output_format != OutputFormat::Text => {
            anyhow::bail!("--output-format json and stream-json need a prompt (`-` reads it from stdin)")
        }
        None if !std::io::stdin().is_terminal() || !keys::available() => anyhow::bail!(
            "no prompt, and no terminal for an interactive session: give the prompt (`tandem run \"what to do\"`, \
             or `-` to read it from stdin)"
        ),
        _ => {}
    }
    let images = image_blocks(&args.images)?;
    if !images.is_empty() && prompt.is_none() {
        anyhow::bail!("--image goes with a prompt: tandem run --image FILE \"what to do\"");
    }
    let mut root = Root::from_cli(args.root.clone())?;
    if let Some(name) = &args.worktree {
        let worktree = crate::worktree::prepare(&root, name)?;
        eprintln!(
            "tandem: working in worktree {} at {} (branch {}{})",
            worktree.name,
            worktree.path.display(),
            worktree.branch,
            if worktree.created { ", new" } else { "" }
        );
        root = Root::Given { root: worktree.path.clone(), cwd: None };
    }
    // The command line's rules count as the person's own, like an editor's settings.
    let init = (!args.allowed_tools.is_empty() || !args.disallowed_tools.is_empty()).then(|| {
        tandem_protocol::InitializationOptions {
            permissions: Some(tandem_protocol::PermissionRules {
                allow: args.allowed_tools.clone(),
                ask: Vec::new(),
                deny: args.disallowed_tools.clone(),
            }),
            ..Default::default()
        }
    });
    let options = Options { init, mcp: Mcp::Sessions, no_previews: args.yes, ..Options::default() };
    let mut bench = Workbench::open(&root, options)?;
    let outcome = match Run::start(&mut bench, &args).await {
        Ok(mut run) => match prompt {
            Some(prompt) if !images.is_empty() => {
                run.images = images;
                run.once(prompt).await
            }
            Some(prompt) => run.once(prompt).await,
            None => repl::interactive(&mut run, &bench).await,
        },
        Err(err) => Err(err),
    };
    // Whatever happened, the language servers and MCP servers it started stop.
    bench.close().await;
    outcome
}

/// The prompt's blocks for `--image` files: each names its file, which the agent reads (and
/// refuses, naming the model, when the model does not take images).
fn image_blocks(paths: &[std::path::PathBuf]) -> anyhow::Result<Vec<ContentBlock>> {
    paths
        .iter()
        .map(|path| {
            let full =
                std::fs::canonicalize(path).map_err(|err| anyhow::anyhow!("--image {}: {err}", path.display()))?;
            let ext = full.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
            let mime_type = match ext.as_str() {
                "jpg" | "jpeg" => "image/jpeg",
                "gif" => "image/gif",
                "webp" => "image/webp",
                _ => "image/png",
            };
            Ok(ContentBlock::Image { data: String::new(), mime_type: mime_type.to_owned(), uri: Some(file_uri(&full)) })
        })
        .collect()
}

/// `file://` and the path, with what a URI cannot hold as it is percent-encoded.
fn file_uri(path: &std::path::Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.as_os_str().as_encoded_bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => uri.push(char::from(*byte)),
            _ => uri.push_str(&format!("%{byte:02X}")),
        }
    }
    uri
}

/// The agent, its session and the terminal it talks to.
pub(super) struct Run {
    agent: Arc<Agent>,
    terminal: Arc<Terminal>,
    store: Store,
    session: String,
    /// The session's working directory (for new sessions).
    cwd: String,
    /// The workspace root.
    root: std::path::PathBuf,
    /// The session was resumed, or one of its turns reached the model: its file is kept
    /// whatever happens.
    kept: bool,
    /// Images (`--image`) that go with the next prompt.
    images: Vec<ContentBlock>,
}

impl Run {
    async fn start(bench: &mut Workbench, args: &RunArgs) -> anyhow::Result<Self> {
        for warning in &bench.config.warnings {
            eprintln!("tandem: {warning}");
        }
        if let Some(model) = &args.model {
            bench.config.provider.model = Some(model.clone());
            bench.model_override = Some(model.clone());
        }
        let mut agent_config = bench.agent_config()?;
        let provider = &agent_config.provider;
        if let Some(notice) = tandem_llm::profile::resolve(provider, &provider.model).notice(&provider.model)
            && first_notice(&provider.base_url, &provider.model)
        {
            eprintln!("tandem: {notice} (said once for this model)");
        }
        if let Some(mode) = args.mode {
            agent_config.default_mode = mode;
        }
        if let Some(max_turns) = args.max_turns {
            agent_config.max_turns = max_turns.max(1);
        }
        agent_config.append_system_prompt.clone_from(&args.append_system_prompt);
        let model = agent_config.provider.model.clone();
        let mode = agent_config.default_mode;
        bench.mcp_ready(std::time::Duration::from_secs(10)).await;
        let terminal = Arc::new(Terminal::new(args.yes, args.output_format));
        let agent = bench.agent(None, Arc::clone(&terminal) as Arc<dyn SessionClient>, agent_config)?;
        let store = Store::in_workspace(bench.workspace.root());
        let cwd = bench.working_dir.display().to_string();
        let root = bench.workspace.root().to_path_buf();
        let mut run =
            Self { agent, terminal, store, session: String::new(), cwd, root, kept: false, images: Vec::new() };
        match &args.session {
            Some(id) => run.resume(id, args.mode).await?,
            None => run.fresh(args.mode)?,
        }
        if let Some(events) = &run.terminal.events {
            let mut tools: Vec<String> = bench.registry.enabled().map(|t| t.spec().name.to_owned()).collect();
            tools.sort();
            events.init(&run.session, &model, mode.as_str(), &run.cwd, tools);
        }
        Ok(run)
    }

    /// Starts a new session.
    fn fresh(&mut self, mode: Option<ModeId>) -> anyhow::Result<()> {
        let params = SessionNewParams { mode, cwd: Some(self.cwd.clone()), ..Default::default() };
        self.session = self.agent.new_session(params)?.session_id;
        self.kept = false;
        Ok(())
    }

    /// Continues stored session `id` (`last`: the most recently changed one).
    async fn resume(&mut self, id: &str, mode: Option<ModeId>) -> anyhow::Result<()> {
        let id = if id == "last" {
            let latest = self.store.list().into_iter().next();
            latest.map(|info| info.session_id).ok_or_else(|| anyhow::anyhow!("there is no stored session yet"))?
        } else {
            id.to_owned()
        };
        let params = tandem_protocol::SessionLoadParams { session_id: id.clone(), cwd: None, mcp_servers: None };
        self.terminal.replaying(true);
        let loaded = self.agent.load(params).await;
        self.terminal.replaying(false);
        loaded?;
        if let Some(mode) = mode {
            self.agent
                .set_mode(tandem_protocol::SessionSetModeParams { session_id: id.clone(), mode_id: mode })
                .await?;
        }
        self.session = id;
        self.kept = true;
        Ok(())
    }

    /// One prompt (or `/compact`) and a summary line; the exit status follows how it ended.
    async fn once(&mut self, prompt: String) -> anyhow::Result<ExitCode> {
        if prompt.trim() == "/compact" {
            self.compact().await?;
            return Ok(ExitCode::SUCCESS);
        }
        let (code, stop) = self.turn(prompt).await?;
        let session = &self.session;
        if self.kept {
            let usage = self.terminal.usage.lock().map(|u| format!(" — {}", terminal::usage_line(&u)));
            eprintln!(
                "tandem: session {session} ended: {stop}{} (continue it with --session {session})",
                usage.unwrap_or_default()
            );
        }
        Ok(code)
    }

    /// One turn: the prompt goes to the model; Ctrl-C cancels it. A turn that failed before the
    /// model said anything, in a session nothing reached the model in, leaves no session file.
    async fn turn(&mut self, prompt: String) -> anyhow::Result<(ExitCode, String)> {
        let cancel_agent = Arc::clone(&self.agent);
        let cancel_id = self.session.clone();
        let ctrl_c = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                eprintln!("\ntandem: cancelling…");
                cancel_agent.cancel(&cancel_id);
            }
        });
        self.terminal.begin_turn();
        let mut blocks = vec![ContentBlock::text(prompt)];
        blocks.append(&mut self.images);
        let params = SessionPromptParams { session_id: self.session.clone(), prompt: blocks };
        let result = self.agent.prompt(params).await;
        ctrl_c.abort();
        self.terminal.end_turn();
        if result.is_err() && !self.kept {
            // Refused before anything ran (an image for a model without vision): no session left behind.
            let _ = self.store.remove(&self.session);
        }
        let result = result?;
        self.kept |= self.terminal.heard();
        if self.terminal.events.is_none() {
            out("\n");
        }
        if !self.kept {
            // Nothing to continue: no file, and no advice to continue it.
            if let Err(err) = self.store.remove(&self.session) {
                tracing::warn!(session = self.session, "cannot remove the session file: {err}");
            }
        }
        let stop = serde_json::to_value(result.stop_reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let code = match result.stop_reason {
            StopReason::EndTurn if self.terminal.unanswered() => {
                eprintln!(
                    "tandem: the model needed an approval (or an answer) nobody could give here: run in a terminal, \
                     with --yes, or with --mode auto-edit or yolo"
                );
                ExitCode::from(UNANSWERED)
            }
            StopReason::EndTurn => ExitCode::SUCCESS,
            StopReason::Error => {
                eprintln!("tandem: {}", result.error.as_deref().unwrap_or_default());
                ExitCode::FAILURE
            }
            StopReason::MaxTurns => {
                eprintln!("tandem: the turn reached its limit of model requests; a prompt of \"continue\" goes on");
                ExitCode::from(3)
            }
            StopReason::Refusal => ExitCode::from(4),
            StopReason::MaxTokens => {
                eprintln!("tandem: the answer was cut at the output limit; a prompt of \"continue\" goes on");
                ExitCode::from(5)
            }
            StopReason::Cancelled => ExitCode::from(130),
        };
        if let Some(events) = &self.terminal.events {
            let error = match result.stop_reason {
                StopReason::EndTurn if self.terminal.unanswered() => {
                    Some("an approval or a question was needed and nobody could answer it")
                }
                _ => result.error.as_deref(),
            };
            events.result(result.stop_reason, error);
        }
        Ok((code, stop))
    }

    /// `/compact`: what the model sees of the session, shortened.
    async fn compact(&self) -> anyhow::Result<()> {
        let params = tandem_protocol::SessionCompactParams { session_id: self.session.clone() };
        let done = self.agent.compact(params).await?;
        let how = if done.summarized { "older turns summarised" } else { "nothing to summarise" };
        eprintln!(
            "tandem: session {} compacted: about {} → {} tokens ({how})",
            self.session, done.tokens_before, done.tokens_after
        );
        Ok(())
    }
}

/// Whether the unknown-model notice for `model` at `base_url` is new to this person: the first
/// time it is, it is recorded in the state home (`noticed-models`), so later starts stay quiet.
fn first_notice(base_url: &str, model: &str) -> bool {
    let Some(home) = tandem_tools::state::state_home() else { return true };
    let file = home.join("noticed-models");
    let key = format!("{base_url} {model}");
    let seen = std::fs::read_to_string(&file).unwrap_or_default();
    if seen.lines().any(|line| line == key) {
        return false;
    }
    let _ = std::fs::create_dir_all(&home);
    let appended = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&file)
        .and_then(|mut f| std::io::Write::write_all(&mut f, format!("{key}\n").as_bytes()));
    if let Err(err) = appended {
        tracing::debug!("cannot record the model notice in {}: {err}", file.display());
    }
    true
}
