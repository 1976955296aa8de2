//! `glob`: files whose path matches a glob pattern, by path (or newest first when asked: that
//! costs a `stat` per matching file, which the walk itself does not need).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};
use tandem_tool_fs::blocking;

/// Files shown when the call does not say.
const DEFAULT_MAX_RESULTS: usize = 500;

const DESCRIPTION: &str = "Find files by path pattern, e.g. `**/*.rs`, `src/**/*.{ts,tsx}`, `*.toml`. The pattern \
    matches the path relative to the searched directory (`*` stays within one directory; `**` crosses \
    directories). Files ignored by .gitignore/.ignore, hidden files and .git are left out. Results are \
    relative to the workspace root, sorted by path, or newest first with sort `modified`. To search \
    file contents, use `grep`.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Glob pattern the file paths must match, e.g. `**/*.rs` or `src/**/*.{ts,tsx}`.
    pattern: String,
    /// Directory to search: absolute, or relative to the workspace root (default: the root).
    path: Option<String>,
    /// Files shown at most (default 500).
    max_results: Option<usize>,
    /// `path` (default) or `modified` (newest first).
    sort: Option<SortBy>,
}

/// The order of the results.
#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
enum SortBy {
    /// By path.
    Path,
    /// Newest first (by modification time), then by path.
    Modified,
}

tool!(pub(crate) Glob(Args) = Decl::new("glob", ToolGroup::Search, DESCRIPTION)
    .aliases(&["find_files"])
    .keywords(&["find", "files", "pattern", "names", "paths"])
    .always_load(), glob);

async fn glob(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    blocking(move || run(args, &ctx)).await
}

/// One walker thread's matches, handed to the shared list in batches and when the thread's
/// visitor is dropped at the end of the walk.
struct Batch<'a> {
    items: Vec<(SystemTime, PathBuf)>,
    into: &'a Mutex<Vec<(SystemTime, PathBuf)>>,
}

impl Batch<'_> {
    fn flush(&mut self) {
        self.into.lock().unwrap_or_else(|e| e.into_inner()).append(&mut self.items);
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

fn run(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let dir = ctx.directory(
        args.path.as_deref(),
        "give the directory to search in `path`",
        "use `list` to see what is there",
    )?;
    let shown = ctx.workspace.display(&dir);
    let pattern = args.pattern.as_str();
    let matcher = matcher(pattern)?;
    let max = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS).max(1);
    let by_time = args.sort == Some(SortBy::Modified);

    let found: Mutex<Vec<(SystemTime, PathBuf)>> = Mutex::new(Vec::new());
    let errors = Mutex::new(0usize);
    // Every path the walk yields starts with `dir` and a separator: the relative path is the
    // rest of its bytes (no `strip_prefix`, which compares component by component).
    let skip = dir.as_os_str().len() + usize::from(!dir.as_os_str().as_bytes().ends_with(b"/"));
    super::walker(&dir).build_parallel().run(|| {
        let (matcher, found, errors) = (&matcher, &found, &errors);
        let mut local = Batch { items: Vec::new(), into: found };
        Box::new(move |entry| {
            let entry = match entry {
                Ok(entry) => entry,
                Err(_) => {
                    *errors.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                    return WalkState::Continue;
                }
            };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let bytes = entry.path().as_os_str().as_bytes();
            let relative = Path::new(OsStr::from_bytes(bytes.get(skip..).unwrap_or(bytes)));
            if matcher.is_match(relative) {
                // Only the newest-first order needs the modification time (a `stat` per file).
                let mtime = if by_time {
                    entry.metadata().ok().and_then(|m| m.modified().ok()).unwrap_or(SystemTime::UNIX_EPOCH)
                } else {
                    SystemTime::UNIX_EPOCH
                };
                local.items.push((mtime, entry.into_path()));
                // Hand over in batches: one lock per batch, not per file.
                if local.items.len() >= 256 {
                    local.flush();
                }
            }
            WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(|e| e.into_inner());
    let errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    // By path (the bytes of the path: one `memcmp`, not a walk over components), or newest first
    // with equal times by path, so the output is deterministic. Only the `max` shown are put in
    // order: the rest are counted, never sorted.
    let order = |a: &(SystemTime, PathBuf), b: &(SystemTime, PathBuf)| {
        let by_path = a.1.as_os_str().as_bytes().cmp(b.1.as_os_str().as_bytes());
        if by_time { b.0.cmp(&a.0).then(by_path) } else { by_path }
    };
    let total = found.len();
    if total > max {
        found.select_nth_unstable_by(max, order);
        found.truncate(max);
    }
    found.sort_unstable_by(order);

    let mut output = if total == 0 {
        format!("No files matching `{pattern}` in `{shown}`.")
    } else {
        shown_paths(&found, &dir, ctx)
    };
    if total > max {
        output.push_str(&format!(
            "\n… {} more not shown; narrow the search with a more specific pattern or path",
            total - max
        ));
    }
    if errors > 0 {
        output.push_str(&format!("\n({errors} entries could not be read)"));
    }
    Ok(ToolOutput::new(format!("Found {total} files matching {pattern}"), output)
        .with("count", total.min(max))
        .with("total", total)
        .with("truncated", total > max))
}

/// The matcher of `pattern`, on paths relative to the searched directory (`*` never crosses a
/// `/`). A set of one glob, not the glob's own matcher: the set matches the common shapes
/// (`**/*.rs`, `*.toml`, `src/**`, a literal name) by extension, prefix, suffix or literal,
/// with no regex run per file (the glob's matcher always runs its regex).
pub(crate) fn matcher(pattern: &str) -> Result<GlobSet, ToolError> {
    let invalid = |err: globset::Error| ToolError::new(format!("invalid glob pattern `{pattern}`: {err}"));
    let glob = GlobBuilder::new(pattern).literal_separator(true).build().map_err(invalid)?;
    GlobSetBuilder::new().add(glob).build().map_err(invalid)
}

/// The paths found, one a line, as the workspace shows them: relative to its root when inside
/// it. Every path starts with `dir`, so that is one prefix cut by length for all of them, not a
/// component-by-component `strip_prefix` per path.
fn shown_paths(found: &[(SystemTime, PathBuf)], dir: &Path, ctx: &ToolContext) -> String {
    let root = ctx.workspace.root();
    let Ok(below) = dir.strip_prefix(root) else {
        return found.iter().map(|(_, path)| ctx.workspace.display(path)).collect::<Vec<_>>().join("\n");
    };
    // Bytes to cut from every path: the root and the separator after it.
    let cut = root.as_os_str().len() + usize::from(!root.as_os_str().as_bytes().ends_with(b"/"));
    debug_assert!(found.iter().all(|(_, path)| path.starts_with(root.join(below))));
    let mut out =
        Vec::with_capacity(found.iter().map(|(_, p)| p.as_os_str().len() + 1 - cut.min(p.as_os_str().len())).sum());
    for (i, (_, path)) in found.iter().enumerate() {
        if i > 0 {
            out.push(b'\n');
        }
        let bytes = path.as_os_str().as_bytes();
        out.extend_from_slice(bytes.get(cut..).unwrap_or(bytes));
    }
    // Shown as `display` shows a path: invalid UTF-8 replaced.
    match String::from_utf8(out) {
        Ok(text) => text,
        Err(err) => String::from_utf8_lossy(err.as_bytes()).into_owned(),
    }
}
