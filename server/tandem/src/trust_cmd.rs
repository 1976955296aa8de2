//! `tandem trust [PATH] [--revoke]`: the person says they trust a folder's own settings.

use std::path::PathBuf;
use std::process::ExitCode;

use tandem_tools::trust::{Trust, grant_in, revoke_in, trust_of, user_config_dir};

/// Trusts (or stops trusting) `path`, default the current directory, and says what that
/// changes.
pub fn run(path: Option<PathBuf>, revoke: bool) -> ExitCode {
    let folder = match path.map_or_else(std::env::current_dir, Ok).and_then(|p| p.canonicalize()) {
        Ok(folder) => folder,
        Err(err) => {
            eprintln!("tandem trust: cannot find the folder: {err}");
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
    ExitCode::SUCCESS
}
