//! `delete`: removes a file or an empty directory. Never the workspace root or `.git`.

use std::io;

use tandem_tool_api::approval::{Declined, confirm_whole};
use tandem_tool_api::{Decl, ToolCheck, ToolContext, ToolError, ToolOutput, tool};

use super::{Change, Origin, blocking, check_fresh, commit_all, load};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::ToolGroup;

const DESCRIPTION: &str = "Delete a file or an empty directory in the workspace. A symbolic link is removed itself, not its \
    target. Refuses the workspace root and anything in .git.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Path of the file or empty directory: absolute, or relative to the working directory.
    file_path: String,
}

tool!(pub(crate) Delete(Args) = Decl::new("delete", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["delete_file", "remove", "rm"])
    .keywords(&["remove", "unlink", "file", "directory"])
    .writes());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let target = {
        let ctx = ctx.clone();
        blocking(move || inspect(&args, &ctx)).await?
    };
    let shown = ctx.workspace.display(target.path());
    match target {
        // A file goes through the commit path: the person reviews its deletion as a diff,
        // and the disk is checked against what was read.
        Target::File(loaded) => {
            let open = matches!(loaded.origin, Origin::Editor { .. } | Origin::Client { .. });
            let path = loaded.path.clone();
            commit_all(&ctx, vec![(loaded, Change::Delete)]).await?;
            if let Some(session) = &ctx.session_id {
                ctx.cache.forget_read(session, &path);
            }
            let mut output = format!("Deleted `{shown}`.");
            if open {
                output.push_str(" It is still open in the editor, which may offer to save it again.");
            }
            Ok(ToolOutput::new(format!("Deleted {shown}"), output).with("path", shown).with("kind", "file"))
        }
        Target::Symlink(path) => {
            confirm(&ctx, &format!("deletes the symbolic link `{shown}` (its target is untouched)")).await?;
            // A snapshot holds a link as the text of its target.
            let before = std::fs::read_link(&path)
                .ok()
                .map(|target| tandem_text::ContentHash::of(target.as_os_str().as_encoded_bytes()));
            std::fs::remove_file(&path)
                .map_err(|err| ToolError::new(format!("cannot delete the link `{shown}`: {err}")))?;
            if let Some(log) = &ctx.writes {
                log.record(tandem_tool_api::Written { path: path.clone(), before, after: None });
            }
            Ok(ToolOutput::new(
                format!("Deleted {shown}"),
                format!("Deleted the symbolic link `{shown}` (its target is untouched)."),
            )
            .with("path", shown)
            .with("kind", "symlink"))
        }
        Target::EmptyDir(path) => {
            confirm(&ctx, &format!("deletes the empty directory `{shown}`")).await?;
            std::fs::remove_dir(&path).map_err(|err| match err.kind() {
                io::ErrorKind::DirectoryNotEmpty => {
                    ToolError::new(format!("`{shown}` is no longer empty; nothing was deleted"))
                }
                _ => ToolError::new(format!("cannot delete `{shown}`: {err}")),
            })?;
            Ok(ToolOutput::new(format!("Deleted {shown}/"), format!("Deleted the empty directory `{shown}`."))
                .with("path", shown)
                .with("kind", "directory"))
        }
    }
}

/// What a delete would remove.
enum Target {
    /// A file, as loaded (editor buffer or disk).
    File(super::Loaded),
    /// A symbolic link (the link itself goes).
    Symlink(std::path::PathBuf),
    /// An empty directory.
    EmptyDir(std::path::PathBuf),
}

impl Target {
    fn path(&self) -> &std::path::Path {
        match self {
            Self::File(loaded) => &loaded.path,
            Self::Symlink(path) | Self::EmptyDir(path) => path,
        }
    }
}

/// Asks the call's approver about a deletion that has no text to show as a diff.
async fn confirm(ctx: &ToolContext, what: &str) -> Result<(), ToolError> {
    let check = ToolCheck { tool: "delete".to_owned(), server: None, arguments: Value::Null, reason: what.to_owned() };
    let declined = Declined {
        rejected: "the person did not allow this deletion; nothing was deleted.",
        hint: "",
        untouched: "nothing was deleted",
    };
    confirm_whole(ctx.approver.as_deref(), &check, declined).await
}

fn inspect(args: &Args, ctx: &ToolContext) -> Result<Target, ToolError> {
    // Resolve the parent, not the path: deleting a symlink removes the link, wherever it points.
    let raw = std::path::Path::new(&args.file_path);
    let path = match (raw.parent(), raw.file_name()) {
        (Some(parent), Some(name)) => {
            let parent = if parent.as_os_str().is_empty() { ".".into() } else { parent.to_string_lossy() };
            let joined = ctx.workspace.resolve(&parent, &ctx.working_dir)?.join(name);
            ctx.workspace.check_writable(&joined)?;
            joined
        }
        _ => ctx.workspace.resolve_writable(&args.file_path, &ctx.working_dir)?,
    };
    let shown = ctx.workspace.display(&path);
    if path == ctx.workspace.root() {
        return Err(ToolError::new("refusing to delete the workspace root"));
    }
    let meta = match std::fs::symlink_metadata(&path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            return Err(ToolError::new(format!("`{shown}` does not exist; nothing was deleted")));
        }
        Err(err) => return Err(ToolError::new(format!("cannot inspect `{shown}`: {err}"))),
    };
    if meta.file_type().is_symlink() {
        return Ok(Target::Symlink(path));
    }
    if meta.is_dir() {
        let entries = std::fs::read_dir(&path).map(|d| d.count()).unwrap_or(0);
        if entries > 0 {
            return Err(ToolError::new(format!(
                "`{shown}` is a directory with {entries} entr{}; delete what it holds first (only empty directories are deleted)",
                if entries == 1 { "y" } else { "ies" }
            )));
        }
        return Ok(Target::EmptyDir(path));
    }
    let loaded = load(ctx, &path)?;
    check_fresh(ctx, &loaded)?;
    Ok(Target::File(loaded))
}
