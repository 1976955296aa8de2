//! `tandem doctor`: which language servers of the catalog are installed, and how to install
//! the missing ones. A program found only in the repository is reported, never run; nor is one
//! in the workspace after trust (the doctor runs only rustup's launcher, outside it).

use std::path::{Path, PathBuf};

use tandem_tool_api::binaries::{Binaries, Lookup, PinState};
use tandem_tool_api::trust::Trust;

use crate::catalog::{Catalog, find};
use crate::restricted::{kind, switched_off};

/// One server's state.
#[derive(Clone, Debug)]
pub struct DoctorLine {
    /// The server.
    pub name: String,
    /// Extensions it serves.
    pub extensions: Vec<String>,
    /// Where its program was found (outside the workspace, or in it once trusted).
    pub found: Option<PathBuf>,
    /// The only program found is in the repository, and the folder is not trusted: it runs
    /// after `tandem trust`.
    pub in_repository: Option<PathBuf>,
    /// What restricted mode switches off for it until the folder is trusted.
    pub restricted: Vec<String>,
    /// The command that installs it.
    pub install: String,
    /// Switched on in the configuration.
    pub enabled: bool,
    /// What is wrong with the program found, when something is (rustup's launcher for a
    /// component that is not installed).
    pub problem: Option<String>,
}

/// rustup puts a launcher for `rust-analyzer` on every machine with a toolchain; without the
/// component it prints "Unknown binary" and exits 1. A launcher is a link to, or a copy of,
/// `rustup` itself.
fn launcher_only(program: &Path) -> Option<String> {
    let real = program.canonicalize().ok()?;
    let is_rustup = real.file_name().is_some_and(|n| n == "rustup")
        || program.parent().map(|dir| dir.join("rustup")).and_then(|r| std::fs::metadata(r).ok()).is_some_and(
            |rustup| {
                std::fs::metadata(program).is_ok_and(|p| {
                    use std::os::unix::fs::MetadataExt;
                    (p.dev(), p.ino()) == (rustup.dev(), rustup.ino()) || p.len() == rustup.len()
                })
            },
        );
    if !is_rustup {
        return None;
    }
    let out = std::process::Command::new(program).arg("--version").stdin(std::process::Stdio::null()).output().ok()?;
    (!out.status.success()).then(|| {
        let said = String::from_utf8_lossy(&out.stderr);
        let first = said.lines().find(|l| !l.trim().is_empty()).unwrap_or("it exits with an error").trim().to_owned();
        format!("launcher only ({first})")
    })
}

/// Every catalog entry, found or missing, for the workspace `binaries` looks programs up for.
pub fn doctor(catalog: &Catalog, binaries: &Binaries) -> Vec<DoctorLine> {
    catalog
        .servers()
        .iter()
        .map(|spec| {
            let (found, in_repository, problem) = match find(spec, binaries) {
                Lookup::Found(program) if program.in_workspace => {
                    let problem = match binaries.pin_state(&program) {
                        PinState::Changed => Some(
                            "changed since it was pinned when this folder was trusted; it does not start until you run `tandem trust` again".to_owned(),
                        ),
                        PinState::Pinned | PinState::NotYet => None,
                    };
                    (Some(program.path), None, problem)
                }
                Lookup::Found(program) => {
                    let problem = launcher_only(&program.path);
                    (Some(program.path), None, problem)
                }
                Lookup::InRepository(path) => (None, Some(path), None),
                Lookup::Missing => (None, None, None),
            };
            let restricted = match binaries.trust() {
                Trust::Untrusted => {
                    switched_off(kind(spec, found.as_deref())).iter().map(|s| (*s).to_owned()).collect()
                }
                Trust::Trusted => Vec::new(),
            };
            DoctorLine {
                name: spec.name.clone(),
                extensions: spec.extensions.clone(),
                found,
                in_repository,
                restricted,
                install: spec.install.clone(),
                enabled: spec.enabled,
                problem,
            }
        })
        .collect()
}
