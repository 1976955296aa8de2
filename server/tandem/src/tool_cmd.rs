//! `tandem tool` and `tandem tools`: one tool call from the command line, no model needed.

use std::io::{Read, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use tandem_text::BufferCache;
use tandem_tools::{Registry, ToolContext, Workspace};

use crate::config::Config;

/// Bad usage: exit status 2 with a message on stderr.
fn usage(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("tandem: {message}");
    ExitCode::from(2)
}

/// The current directory's workspace and its tool registry (config warnings logged); shared by
/// `tandem tool` and `tandem mcp`.
pub(crate) fn setup() -> anyhow::Result<(Arc<Workspace>, Registry)> {
    let cwd = std::env::current_dir().context("cannot read the current directory")?;
    let config = Config::load(&cwd, None)?;
    for warning in &config.warnings {
        tracing::warn!("{warning}");
    }
    let workspace = Workspace::new(&cwd, &config.allowed_paths)
        .with_context(|| format!("cannot open the workspace at {}", cwd.display()))?;
    Ok((Arc::new(workspace), Registry::builtin(config.tools)))
}

fn print_json(value: &impl serde::Serialize) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    let written = serde_json::to_writer_pretty(&mut stdout, value).is_ok() && writeln!(stdout).is_ok();
    if written { ExitCode::SUCCESS } else { ExitCode::FAILURE }
}

/// `tandem tool <name> [json]`.
pub async fn run(name: &str, arguments: Option<&str>) -> ExitCode {
    let text = match arguments {
        None => "{}".to_owned(),
        Some("-") => {
            let mut text = String::new();
            if let Err(err) = std::io::stdin().read_to_string(&mut text) {
                return usage(format!("cannot read arguments from stdin: {err}"));
            }
            text
        }
        Some(text) => text.to_owned(),
    };
    let arguments: serde_json::Value = match serde_json::from_str(&text) {
        Ok(value @ serde_json::Value::Object(_)) => value,
        Ok(_) => return usage("arguments must be a JSON object, e.g. '{\"file_path\": \"README.md\"}'"),
        Err(err) => return usage(format!("arguments are not valid JSON: {err}")),
    };
    let (workspace, registry) = match setup() {
        Ok(setup) => setup,
        Err(err) => return usage(format!("{err:#}")),
    };
    let registry = Arc::new(registry);
    // MCP tools exist once their servers have listed them: start the servers only when asked for one.
    let mcp = if name.starts_with("mcp") {
        let manager = tandem_mcp::McpManager::from_workspace(workspace.root(), Arc::clone(&registry), false);
        manager.ready(std::time::Duration::from_secs(30)).await;
        Some(manager)
    } else {
        None
    };
    let ctx = ToolContext::new(workspace, Arc::new(BufferCache::new()));
    let outcome = registry.call(name, arguments, ctx).await;
    if let Some(manager) = &mcp {
        manager.shutdown().await;
    }
    match outcome {
        Err(err) => usage(format!("{err}; `tandem tools` lists the tools")),
        Ok(result) => {
            let failed = result.error.is_some();
            let code = print_json(&result);
            if failed { ExitCode::from(1) } else { code }
        }
    }
}

/// `tandem tools`.
pub async fn list() -> ExitCode {
    match setup() {
        Err(err) => usage(format!("{err:#}")),
        Ok((_, registry)) => {
            let mut stdout = std::io::stdout().lock();
            for info in registry.infos() {
                let aliases = if info.aliases.is_empty() {
                    String::new()
                } else {
                    format!(" (aliases: {})", info.aliases.join(", "))
                };
                if writeln!(
                    stdout,
                    "{:<10} [{}] {}{aliases}",
                    info.name,
                    info.group.as_str(),
                    info.description.split(". ").next().unwrap_or_default()
                )
                .is_err()
                {
                    return ExitCode::FAILURE;
                }
            }
            ExitCode::SUCCESS
        }
    }
}
