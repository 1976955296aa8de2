//! `tandem doctor`: what this machine and workspace offer. MCP section: each configured server,
//! where it was configured, whether it connects, its tool count or its error.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tandem_tools::{Registry, ToolConfig};

/// `tandem doctor` in the current directory's workspace.
pub async fn run() -> ExitCode {
    let root = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    let mut out = std::io::stdout().lock();
    let mut text = String::new();
    mcp_section(&root, &mut text).await;
    if out.write_all(text.as_bytes()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// Connects every configured MCP server (in parallel, each bounded by its timeout) and writes
/// one line per server.
pub async fn mcp_section(root: &std::path::Path, text: &mut String) {
    use std::fmt::Write as _;
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let mut config = tandem_mcp::McpConfig::load(root, home.as_deref(), &|name| std::env::var(name).ok());
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
