//! `list`: the entries of a directory (or its whole tree), respecting .gitignore.

use globset::{Glob, GlobMatcher};
use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::blocking;

/// Entries shown at most.
const MAX_ENTRIES: usize = 1000;

const DESCRIPTION: &str = "List a directory's entries (directories end with /), or its whole tree with recursive. Paths are \
    relative to the workspace root. Files ignored by .gitignore and the .git directory are left out. \
    Shows at most 1000 entries.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Directory to list: absolute, or relative to the working directory (default: the working directory).
    path: Option<String>,
    /// Glob that entries must match, e.g. `*.rs`, or `src/**/*.ts` (with a `/`, it matches the
    /// path relative to the listed directory; without, the name).
    pattern: Option<String>,
    /// List the whole tree below the directory, not just its entries (default false).
    recursive: Option<bool>,
}

tool!(pub(crate) List(Args) = Decl::new("list", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["list_files", "ls", "list_directory"])
    .keywords(&["directory", "folder", "tree", "files"])
    .always_load(), list);

async fn list(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    blocking(move || run(args, &ctx)).await
}

fn run(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let dir =
        ctx.directory(args.path.as_deref(), "use `read` to see its content", "list its parent to see what is there")?;
    let shown = ctx.workspace.display(&dir);
    let matcher: Option<(GlobMatcher, bool)> = match args.pattern.as_deref().filter(|p| !p.is_empty()) {
        None => None,
        Some(pattern) => {
            let glob =
                Glob::new(pattern).map_err(|err| ToolError::new(format!("invalid pattern `{pattern}`: {err}")))?;
            Some((glob.compile_matcher(), pattern.contains('/')))
        }
    };
    let recursive = args.recursive.unwrap_or(false);
    let walker = ignore::WalkBuilder::new(&dir)
        .hidden(false)
        .git_ignore(true)
        .git_exclude(true)
        .ignore(true)
        .parents(true)
        .require_git(false)
        .max_depth(if recursive { None } else { Some(1) })
        .filter_entry(|entry| entry.file_name() != ".git")
        .build();
    let mut entries: Vec<String> = Vec::new();
    let mut errors = 0usize;
    for entry in walker {
        let Ok(entry) = entry else {
            errors += 1;
            continue;
        };
        if entry.depth() == 0 {
            continue;
        }
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if let Some((matcher, by_path)) = &matcher {
            let relative = entry.path().strip_prefix(&dir).unwrap_or(entry.path());
            let subject = if *by_path { relative.as_os_str() } else { entry.file_name() };
            if !matcher.is_match(subject) {
                continue;
            }
        }
        let mut name = ctx.workspace.display(entry.path());
        if is_dir {
            name.push('/');
        }
        entries.push(name);
    }
    entries.sort();
    let total = entries.len();
    let mut output = if total == 0 {
        format!("`{shown}` has no entries{}.", if matcher.is_some() { " matching the pattern" } else { "" })
    } else {
        entries.iter().take(MAX_ENTRIES).map(String::as_str).collect::<Vec<_>>().join("\n")
    };
    if total > MAX_ENTRIES {
        output
            .push_str(&format!("\n… {} more not shown; narrow the listing with path or pattern", total - MAX_ENTRIES));
    }
    if errors > 0 {
        output.push_str(&format!("\n({errors} entries could not be read)"));
    }
    Ok(ToolOutput::new(format!("Listed {shown} ({total} entries)"), output)
        .with("path", shown)
        .with("count", total)
        .with("truncated", total > MAX_ENTRIES))
}
