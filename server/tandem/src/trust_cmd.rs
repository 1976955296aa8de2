//! `tandem trust [PATH] [--revoke]`: the person says they trust a folder's own settings and
//! programs. Trusting pins the programs of the folder that Tandem would start (language
//! servers, MCP servers) as they are now; trusting again pins them anew; revoking drops the pins.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use tandem_tools::binaries::{Binaries, Lookup, unpin_under};
use tandem_tools::trust::{Trust, grant_in, revoke_in, trust_of, user_config_dir};

/// Trusts (or stops trusting) `path`, default the project around the current directory (as
/// `tandem run` finds it), and says what that changes.
pub fn run(path: Option<PathBuf>, revoke: bool) -> ExitCode {
    let folder = match path {
        Some(path) => path.canonicalize().map_err(|err| format!("cannot find {}: {err}", path.display())),
        None => crate::workbench::Root::from_cli(None)
            .and_then(|root| root.resolve())
            .map(|(root, _)| root)
            .map_err(|err| format!("cannot find the project: {err}")),
    };
    let folder = match folder {
        Ok(folder) => folder,
        Err(err) => {
            eprintln!("tandem trust: {err}");
            return ExitCode::from(2);
        }
    };
    let Some(dir) = user_config_dir() else {
        eprintln!("tandem trust: neither XDG_CONFIG_HOME nor HOME is set, so there is nowhere to keep the list");
        return ExitCode::FAILURE;
    };
    // What the folder's settings ask for that is ignored while it is untrusted.
    let asked = crate::config::Config::load(&folder, None).map(|c| c.untrusted_ignored).unwrap_or_default();
    let result = if revoke { revoke_in(&dir, &folder).map(|_| ()) } else { grant_in(&dir, &folder).map(drop) };
    if let Err(err) = result {
        eprintln!("tandem trust: cannot update {}: {err}", dir.join("trusted-folders").display());
        return ExitCode::FAILURE;
    }
    let pinned = if revoke {
        if let Err(err) = unpin_under(&dir, &folder) {
            eprintln!("tandem trust: cannot update {}: {err}", dir.join(tandem_tools::binaries::PIN_FILE).display());
            return ExitCode::FAILURE;
        }
        Vec::new()
    } else {
        match pin_programs(&folder, &dir) {
            Ok(pinned) => pinned,
            Err(err) => {
                eprintln!("tandem trust: {err}");
                return ExitCode::FAILURE;
            }
        }
    };
    let out = &mut std::io::stderr();
    let line = match (revoke, trust_of(&folder)) {
        (true, Trust::Untrusted) => format!("{} is no longer trusted.", folder.display()),
        (true, Trust::Trusted) => format!(
            "{} is still trusted: a folder above it is in {}, or TANDEM_TRUST_WORKSPACE=1 is set.",
            folder.display(),
            dir.join("trusted-folders").display()
        ),
        (false, _) if asked.is_empty() => format!("Trusted {}.", folder.display()),
        (false, _) => format!(
            "Trusted {}. Its settings now apply (restart Tandem or reload the editor): {}.",
            folder.display(),
            asked.join(", ")
        ),
    };
    std::io::Write::write_all(out, format!("{line}\n").as_bytes()).ok();
    if !pinned.is_empty() {
        let names: Vec<String> =
            pinned.iter().map(|p| p.strip_prefix(&folder).unwrap_or(p).display().to_string()).collect();
        let text = format!(
            "Pinned its programs as they are now: {}. One that changes later does not start until you run `tandem trust` again.\n",
            names.join(", ")
        );
        std::io::Write::write_all(out, text.as_bytes()).ok();
    }
    ExitCode::SUCCESS
}

/// Pins every program in `folder` that Tandem would start there now that it is trusted: the
/// language servers of its catalog and its MCP stdio servers. Returns what was pinned.
fn pin_programs(folder: &Path, config_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let binaries = Binaries::new(folder, Trust::Trusted).with_pins_in(config_dir.to_path_buf());
    let mut programs = Vec::new();
    let mut add = |lookup: Lookup| {
        if let Lookup::Found(program) = lookup
            && program.in_workspace
            && !programs.contains(&program.path)
        {
            programs.push(program.path);
        }
    };
    if let Ok(config) = crate::config::Config::load(folder, None)
        && let Ok(catalog) = tandem_lsp_proxy::Catalog::new(&config.lsp)
    {
        for spec in catalog.servers().iter().filter(|s| s.enabled) {
            add(tandem_lsp_proxy::catalog::find(spec, &binaries));
        }
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mcp = tandem_mcp::McpConfig::load(folder, home.as_deref(), &|name| std::env::var(name).ok(), Trust::Trusted);
    for server in mcp.servers.values() {
        if let tandem_mcp::Transport::Stdio { command, env, cwd, .. } = &server.transport {
            let dir = cwd.as_deref().map_or_else(|| folder.to_path_buf(), |c| folder.join(c));
            let binaries = tandem_mcp::stdio_binaries(folder, env).with_pins_in(config_dir.to_path_buf());
            add(binaries.find(command, &dir, &[]));
        }
    }
    binaries.pin(&programs).map_err(|err| err.to_string())
}
