//! Committing staged text: through the editor for open documents, by atomic disk writes for
//! the rest, and for several files at once all-or-nothing, with rollback.

use std::path::{Path, PathBuf};

use tandem_text::disk::{self, DiskFile, Expected, ReadOutcome};
use tandem_text::{ContentHash, Decoded, FileFormat, Rope, char_to_position, memory, minimal_change};
use tandem_tool_api::{DocumentEdit, ToolContext, ToolError, Written};

use super::journal::{self, Failed, Op};
use super::lock::lock_paths;
use super::review::{Reviewed, review};
use super::{EDITOR_ECHO_TIMEOUT, Loaded, MAX_FILE_BYTES, Origin, blocking, load, remember};

/// How a commit reached its file.
pub struct Committed {
    /// `"editor"` or `"disk"`.
    pub(crate) via: &'static str,
    /// Notes for the model (e.g. the editor could not save).
    pub notes: Vec<String>,
    /// Hunks the person rejected in the review (on the first of several commits).
    pub(crate) rejected_hunks: usize,
    /// The files the person accepted only in part: what was really applied (on the first of
    /// several commits).
    pub(crate) partial: Vec<PartialApply>,
}

impl Committed {
    fn new(via: &'static str, notes: Vec<String>) -> Self {
        Self { via, notes, rejected_hunks: 0, partial: Vec::new() }
    }

    /// For a one-file tool: when the person accepted only part of the change, the preview and
    /// the diff metadata become those of what was applied (the proposal's would mislead).
    pub(crate) fn show_applied(&self, preview: &mut String, diff: &mut serde_json::Map<String, serde_json::Value>) {
        if let Some(applied) = self.partial.first() {
            *preview = format!("Applied (the accepted hunks only):\n{}", applied.preview);
            diff.clone_from(&applied.diff);
        }
    }

    /// For a many-file tool: what was applied to each file accepted in part, for the output.
    pub(crate) fn applied_report<'a>(committed: impl IntoIterator<Item = &'a Committed>) -> String {
        committed
            .into_iter()
            .flat_map(|c| &c.partial)
            .map(|p| format!("Applied to `{}` (the accepted hunks only):\n{}", p.shown, p.preview))
            .collect()
    }
}

/// What was applied to a file the person accepted only in part.
pub(crate) struct PartialApply {
    /// The file as shown to the model.
    pub shown: String,
    /// The changed region of the applied text, numbered (`cat -n` style).
    pub preview: String,
    /// [`super::diff_metadata`] of the applied change.
    pub diff: serde_json::Map<String, serde_json::Value>,
}

impl PartialApply {
    pub(super) fn new(shown: &str, old: &str, applied: &str) -> Self {
        let (start, _, end) = minimal_change(old, applied);
        Self {
            shown: shown.to_owned(),
            preview: super::snippet(applied, start, end),
            diff: super::diff_metadata(shown, old, applied),
        }
    }
}

/// `title`, saying how many hunks were rejected when the person accepted only part of the change.
pub(crate) fn reviewed_title<'a>(title: String, committed: impl IntoIterator<Item = &'a Committed>) -> String {
    match committed.into_iter().map(|c| c.rejected_hunks).sum::<usize>() {
        0 => title,
        1 => format!("{title} (1 hunk rejected)"),
        n => format!("{title} ({n} hunks rejected)"),
    }
}

/// Replaces `loaded`'s text with `new_text`: through the editor when the file is open there,
/// else by an atomic disk write that is refused if the disk changed since `loaded` was read.
pub(crate) async fn commit(ctx: &ToolContext, loaded: Loaded, new_text: String) -> Result<Committed, ToolError> {
    let mut changes = review(ctx, vec![(loaded, Change::Write(new_text))]).await?;
    let foresight = changes.foresight.take();
    let review_notes = std::mem::take(&mut changes.notes);
    let rejected = changes.rejected;
    let partial = std::mem::take(&mut changes.partial);
    let asked = changes.asked;
    let Some((loaded, Change::Write(new_text))) = changes.kept.pop() else {
        return Err(ToolError::new("internal error: the reviewed change is not a write"));
    };
    // From the last check of the file to its replacement, no other commit touches it.
    let _locked = lock_paths([loaded.path.clone()]).await;
    let committed = commit_reviewed(ctx, loaded, new_text, asked).await;
    if let Some(foresight) = foresight {
        foresight.end().await;
    }
    let mut committed = committed?;
    committed.notes.splice(0..0, review_notes);
    committed.rejected_hunks = rejected;
    committed.partial = partial;
    Ok(committed)
}

/// The change `loaded` → `new_text` carried over to the file as it is now, when it moved on
/// while the person reviewed it (they typed, undid, saved through a formatter, another program
/// wrote it): exactly, every hunk where its lines are now, or not at all (an error saying where
/// the text changed). The third value is the note for the model when the text had moved on.
///
/// Without a review (`asked` false) a file read from disk and still not open in the editor is
/// not read again here: the write checks it right before the rename, and a file that changed
/// in the moment since the tool read it is refused there (nothing written), not carried over.
fn catch_up(
    ctx: &ToolContext,
    loaded: Loaded,
    new_text: String,
    asked: bool,
) -> Result<(Loaded, String, Option<String>), ToolError> {
    if matches!(loaded.origin, Origin::Client { .. } | Origin::Missing) {
        return Ok((loaded, new_text, None));
    }
    // Still not open in the editor and, when someone was asked, unchanged on disk: known from
    // a streamed hash, without holding a third copy of a big file.
    if let Origin::Disk { disk_hash, .. } = loaded.origin
        && ctx.cache.get(&loaded.path).is_none()
        && (!asked || tandem_text::disk::current_hash(&loaded.path).ok().flatten() == Some(disk_hash))
    {
        return Ok((loaded, new_text, None));
    }
    let now = load(ctx, &loaded.path)?;
    let unmoved = match (&loaded.origin, &now.origin) {
        (Origin::Editor { version: was, .. }, Origin::Editor { version: is, .. }) => was == is,
        (Origin::Disk { disk_hash: was, .. }, Origin::Disk { disk_hash: is, .. }) => was == is,
        _ => false,
    };
    if unmoved {
        return Ok((loaded, new_text, None));
    }
    let shown = ctx.workspace.display(&loaded.path);
    if !now.exists() {
        return Err(ToolError::new(format!(
            "not applied: `{shown}` was deleted while the change waited for review; nothing was written"
        ))
        .with("conflict", true));
    }
    let rebased = tandem_text::rebase::rebase(&loaded.text, &new_text, &now.text).map_err(|conflict| {
        ToolError::new(format!(
            "not applied: `{shown}` changed where this change is while it waited for review ({conflict}); \
             nothing was written. Read the file again and redo the change on its current text"
        ))
        .with("conflict", true)
    })?;
    let note = (now.hash != loaded.hash).then(|| {
        format!(
            "`{shown}` changed while the person reviewed this change; it was applied where its lines are now (read the file before editing it again)"
        )
    });
    Ok((Loaded { fuzzed: loaded.fuzzed, ..now }, rebased, note))
}

/// [`commit`] after the review; the caller holds the path's lock.
async fn commit_reviewed(
    ctx: &ToolContext,
    loaded: Loaded,
    new_text: String,
    asked: bool,
) -> Result<Committed, ToolError> {
    let client = ctx.editor.clone().filter(|editor| editor.writes_files());
    let (loaded, new_text, moved) =
        if client.is_none() { catch_up(ctx, loaded, new_text, asked)? } else { (loaded, new_text, None) };
    // Only a session keeps read stamps.
    let stamp = ctx.session_id.is_some();
    let path = loaded.path.clone();
    // What the file held and holds, as a snapshot sees it (an open document's text, else the
    // disk's bytes), for the call's write log.
    let before = match &loaded.origin {
        Origin::Editor { .. } => Some(loaded.hash),
        Origin::Disk { disk_hash, .. } | Origin::Client { disk_hash, .. } => Some(*disk_hash),
        Origin::Missing => None,
    };
    // A read stamp is the hash of the text (as `Loaded::hash` is), which for a file with a
    // byte-order mark is not that of the bytes written.
    let bom = matches!(&loaded.origin, Origin::Disk { format, .. } | Origin::Client { format, .. } if format.bom);
    let stamped = (stamp && bom).then(|| ContentHash::of(new_text.as_bytes()));
    let (committed, after) = match (loaded.origin, client) {
        (Origin::Editor { version, rope }, _) => {
            // The text may have been carried over to a newer buffer on the way: its hash is
            // what was written.
            commit_to_editor(ctx, &path, version, &rope, &loaded.text, new_text).await?
        }
        (origin, Some(editor)) => {
            let after = ContentHash::of_parts(&FileFormat { bom, ..FileFormat::default() }.encode(&new_text));
            (commit_to_client(ctx, editor.as_ref(), &path, &origin, loaded.hash, &new_text).await?, after)
        }
        (Origin::Disk { format, disk_hash } | Origin::Client { format, disk_hash }, None) => {
            let op = Op::Write { path, format, text: new_text, expected: Expected::Hash(disk_hash), mode_from: None };
            (Committed::new("disk", Vec::new()), write_one(ctx, op).await?)
        }
        (Origin::Missing, None) => {
            let format = FileFormat::default();
            let op = Op::Write { path, format, text: new_text, expected: Expected::Absent, mode_from: None };
            (Committed::new("disk", Vec::new()), write_one(ctx, op).await?)
        }
    };
    if let Some(log) = &ctx.writes {
        log.record(Written { path: loaded.path.clone(), before, after: Some(after) });
    }
    if stamp {
        remember(ctx, &loaded.path, stamped.unwrap_or(after));
    }
    // The old text may be large: freed off the caller's path, or kept for the next read.
    memory::recycle_string(loaded.text);
    let mut committed = committed;
    committed.notes.extend(moved);
    Ok(committed)
}

/// Commits one disk write; the hash of the bytes written.
async fn write_one(ctx: &ToolContext, op: Op) -> Result<ContentHash, ToolError> {
    let root = ctx.workspace.root().to_path_buf();
    let written = blocking(move || journal::commit(&root, vec![op]).map_err(|failed| failed.error.into())).await?;
    written.first().copied().ok_or_else(|| ToolError::new("internal error: a committed write has no hash"))
}

/// Writes the whole text through the editor (ACP `fs/write_text_file`, so its review records
/// the change), after checking that the file did not change since it was loaded: through the
/// editor when it serves reads, else on disk.
async fn commit_to_client(
    ctx: &ToolContext,
    editor: &dyn tandem_tool_api::EditorClient,
    path: &Path,
    origin: &Origin,
    loaded_hash: ContentHash,
    new_text: &str,
) -> Result<Committed, ToolError> {
    let shown = ctx.workspace.display(path);
    let changed = match origin {
        Origin::Missing => path.exists(),
        Origin::Editor { .. } => false,
        _ if editor.reads_files() => {
            let now = super::editor_text(ctx, editor, path).await?;
            ContentHash::of(now.as_bytes()) != loaded_hash
        }
        Origin::Disk { disk_hash, .. } | Origin::Client { disk_hash, .. } => {
            !matches!(disk::read(path, MAX_FILE_BYTES)?, ReadOutcome::File(file) if file.hash == *disk_hash)
        }
    };
    if changed {
        return Err(ToolError::new(format!(
            "`{shown}` changed since it was last read; nothing was written. Read it again and redo the change"
        )));
    }
    if matches!(origin, Origin::Missing) {
        create_parent(path)?;
    }
    // A file with a byte-order mark keeps it.
    let bom = matches!(origin, Origin::Disk { format, .. } | Origin::Client { format, .. } if format.bom);
    let text = if bom { std::borrow::Cow::Owned(format!("\u{feff}{new_text}")) } else { new_text.into() };
    editor
        .write_file(ctx.session_id.as_deref(), path, &text)
        .await
        .map_err(|err| ToolError::new(format!("the editor could not write `{shown}`: {err}")))?;
    Ok(Committed::new("editor", Vec::new()))
}

/// How often the editor may refuse an edit because its buffer moved on before the change is
/// carried over to the new text and sent again.
const EDITOR_RETRIES: usize = 3;

async fn commit_to_editor(
    ctx: &ToolContext,
    path: &Path,
    version: i32,
    rope: &Rope,
    old_text: &str,
    new_text: String,
) -> Result<(Committed, ContentHash), ToolError> {
    let shown = ctx.workspace.display(path);
    let Some(editor) = ctx.editor.clone() else {
        return Err(ToolError::new(format!("`{shown}` is open in an editor that is no longer connected; try again")));
    };
    let encoding = editor.position_encoding();
    let (mut version, mut rope, mut base, mut new_text) = (version, rope.clone(), old_text.to_owned(), new_text);
    let mut attempt = 0;
    loop {
        let (start, old_end, new_end) = minimal_change(&base, &new_text);
        let edit = DocumentEdit {
            path: path.to_path_buf(),
            version,
            start: char_to_position(&rope, rope.byte_to_char(start), encoding),
            end: char_to_position(&rope, rope.byte_to_char(old_end), encoding),
            new_text: new_text[start..new_end].to_owned(),
        };
        match editor.apply_edit(edit).await {
            Ok(true) => break,
            Ok(false) if attempt < EDITOR_RETRIES => {
                // The buffer moved on before the edit reached it: once the editor reports its
                // text, the change is carried over to it (or refused) and sent again.
                attempt += 1;
                let Some(doc) = moved_on(ctx, path, version).await else {
                    return Err(refused(&shown));
                };
                let now = doc.rope.to_string();
                new_text = tandem_text::rebase::rebase(&base, &new_text, &now).map_err(|conflict| {
                    ToolError::new(format!(
                        "not applied: `{shown}` changed where this change is while it was being applied ({conflict}); \
                         nothing was written. Read the file again and redo the change on its current text"
                    ))
                    .with("conflict", true)
                })?;
                (version, rope, base) = (doc.version, doc.rope, now);
            }
            Ok(false) => return Err(refused(&shown)),
            Err(err) => {
                return Err(ToolError::new(format!("the editor could not apply the change to `{shown}`: {err}")));
            }
        }
    }
    let mut notes = Vec::new();
    let new_hash = ContentHash::of(new_text.as_bytes());
    // Poll, never block: the editor's `didChange` must be able to arrive on this very runtime.
    let deadline = tokio::time::Instant::now() + EDITOR_ECHO_TIMEOUT;
    let echoed = loop {
        if ctx.cache.get(path).is_some_and(|doc| doc.hash() == new_hash) {
            break true;
        }
        if tokio::time::Instant::now() >= deadline {
            break false;
        }
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    };
    if !echoed {
        // The editor reported other text than the change makes: it did not land as shown
        // (an editor that applied it at positions of an older text, or another edit with it).
        if ctx.cache.get(path).is_some_and(|doc| doc.version != version) {
            return Err(ToolError::new(format!(
                "the editor's text of `{shown}` after the change is not what was shown in the review; it was not saved. \
                 Undo the last change in the editor and read the file again"
            ))
            .with("conflict", true));
        }
        notes.push("the editor applied the change but did not report its new text in time".to_owned());
    }
    let saved = match editor.save(path).await {
        Ok(saved) => saved,
        Err(err) => {
            tracing::warn!(path = %path.display(), "save request failed: {err}");
            false
        }
    };
    if !saved {
        // The editor cannot save: write its buffer (our change included) ourselves.
        let write_path = path.to_path_buf();
        let format = match disk::read(path, MAX_FILE_BYTES)? {
            ReadOutcome::File(DiskFile { decoded: Decoded::Text { format, .. }, .. }) => format,
            _ => FileFormat::default(),
        };
        let text = match ctx.cache.get(path) {
            Some(doc) if echoed => doc.rope.to_string(),
            _ => new_text,
        };
        blocking(move || {
            disk::write_atomic_parts(&write_path, &format.encode(&text), Expected::Any)?;
            Ok(())
        })
        .await?;
        notes.push("the editor did not save the document, so tandem wrote it to disk".to_owned());
    }
    Ok((Committed::new("editor", notes), new_hash))
}

/// The editor refused the edit, and its buffer did not move on.
fn refused(shown: &str) -> ToolError {
    ToolError::new(format!(
        "the editor refused the change to `{shown}` (the buffer probably changed meanwhile); read the file again and retry"
    ))
}

/// The document at `path` once the editor reported a version other than `version` (within the
/// echo timeout), or `None`.
async fn moved_on(ctx: &ToolContext, path: &Path, version: i32) -> Option<tandem_text::EditorDocument> {
    let deadline = tokio::time::Instant::now() + EDITOR_ECHO_TIMEOUT;
    loop {
        match ctx.cache.get(path) {
            Some(doc) if doc.version != version => return Some(doc),
            None => return None,
            Some(_) if tokio::time::Instant::now() >= deadline => return None,
            Some(_) => tokio::time::sleep(std::time::Duration::from_millis(2)).await,
        }
    }
}

/// One file's part of a multi-file change.
pub enum Change {
    /// New content; the file is created when it did not exist.
    Write(String),
    /// The file is removed.
    Delete,
    /// The file moves to `to` (which must not exist) with this content.
    Move {
        /// The new path (resolved and confined by the caller).
        to: PathBuf,
        /// Its content.
        text: String,
    },
}

/// A disk operation done, and how to undo it.
enum Done {
    /// `path` had `bytes`; we wrote content hashing to `written`.
    Replaced { path: PathBuf, bytes: Vec<u8>, written: ContentHash },
    /// We created `path` with content hashing to `written`.
    Created { path: PathBuf, written: ContentHash },
    /// We removed `path`, which had `bytes`.
    Removed { path: PathBuf, bytes: Vec<u8> },
}

fn undo(done: Vec<Done>) -> Vec<String> {
    let mut problems = Vec::new();
    for step in done.into_iter().rev() {
        let result = match &step {
            Done::Replaced { path, bytes, written } => disk::write_atomic(path, bytes, Expected::Hash(*written)),
            Done::Created { path, written } => disk::remove(path, Expected::Hash(*written)),
            Done::Removed { path, bytes } => disk::write_atomic(path, bytes, Expected::Absent),
        };
        if let Err(err) = result {
            problems.push(err.to_string());
        }
    }
    problems
}

/// Creates the directories above `path` that are missing.
fn create_parent(path: &Path) -> Result<(), tandem_text::TextError> {
    let Some(parent) = path.parent() else { return Ok(()) };
    std::fs::create_dir_all(parent).map_err(|source| tandem_text::TextError::Io {
        action: "cannot create directory",
        path: parent.to_path_buf(),
        source,
    })
}

/// What a file was before a change: its format, the hash of its bytes, its text.
type Before = (FileFormat, ContentHash, String);

/// The disk part of [`commit_all`]: every operation or none, through the journal (so a crash
/// cannot leave it half-made either). Returns how to undo it, for a later editor step that fails.
fn disk_phase(root: &Path, ops: Vec<(PathBuf, Option<Before>, Change)>) -> Result<Vec<Done>, ToolError> {
    let mut done = Vec::new();
    let mut journal_ops = Vec::new();
    for (path, before, change) in ops {
        let original = before.as_ref().map(|(format, _, text)| format.encode(text).concat());
        let expected = before.as_ref().map_or(Expected::Absent, |(_, hash, _)| Expected::Hash(*hash));
        let format = before.as_ref().map(|(format, _, _)| *format).unwrap_or_default();
        match change {
            Change::Write(text) => {
                let written = ContentHash::of_parts(&format.encode(&text));
                done.push(match original {
                    Some(bytes) => Done::Replaced { path: path.clone(), bytes, written },
                    None => Done::Created { path: path.clone(), written },
                });
                journal_ops.push(Op::Write { path, format, text, expected, mode_from: None });
            }
            Change::Delete => {
                done.push(Done::Removed { path: path.clone(), bytes: original.unwrap_or_default() });
                journal_ops.push(Op::Remove { path, expected });
            }
            Change::Move { to, text } => {
                let written = ContentHash::of_parts(&format.encode(&text));
                done.push(Done::Created { path: to.clone(), written });
                done.push(Done::Removed { path: path.clone(), bytes: original.unwrap_or_default() });
                // The moved file keeps its permissions.
                journal_ops.push(Op::Write {
                    path: to,
                    format,
                    text,
                    expected: Expected::Absent,
                    mode_from: Some(path.clone()),
                });
                journal_ops.push(Op::Remove { path, expected });
            }
        }
    }
    match journal::commit(root, journal_ops) {
        Ok(_) => Ok(done),
        Err(Failed { error, problems }) => {
            let mut message = format!("{error}. Nothing was changed: the files already written were restored.");
            if !problems.is_empty() {
                message = format!(
                    "{error}. Restoring the files already written failed for some: {}. Check them before retrying.",
                    problems.join("; ")
                );
            }
            Err(ToolError::new(message).with("rolledBack", problems.is_empty()))
        }
    }
}

/// Commits every change or none. Disk changes go first, each atomic, undone in reverse order if
/// a later one fails; then edits of documents open in the editor (an editor edit that fails
/// undoes the disk changes and the editor edits before it). Public for the tools above this crate
/// that change files (`lsp`'s rename, `generate_readme`): one review, one commit path.
pub async fn commit_all(ctx: &ToolContext, changes: Vec<(Loaded, Change)>) -> Result<Vec<Committed>, ToolError> {
    let Reviewed { kept: changes, notes: review_notes, rejected, partial, foresight, asked } =
        review(ctx, changes).await?;
    let mut paths = Vec::new();
    for (loaded, change) in &changes {
        paths.push(loaded.path.clone());
        if let Change::Move { to, .. } = change {
            paths.push(to.clone());
        }
    }
    // From the last check of each file to its replacement, no other commit touches them.
    let _locked = lock_paths(paths).await;
    let committed = commit_all_reviewed(ctx, changes, asked).await;
    if let Some(foresight) = foresight {
        foresight.end().await;
    }
    let mut committed = committed?;
    if let Some(first) = committed.first_mut() {
        first.notes.splice(0..0, review_notes);
        first.rejected_hunks = rejected;
        first.partial = partial;
    }
    Ok(committed)
}

/// [`commit_all`] after the review.
async fn commit_all_reviewed(
    ctx: &ToolContext,
    changes: Vec<(Loaded, Change)>,
    asked: bool,
) -> Result<Vec<Committed>, ToolError> {
    let mut disk_ops = Vec::new();
    let mut editor_ops = Vec::new();
    let mut stamps = Vec::new();
    let client_writes = ctx.editor.as_ref().is_some_and(|editor| editor.writes_files());
    let mut moved_notes = Vec::new();
    for (loaded, change) in changes {
        // Carried over to the file as it is now (or refused) before anything is written.
        let (loaded, change) = match change {
            Change::Write(text) if !client_writes => {
                let (loaded, text, moved) = catch_up(ctx, loaded, text, asked)?;
                moved_notes.extend(moved);
                (loaded, Change::Write(text))
            }
            other => (loaded, other),
        };
        match (&loaded.origin, change) {
            (Origin::Editor { .. }, Change::Write(text)) => editor_ops.push((loaded, text)),
            // Written through the editor too, after the disk phase.
            (_, Change::Write(text)) if client_writes => editor_ops.push((loaded, text)),
            (origin, change) => {
                let before = match origin {
                    Origin::Disk { format, disk_hash } => Some((*format, *disk_hash, loaded.text.clone())),
                    // Unsaved changes in the editor; the disk is what changes.
                    Origin::Client { format, disk_hash } => match disk::read(&loaded.path, MAX_FILE_BYTES)? {
                        ReadOutcome::File(DiskFile { hash, decoded: Decoded::Text { text, .. }, .. })
                            if hash == *disk_hash =>
                        {
                            Some((*format, hash, text))
                        }
                        _ => Some((*format, *disk_hash, loaded.text.clone())),
                    },
                    // Open in the editor but deleted or moved: the disk is what changes.
                    Origin::Editor { .. } => match disk::read(&loaded.path, MAX_FILE_BYTES)? {
                        ReadOutcome::File(DiskFile { hash, decoded: Decoded::Text { text, format }, .. }) => {
                            Some((format, hash, text))
                        }
                        _ => None,
                    },
                    Origin::Missing => None,
                };
                // Only a session keeps read stamps (as in `commit`): no hashing otherwise.
                if ctx.session_id.is_some() {
                    match &change {
                        Change::Write(text) => stamps.push((loaded.path.clone(), ContentHash::of(text.as_bytes()))),
                        Change::Move { to, text } => stamps.push((to.clone(), ContentHash::of(text.as_bytes()))),
                        Change::Delete => {}
                    }
                }
                disk_ops.push((loaded.path.clone(), before, change));
            }
        }
    }
    let disk_count = disk_ops.len();
    let mut disk_writes = Vec::new();
    if ctx.writes.is_some() {
        for (path, before, change) in &disk_ops {
            let before_hash = before.as_ref().map(|(_, hash, _)| *hash);
            let format = before.as_ref().map(|(format, _, _)| *format).unwrap_or_default();
            let written = |text: &str| Some(ContentHash::of_parts(&format.encode(text)));
            match change {
                Change::Write(text) => {
                    disk_writes.push(Written { path: path.clone(), before: before_hash, after: written(text) });
                }
                Change::Delete => disk_writes.push(Written { path: path.clone(), before: before_hash, after: None }),
                Change::Move { to, text } => {
                    disk_writes.push(Written { path: to.clone(), before: None, after: written(text) });
                    disk_writes.push(Written { path: path.clone(), before: before_hash, after: None });
                }
            }
        }
    }
    let root = ctx.workspace.root().to_path_buf();
    let done = if disk_ops.is_empty() { Vec::new() } else { blocking(move || disk_phase(&root, disk_ops)).await? };
    let mut committed: Vec<Committed> = (0..disk_count).map(|_| Committed::new("disk", Vec::new())).collect();
    let mut applied: Vec<(PathBuf, String, String, bool)> = Vec::new();
    for (loaded, text) in editor_ops {
        let path = loaded.path.clone();
        let old_text = loaded.text.clone();
        let existed = loaded.exists();
        match commit_reviewed(ctx, loaded, text.clone(), asked).await {
            Ok(done) => {
                committed.push(done);
                applied.push((path, old_text, text, existed));
            }
            Err(err) => {
                // Undo the editor edits before it, then the disk changes; what could not be
                // undone is named, never reported as restored.
                let mut problems = Vec::new();
                for (path, old, new, existed) in applied.into_iter().rev() {
                    let shown = ctx.workspace.display(&path);
                    if let Some(doc) = ctx.cache.get(&path) {
                        if let Err(err) = commit_to_editor(ctx, &path, doc.version, &doc.rope, &new, old).await {
                            problems.push(format!("{shown} keeps the new text in the editor: {}", err.message));
                        }
                    } else if let Some(editor) = ctx.editor.as_ref().filter(|editor| editor.writes_files()) {
                        let undone = if existed {
                            editor.write_file(ctx.session_id.as_deref(), &path, &old).await.map_err(|e| e.to_string())
                        } else {
                            disk::remove(&path, Expected::Any).map_err(|e| e.to_string())
                        };
                        if let Err(err) = undone {
                            problems.push(format!("{shown} keeps the new text: {err}"));
                        }
                    }
                }
                problems.extend(blocking(move || Ok(undo(done))).await?);
                let message = if problems.is_empty() {
                    format!("{}; nothing was changed: the other files were restored", err.message)
                } else {
                    format!(
                        "{}; the other files could not all be restored: {}. Read them before going on",
                        err.message,
                        problems.join("; ")
                    )
                };
                return Err(ToolError::new(message));
            }
        }
    }
    if let Some(log) = &ctx.writes {
        for written in disk_writes {
            log.record(written);
        }
    }
    for (path, hash) in stamps {
        remember(ctx, &path, hash);
    }
    if let Some(first) = committed.first_mut() {
        first.notes.extend(moved_notes);
    }
    Ok(committed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_write_rolls_back_the_ones_before_it() -> Result<(), ToolError> {
        let dir = tempfile::tempdir().map_err(|e| ToolError::new(e.to_string()))?;
        let (a, b, c) = (dir.path().join("a.txt"), dir.path().join("b.txt"), dir.path().join("new/c.txt"));
        std::fs::write(&a, "a0\n").ok();
        std::fs::write(&b, "b0\n").ok();
        let seen = |text: &str| Some((FileFormat::default(), ContentHash::of(text.as_bytes()), text.to_owned()));
        let ops = vec![
            (a.clone(), seen("a0\n"), Change::Write("a1\n".into())),
            (c.clone(), None, Change::Write("c1\n".into())),
            // b changed on disk since it was read: this write is refused.
            (b.clone(), seen("b-old\n"), Change::Write("b1\n".into())),
        ];
        let err = disk_phase(dir.path(), ops).err().map(|e| e.message).unwrap_or_default();
        assert!(err.contains("changed since it was last read") && err.contains("restored"), "{err}");
        assert_eq!(std::fs::read_to_string(&a).unwrap_or_default(), "a0\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap_or_default(), "b0\n");
        assert!(!c.exists());
        // Delete and move, then undone by a failing last step.
        let ops = vec![
            (a.clone(), seen("a0\n"), Change::Delete),
            (b.clone(), seen("b0\n"), Change::Move { to: dir.path().join("moved.txt"), text: "b0\n".into() }),
            (c.clone(), seen("absent"), Change::Write("x".into())),
        ];
        assert!(disk_phase(dir.path(), ops).is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap_or_default(), "a0\n");
        assert_eq!(std::fs::read_to_string(&b).unwrap_or_default(), "b0\n");
        assert!(!dir.path().join("moved.txt").exists());
        Ok(())
    }
}
