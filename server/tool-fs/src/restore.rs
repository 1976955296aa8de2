//! Restoring files to an earlier content (a checkpoint): not a tool the model calls, but the
//! same path a change takes. Each file is loaded as the person sees it (editor buffer first),
//! the whole restore is reviewed per file and per hunk as the session's mode says, and it is
//! committed all-or-nothing: through the editor for open documents (so its undo still works),
//! atomically on disk for the rest. A file that is now a symbolic link (or under one) is left
//! alone: a restore never reads or writes through a link.

use std::path::PathBuf;

use tandem_text::Decoded;
use tandem_tool_api::{ToolContext, ToolError, ToolOutput};

use super::{Change, Committed, commit_all, load};

/// One file to restore: its path (resolved and confined by the caller) and its content then
/// (`None`: it did not exist, so it is removed).
pub struct RestoreFile {
    /// Absolute path inside the workspace.
    pub path: PathBuf,
    /// The content to restore.
    pub content: Option<Vec<u8>>,
}

/// Restores `files`. Files whose content is not text are left alone and named in the result.
pub async fn restore_files(ctx: &ToolContext, files: Vec<RestoreFile>) -> Result<ToolOutput, ToolError> {
    let mut changes = Vec::new();
    let mut not_text = Vec::new();
    let mut linked = Vec::new();
    for file in files {
        ctx.workspace.check_writable(&file.path)?;
        let shown = ctx.workspace.display(&file.path);
        // A path that now leads through a symbolic link (itself, or a directory above it) is
        // neither read nor written: the link may point out of the workspace.
        let resolved = file.path.to_str().map(|raw| ctx.workspace.resolve(raw, ctx.workspace.root()));
        if !matches!(resolved, Some(Ok(ref real)) if *real == file.path) {
            linked.push(shown);
            continue;
        }
        let loaded = match load(ctx, &file.path) {
            Ok(loaded) => loaded,
            Err(err) if err.metadata.get("binary").is_some() => {
                not_text.push(shown);
                continue;
            }
            Err(err) => return Err(err),
        };
        let change = match file.content {
            None if loaded.exists() => Change::Delete,
            None => continue,
            Some(bytes) => match tandem_text::decode(bytes) {
                Decoded::Text { text, .. } => Change::Write(text),
                Decoded::Binary { .. } => {
                    not_text.push(shown);
                    continue;
                }
            },
        };
        changes.push((loaded, change));
    }
    let count = changes.len();
    let committed: Vec<Committed> = if changes.is_empty() { Vec::new() } else { commit_all(ctx, changes).await? };
    let mut output = if count == 0 {
        "Nothing to restore.".to_owned()
    } else {
        format!("Restored {count} file(s).{}", Committed::applied_report(&committed))
    };
    if !not_text.is_empty() {
        output.push_str(&format!("\nNot restored (not text): {}", not_text.join(", ")));
    }
    if !linked.is_empty() {
        output.push_str(&format!(
            "\nNot restored (now a symbolic link, or inside one, which a restore never reads or writes through): {}",
            linked.join(", ")
        ));
    }
    Ok(ToolOutput::new(format!("Restored {count} file(s)"), output).with("notText", not_text).with("linked", linked))
}
