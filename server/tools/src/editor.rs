//! What the tools need from the editor: applying an edit to an open document and saving it.
//! The LSP front door implements this with `workspace/applyEdit` and `tandem/document/save`.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tandem_text::{Position, PositionEncoding};

/// One replacement in a document open in the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentEdit {
    /// The document.
    pub path: PathBuf,
    /// The version the edit was computed against; the editor refuses it if the buffer moved on.
    pub version: i32,
    /// Start of the replaced range, in the editor's position encoding.
    pub start: Position,
    /// End of the replaced range.
    pub end: Position,
    /// The replacement.
    pub new_text: String,
}

/// The editor, as seen by tools.
#[async_trait]
pub trait EditorClient: Send + Sync {
    /// The position encoding negotiated with the editor.
    fn position_encoding(&self) -> PositionEncoding;
    /// Asks the editor to apply `edit` to its buffer (undoable there). `Ok(false)`: refused.
    async fn apply_edit(&self, edit: DocumentEdit) -> Result<bool, String>;
    /// Asks the editor to save the document. `Ok(false)`: it cannot; the server writes instead.
    async fn save(&self, path: &Path) -> Result<bool, String>;
}
