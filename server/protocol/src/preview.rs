//! Review with foresight: what a proposed change would do to the language servers'
//! diagnostics, carried by a permission request (`RequestPermissionParams.diagnostics`; on ACP
//! under `_meta._tandem/diagnostics`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What the whole change (every hunk applied) would do to the diagnostics of the files it
/// touches and of the other files the servers report on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiagnosticsPreview {
    /// `ready` when every server answered for every file in time; `partial` when some did not
    /// (see each file); `notReady` when none did: then nothing is known about errors.
    pub status: PreviewStatus,
    /// For the person: `introduces 2 errors: … / resolves 1`, or why nothing is known.
    pub summary: String,
    /// One entry per file a server reported on: the changed files, and other files whose
    /// diagnostics the change alters (a renamed function's callers).
    pub files: Vec<FileDiagnosticsPreview>,
}

/// How complete a preview is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PreviewStatus {
    /// Fresh diagnostics of the current and of the proposed text.
    Ready,
    /// Some files are ready, others not.
    Partial,
    /// The server did not answer in time, is starting or indexing, cannot check unsaved text,
    /// or failed: this says nothing about errors.
    NotReady,
}

/// One file of a preview.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileDiagnosticsPreview {
    /// Absolute path.
    pub path: String,
    /// `true` for a file of the change; `false` for another file whose diagnostics it alters.
    pub changed: bool,
    /// The language server that answered (or was asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
    /// `ready` or `notReady` (never `partial`).
    pub status: PreviewStatus,
    /// Why the file is not ready.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Errors and warnings the change would add (positions in the proposed text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub introduced: Vec<PreviewDiagnostic>,
    /// Errors and warnings the change would remove (positions in the current text).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<PreviewDiagnostic>,
}

/// Severity of a previewed diagnostic (only errors and warnings are previewed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PreviewSeverity {
    /// An error.
    Error,
    /// A warning.
    Warning,
}

/// One diagnostic of a preview. Lines and columns are 1-based; columns count Unicode scalar
/// values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreviewDiagnostic {
    /// How bad.
    pub severity: PreviewSeverity,
    /// What the server says.
    pub message: String,
    /// Start line.
    pub line: u32,
    /// Start column.
    pub column: u32,
    /// End line.
    pub end_line: u32,
    /// End column (exclusive).
    pub end_column: u32,
    /// The server's code for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Who reported it (`Pylance`, `rustc`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The hunk (`HunkInfo.id`) whose lines hold it: new lines for an introduced diagnostic,
    /// old lines for a resolved one. Absent outside every hunk and in other files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hunk: Option<String>,
}
