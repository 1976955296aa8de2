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
}

/// Every catalog entry, found or missing, for the workspace at `root`.
pub fn doctor(catalog: &Catalog, root: &Path) -> Vec<DoctorLine> {
    catalog
        .servers()
        .iter()
        .map(|spec| DoctorLine {
            name: spec.name.clone(),
            extensions: spec.extensions.clone(),
            found: find_program(&spec.command[0], root),
            install: spec.install.clone(),
            enabled: spec.enabled,
        })
        .collect()
}
