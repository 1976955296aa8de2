//! Code intelligence as tools see it: the [`CodeIntel`] trait, which the language-server proxy
//! (`tandem-lsp-proxy`) implements, and the plain types it answers with.
//!
//! Positions here are 0-based lines and 0-based columns counted in Unicode scalar values
//! ([`tandem_text::PositionEncoding::Utf32`]); the proxy converts to and from whatever encoding
//! each server negotiated. Paths are absolute and canonical, like the buffer cache's.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tandem_text::Position;

/// A range in a file: 0-based lines, columns in chars.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct TextRange {
    /// Inclusive start.
    pub start: Position,
    /// Exclusive end.
    pub end: Position,
}

/// A place in a file.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    /// Absolute path.
    pub path: PathBuf,
    /// Where in it.
    pub range: TextRange,
}

/// A symbol of a document or of the workspace.
#[derive(Clone, Debug)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// LSP `SymbolKind` as a word (`function`, `struct`, ...).
    pub kind: String,
    /// Extra detail the server gives (a signature, a container).
    pub detail: Option<String>,
    /// Its whole extent.
    pub location: Location,
    /// The range of its name.
    pub selection: TextRange,
    /// Nested symbols (document symbols only).
    pub children: Vec<Symbol>,
}

/// One side of a call hierarchy: the caller or callee, and the call sites.
#[derive(Clone, Debug)]
pub struct CallItem {
    /// The function.
    pub symbol: Symbol,
    /// Where the calls are (in the caller's file for incoming calls, in the origin's file for
    /// outgoing ones).
    pub sites: Vec<Location>,
}

/// Direction of a call hierarchy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CallDirection {
    /// Who calls it.
    Incoming,
    /// What it calls.
    Outgoing,
}

/// One text replacement of a rename.
#[derive(Clone, Debug)]
pub struct TextReplacement {
    /// What to replace.
    pub range: TextRange,
    /// The new text.
    pub new_text: String,
}

/// Severity of a diagnostic.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Information,
    /// A hint.
    Hint,
}

/// One diagnostic.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// Where.
    pub range: TextRange,
    /// How bad.
    pub severity: Severity,
    /// What the server says.
    pub message: String,
    /// The server's code for it, if any.
    pub code: Option<String>,
    /// Which server (or tool inside it, e.g. `rustc`) reported it.
    pub source: Option<String>,
}

/// A file's diagnostics, or why there are none to show.
#[derive(Clone, Debug)]
pub enum DiagnosticsReport {
    /// The server has answered for the file's current text.
    Fresh {
        /// The server that answered.
        server: String,
        /// What it reported.
        diagnostics: Vec<Diagnostic>,
    },
    /// The server did not answer in time: nothing can be said about errors.
    NotReady {
        /// The server asked.
        server: String,
        /// Why (what was waited for and how long).
        reason: String,
    },
    /// No language server covers this file; nothing to report.
    NoServer,
    /// Diagnostics after edits are switched off in the configuration.
    Disabled,
    /// The server failed.
    Failed {
        /// What went wrong.
        message: String,
    },
}

/// One file of a staged change, handed to the servers for a preview.
#[derive(Clone, Debug)]
pub struct PreviewFile {
    /// Absolute path.
    pub path: PathBuf,
    /// The text the change starts from; `None` when the change creates the file.
    pub old_text: Option<String>,
    /// The staged text.
    pub new_text: String,
}

/// What a server said of one file in a preview.
#[derive(Clone, Debug)]
pub enum PreviewReport {
    /// Fresh diagnostics of the text before and after the change.
    Ready {
        /// The server that answered.
        server: String,
        /// Of the current text (empty for a file the change creates).
        before: Vec<Diagnostic>,
        /// Of the staged text.
        after: Vec<Diagnostic>,
    },
    /// Nothing can be said about errors: the server did not answer in time, is starting, or
    /// cannot check unsaved text.
    NotReady {
        /// The server asked.
        server: String,
        /// Why.
        reason: String,
    },
    /// The server failed.
    Failed {
        /// What went wrong.
        message: String,
    },
}

/// One file a preview reports on.
#[derive(Clone, Debug)]
pub struct PreviewedFile {
    /// Absolute path.
    pub path: PathBuf,
    /// A file of the change (`false`: another file whose diagnostics the change alters).
    pub changed: bool,
    /// What its server said.
    pub report: PreviewReport,
}

/// A failure the model can act on: the message says what failed and what to do next.
#[derive(Clone, Debug, thiserror::Error)]
pub enum IntelError {
    /// No server is configured or installed for the file.
    #[error("{0}")]
    NoServer(String),
    /// The server did not answer in time (the request was cancelled).
    #[error("{0}")]
    Timeout(String),
    /// The server does not offer this operation.
    #[error("{0}")]
    Unsupported(String),
    /// The server answered with an error, or died.
    #[error("{0}")]
    Server(String),
}

/// What a language-server backend offers to tools. Every method syncs the named file from the
/// buffer cache (or disk) to the server first, so answers are about the text the person sees.
#[async_trait]
pub trait CodeIntel: Send + Sync {
    /// `textDocument/definition`.
    async fn definition(&self, path: &Path, at: Position) -> Result<Vec<Location>, IntelError>;
    /// `textDocument/implementation`.
    async fn implementation(&self, path: &Path, at: Position) -> Result<Vec<Location>, IntelError>;
    /// `textDocument/references`.
    async fn references(
        &self,
        path: &Path,
        at: Position,
        include_declaration: bool,
    ) -> Result<Vec<Location>, IntelError>;
    /// `textDocument/hover`, as plain text (markdown kept as is); `None` when there is nothing.
    async fn hover(&self, path: &Path, at: Position) -> Result<Option<String>, IntelError>;
    /// `textDocument/documentSymbol`, as a tree.
    async fn document_symbols(&self, path: &Path) -> Result<Vec<Symbol>, IntelError>;
    /// `workspace/symbol`, asked of the server that covers `hint` (a file of the language).
    async fn workspace_symbols(&self, hint: &Path, query: &str) -> Result<Vec<Symbol>, IntelError>;
    /// `callHierarchy/incomingCalls` or `outgoingCalls` of the item at the position.
    async fn call_hierarchy(
        &self,
        path: &Path,
        at: Position,
        direction: CallDirection,
    ) -> Result<Vec<CallItem>, IntelError>;
    /// `textDocument/rename`: the replacements per file, not applied.
    async fn rename(
        &self,
        path: &Path,
        at: Position,
        new_name: &str,
    ) -> Result<Vec<(PathBuf, Vec<TextReplacement>)>, IntelError>;
    /// The file's current diagnostics, waiting (capped) for the server to answer for its
    /// current text.
    async fn diagnostics(&self, path: &Path) -> DiagnosticsReport;
    /// Tells the servers that `paths` changed (on disk or in the editor) and waits, capped, for
    /// fresh diagnostics of each. Files no server covers are left out.
    async fn diagnostics_after_write(&self, paths: &[PathBuf]) -> Vec<(PathBuf, DiagnosticsReport)>;
    /// Hands each file's staged text to the servers that serve it, as a new document version,
    /// and waits (under the preview deadline) for fresh diagnostics of the text the change
    /// starts from and of the staged one; other files whose published diagnostics the change
    /// alters come along (`changed: false`). Files no server serves cost nothing and are left
    /// out. The servers keep the staged text until [`CodeIntel::end_preview`].
    async fn preview(&self, _files: &[PreviewFile]) -> Vec<PreviewedFile> {
        Vec::new()
    }
    /// Ends the preview of `paths`: each server's copy becomes the file's current text again
    /// (the editor's buffer, else the disk), and a document the preview opened is closed unless
    /// the change was committed. A rejected change leaves no trace in the servers.
    async fn end_preview(&self, _paths: &[PathBuf]) {}
    /// What the server for `path` runs without, and why (restricted mode, in a folder the
    /// person has not trusted); `None` when it runs unrestricted, or no server serves the file.
    fn restrictions(&self, _path: &Path) -> Option<String> {
        None
    }
}
