//! `write`: creates or replaces a whole file (parents created), keeping its BOM, line endings
//! and permissions.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{attach_diagnostics, check_fresh, commit, diff_metadata, load_shown, reviewed_title, snippet};

const DESCRIPTION: &str = "Create a file, or replace a file's whole content. Parent directories are created. To change part \
    of an existing file prefer `edit`. An existing file must have been read in this session first. \
    The file's line endings (LF/CRLF), BOM and permissions are kept.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Path of the file: absolute, or relative to the working directory.
    file_path: String,
    /// The complete new content of the file.
    content: String,
}

tool!(pub(crate) Write(Args) = Decl::new("write", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["write_file", "create_file", "create"])
    .keywords(&["create", "new", "overwrite", "save", "file"])
    .writes()
    .always_load());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let path = ctx.workspace.resolve_writable(&args.file_path, &ctx.working_dir)?;
    let shown = ctx.workspace.display(&path);
    let loaded = load_shown(&ctx, &path).await?;
    let created = !loaded.exists();
    if !created {
        if let Some(session) = &ctx.session_id
            && ctx.cache.last_read(session, &path).is_none()
        {
            return Err(ToolError::new(format!(
                "`{shown}` already exists and you have not read it in this session; read it first so nothing is overwritten unseen (or use `edit` for a targeted change)"
            )));
        }
        check_fresh(&ctx, &loaded)?;
    }
    let new_text = loaded.line_ending().apply(&args.content).into_owned();
    let lines = new_text.lines().count();
    let old_lines = loaded.text.lines().count();
    if !created && new_text == loaded.text {
        return Ok(ToolOutput::new(
            format!("{shown} unchanged"),
            format!("`{shown}` already has exactly this content; nothing was written."),
        )
        .with("path", shown)
        .with("changed", false));
    }
    let line_ending = loaded.line_ending().name();
    let (start, _, new_end) = tandem_text::minimal_change(&loaded.text, &new_text);
    let mut preview = if created { String::new() } else { snippet(&new_text, start, new_end) };
    let mut diff = diff_metadata(&shown, &loaded.text, &new_text);
    let committed = commit(&ctx, loaded, new_text).await?;
    committed.show_applied(&mut preview, &mut diff);
    let mut output = if created {
        format!("Created `{shown}` ({lines} lines).")
    } else {
        format!(
            "Wrote `{shown}` ({lines} lines, was {old_lines}; {line_ending} line endings kept). Changed region:\n{preview}"
        )
    };
    for note in &committed.notes {
        output.push_str(&format!("\nNote: {note}."));
    }
    let title = if created { format!("Created {shown}") } else { format!("Wrote {shown}") };
    let mut result = ToolOutput::new(reviewed_title(title, [&committed]), output)
        .with("path", shown)
        .with("created", created)
        .with("changed", true)
        .with("lines", lines)
        .with("via", committed.via)
        .with_all(diff);
    attach_diagnostics(&ctx, &[path], &mut result).await;
    Ok(result)
}
