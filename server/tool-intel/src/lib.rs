//! The code-intelligence tools: `lsp`, which asks the project's language servers through the
//! [`CodeIntel`](tandem_tool_api::CodeIntel) trait (its types are in `tandem_tool_api::intel`),
//! and `repo_map`, the map of the codebase (`tandem-repo-map`) ranked for a task.
//! Renames go through the file tools' commit path (`tandem-tool-fs`).

mod lsp;
mod repo_map;

use std::sync::Arc;

use tandem_tool_api::{Tool, typed};

/// The code-intelligence tools.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(lsp::Lsp), typed(repo_map::RepoMap)]
}
