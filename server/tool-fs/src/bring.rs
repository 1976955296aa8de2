//! Bringing a change made elsewhere (an agent's git worktree of the project) into the workspace:
//! not a tool the model calls, but the same path a change takes. Each file's change is taken
//! against the text it had at the change's base; the workspace's file is loaded as the person
//! sees it (editor buffer first). A file the person left as it was at the base takes the change
//! as it is; one they changed since takes it carried over onto their text (a three-way rebase
//! that refuses when both changed the same lines), or is left out with the reason. Nothing is
//! ever overwritten silently. The rest is reviewed per file and per hunk, and committed
//! all-or-nothing: through the editor for open documents, atomically on disk for the others.

use std::path::PathBuf;

use tandem_text::Decoded;
use tandem_tool_api::{ToolContext, ToolError};

use super::{Change, Loaded, commit_all, load};

/// One file of the change to bring over.
pub struct Incoming {
    /// Where the change lands: an absolute path in the workspace (for a rename, the new one).
    pub path: PathBuf,
    /// For a rename: the path it had (absolute, in the workspace).
    pub from: Option<PathBuf>,
    /// The content at the change's base (`None`: the file did not exist).
    pub base: Option<Vec<u8>>,
    /// The content the change gives it (`None`: it deletes the file).
    pub new: Option<Vec<u8>>,
}

/// What happened to the files of a change brought over.
#[derive(Debug, Default)]
pub struct BroughtOver {
    /// Files changed in the workspace (in whole or in part), as shown.
    pub applied: Vec<String>,
    /// Files left out, as shown, and why.
    pub left: Vec<(String, String)>,
    /// What happened, in words.
    pub message: String,
}

/// What to do with one file: a change for the review, or why it is left out.
enum Plan {
    Change { loaded: Loaded, change: Change, merged: bool },
    Left(String),
}

/// Brings `files` over (see the module). Never an error: what failed is in the result.
pub async fn bring_over(ctx: &ToolContext, files: Vec<Incoming>) -> BroughtOver {
    let mut result = BroughtOver::default();
    let mut changes = Vec::new();
    let mut merged = Vec::new();
    for file in files {
        let shown = ctx.workspace.display(&file.path);
        match plan(ctx, file) {
            Ok(Plan::Change { loaded, change, merged: was_merged }) => {
                if was_merged {
                    merged.push(shown.clone());
                }
                changes.push((shown, loaded, change));
            }
            Ok(Plan::Left(reason)) => result.left.push((shown, reason)),
            Err(err) => result.left.push((shown, err.message)),
        }
    }
    if changes.is_empty() {
        result.message = if result.left.is_empty() {
            "Nothing to bring over: the worktree has no changes against its base.".to_owned()
        } else {
            "Nothing was brought over.".to_owned()
        };
        return finish(result);
    }
    // What each file was, to tell afterwards which ones the review let through.
    let before: Vec<(String, PathBuf, Option<PathBuf>, Option<String>)> = changes
        .iter()
        .map(|(shown, loaded, change)| {
            let to = match change {
                Change::Move { to, .. } => Some(to.clone()),
                Change::Write(_) | Change::Delete => None,
            };
            (shown.clone(), loaded.path.clone(), to, loaded.exists().then(|| loaded.text.clone()))
        })
        .collect();
    let outcome = commit_all(ctx, changes.into_iter().map(|(_, loaded, change)| (loaded, change)).collect()).await;
    match outcome {
        Ok(_) => {
            for (shown, path, to, was) in before {
                let now = load(ctx, &path).ok().map(|now| now.exists().then_some(now.text));
                let changed = match to {
                    Some(to) => load(ctx, &to).is_ok_and(|l| l.exists()),
                    None => now.is_some_and(|now| now != was),
                };
                if changed {
                    result.applied.push(shown);
                } else {
                    result.left.push((shown, "rejected in the review".to_owned()));
                }
            }
            result.message = format!("Brought over {} file(s).", result.applied.len());
            let merged: Vec<&String> = merged.iter().filter(|m| result.applied.contains(m)).collect();
            if !merged.is_empty() {
                result.message.push_str(&format!(
                    " Merged with your own changes since the base: {}.",
                    merged.iter().map(|m| m.as_str()).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        Err(err) => {
            let reason = if err.metadata.get("rejected").is_some() {
                "rejected in the review".to_owned()
            } else if err.metadata.get("cancelled").is_some() {
                "the review was cancelled".to_owned()
            } else {
                format!("not written: {}", err.message)
            };
            result.left.extend(before.into_iter().map(|(shown, ..)| (shown, reason.clone())));
            result.message = format!("Nothing was brought over: {reason}.");
        }
    }
    finish(result)
}

/// The result with the files left out named in its message.
fn finish(mut result: BroughtOver) -> BroughtOver {
    for (shown, reason) in &result.left {
        result.message.push_str(&format!("\nLeft out `{shown}`: {reason}."));
    }
    result
}

/// What is left out of a file that is not text.
const NOT_TEXT: &str = "not text: copy it over with git (`git checkout <branch> -- <path>`)";

/// The text of `bytes` (`Some(None)`: no file); `None` when it is not text.
fn text_of(bytes: Option<Vec<u8>>) -> Option<Option<String>> {
    match bytes.map(tandem_text::decode) {
        None => Some(None),
        Some(Decoded::Text { text, .. }) => Some(Some(text)),
        Some(Decoded::Binary { .. }) => None,
    }
}

/// Whether `path` leads through a symbolic link (itself or a folder above it): never read or
/// written through.
fn through_link(ctx: &ToolContext, path: &std::path::Path) -> bool {
    path.to_str().is_none_or(|raw| ctx.workspace.resolve(raw, ctx.workspace.root()).map_or(true, |real| real != path))
}

/// The change `base` → `new` carried over onto `ours`, and whether `ours` had changed.
fn carried(base: &str, new: &str, ours: &str) -> Result<(String, bool), tandem_text::rebase::Conflict> {
    if ours == base {
        return Ok((new.to_owned(), false));
    }
    tandem_text::rebase::rebase(base, new, ours).map(|text| (text, true))
}

/// Why a file both sides changed at the same place is left out.
fn overlapping(conflict: &tandem_text::rebase::Conflict) -> String {
    let lines = |(a, b): (usize, usize)| if a == b { format!("line {a}") } else { format!("lines {a}-{b}") };
    format!(
        "you changed it since the base where the worktree changes it too (your {} against its change to {} of \
         the base); left as it is: merge it by hand",
        lines(conflict.current_lines),
        lines(conflict.reviewed_lines)
    )
}

fn plan(ctx: &ToolContext, file: Incoming) -> Result<Plan, ToolError> {
    for path in std::iter::once(&file.path).chain(&file.from) {
        ctx.workspace.check_writable(path)?;
        if through_link(ctx, path) {
            return Ok(Plan::Left("a symbolic link, or inside one, which is never written through".to_owned()));
        }
    }
    let (Some(base), Some(new)) = (text_of(file.base), text_of(file.new)) else {
        return Ok(Plan::Left(NOT_TEXT.to_owned()));
    };
    if let Some(from) = &file.from {
        let ours = load(ctx, from)?;
        let from_shown = ctx.workspace.display(from);
        if !ours.exists() {
            return Ok(Plan::Left(format!("the worktree renames `{from_shown}`, which is gone from the workspace")));
        }
        if load(ctx, &file.path)?.exists() {
            return Ok(Plan::Left(format!(
                "the worktree renames `{from_shown}` to it, but it exists in the workspace"
            )));
        }
        let (text, merged) = match carried(base.as_deref().unwrap_or(""), new.as_deref().unwrap_or(""), &ours.text) {
            Ok(carried) => carried,
            Err(conflict) => return Ok(Plan::Left(overlapping(&conflict))),
        };
        return Ok(Plan::Change { loaded: ours, change: Change::Move { to: file.path, text }, merged });
    }
    let ours = load(ctx, &file.path)?;
    let plan = match (base, new) {
        (_, None) if !ours.exists() => Plan::Left("already deleted in the workspace".to_owned()),
        (Some(base), None) if ours.text == base => Plan::Change { loaded: ours, change: Change::Delete, merged: false },
        (_, None) => Plan::Left("the worktree deletes it, but you changed it since the base; left as it is".to_owned()),
        (_, Some(new)) if ours.exists() && ours.text == new => Plan::Left("already as in the worktree".to_owned()),
        (None, Some(new)) if !ours.exists() => Plan::Change { loaded: ours, change: Change::Write(new), merged: false },
        (None, Some(_)) => Plan::Left(
            "the worktree creates it, but the workspace has a different file there; left as it is".to_owned(),
        ),
        (Some(_), Some(_)) if !ours.exists() => {
            Plan::Left("the worktree changes it, but it was deleted in the workspace since the base".to_owned())
        }
        (Some(base), Some(new)) => match carried(&base, &new, &ours.text) {
            Ok((text, merged)) => Plan::Change { loaded: ours, change: Change::Write(text), merged },
            Err(conflict) => Plan::Left(overlapping(&conflict)),
        },
    };
    Ok(plan)
}
