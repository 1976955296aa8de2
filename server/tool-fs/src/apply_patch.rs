//! `apply_patch`: a unified diff (`git diff`, `diff -u`) or a `*** Begin Patch` block, applied
//! to the workspace all-or-nothing.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;
use tandem_text::patch::{self, FilePatch, PatchFormat};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{Change, Committed, Loaded, check_fresh, commit_all, diff_metadata, load_shown, reviewed_title};

const DESCRIPTION: &str = "Apply a patch to the workspace: a unified diff as `git diff` or `diff -u` writes it \
    (several files, new files, deletions, renames), or a `*** Begin Patch` block (`*** Add File:`, \
    `*** Update File:` with `@@` chunks of context, `-` and `+` lines, `*** Move to:`, `*** Delete File:`, \
    `*** End Patch`). Hunks are placed at their line numbers, else nearby, else ignoring whitespace, else (unified \
    diffs) with up to 2 of their first and last context lines left unchecked, like `patch -F2` (reported as fuzz; \
    removed lines and the other context lines must match, and the place must be the only one). A hunk that fits \
    nowhere or in several places fails. All or nothing: on any failure no file is changed.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// The patch text.
    patch: String,
    /// Leading path components to remove from the paths in a unified diff, as `patch -p<N>`
    /// (default: detected, 1 for git's a/ b/ prefixes).
    #[schemars(range(max = 10))]
    strip: Option<usize>,
}

/// One file's staged result.
struct Staged {
    loaded: Loaded,
    text: String,
    shown: String,
    action: &'static str,
    target: Option<(PathBuf, String)>,
    hunks: Vec<Value>,
    notes: Vec<String>,
}

tool!(pub(crate) ApplyPatch(Args) = Decl::new("apply_patch", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["patch", "apply_diff"])
    .keywords(&["diff", "unified", "git", "begin patch", "hunks"])
    .writes());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let parsed = patch::parse(&args.patch).map_err(|err| ToolError::new(format!("{err}. No file was changed.")))?;
    let strip = match (args.strip, parsed.format) {
        (Some(strip), _) => strip,
        (None, PatchFormat::BeginPatch) => 0,
        (None, PatchFormat::Unified) => {
            let (ws, base) = (ctx.workspace.clone(), ctx.working_dir.clone());
            patch::detect_strip(&parsed, &|p: &str| ws.resolve(p, &base).is_ok_and(|r| r.exists()))
        }
    };
    let mut staged: Vec<Staged> = Vec::new();
    let total = parsed.files.len();
    for (index, file) in parsed.files.iter().enumerate() {
        let fail = |err: ToolError| {
            let mut err = err;
            err.message = format!(
                "file {} of {total} (`{}`): {}. No file was changed.",
                index + 1,
                file.display_path(),
                err.message.trim_end_matches('.')
            );
            err.with("failedFile", index + 1)
        };
        let one = stage(&ctx, file, strip, &staged).await.map_err(fail)?;
        staged.push(one);
    }
    let mut output = String::new();
    let mut files = Vec::new();
    let mut diffs = serde_json::Map::new();
    let mut changes = Vec::new();
    for s in staged {
        let hunks: Vec<String> = s
            .hunks
            .iter()
            .map(|h| {
                let offset = h["offset"].as_i64().unwrap_or(0);
                let moved = if offset == 0 { String::new() } else { format!(", offset {offset:+}") };
                let fuzz = match h["fuzz"].as_u64() {
                    Some(fuzz) => {
                        let ignored: Vec<String> = h["ignored"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|m| {
                                format!(
                                    "line {} is `{}`, not `{}`",
                                    m["line"],
                                    m["file"].as_str().unwrap_or(""),
                                    m["patch"].as_str().unwrap_or("")
                                )
                            })
                            .collect();
                        let which =
                            if ignored.is_empty() { String::new() } else { format!(": {}", ignored.join(", ")) };
                        format!(", fuzz {fuzz} (outer context lines left unchecked{which})")
                    }
                    None => String::new(),
                };
                format!(
                    "hunk {} {} at line {}{moved}{fuzz}",
                    h["hunk"],
                    h["strategy"].as_str().unwrap_or(""),
                    h["line"]
                )
            })
            .collect();
        let shown_target = s.target.as_ref().map(|(_, shown)| shown.clone());
        let name = match &shown_target {
            Some(to) => format!("{} → {to}", s.shown),
            None => s.shown.clone(),
        };
        output.push_str(&format!("{} {name}", s.action));
        if !hunks.is_empty() {
            output.push_str(&format!(": {}", hunks.join("; ")));
        }
        output.push('\n');
        for note in &s.notes {
            output.push_str(&format!("  note: {note}\n"));
        }
        let diff_name = shown_target.clone().unwrap_or_else(|| s.shown.clone());
        diffs.insert(diff_name, diff_metadata(&s.shown, &s.loaded.text, &s.text).into());
        files.push(json!({ "path": s.shown, "action": s.action, "to": shown_target, "hunks": s.hunks }));
        let change = match (s.action, s.target) {
            ("delete", _) => Change::Delete,
            ("rename", Some((to, _))) => Change::Move { to, text: s.text },
            (_, _) => Change::Write(s.text),
        };
        changes.push((s.loaded, change));
    }
    let count = changes.len();
    let changed_paths: Vec<PathBuf> = changes
        .iter()
        .filter_map(|(l, c)| match c {
            Change::Write(_) => Some(l.path.clone()),
            Change::Move { to, .. } => Some(to.clone()),
            Change::Delete => None,
        })
        .collect();
    let committed = commit_all(&ctx, changes).await?;
    output.push_str(&Committed::applied_report(&committed));
    for note in committed.iter().flat_map(|c| &c.notes) {
        output.push_str(&format!("Note: {note}.\n"));
    }
    let mut result = ToolOutput::new(
        reviewed_title(format!("Applied a patch to {count} file(s)"), &committed),
        output.trim_end().to_owned(),
    )
    .with("format", if parsed.format == PatchFormat::Unified { "unified" } else { "begin-patch" })
    .with("strip", strip)
    .with("files", files)
    .with("diffs", diffs);
    super::attach_diagnostics(&ctx, &changed_paths, &mut result).await;
    Ok(result)
}

/// Resolves, loads and applies one file's part of the patch, on top of earlier parts of the same
/// patch that touched the same file.
async fn stage(ctx: &ToolContext, file: &FilePatch, strip: usize, earlier: &[Staged]) -> Result<Staged, ToolError> {
    if file.binary {
        return Err(ToolError::new(
            "it changes a binary file, whose content the patch does not carry; change it another way",
        ));
    }
    let path_of = |raw: &Option<String>| -> Result<Option<PathBuf>, ToolError> {
        let Some(raw) = raw else { return Ok(None) };
        let stripped = patch::strip_path(raw, strip).ok_or_else(|| {
            ToolError::new(format!("`{raw}` has fewer than {strip} leading path components to strip; pass strip"))
        })?;
        Ok(Some(ctx.workspace.resolve_writable(&stripped, &ctx.working_dir)?))
    };
    let old = path_of(&file.old_path)?;
    let new = path_of(&file.new_path)?;
    let source = old.clone().or_else(|| new.clone()).ok_or_else(|| ToolError::new("it names no file"))?;
    if earlier.iter().any(|s| s.loaded.path == source || s.target.as_ref().is_some_and(|(t, _)| *t == source)) {
        return Err(ToolError::new("the patch changes this file twice; merge its hunks into one section"));
    }
    let mut loaded = load_shown(ctx, &source).await?;
    let shown = ctx.workspace.display(&source);
    match (file.is_creation(), loaded.exists()) {
        (true, true) => {
            return Err(ToolError::new(format!(
                "the patch creates `{shown}`, which already exists; read it and patch it instead"
            )));
        }
        (false, false) => {
            return Err(ToolError::new(format!(
                "`{shown}` does not exist; a patch can only change files that exist (or create new ones)"
            )));
        }
        _ => {}
    }
    check_fresh(ctx, &loaded)?;
    let applied = patch::apply(file, &loaded.text).map_err(|err| ToolError::new(err.to_string()))?;
    // Hunks placed with fuzz are marked in the person's review too.
    let fuzzed: Vec<(usize, usize, usize)> = applied
        .hunks
        .iter()
        .filter(|h| h.fuzz > 0)
        .map(|h| (h.line, file.hunks.get(h.index - 1).map_or(1, |hunk| hunk.new_lines().count()), h.fuzz))
        .collect();
    loaded.fuzzed.clone_from(&fuzzed);
    let hunks: Vec<Value> = applied
        .hunks
        .iter()
        .map(|h| {
            let mut hunk = json!({ "hunk": h.index, "strategy": h.strategy, "offset": h.offset, "line": h.line });
            if h.fuzz > 0 {
                hunk["fuzz"] = json!(h.fuzz);
                hunk["ignored"] = h
                    .ignored
                    .iter()
                    .map(|m| json!({ "line": m.line, "file": m.file, "patch": m.patch }))
                    .collect::<Vec<_>>()
                    .into();
            }
            hunk
        })
        .collect();
    let target = match (&new, file.is_rename()) {
        (Some(to), true) => {
            if to.exists() {
                return Err(ToolError::new(format!(
                    "it moves the file to `{}`, which already exists",
                    ctx.workspace.display(to)
                )));
            }
            Some((to.clone(), ctx.workspace.display(to)))
        }
        _ => None,
    };
    let action = if file.is_creation() {
        "create"
    } else if file.is_deletion() {
        "delete"
    } else if target.is_some() && file.copy {
        "copy"
    } else if target.is_some() {
        "rename"
    } else {
        "update"
    };
    if action == "copy" {
        // The copy is a new file; the original stays as it is.
        let (to, to_shown) = target.clone().unwrap_or_default();
        let mut copy = load_shown(ctx, &to).await?;
        copy.fuzzed = fuzzed;
        return Ok(Staged {
            loaded: copy,
            text: applied.text,
            shown: to_shown,
            action: "create",
            target: None,
            hunks,
            notes: file.notes.clone(),
        });
    }
    Ok(Staged { loaded, text: applied.text, shown, action, target, hunks, notes: file.notes.clone() })
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use async_trait::async_trait;
    use serde_json::json;
    use tandem_protocol::DiagnosticsPreview;

    use tandem_tool_api::testing::Harness;
    use tandem_tool_api::{Approver, ChangeDecision, CommandCheck, CommandDecision, StagedFile};

    /// Accepts every change and keeps the hunks it was shown.
    #[derive(Default)]
    struct Recorder {
        shown: Mutex<Vec<(String, usize)>>,
    }

    #[async_trait]
    impl Approver for Recorder {
        async fn review_changes(&self, files: &[StagedFile], _: Option<&DiagnosticsPreview>) -> ChangeDecision {
            let mut shown = self.shown.lock().unwrap_or_else(|e| e.into_inner());
            shown.extend(files.iter().flat_map(|f| f.hunks.iter().map(|h| (h.id.clone(), h.fuzz))));
            ChangeDecision::Accept { hunks: None }
        }

        async fn confirm_command(&self, _: &CommandCheck) -> CommandDecision {
            CommandDecision::Allow
        }
    }

    #[test]
    fn a_fuzzed_hunk_reports_its_fuzz_in_metadata_and_in_the_review() {
        let mut h = Harness::new(
            "
            //- a.rs
            // prices
            pub fn total(items: &[Item]) -> u32 {
                let mut sum = 0;
                for item in items {
                    sum += item.price;
                }
                sum
            }
            ",
            crate::all(),
        );
        let recorder = Arc::new(Recorder::default());
        h.ctx.approver = Some(recorder.clone());
        let patch = "--- a/a.rs\n+++ b/a.rs\n@@ -2,5 +2,5 @@\n fn total(items: &[Item]) -> u32 {\n     let mut sum = 0;\n-    for item in items {\n+    for item in items.iter() {\n         sum += item.price;\n     }\n";
        let result = h.call("apply_patch", json!({ "patch": patch }));
        assert_eq!(result.error, None, "{result:?}");
        let hunk = &result.metadata["files"][0]["hunks"][0];
        assert_eq!(hunk["strategy"], "fuzz");
        assert_eq!(hunk["fuzz"], 1);
        assert_eq!(hunk["ignored"][0]["line"], 2);
        let output = &result.output;
        assert!(output.contains("fuzz 1 (outer context lines left unchecked: line 2 is `pub fn total"), "{output}");
        let shown = recorder.shown.lock().unwrap_or_else(|e| e.into_inner()).clone();
        assert_eq!(shown, vec![("h1".to_owned(), 1)]);
    }
}
