//! `delete`: removes a file or an empty directory. Never the workspace root or `.git`.

use std::io;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::ToolGroup;
use tandem_text::disk::{self, Expected};

use super::{Origin, blocking, check_fresh, load};
use crate::tool::parse_args;
use crate::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec, schema_for};

const DESCRIPTION: &str = "Delete a file or an empty directory in the workspace. A symbolic link is removed itself, not its \
    target. Refuses the workspace root and anything in .git.";

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Path of the file or empty directory: absolute, or relative to the workspace root.
    file_path: String,
}

pub(crate) struct Delete {
    spec: ToolSpec,
}

impl Delete {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new("delete", ToolGroup::Fs, DESCRIPTION, schema_for::<Args>())
                .aliases(&["delete_file", "remove", "rm"])
                .keywords(&["remove", "unlink", "file", "directory"])
                .writes(),
        }
    }
}

#[async_trait]
impl Tool for Delete {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(args)?;
        blocking(move || run(args, &ctx)).await
    }
}

fn run(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
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
        std::fs::remove_file(&path)
            .map_err(|err| ToolError::new(format!("cannot delete the link `{shown}`: {err}")))?;
        return Ok(ToolOutput::new(
            format!("Deleted {shown}"),
            format!("Deleted the symbolic link `{shown}` (its target is untouched)."),
        )
        .with("path", shown)
        .with("kind", "symlink"));
    }
    if meta.is_dir() {
        return match std::fs::remove_dir(&path) {
            Ok(()) => {
                Ok(ToolOutput::new(format!("Deleted {shown}/"), format!("Deleted the empty directory `{shown}`."))
                    .with("path", shown)
                    .with("kind", "directory"))
            }
            Err(err) if err.kind() == io::ErrorKind::DirectoryNotEmpty => {
                let entries = std::fs::read_dir(&path).map(|d| d.count()).unwrap_or(0);
                Err(ToolError::new(format!(
                    "`{shown}` is a directory with {entries} entr{}; delete what it holds first (only empty directories are deleted)",
                    if entries == 1 { "y" } else { "ies" }
                )))
            }
            Err(err) => Err(ToolError::new(format!("cannot delete `{shown}`: {err}"))),
        };
    }
    let loaded = load(ctx, &path)?;
    check_fresh(ctx, &loaded)?;
    let expected = match loaded.origin {
        Origin::Disk { disk_hash, .. } => Expected::Hash(disk_hash),
        // Open in the editor, or binary-free but unloaded: the editor holds the text; delete
        // what is on disk.
        Origin::Editor { .. } | Origin::Client { .. } | Origin::Missing => Expected::Any,
    };
    disk::remove(&path, expected)?;
    if let Some(session) = &ctx.session_id {
        ctx.cache.forget_read(session, &path);
    }
    let mut output = format!("Deleted `{shown}`.");
    if matches!(loaded.origin, Origin::Editor { .. } | Origin::Client { .. }) {
        output.push_str(" It is still open in the editor, which may offer to save it again.");
    }
    Ok(ToolOutput::new(format!("Deleted {shown}"), output).with("path", shown).with("kind", "file"))
}
