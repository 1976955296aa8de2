//! `append`: adds text at the end of a file (created if missing), on a line of its own.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{
    attach_diagnostics, check_fresh, commit, diff_metadata_knowing, line_of, load_shown, reviewed_title, snippet_at,
};
use tandem_text::hunks::Same;

const DESCRIPTION: &str = "Append text to the end of a file, creating it if missing. When the file does not end with a \
    newline, one is added first so the text starts on a new line. Line endings follow the file's.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Path of the file: absolute, or relative to the working directory.
    file_path: String,
    /// Text to add at the end of the file.
    content: String,
}

tool!(pub(crate) Append(Args) = Decl::new("append", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["append_file", "append_to_file"])
    .keywords(&["add", "end", "log", "file"])
    .writes()
    .additive());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    if args.content.is_empty() {
        return Err(ToolError::new("`content` is empty; there is nothing to append"));
    }
    let path = ctx.workspace.resolve_writable(&args.file_path, &ctx.working_dir)?;
    let shown = ctx.workspace.display(&path);
    let loaded = load_shown(&ctx, &path).await?;
    check_fresh(&ctx, &loaded)?;
    let created = !loaded.exists();
    let ending = loaded.line_ending();
    let separator = if loaded.text.is_empty() || loaded.text.ends_with('\n') { "" } else { "\n" };
    let addition = ending.apply(&format!("{separator}{}", args.content)).into_owned();
    let start = loaded.text.len();
    let mut new_text = tandem_text::memory::string(start + addition.len());
    new_text.push_str(&loaded.text);
    new_text.push_str(&addition);
    // The old text is the new one's start: its lines are counted once, for both.
    let line = line_of(&new_text, start);
    let preview = snippet_at(&new_text, start, new_text.len(), line);
    let same = Same { prefix: start, newlines: line - 1, suffix: 0 };
    let diff = diff_metadata_knowing(&shown, &loaded.text, &new_text, same);
    let committed = commit(&ctx, loaded, new_text).await?;
    let mut output = format!(
        "{} `{shown}`{}:\n{preview}",
        if created { "Created" } else { "Appended to" },
        if separator.is_empty() { "" } else { " (added a newline first: the file did not end with one)" }
    );
    for note in &committed.notes {
        output.push_str(&format!("\nNote: {note}."));
    }
    let mut result = ToolOutput::new(reviewed_title(format!("Appended to {shown}"), [&committed]), output)
        .with("path", shown)
        .with("created", created)
        .with("bytes", addition.len())
        .with("via", committed.via)
        .with_all(diff);
    attach_diagnostics(&ctx, &[path], &mut result).await;
    Ok(result)
}
