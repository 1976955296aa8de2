//! The file tools and what they share: loading a file the way the person sees it (editor
//! buffer first, then disk), the per-session staleness check, and committing new text through
//! the editor (open documents) or an atomic disk write (everything else). The tools above this
//! crate that change or read files (`lsp`'s rename, `generate_readme`, search, memories) use the
//! same loading, staleness check, commit path and blocking helper: those are public.

mod append;
mod apply_patch;
mod bring;
mod commit;
mod delete;
mod diagnostics;
mod edit;
mod foresight;
mod journal;
mod list;
mod lock;
mod multiedit;
mod picture;
mod preview;
mod read;
mod restore;
mod review;
mod write;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tandem_text::disk::{self, ReadOutcome};
use tandem_text::hunks::Same;
use tandem_text::{ContentHash, Decoded, FileFormat, LineEnding, Rope};

pub use bring::{BroughtOver, Incoming, bring_over};
pub use commit::{Change, Committed, commit_all};
pub(crate) use commit::{commit, reviewed_title};
pub use diagnostics::{attach_diagnostics, render_report};
pub use read::cut_line_at;
pub use restore::{RestoreFile, restore_files};

use tandem_tool_api::{Tool, ToolContext, ToolError, typed};

/// Largest file the tools load whole.
pub(crate) const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;
/// How long to wait for the editor to report an applied edit back through `didChange`.
const EDITOR_ECHO_TIMEOUT: Duration = Duration::from_secs(3);

/// Every file tool.
pub fn all() -> Vec<Arc<dyn Tool>> {
    vec![
        typed(read::Read),
        typed(write::Write),
        typed(edit::Edit),
        typed(multiedit::MultiEdit),
        typed(apply_patch::ApplyPatch),
        typed(append::Append),
        typed(delete::Delete),
        typed(list::List),
    ]
}

/// Where a loaded file's text came from.
pub(crate) enum Origin {
    /// The editor's buffer (maybe unsaved).
    Editor { version: i32, rope: Rope },
    /// The disk.
    Disk { format: FileFormat, disk_hash: ContentHash },
    /// The editor's text served by [`EditorClient::read_file`](tandem_tool_api::EditorClient::read_file),
    /// which differs from the disk (unsaved changes).
    Client { format: FileFormat, disk_hash: ContentHash },
    /// Nothing exists at the path yet.
    Missing,
}

/// A file's current text, as the person sees it.
pub struct Loaded {
    /// Absolute path.
    pub path: PathBuf,
    /// The text (without a byte-order mark).
    pub text: String,
    /// Hash of `text`: what staleness is decided by.
    pub hash: ContentHash,
    pub(crate) origin: Origin,
    /// Lines of the new text placed by a patch hunk with fuzz: (first line, 1-based; line count;
    /// fuzz). Shown in the person's review of the hunks they fall in.
    pub(crate) fuzzed: Vec<(usize, usize, usize)>,
}

impl Loaded {
    /// Something exists at the path (the change does not create the file).
    pub fn exists(&self) -> bool {
        !matches!(self.origin, Origin::Missing)
    }

    /// Where the text came from: `"editor"`, `"disk"` or `"none"`.
    pub fn source(&self) -> &'static str {
        match self.origin {
            Origin::Editor { .. } | Origin::Client { .. } => "editor",
            Origin::Disk { .. } => "disk",
            Origin::Missing => "none",
        }
    }

    /// The line ending the file uses (the disk's, else the text's majority, else `\n`).
    pub fn line_ending(&self) -> LineEnding {
        match &self.origin {
            Origin::Disk { format, .. } => format.line_ending,
            Origin::Editor { .. } | Origin::Client { .. } => LineEnding::detect(&self.text),
            Origin::Missing => LineEnding::Lf,
        }
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KB", b as f64 / 1024.0),
        b => format!("{b} bytes"),
    }
}

/// Loads `path` as the person sees it: [`load`], then, when the editor serves file reads and
/// the file is not in the buffer cache, the editor's text (unsaved changes included).
pub(crate) async fn load_shown(ctx: &ToolContext, path: &Path) -> Result<Loaded, ToolError> {
    let (load_ctx, load_path) = (ctx.clone(), path.to_path_buf());
    let mut loaded = blocking(move || load(&load_ctx, &load_path)).await?;
    let Some(editor) = ctx.editor.as_ref().filter(|editor| editor.reads_files()) else { return Ok(loaded) };
    let Origin::Disk { format, disk_hash } = loaded.origin else { return Ok(loaded) };
    let text = editor_text(ctx, editor.as_ref(), path).await?;
    if text != loaded.text {
        loaded.hash = ContentHash::of(text.as_bytes());
        loaded.text = text;
        loaded.origin = Origin::Client { format, disk_hash };
    }
    Ok(loaded)
}

/// The editor's text of `path` ([`EditorClient::read_file`](tandem_tool_api::EditorClient::read_file)),
/// without a byte-order mark (as the disk's text is loaded).
pub(crate) async fn editor_text(
    ctx: &ToolContext,
    editor: &dyn tandem_tool_api::EditorClient,
    path: &Path,
) -> Result<String, ToolError> {
    let text = editor
        .read_file(ctx.session_id.as_deref(), path)
        .await
        .map_err(|err| ToolError::new(format!("the editor could not read `{}`: {err}", ctx.workspace.display(path))))?;
    Ok(match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_owned(),
        None => text,
    })
}

/// Loads `path`: the editor's buffer when open, else the disk. A commit that a killed process
/// left unfinished is finished first (undone) — on the first load of the workspace in this
/// process, and before every commit —, so no half-made change is ever loaded. Public for
/// the tools above this crate that change files through [`commit_all`].
pub fn load(ctx: &ToolContext, path: &Path) -> Result<Loaded, ToolError> {
    load_seen(ctx, path, None)
}

/// [`load`] with `stat`'s answer for `path` in hand (see [`tandem_tool_api::Workspace::resolve_seen`]),
/// so that it is not asked again.
pub fn load_seen(ctx: &ToolContext, path: &Path, seen: Option<std::fs::Metadata>) -> Result<Loaded, ToolError> {
    journal::recover_once(ctx.workspace.root());
    // Only an error names the file: a read that succeeds makes no display name here.
    let shown = || ctx.workspace.display(path);
    if let Some(doc) = ctx.cache.get(path) {
        let text = doc.rope.to_string();
        let hash = ContentHash::of(text.as_bytes());
        return Ok(Loaded {
            path: path.to_path_buf(),
            text,
            hash,
            origin: Origin::Editor { version: doc.version, rope: doc.rope },
            fuzzed: Vec::new(),
        });
    }
    match disk::read_seen(path, MAX_FILE_BYTES, seen)? {
        ReadOutcome::NotFound => Ok(Loaded {
            path: path.to_path_buf(),
            text: String::new(),
            hash: ContentHash::of(b""),
            origin: Origin::Missing,
            fuzzed: Vec::new(),
        }),
        ReadOutcome::Directory => {
            Err(ToolError::new(format!("`{}` is a directory, not a file; use `list` to see what it holds", shown())))
        }
        ReadOutcome::TooLarge { len } => Err(ToolError::new(format!(
            "`{}` is {}; files over {} are not loaded whole. Search it with `grep`, or look at parts with `bash` (head, tail, sed -n)",
            shown(),
            size(len),
            size(MAX_FILE_BYTES)
        ))),
        ReadOutcome::File(file) => match file.decoded {
            Decoded::Text { text, format } => {
                // Without a BOM the text is the file's bytes: no need to hash it twice.
                let hash = if format.bom { ContentHash::of(text.as_bytes()) } else { file.hash };
                Ok(Loaded {
                    path: path.to_path_buf(),
                    text,
                    hash,
                    origin: Origin::Disk { format, disk_hash: file.hash },
                    fuzzed: Vec::new(),
                })
            }
            Decoded::Binary { kind } => Err(ToolError::new(format!(
                "`{}` is a binary file ({kind}, {}); it cannot be shown or edited as text",
                shown(),
                size(file.len)
            ))
            .with("binary", true)
            .with("kind", kind)
            .with("bytes", file.len)),
        },
    }
}

/// Refuses when the calling session read this file before and it has changed since.
pub fn check_fresh(ctx: &ToolContext, loaded: &Loaded) -> Result<(), ToolError> {
    let Some(session) = &ctx.session_id else { return Ok(()) };
    match ctx.cache.last_read(session, &loaded.path) {
        Some(seen) if seen != loaded.hash => {
            let where_ = match loaded.origin {
                Origin::Editor { .. } | Origin::Client { .. } => "in the editor",
                Origin::Disk { .. } => "on disk",
                Origin::Missing => "it was deleted",
            };
            Err(ToolError::new(format!(
                "`{}` changed since you last read it ({where_}); read it again and redo the change on the current content",
                ctx.workspace.display(&loaded.path)
            ))
            .with("stale", true))
        }
        None if ctx.require_read && loaded.exists() => Err(ToolError::new(format!(
            "`{0}` has not been read in this session; read it first (the `read` tool), then change it",
            ctx.workspace.display(&loaded.path)
        ))
        .with("unread", true)),
        _ => Ok(()),
    }
}

/// Records that the calling session has seen `hash` of `path`.
pub(crate) fn remember(ctx: &ToolContext, path: &Path, hash: ContentHash) {
    if let Some(session) = &ctx.session_id {
        ctx.cache.record_read(session, path, hash);
    }
}

/// Runs blocking file work without stalling other tasks. On the multi-threaded runtime this is
/// `block_in_place`: the worker hands its other tasks to another thread and runs the work right
/// here (cheaper than `spawn_blocking`'s two hand-offs). Elsewhere (single-threaded test
/// runtimes) the work runs inline. Public for every tool crate that does file work.
pub async fn blocking<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// Files up to this size are read inline: a few microseconds of IO, less than the hand-off of
/// [`blocking`] costs (measured: the P3 benchmark's 4 KB `read`).
pub const INLINE_READ_BYTES: u64 = 1024 * 1024;

/// [`blocking`], or inline when the work is a read of at most [`INLINE_READ_BYTES`].
pub async fn blocking_sized<T, F>(bytes: u64, work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    if bytes <= INLINE_READ_BYTES { work() } else { blocking(work).await }
}

/// Unified diffs larger than this are left out of results (the stats stay).
const MAX_DIFF_BYTES: usize = 64 * 1024;

/// `diff` (unified, with `a/` `b/` headers), `additions` and `deletions` of a change, for the
/// editor to show and the model to check.
pub fn diff_metadata(shown: &str, old: &str, new: &str) -> serde_json::Map<String, serde_json::Value> {
    diff_metadata_knowing(shown, old, new, Same::default())
}

/// [`diff_metadata`] of a change whose unchanged start and end the caller knows (see
/// [`tandem_text::hunks::diff_knowing`]): a small change in a large file costs no compare or
/// line count of the rest.
pub(crate) fn diff_metadata_knowing(
    shown: &str,
    old: &str,
    new: &str,
    same: Same,
) -> serde_json::Map<String, serde_json::Value> {
    let staged = tandem_text::hunks::diff_knowing(shown, old, new, same);
    let (additions, deletions) = tandem_text::hunks::stats(&staged);
    let mut map = serde_json::Map::new();
    map.insert("additions".into(), additions.into());
    map.insert("deletions".into(), deletions.into());
    map.insert("hunks".into(), staged.hunks.len().into());
    if staged.unified.len() <= MAX_DIFF_BYTES {
        map.insert("diff".into(), staged.unified.into());
    } else {
        map.insert("diffOmitted".into(), format!("{} KB", staged.unified.len() / 1024).into());
    }
    map
}

/// Lines `first..=last` (1-based) of `text` in `cat -n` style, long lines cut.
pub(crate) fn numbered(text: &str, first: usize, last: usize) -> String {
    let first = first.max(1);
    // Skip to the first line with memchr rather than walking every line before it.
    let start = if first == 1 {
        0
    } else {
        memchr::memchr_iter(b'\n', text.as_bytes()).nth(first - 2).map_or(text.len(), |i| i + 1)
    };
    let mut out = String::new();
    for (i, line) in text[start..].lines().take((last + 1).saturating_sub(first)).enumerate() {
        out.push_str(&format!("{:>6}\t{}\n", first + i, read::cut_line(line).0));
    }
    out
}

/// 1-based line number of byte offset `at`.
pub(crate) fn line_of(text: &str, at: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at.min(text.len())]).count() + 1
}

/// The lines around a change (3 of context), numbered, for the model to check its work.
/// `start..end` is the changed byte range of `new_text`. Costs one newline count up to `start`
/// (memchr), not a walk over every line: files can be large.
pub(crate) fn snippet(new_text: &str, start: usize, end: usize) -> String {
    snippet_at(new_text, start, end, line_of(new_text, start))
}

/// [`snippet`] when the caller knows `line`, the 1-based line of `start` (no count at all).
pub(crate) fn snippet_at(new_text: &str, start: usize, end: usize, line: usize) -> String {
    let bytes = new_text.as_bytes();
    debug_assert!(start <= bytes.len() && line == line_of(new_text, start), "line {line} is not that of byte {start}");
    let start = start.min(bytes.len());
    let end = end.clamp(start, bytes.len());
    let last = line + memchr::memchr_iter(b'\n', &bytes[start..end]).count() + 3;
    let first = line.saturating_sub(3).max(1);
    // The start of line `first`: back over `line - first` newlines from the start of `line`.
    let from = memchr::memrchr_iter(b'\n', &bytes[..start]).nth(line - first).map_or(0, |i| i + 1);
    let mut out = String::new();
    for (i, text) in new_text[from..].lines().take(last + 1 - first).enumerate() {
        out.push_str(&format!("{:>6}\t{}\n", first + i, read::cut_line(text).0));
    }
    out
}

#[cfg(test)]
mod tests;
