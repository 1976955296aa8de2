//! `tandem doctor`: the project (its root, whether it is trusted and what its own settings lost
//! for it, the provider that would be used and whether it answers); which language servers are
//! installed for it, and the install command of each missing one; then each configured MCP server,
//! where it was configured, whether it connects, its tool count or its error.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tandem_lsp_proxy::{Catalog, doctor};

use tandem_tools::{Registry, ToolConfig};

use crate::config::Config;
use crate::workbench::Root;

/// Prints one line per catalog server and per MCP server; exit status 0 (missing or failing
/// servers are not an error).
pub async fn run(root: Option<std::path::PathBuf>) -> ExitCode {
    let cwd = match Root::from_cli(root).and_then(|root| root.resolve()) {
        Ok((root, _)) => root,
        Err(err) => {
            eprintln!("tandem: {err}");
            return ExitCode::from(2);
        }
    };
    let loaded = Config::load(&cwd, None).map_err(|e| format!("{e:#}"));
    let mut out = match &loaded {
        Ok(config) => project_section(&cwd, config).await,
        Err(_) => String::new(),
    };
    let catalog = match loaded.and_then(|c| Catalog::new(&c.lsp).map(|catalog| (catalog, c.trust))) {
        Ok(catalog) => catalog,
        Err(err) => {
            eprintln!("tandem: {err}");
            return ExitCode::from(2);
        }
    };
    let (catalog, trust) = catalog;
    out.push_str("Language servers (configure in .tandem/config.toml [lsp.<name>]):\n");
    // Programs are looked up, never run (but rustup's launcher outside the workspace).
    let lines = doctor(&catalog, &tandem_tools::binaries::Binaries::new(&cwd, trust));
    let missing = lines.iter().filter(|l| l.enabled && (l.found.is_none() || l.problem.is_some())).count();
    for line in &lines {
        let extensions = line.extensions.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" ");
        let restricted = match line.restricted.as_slice() {
            [] => String::new(),
            off => format!("; restricted until `tandem trust`: {} off", off.join(", ")),
        };
        let state = match (&line.found, line.enabled) {
            (_, false) => "disabled".to_owned(),
            (None, true) if line.in_repository.is_some() => format!(
                "untrusted {}: found in the repository; runs after `tandem trust`",
                line.in_repository
                    .as_deref()
                    .map(|p| p.strip_prefix(&cwd).unwrap_or(p).display().to_string())
                    .unwrap_or_default()
            ),
            (Some(path), true) if line.problem.is_some() => format!(
                "broken   {}: {}; fix with: {}",
                path.display(),
                line.problem.as_deref().unwrap_or_default(),
                line.install
            ),
            (Some(path), true) => format!("found    {}{restricted}", path.display()),
            (None, true) => format!("missing  install with: {}", line.install),
        };
        out.push_str(&format!("  {:<28} {:<34} {state}\n", line.name, extensions));
    }
    out.push_str(&format!("{} found, {missing} missing\n\n", lines.len() - missing));
    use tandem_tools::exec::sandbox::{Sandbox, current};
    out.push_str(&match current() {
        Sandbox::Launcher(_) => "Sandbox: Landlock (files and TCP) and seccomp (no unix sockets): read-only commands run sandboxed without asking\n\n".to_owned(),
        Sandbox::Unavailable(why) => format!("Sandbox: unavailable ({why}): read-only commands ask first; with `[exec] sandbox = \"off\"` they would run unsandboxed without asking, and auto-approval would rest on the classifier alone\n\n"),
        Sandbox::Off => "Sandbox: off ([exec] sandbox = \"off\" or TANDEM_SANDBOX=off): read-only commands run unsandboxed without asking: auto-approval rests on the classifier alone, and nothing stops a command it misjudges\n\n".to_owned(),
    });
    if !matches!(current(), Sandbox::Off) {
        out.push_str(&match tandem_tools::exec::sandbox::workspace_write_available() {
            Ok(()) => "Workspace-write sandbox: available: in auto-edit mode, commands that would ask run in it without asking (writes only to existing files and below existing directories of the workspace, and temp; nothing new in the workspace root; .git, .tandem, .mcp.json, .vscode, .idea, .devcontainer, .envrc read-only; no unix sockets; no network unless [exec] network = true)\n\n".to_owned(),
            Err(why) => format!("Workspace-write sandbox: unavailable ({why}): in auto-edit mode, commands ask\n\n"),
        });
    }
    mcp_section(&cwd, &mut out).await;
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(out.as_bytes()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The project: its root, its trust and what that costs it, the configuration's warnings, and
/// the provider that would be used (asked for its models, bounded, to say whether it answers).
async fn project_section(root: &std::path::Path, config: &Config) -> String {
    use std::fmt::Write as _;
    let mut text = format!("Project: {}\n", root.display());
    match config.trust {
        tandem_tools::trust::Trust::Trusted => writeln!(text, "  trusted: its own settings apply").ok(),
        tandem_tools::trust::Trust::Untrusted if config.untrusted_ignored.is_empty() => {
            writeln!(text, "  not trusted (nothing of its own settings is ignored for it)").ok()
        }
        tandem_tools::trust::Trust::Untrusted => writeln!(
            text,
            "  not trusted: ignored until `tandem trust {}`: {}",
            root.display(),
            config.untrusted_ignored.join(", ")
        )
        .ok(),
    };
    // The trust warning says what the line above does.
    let trust_notice = crate::config::untrusted_notice(root, &config.untrusted_ignored);
    for warning in config.warnings.iter().filter(|w| **w != trust_notice) {
        writeln!(text, "  warning: {warning}").ok();
    }
    match config.provider_settings() {
        Err(err) => writeln!(text, "Provider: not usable: {err:#}").ok(),
        Ok(settings) => {
            let key = match (&settings.api_key_env, &settings.api_key) {
                (None, _) => "no API key".to_owned(),
                (Some(name), Some(_)) => format!("key from ${name}"),
                (Some(name), None) => format!("${name} is NOT set"),
            };
            let kind = match settings.kind {
                tandem_llm::ProviderKind::OpenAi => "openai",
                tandem_llm::ProviderKind::Anthropic => "anthropic",
            };
            writeln!(text, "Provider: {kind} at {}, model {} ({key})", settings.base_url, settings.model).ok();
            let answer = match tandem_llm::Client::new(settings) {
                Ok(client) => match tokio::time::timeout(Duration::from_secs(5), client.list_models()).await {
                    Ok(Ok(models)) => format!("answers ({} models listed)", models.len()),
                    Ok(Err(err)) => format!("does not answer as expected: {}", err.message),
                    Err(_) => "no answer within 5 s".to_owned(),
                },
                Err(err) => format!("cannot be used: {}", err.message),
            };
            writeln!(text, "  {answer}").ok()
        }
    };
    text.push('\n');
    text
}

/// Connects every configured MCP server (in parallel, each bounded by its timeout) and writes
/// one line per server.
pub async fn mcp_section(root: &std::path::Path, text: &mut String) {
    use std::fmt::Write as _;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let trust = tandem_tools::trust::trust_of(root);
    let mut config = tandem_mcp::McpConfig::load(root, home.as_deref(), &|name| std::env::var(name).ok(), trust);
    config.startup = tandem_mcp::Startup::Lazy;
    writeln!(text, "MCP servers").ok();
    for warning in &config.warnings {
        writeln!(text, "  warning: {warning}").ok();
    }
    if config.servers.is_empty() {
        writeln!(
            text,
            "  none configured (.tandem/mcp.json, .mcp.json, ~/.config/tandem/mcp.json or TANDEM_MCP_CONFIG)"
        )
        .ok();
        return;
    }
    let registry = Arc::new(Registry::new(Vec::new(), ToolConfig::default()));
    let manager = tandem_mcp::McpManager::new(root, registry, config, false);
    let started = Instant::now();
    manager.ready(Duration::from_secs(30)).await;
    for server in manager.servers() {
        let health = server.health().await;
        let transport = match &server.config.transport {
            tandem_mcp::Transport::Stdio { command, .. } => format!("stdio `{command}`"),
            tandem_mcp::Transport::Http { url, .. } => format!("http {url}"),
        };
        let detail = match (&health.last_error, server.config.enabled) {
            (_, false) => String::new(),
            (Some(error), _) => format!(" — error: {error}"),
            (None, true) => format!(", {} tools", health.tools),
        };
        writeln!(text, "  {}: {} ({transport}; from {}){detail}", server.name(), health.state, server.config.source)
            .ok();
    }
    writeln!(text, "  checked in {:.1}s", started.elapsed().as_secs_f64()).ok();
    for server in manager.servers() {
        server.disconnect().await;
    }
}
