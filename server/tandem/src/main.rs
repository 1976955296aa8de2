//! `tandem`: the sidecar binary. `tandem lsp` serves editors over stdio (LSP framing);
//! `tandem acp` serves ACP clients (Zed, JetBrains, CodeCompanion.nvim, ...);
//! `tandem tool <name> '<json>'` runs one tool and prints its result; `tandem tools` lists them.

mod acp;
mod config;
mod context_cmd;
mod doctor;
mod lsp;
mod mcp_cmd;
mod permissions_cmd;
mod rpc;
mod run;
mod sandbox;
mod sessions_cmd;
mod stdio;
mod stdout;
mod telemetry;
mod tool_cmd;
mod trust_cmd;
mod warm;
mod workbench;
mod worktree;

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Tandem: an agent backend for code editors.
#[derive(Parser)]
#[command(name = "tandem", version, about)]
struct Cli {
    /// Write the log to this file instead of stderr (filter with TANDEM_LOG, e.g. `debug`).
    #[arg(long, global = true)]
    log_file: Option<PathBuf>,
    /// The project's root for the commands that run in the current directory's project
    /// (`tool`, `tools`, `run`, `mcp`, `doctor`). Without it, the project is the nearest
    /// ancestor of the current directory holding `.git` or `.tandem` (else the current
    /// directory); relative paths in tool arguments start from the current directory either way.
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve an editor over stdio with the LSP base protocol (what editor plugins start).
    Lsp,
    /// Serve an ACP client over stdio (Agent Client Protocol v1: Zed, JetBrains,
    /// CodeCompanion.nvim, avante.nvim). Sessions open the workspace at their `cwd`.
    Acp,
    /// Run one tool in the current directory's workspace and print its result: its output on a
    /// terminal, JSON when piped (`--text` / `--json` choose). Exit status: 0 on success, 1 when
    /// the result has an error, 2 on bad usage; in text, a command that ran and exited non-zero
    /// (`bash`) gives its own exit status, and says it on stderr (in JSON it is `exitCode`).
    /// `tandem tool <name> --help` shows the tool's arguments.
    // The tool's own `--help` replaces clap's: it describes the tool, not this command.
    #[command(disable_help_flag = true)]
    Tool {
        /// Tool name or alias (`tandem tools` lists them).
        name: Option<String>,
        /// Arguments as a JSON object (default `{}`); `-` reads them from stdin.
        arguments: Option<String>,
        /// Show the tool's description and arguments instead of running it.
        #[arg(short, long)]
        help: bool,
        /// Print the result's output (and its error on stderr) instead of JSON.
        #[arg(long, conflicts_with = "json")]
        text: bool,
        /// Print the whole result as JSON (the default when stdout is not a terminal).
        #[arg(long)]
        json: bool,
    },
    /// List the tools enabled in the current directory's workspace, its MCP servers' included.
    Tools {
        /// Print a JSON array (name, description, inputSchema, group, effect, annotations).
        #[arg(long)]
        json: bool,
    },
    /// List what the agent is told in the current directory's project: instruction files
    /// (`AGENTS.md`, `CLAUDE.md`), rules, custom commands and skills, with their token costs.
    /// Exit status 1 when one of those files is malformed (the error names the file and line).
    Context,
    /// Check the setup: the language servers found on PATH (and the install command of the
    /// missing ones), and each configured MCP server with its state and tool count.
    Doctor,
    /// The permission rules, hooks and verify commands in force in the current directory's
    /// project, each with its file; `check 'tool(call)'` says what the rules decide for one
    /// call (`check 'bash(npm test -- -x)'`, `check 'read(.env)'`).
    Permissions {
        /// `check` and a call.
        args: Vec<String>,
    },
    /// Runs a command in a sandbox (used by Tandem itself): `--read-only -- PROGRAM ARGS…` or
    /// `--workspace-write ROOT [--network] -- PROGRAM ARGS…`.
    /// Keeps the project's language servers running for one-shot `tandem tool lsp` calls (used
    /// by Tandem itself), until idle for `TANDEM_LSP_IDLE` seconds.
    #[command(hide = true, name = "lsp-warm")]
    LspWarm,
    #[command(hide = true)]
    Sandbox {
        /// The policy's options, `--`, then the program and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Trust a folder (default: the project `tandem run` would use here: the nearest folder
    /// above holding `.git` or `.tandem`, else the current directory), so that its own settings
    /// (`.tandem/config.toml`, `.mcp.json`) may raise privileges: a laxer mode, more tools,
    /// extra roots, programs to start, another model provider. Kept in
    /// `~/.config/tandem/trusted-folders`.
    Trust {
        /// The folder.
        path: Option<PathBuf>,
        /// Stop trusting it.
        #[arg(long)]
        revoke: bool,
    },
    /// Run the agent in the current directory's workspace: with a prompt, one turn (the answer
    /// streams to stdout, approvals are asked on the terminal with one key); without one, an
    /// interactive session (`/help` lists its commands). Exit status of a turn: 0 when the model
    /// finished, 1 on a provider error, 2 on bad usage, 3 at the turn limit, 4 on a refusal, 5
    /// when the answer was cut at the output limit, 6 when a change or command needed an
    /// approval nobody could give (no terminal), 130 when cancelled.
    Run(run::RunArgs),
    /// The agents' git worktrees of the current directory's project (`tandem run --worktree`):
    /// lists them with their branches and sessions; `remove NAME` removes one.
    Worktrees {
        #[command(subcommand)]
        action: Option<WorktreesAction>,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// The stored sessions of the current directory's project: list, export, import.
    Sessions {
        #[command(subcommand)]
        action: SessionsAction,
    },
    /// Serve Tandem's tools to MCP clients over stdio (newline-delimited JSON-RPC), in the current
    /// directory's workspace. Changes and commands that are not read-only are refused unless
    /// `--allow-writes`.
    Mcp {
        /// Let MCP clients change files and run any command the safety classifier does not refuse.
        #[arg(long)]
        allow_writes: bool,
    },
}

#[derive(Subcommand)]
enum WorktreesAction {
    /// Remove the worktree NAME (its branch stays unless it is merged).
    Remove {
        /// The worktree's name.
        name: String,
        /// Also when it has uncommitted changes (they are lost).
        #[arg(long)]
        force: bool,
    },
}

#[derive(Subcommand)]
enum SessionsAction {
    /// List the stored sessions, most recent first.
    List {
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Print a session: the prompts, tool calls (inputs and outputs), answers, usage and cost.
    Export {
        /// The session's id, or `last`.
        id: String,
        /// `markdown` for people, `json` for scripts and `tandem sessions import`.
        #[arg(long, value_enum, default_value = "markdown")]
        format: sessions_cmd::Format,
    },
    /// Store an exported JSON session (`-`: from stdin) to continue it with `tandem run --session ID`;
    /// prints its id.
    Import {
        /// The file `tandem sessions export ID --format json` wrote.
        file: PathBuf,
    },
}

pub(crate) fn parse_mode(raw: &str) -> Result<tandem_protocol::ModeId, String> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned()))
        .map_err(|_| format!("unknown mode `{raw}`: use default, auto-edit, plan or yolo"))
}

/// `tandem tool` without a tool name: its help (asked for, exit 0) or a usage error (exit 2).
fn tool_usage(asked: bool) -> ExitCode {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    // Built, the subcommand's usage line starts with `tandem tool`.
    cli.build();
    let Some(tool) = cli.find_subcommand_mut("tool") else { return ExitCode::from(2) };
    if asked {
        let help = tool.render_long_help();
        return if writeln!(std::io::stdout(), "{help}").is_ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE };
    }
    eprintln!("tandem: `tandem tool` needs a tool name; `tandem tools` lists them\n\n{}", tool.render_usage());
    ExitCode::from(2)
}

fn init_logging(log_file: Option<&PathBuf>, level: &str) -> anyhow::Result<Option<telemetry::Telemetry>> {
    use std::io::IsTerminal as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    use tracing_subscriber::{EnvFilter, Layer as _};
    let filter = EnvFilter::try_from_env("TANDEM_LOG").unwrap_or_else(|_| EnvFilter::new(level));
    // Never stdout: it carries protocol messages only.
    let log = match log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            tracing_subscriber::fmt::layer()
                .with_target(true)
                .with_ansi(false)
                .with_writer(std::sync::Mutex::new(file))
                .with_filter(filter)
                .boxed()
        }
        None => {
            // Colour only for a person at a terminal (and never with NO_COLOR).
            let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            tracing_subscriber::fmt::layer()
                .with_target(true)
                .with_ansi(ansi)
                .with_writer(std::io::stderr)
                .with_filter(filter)
                .boxed()
        }
    };
    let registry = tracing_subscriber::registry().with(log);
    match telemetry::layer(&config::person_telemetry()) {
        Some((otel, telemetry)) => {
            registry.with(otel).init();
            Ok(Some(telemetry))
        }
        None => {
            registry.init();
            Ok(None)
        }
    }
}

/// Whole-file buffers (4 MiB and more) always get a mapping of their own, which goes back to the
/// system when freed: glibc otherwise raises its mapping threshold to the size of the first such
/// buffer freed and serves the next ones from the heap, whose memory stays with the process.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn map_large_buffers() {
    // SAFETY: mallopt(3) only changes the allocator's tuning; it is called before any other
    // thread starts.
    #[expect(unsafe_code, reason = "mallopt(3) has no safe wrapper")]
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 * 1024 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn map_large_buffers() {}

fn main() -> ExitCode {
    map_large_buffers();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { 2 } else { 0 };
            // clap prints help and version to stdout, usage errors to stderr.
            err.print().ok();
            return ExitCode::from(code);
        }
    };
    // Before anything else starts (threads, the runtime): the launcher restricts itself and
    // becomes the command.
    if let Command::Sandbox { args } = &cli.command {
        let mut args = args.iter().cloned();
        return match sandbox::parse(&mut args) {
            Ok(policy) => sandbox::run(&policy, &args.collect::<Vec<_>>()),
            Err(usage) => {
                eprintln!("{usage}");
                ExitCode::from(2)
            }
        };
    }
    // In a terminal agent the person reads errors in its own words; warnings (retries) would
    // only interleave with the answer. TANDEM_LOG still shows them.
    let level = if matches!(cli.command, Command::Run { .. }) { "error" } else { "warn" };
    let telemetry = match init_logging(cli.log_file.as_ref(), level) {
        Ok(telemetry) => telemetry,
        Err(err) => {
            eprintln!("tandem: cannot open the log file: {err:#}");
            return ExitCode::from(2);
        }
    };
    // A single tool call from the shell runs on this thread: worker threads would cost more to
    // start (and to size: the CPU count is read from cgroup files) than the call takes. Its
    // blocking file work then runs inline, and `glob` and `grep` walk on threads of their own.
    let mut builder = match cli.command {
        Command::Tool { .. } | Command::Tools { .. } => tokio::runtime::Builder::new_current_thread(),
        _ => tokio::runtime::Builder::new_multi_thread(),
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("tandem: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let root = cli.root;
    let code = runtime.block_on(async {
        match cli.command {
            Command::Lsp => lsp::serve().await,
            Command::Acp => acp::serve().await,
            Command::Tool { name, arguments, help, text, json } => match (name, help) {
                (Some(name), true) => tool_cmd::help(root, &name).await,
                (None, true) => tool_usage(true),
                (None, false) => tool_usage(false),
                (Some(name), false) => {
                    let output = match (text, json) {
                        (true, _) => tool_cmd::Output::Text,
                        (_, true) => tool_cmd::Output::Json,
                        _ => tool_cmd::Output::Auto,
                    };
                    tool_cmd::run(root, &name, arguments.as_deref(), output).await
                }
            },
            Command::Tools { json } => tool_cmd::list(root, json).await,
            Command::Run(args) => run::run(run::RunArgs { root, ..args }).await,
            Command::Worktrees { action: None, json } => worktree::list(root, json),
            Command::Worktrees { action: Some(WorktreesAction::Remove { name, force }), .. } => {
                worktree::remove(root, &name, force)
            }
            Command::Sessions { action } => match action {
                SessionsAction::List { json } => sessions_cmd::list(root, json),
                SessionsAction::Export { id, format } => sessions_cmd::export(root, &id, format),
                SessionsAction::Import { file } => sessions_cmd::import(root, &file),
            },
            Command::Mcp { allow_writes } => mcp_cmd::serve(root, allow_writes).await,
            Command::Doctor => doctor::run(root).await,
            Command::Context => context_cmd::run(root),
            Command::Permissions { args } => permissions_cmd::run(root, &args),
            Command::Trust { path, revoke } => trust_cmd::run(path.or(root), revoke),
            Command::LspWarm => warm::serve(root).await,
            Command::Sandbox { .. } => ExitCode::from(2),
        }
    });
    // Commands still running (cancelled, or in the background) do not outlive tandem.
    tandem_tools::exec::stop_all();
    // The last spans go out before the process ends.
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    // Do not wait for the thread blocked reading stdin: after `exit` the client may keep it open.
    runtime.shutdown_background();
    code
}
