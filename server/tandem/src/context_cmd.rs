//! `tandem context`: what the agent is told in the current directory's project — instruction
//! files, rules (with the file that brings each scoped one), commands, skills — with their token
//! costs, and every malformed file with its line. Exit status 1 when a file is malformed.

use std::io::Write as _;
use std::process::ExitCode;

use crate::config::Config;
use crate::workbench::Root;

/// Prints the report; the budget is the configured model's (the default profile's when no
/// provider is configured).
pub fn run(root: Option<std::path::PathBuf>) -> ExitCode {
    let (root, cwd) = match Root::from_cli(root).and_then(|root| root.resolve()) {
        Ok(found) => found,
        Err(err) => {
            eprintln!("tandem: {err}");
            return ExitCode::from(2);
        }
    };
    let budget = Config::load(&root, None)
        .ok()
        .and_then(|config| config.provider_settings().ok())
        .map(|settings| tandem_llm::profile::resolve(&settings, &settings.model))
        .map_or((tandem_llm::profile::UNKNOWN.context_window / 8).clamp(1_000, 16_000), |resolved| {
            resolved.instruction_budget()
        });
    let places = tandem_guidance::Places::new(&root, &cwd);
    let (text, errors) = tandem_guidance::report(&places, budget as usize * tandem_guidance::BYTES_PER_TOKEN, None);
    if let Err(err) = std::io::stdout().lock().write_all(text.as_bytes()) {
        eprintln!("tandem: {err}");
        return ExitCode::FAILURE;
    }
    if errors > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS }
}
