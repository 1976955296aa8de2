//! The search tools: `glob` (files by name) and `grep` (files by content). Both walk the tree in
//! parallel with the `ignore` crate, so .gitignore, .ignore and hidden files are handled the way
//! ripgrep handles them, and `.git` is never entered.

mod glob;
mod grep;

use std::sync::Arc;

use tandem_tool_api::{Tool, typed};

/// Lines longer than this (in chars) are cut in search results.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// Every search tool.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(glob::Glob), typed(grep::Grep)]
}

/// The walker of every tool that walks the tree (ripgrep's rules); re-exported for
/// `generate_readme`.
pub use tandem_tool_api::walker;

/// `line` cut to [`MAX_LINE_CHARS`] chars, with a marker saying how long it was.
pub(crate) fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    tandem_tool_fs::cut_line_at(line, MAX_LINE_CHARS).0
}

#[cfg(test)]
mod tests;
