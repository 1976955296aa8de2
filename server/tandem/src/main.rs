//! `tandem`: the sidecar binary. `tandem lsp` serves editors over stdio (LSP framing);
//! `tandem acp` serves ACP clients (Zed, JetBrains, CodeCompanion.nvim, ...);
//! `tandem tool <name> '<json>'` runs one tool and prints its result.

mod acp;
mod config;
mod doctor;
mod lsp;
mod mcp_cmd;
mod run;
mod sandbox;
mod stdin_guard;
mod stdio;
mod tool_cmd;
mod trust_cmd;

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
    /// Run one tool in the current directory's workspace and print its result as JSON.
    /// Exit status: 0 on success, 1 when the result has an error, 2 on bad usage.
    Tool {
        /// Tool name or alias (`tandem tools` lists them).
        name: String,
        /// Arguments as a JSON object (default `{}`); `-` reads them from stdin.
        arguments: Option<String>,
    },
    /// List the tools enabled in the current directory's workspace.
    Tools,
    /// Check the setup: the language servers found on PATH (and the install command of the
    /// missing ones), and each configured MCP server with its state and tool count.
    Doctor,
    /// Runs a command in a sandbox (used by Tandem itself): `--read-only -- PROGRAM ARGS…` or
    /// `--workspace-write ROOT [--network] -- PROGRAM ARGS…`.
    #[command(hide = true)]
    Sandbox {
        /// The policy's options, `--`, then the program and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// Trust a folder (default: the current directory), so that its own settings
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
    /// Run one agent turn in the current directory's workspace: the answer streams to stdout,
    /// approvals are asked on the terminal. Exit status: 0 when the model finished, 1 on a
    /// provider error, 2 on bad usage, 3 at the turn limit, 4 on a refusal, 130 when cancelled.
    Run {
        /// What to do (`-` reads it from stdin).
        prompt: String,
        /// Permission mode: default, auto-edit, plan or yolo.
        #[arg(long, value_parser = parse_mode)]
        mode: Option<tandem_protocol::ModeId>,
        /// Model (overrides the configuration).
        #[arg(long)]
        model: Option<String>,
        /// Approve every edit and command without asking (refused commands still never run).
        /// Meant for unattended runs in a sandbox (a container, a scratch checkout).
        #[arg(long)]
        yes: bool,
        /// Continue a stored session (ids from `.tandem/sessions/`).
        #[arg(long)]
        session: Option<String>,
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

fn parse_mode(raw: &str) -> Result<tandem_protocol::ModeId, String> {
    serde_json::from_value(serde_json::Value::String(raw.to_owned()))
        .map_err(|_| format!("unknown mode `{raw}`: use default, auto-edit, plan or yolo"))
}

fn init_logging(log_file: Option<&PathBuf>) -> anyhow::Result<()> {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("TANDEM_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_target(true);
    match log_file {
        Some(path) => {
            let file = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
            builder.with_ansi(false).with_writer(std::sync::Mutex::new(file)).init();
        }
        // Never stdout: it carries protocol messages only.
        None => builder.with_writer(std::io::stderr).init(),
    }
    Ok(())
}

fn main() -> ExitCode {
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
    if let Err(err) = init_logging(cli.log_file.as_ref()) {
        eprintln!("tandem: cannot open the log file: {err:#}");
        return ExitCode::from(2);
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("tandem: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async {
        match cli.command {
            Command::Lsp => lsp::serve().await,
            Command::Acp => acp::serve().await,
            Command::Tool { name, arguments } => tool_cmd::run(&name, arguments.as_deref()).await,
            Command::Tools => tool_cmd::list().await,
            Command::Run { prompt, mode, model, yes, session } => {
                run::run(run::RunArgs { prompt, mode, model, yes, session }).await
            }
            Command::Mcp { allow_writes } => mcp_cmd::serve(allow_writes).await,
            Command::Doctor => doctor::run().await,
            Command::Trust { path, revoke } => trust_cmd::run(path, revoke),
            Command::Sandbox { .. } => ExitCode::from(2),
        }
    });
    // Commands still running (cancelled, or in the background) do not outlive tandem.
    tandem_tools::exec::stop_all();
    // Do not wait for the thread blocked reading stdin: after `exit` the client may keep it open.
    runtime.shutdown_background();
    code
}
