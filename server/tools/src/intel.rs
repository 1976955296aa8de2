//! The code-intelligence tools (the `lsp` tool); the types are `tandem-tool-api`'s.

pub(crate) mod lsp;

use std::sync::Arc;

pub use tandem_tool_api::intel::*;

use crate::Tool;

/// The code-intelligence tools.
pub(crate) fn all() -> Vec<Arc<dyn Tool>> {
    vec![Arc::new(lsp::Lsp::new())]
}
