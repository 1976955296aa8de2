//! Tandem as a language *client*: real language servers (rust-analyzer, pyright,
//! typescript-language-server, clangd, ...) started lazily per project root, kept in sync with
//! the buffer cache, restarted when they crash, and asked through the [`CodeIntel`] trait that
//! the `lsp` tool and the write tools' diagnostics use.
//!
//! API boundary: `tandem-tools` knows none of this; it sees [`LspProxy`] as
//! `Arc<dyn CodeIntel>`. Positions cross the boundary as chars (UTF-32); each server's own
//! encoding (UTF-8 when it offers it, else UTF-16) stays in here.
//!
//! [`CodeIntel`]: tandem_tool_api::CodeIntel

pub mod catalog;
mod doctor;
mod proxy;
mod restricted;
mod server;

use std::path::PathBuf;

pub use catalog::{Catalog, DiagnosticsMode, LspSettings, ServerOverride, ServerSpec, WORKSPACE_DIRS};
pub use doctor::{DoctorLine, doctor};
pub use proxy::LspProxy;
pub use server::{DiskChange, ServerError};

/// Progress of a server (start-up, indexing, checks), for the editor's `$/progress`.
#[derive(Clone, Debug)]
pub struct ProgressEvent {
    /// The server's name.
    pub server: String,
    /// Its project root.
    pub root: PathBuf,
    /// What happened.
    pub kind: ProgressKind,
}

/// A step of work-done progress.
#[derive(Clone, Debug)]
pub enum ProgressKind {
    /// Work began.
    Begin {
        /// What it is.
        title: String,
    },
    /// A message while it runs.
    Report {
        /// The message.
        message: String,
    },
    /// Work ended.
    End,
}
