//! How the tools walk the workspace: ripgrep's rules, shared by `glob`, `grep`,
//! `generate_readme` and the repository map, so that one file is either seen by all of them or by
//! none.

use std::path::Path;

/// A walker over `dir` with ripgrep's rules: ignore files honoured (also outside a git
/// repository), hidden entries skipped, `.git` never entered, symbolic links not followed.
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
