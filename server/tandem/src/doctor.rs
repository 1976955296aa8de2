//! `tandem doctor`: which language servers are installed for the current directory's
//! workspace, and the install command of each missing one.

use std::io::Write;
use std::process::ExitCode;

use tandem_lsp_proxy::{Catalog, doctor};

use crate::config::Config;

/// Prints one line per catalog server; exit status 0 (missing servers are not an error).
pub fn run() -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => {
            eprintln!("tandem: cannot read the current directory: {err}");
            return ExitCode::from(2);
        }
    };
    let catalog = match Config::load(&cwd, None).map_err(|e| format!("{e:#}")).and_then(|c| Catalog::new(&c.lsp)) {
        Ok(catalog) => catalog,
        Err(err) => {
            eprintln!("tandem: {err}");
            return ExitCode::from(2);
        }
    };
    let mut out = String::from("Language servers (configure in .tandem/config.toml [lsp.<name>]):\n");
    let lines = doctor(&catalog, &cwd);
    let missing = lines.iter().filter(|l| l.enabled && l.found.is_none()).count();
    for line in &lines {
        let extensions = line.extensions.iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" ");
        let state = match (&line.found, line.enabled) {
            (_, false) => "disabled".to_owned(),
            (Some(path), true) => format!("found    {}", path.display()),
            (None, true) => format!("missing  install with: {}", line.install),
        };
        out.push_str(&format!("  {:<28} {:<34} {state}\n", line.name, extensions));
    }
    out.push_str(&format!("{} found, {missing} missing\n", lines.len() - missing));
    let mut stdout = std::io::stdout().lock();
    if stdout.write_all(out.as_bytes()).is_err() {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
