//! The search tools: `glob` (files by name) and `grep` (files by content). Both walk the tree in
//! parallel with the `ignore` crate, so .gitignore, .ignore and hidden files are handled the way
//! ripgrep handles them, and `.git` is never entered.

mod glob;
mod grep;

use std::path::Path;
use std::sync::Arc;

use tandem_tool_api::{Tool, typed};

/// Lines longer than this (in chars) are cut in search results.
pub(crate) const MAX_LINE_CHARS: usize = 500;

/// Every search tool.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![typed(glob::Glob), typed(grep::Grep)]
}

/// A walker over `dir` with ripgrep's rules: ignore files honoured (also outside a git
/// repository), hidden entries skipped, `.git` never entered. Public for `generate_readme`, which
/// walks directories the same way.
pub fn walker(dir: &Path) -> ignore::WalkBuilder {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder
        .hidden(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}

/// `line` cut to [`MAX_LINE_CHARS`] chars, with a marker saying how long it was.
pub(crate) fn cut_line(line: &str) -> std::borrow::Cow<'_, str> {
    tandem_tool_fs::cut_line_at(line, MAX_LINE_CHARS).0
}

#[cfg(test)]
mod tests;
