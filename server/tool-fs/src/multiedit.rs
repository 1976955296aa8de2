//! `multiedit`: several edits, in one file or many, applied in order on staged text and written
//! all-or-nothing.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::edit::apply_one;
use super::{Change, Committed, Loaded, check_fresh, commit_all, diff_metadata, load_shown, reviewed_title, snippet};

const DESCRIPTION: &str = "Apply several edits at once, to one file or many: each edit is { file_path, old_string, \
    new_string, replace_all } like `edit` (file_path may be given once at the top for all). Edits apply in order, \
    each to the result of the ones before it. Each is placed as `edit` places it: formatting differences \
    (indentation, tabs vs spaces, trailing whitespace, blank lines) are forgiven, content differences only on lines \
    the edit keeps; an edit already applied is refused. All or nothing: if any edit cannot be placed, no file is \
    changed, and the error says which edit failed and why.";

#[derive(Deserialize, JsonSchema)]
struct EditArgs {
    /// The file of this edit (default: the top-level file_path).
    file_path: Option<String>,
    /// The exact text to replace (empty only to create a missing file with new_string).
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence (default false).
    replace_all: Option<bool>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// The edits, applied in order.
    #[schemars(length(min = 1))]
    edits: Vec<EditArgs>,
    /// Default file for edits that name none.
    file_path: Option<String>,
}

/// One file's staged state.
struct Staged {
    loaded: Loaded,
    text: String,
    shown: String,
    report: Vec<String>,
}

tool!(pub(crate) MultiEdit(Args) = Decl::new("multiedit", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["multi_edit", "edit_files", "batch_edit"])
    .keywords(&["edits", "refactor", "rename", "several", "atomic"])
    .writes());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let total = args.edits.len();
    let mut files: Vec<(PathBuf, Staged)> = Vec::new();
    let mut strategies = Vec::new();
    for (index, edit) in args.edits.into_iter().enumerate() {
        let which = format!("edit {} of {total}", index + 1);
        let fail = |err: ToolError| {
            let mut err = err;
            err.message = format!("{which} failed: {}. No file was changed.", err.message.trim_end_matches('.'));
            err.with("failedEdit", index + 1)
        };
        let Some(raw) = edit.file_path.as_deref().or(args.file_path.as_deref()) else {
            return Err(fail(ToolError::new("it names no file_path, and there is no top-level file_path")));
        };
        let path = ctx.workspace.resolve_writable(raw, &ctx.working_dir).map_err(|e| fail(e.into()))?;
        let position = match files.iter().position(|(p, _)| *p == path) {
            Some(position) => position,
            None => {
                let loaded = load_shown(&ctx, &path).await.map_err(fail)?;
                check_fresh(&ctx, &loaded).map_err(fail)?;
                let shown = ctx.workspace.display(&path);
                let text = loaded.text.clone();
                files.push((path.clone(), Staged { loaded, text, shown, report: Vec::new() }));
                files.len() - 1
            }
        };
        let staged = &mut files[position].1;
        if edit.old_string.is_empty() && !staged.loaded.exists() && staged.text.is_empty() {
            staged.text = edit.new_string;
            staged.report.push(format!("{which}: creates the file"));
            strategies.push(json!({ "edit": index + 1, "strategy": "create" }));
            continue;
        }
        if !staged.loaded.exists() && staged.text.is_empty() {
            return Err(fail(ToolError::new(format!(
                "`{}` does not exist; create it with an edit whose old_string is empty, or with `write`",
                staged.shown
            ))));
        }
        let applied = apply_one(
            &staged.text,
            &staged.shown,
            &edit.old_string,
            &edit.new_string,
            edit.replace_all.unwrap_or(false),
            staged.loaded.line_ending(),
        )
        .map_err(fail)?;
        let how = if applied.strategy == "exact" { String::new() } else { format!(", matched {}", applied.strategy) };
        staged.report.push(format!(
            "{which}: {} replacement(s) at line {}{how}\n{}",
            applied.replacements,
            applied.line,
            snippet(&applied.text, applied.start, applied.end).trim_end()
        ));
        let mut entry = json!({
            "edit": index + 1, "file": staged.shown, "strategy": applied.strategy,
            "similarity": (applied.similarity * 100.0).round() / 100.0, "line": applied.line,
        });
        if !applied.forgiven.is_empty() {
            entry["forgiven"] = applied.forgiven_json();
        }
        strategies.push(entry);
        staged.text = applied.text;
    }
    let changed: Vec<&Staged> =
        files.iter().map(|(_, s)| s).filter(|s| s.text != s.loaded.text || !s.loaded.exists()).collect();
    if changed.is_empty() {
        return Err(ToolError::new("the edits, applied in order, leave every file as it was; nothing was written"));
    }
    let mut output = String::new();
    let mut paths = Vec::new();
    let mut diffs = serde_json::Map::new();
    for (_, staged) in &files {
        output.push_str(&format!("`{}`:\n{}\n", staged.shown, staged.report.join("\n")));
        paths.push(staged.shown.clone());
        diffs.insert(staged.shown.clone(), diff_metadata(&staged.shown, &staged.loaded.text, &staged.text).into());
    }
    let changes: Vec<(Loaded, Change)> = files
        .into_iter()
        .filter(|(_, s)| s.text != s.loaded.text || !s.loaded.exists())
        .map(|(_, s)| (s.loaded, Change::Write(s.text)))
        .collect();
    let count = changes.len();
    let changed_paths: Vec<std::path::PathBuf> = changes.iter().map(|(l, _)| l.path.clone()).collect();
    let committed = commit_all(&ctx, changes).await?;
    output.push_str(&Committed::applied_report(&committed));
    for partial in committed.iter().flat_map(|c| &c.partial) {
        diffs.insert(partial.shown.clone(), partial.diff.clone().into());
    }
    for note in committed.iter().flat_map(|c| &c.notes) {
        output.push_str(&format!("Note: {note}.\n"));
    }
    let mut result = ToolOutput::new(
        reviewed_title(format!("Applied {total} edit(s) to {count} file(s)"), &committed),
        output.trim_end().to_owned(),
    )
    .with("files", paths)
    .with("edits", strategies)
    .with("diffs", diffs);
    super::attach_diagnostics(&ctx, &changed_paths, &mut result).await;
    Ok(result)
}
