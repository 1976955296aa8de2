//! `tandem doctor`: which language servers of the catalog are installed, and how to install
//! the missing ones.

use std::path::{Path, PathBuf};

use crate::catalog::{Catalog, find_program};

/// One server's state.
#[derive(Clone, Debug)]
pub struct DoctorLine {
    /// The server.
    pub name: String,
    /// Extensions it serves.
    pub extensions: Vec<String>,
    /// Where its program was found.
    pub found: Option<PathBuf>,
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

/// Every catalog entry, found or missing, for the workspace at `root`.
pub fn doctor(catalog: &Catalog, root: &Path) -> Vec<DoctorLine> {
    catalog
        .servers()
        .iter()
        .map(|spec| {
            let found = find_program(&spec.command[0], root);
            let problem = found.as_deref().and_then(launcher_only);
            DoctorLine {
                name: spec.name.clone(),
                extensions: spec.extensions.clone(),
                found,
                install: spec.install.clone(),
                enabled: spec.enabled,
                problem,
            }
        })
        .collect()
}
