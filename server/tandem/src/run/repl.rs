//! The interactive session of `tandem run` without a prompt: a line editor with history (kept
//! in the user's state directory), prompts sent as turns, and slash commands.

use std::path::PathBuf;
use std::process::ExitCode;

use rustyline::error::ReadlineError;
use tandem_protocol::{ModeId, SessionSetModeParams};

use super::Run;
use crate::workbench::Workbench;

const HELP: &str = "\
Type a request and press Enter; Ctrl-C cancels a running turn, Ctrl-D leaves.
  /mode [default|auto-edit|plan|yolo]  show or change the permission mode
  /model [name]                        show the model and the provider's, or change it
  /compact                             shorten what the model sees of the session
  /permissions [check 'tool(call)']    the rules and hooks in force, or what they say of a call
  /undo                                undo the last turn's changes (reviewed first)
  /redo                                bring back what the last undo replaced
  /context                             what the agent is told here (instructions, rules, commands, skills)
  /init                                have the agent write a first AGENTS.md (reviewed like any change)
  /sessions [id|last]                  list the stored sessions, or continue one
  /new                                 start a new session
  /help                                this list
  /exit                                leave (also /quit, Ctrl-D)";

/// What the loop does after a command.
enum Flow {
    Go,
    Quit,
}

/// Where the prompt history is kept: `$XDG_STATE_HOME/tandem/history`, or under
/// `~/.local/state`.
fn history_path() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")))?;
    Some(state.join("tandem").join("history"))
}

/// Runs the interactive session until `/exit` or Ctrl-D. The exit status is the last turn's.
pub(super) async fn interactive(run: &mut Run, bench: &Workbench) -> anyhow::Result<ExitCode> {
    let mut editor = rustyline::DefaultEditor::new()?;
    let history = history_path();
    if let Some(path) = &history {
        // A first run has no history yet.
        let _ = editor.load_history(path);
    }
    let model = run.agent.model(&run.session).unwrap_or_default();
    let mode = run.agent.mode(&run.session).map(|m| m.as_str().to_owned()).unwrap_or_default();
    eprintln!(
        "{}",
        run.terminal.err_style.paint(
            "2",
            &format!(
                "Tandem in {} — model {model}, mode {mode}. /help lists the commands; Ctrl-D leaves.",
                bench.workspace.root().display()
            )
        )
    );
    let mut code = ExitCode::SUCCESS;
    loop {
        // Whatever the last command was, nothing spins at the prompt.
        run.terminal.end_turn();
        let line = tokio::task::block_in_place(|| editor.readline("› "));
        let line = match line {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(err) => return Err(err.into()),
        };
        let text = line.trim();
        if text.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(text);
        if let Some(command) = text.strip_prefix('/') {
            match command_line(run, bench, command).await {
                Ok(Flow::Go) => {}
                Ok(Flow::Quit) => break,
                Err(err) => eprintln!("tandem: {err:#}"),
            }
            continue;
        }
        match run.turn(text.to_owned()).await {
            // A cancelled turn does not make leaving the session a failure.
            Ok((status, _)) => code = if status == ExitCode::from(130) { ExitCode::SUCCESS } else { status },
            Err(err) => eprintln!("tandem: {err:#}"),
        }
        // A provider that reports no usage at all gets no token line.
        if let Some(usage) = run.terminal.usage.lock().filter(|u| u.session.input_tokens + u.session.output_tokens > 0)
        {
            eprintln!("{}", run.terminal.err_style.paint("2", &super::terminal::usage_line(&usage)));
        }
    }
    if let Some(path) = &history {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        if let Err(err) = editor.save_history(path) {
            tracing::warn!("cannot save the prompt history to {}: {err}", path.display());
        }
    }
    if run.kept {
        eprintln!("tandem: session {} kept (continue it with --session {0})", run.session);
    }
    Ok(code)
}

/// Runs one slash command (`command` without its `/`).
async fn command_line(run: &mut Run, bench: &Workbench, command: &str) -> anyhow::Result<Flow> {
    let (name, argument) = command.split_once(char::is_whitespace).unwrap_or((command, ""));
    let argument = argument.trim();
    match name {
        "help" | "?" => {
            eprintln!("{HELP}");
            let (custom, _) = tandem_guidance::commands(&places(run));
            if !custom.is_empty() {
                eprintln!("The project's and your own commands:");
            }
            for command in custom {
                let usage = format!("/{} {}", command.name, command.argument_hint.unwrap_or_default());
                eprintln!("  {usage:<36} {} ({})", command.description, command.file);
            }
        }
        "exit" | "quit" | "q" => return Ok(Flow::Quit),
        "mode" => mode(run, argument).await?,
        "model" => model(run, argument).await?,
        "compact" => run.compact().await?,
        "permissions" => eprintln!("{}", crate::permissions_cmd::describe(bench, argument)),
        "undo" => {
            let result = run.agent.undo(&run.session, None).await?;
            eprintln!("tandem: {}", tandem_agent::describe_restore(&result));
        }
        "redo" => {
            let result = run.agent.redo(&run.session).await?;
            eprintln!("tandem: {}", tandem_agent::describe_restore(&result));
        }
        "sessions" if argument.is_empty() => sessions(run),
        "sessions" | "resume" => {
            run.resume(argument, None).await?;
            eprintln!("tandem: continuing session {}", run.session);
        }
        "new" => {
            run.fresh(None)?;
            eprintln!("tandem: new session {}", run.session);
        }
        // `/context`, `/init` and custom commands: the agent expands them.
        _ if matches!(name, "context" | "init")
            || tandem_guidance::commands(&places(run)).0.iter().any(|c| c.name == name) =>
        {
            run.turn(format!("/{command}")).await?;
        }
        _ => anyhow::bail!("unknown command `/{name}`; /help lists them"),
    }
    Ok(Flow::Go)
}

/// Where the session's commands are looked for.
fn places(run: &Run) -> tandem_guidance::Places {
    tandem_guidance::Places::new(&run.root, std::path::Path::new(&run.cwd))
}

async fn mode(run: &Run, argument: &str) -> anyhow::Result<()> {
    if argument.is_empty() {
        eprintln!("tandem: mode {}", run.agent.mode(&run.session)?.as_str());
        return Ok(());
    }
    let mode: ModeId = serde_json::from_value(serde_json::Value::String(argument.to_owned()))
        .map_err(|_| anyhow::anyhow!("unknown mode `{argument}`: use default, auto-edit, plan or yolo"))?;
    run.agent.set_mode(SessionSetModeParams { session_id: run.session.clone(), mode_id: mode }).await?;
    Ok(())
}

/// `/model NAME` switches; `/model` alone shows the model and what the provider offers.
async fn model(run: &Run, argument: &str) -> anyhow::Result<()> {
    if !argument.is_empty() {
        run.agent.set_model(&run.session, argument)?;
        eprintln!("tandem: model {}", run.agent.model(&run.session)?);
        return Ok(());
    }
    let current = run.agent.model(&run.session)?;
    eprintln!("tandem: model {current}");
    match run.agent.provider_models().await {
        Ok(models) if models.is_empty() => eprintln!("tandem: the provider lists no models"),
        Ok(models) => {
            eprintln!("The provider's models (/model NAME switches):");
            for info in models {
                let mark = if info.id == current { "*" } else { " " };
                eprintln!("{mark} {}", info.id);
            }
        }
        Err(err) => eprintln!("tandem: the provider's models cannot be listed: {err}"),
    }
    Ok(())
}

fn sessions(run: &Run) {
    let list = run.store.list();
    if list.is_empty() {
        eprintln!("tandem: no stored sessions yet");
    }
    for info in list.iter().take(20) {
        let mark = if info.session_id == run.session { "*" } else { " " };
        let when = info.updated_at.as_deref().unwrap_or("");
        eprintln!("{mark} {}  {when}  {}", info.session_id, info.title.as_deref().unwrap_or(""));
    }
}
