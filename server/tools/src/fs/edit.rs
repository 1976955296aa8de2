//! `edit`: replaces an exact string that occurs once (or every occurrence with `replace_all`).
//! When the string is not found, or found more than once, the error says where to look.
//! (The fuzzy fallback chain is its own piece of work; today only exact matches apply.)

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::ToolGroup;

use super::{blocking, check_fresh, commit, line_of, load, numbered, snippet};
use crate::tool::parse_args;
use crate::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec, schema_for};

/// At most this many occurrences are listed in an "ambiguous" error.
const MAX_LISTED: usize = 10;
/// The closest-match search looks at most this many lines.
const MAX_SCAN_LINES: usize = 50_000;

const DESCRIPTION: &str = "Replace text in a file. old_string must match the file exactly (indentation included, without \
    the line-number prefix that `read` shows) and occur exactly once, unless replace_all is true. \
    Give enough surrounding lines to make it unique. An empty old_string creates a new file with \
    new_string. Edits apply to the editor's unsaved text when the file is open there.";

#[derive(Deserialize, JsonSchema)]
struct Args {
    /// Path of the file: absolute, or relative to the workspace root.
    file_path: String,
    /// The exact text to replace, including indentation. It must occur exactly once unless
    /// replace_all is set. Empty only to create a new file.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence (default false).
    replace_all: Option<bool>,
}

pub(crate) struct Edit {
    spec: ToolSpec,
}

impl Edit {
    pub fn new() -> Self {
        Self {
            spec: ToolSpec::new("edit", ToolGroup::Fs, DESCRIPTION, schema_for::<Args>())
                .aliases(&["edit_file", "str_replace", "replace"])
                .keywords(&["modify", "change", "replace", "fix", "update"])
                .writes()
                .always_load(),
        }
    }
}

#[async_trait]
impl Tool for Edit {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let args: Args = parse_args(args)?;
        if args.old_string == args.new_string {
            return Err(ToolError::new("old_string and new_string are identical; the edit would change nothing"));
        }
        let path = ctx.workspace.resolve_writable(&args.file_path, &ctx.working_dir)?;
        let shown = ctx.workspace.display(&path);
        let (load_ctx, load_path) = (ctx.clone(), path.clone());
        let loaded = blocking(move || load(&load_ctx, &load_path)).await?;
        if !loaded.exists() {
            if args.old_string.is_empty() {
                let lines = args.new_string.lines().count();
                commit(&ctx, loaded, args.new_string).await?;
                return Ok(ToolOutput::new(format!("Created {shown}"), format!("Created `{shown}` ({lines} lines)."))
                    .with("path", shown)
                    .with("created", true)
                    .with("strategy", "create"));
            }
            return Err(super::read::not_found(&ctx, &path));
        }
        check_fresh(&ctx, &loaded)?;
        if args.old_string.is_empty() {
            if !loaded.text.is_empty() {
                return Err(ToolError::new(format!(
                    "old_string is empty but `{shown}` is not; give the text to replace, or use `write` to replace the whole file"
                )));
            }
            let new_text = loaded.line_ending().apply(&args.new_string).into_owned();
            let preview = snippet(&new_text, 0, new_text.len());
            let committed = commit(&ctx, loaded, new_text).await?;
            return Ok(ToolOutput::new(
                format!("Edited {shown}"),
                format!("Filled the empty file `{shown}`:\n{preview}"),
            )
            .with("path", shown)
            .with("strategy", "exact")
            .with("replacements", 1)
            .with("via", committed.via));
        }
        let replace_all = args.replace_all.unwrap_or(false);
        let ending = loaded.line_ending();
        // The model writes `\n`; in a CRLF file the same text has `\r\n`. Try the file's form
        // first, then the text exactly as given (files with mixed endings).
        let forms = [
            (ending.apply(&args.old_string).into_owned(), ending.apply(&args.new_string).into_owned()),
            (args.old_string.clone(), args.new_string.clone()),
        ];
        let Some((old, new, positions)) = forms.into_iter().find_map(|(old, new)| {
            let positions: Vec<usize> = loaded.text.match_indices(old.as_str()).map(|(i, _)| i).collect();
            (!positions.is_empty()).then_some((old, new, positions))
        }) else {
            return Err(not_found_error(&shown, &loaded.text, &args.old_string));
        };
        if positions.len() > 1 && !replace_all {
            let lines: Vec<String> =
                positions.iter().take(MAX_LISTED).map(|p| line_of(&loaded.text, *p).to_string()).collect();
            let more = if positions.len() > MAX_LISTED {
                format!(" and {} more", positions.len() - MAX_LISTED)
            } else {
                String::new()
            };
            return Err(ToolError::new(format!(
                "old_string occurs {} times in `{shown}` (starting at lines {}{more}); include more surrounding lines to pick one, or set replace_all to change every occurrence",
                positions.len(),
                lines.join(", ")
            ))
            .with("ambiguous", true)
            .with("occurrences", positions.len()));
        }
        let first = positions[0];
        let first_line = line_of(&loaded.text, first);
        let new_text = if replace_all {
            loaded.text.replace(old.as_str(), &new)
        } else {
            let mut text = String::with_capacity(loaded.text.len() + new.len());
            text.push_str(&loaded.text[..first]);
            text.push_str(&new);
            text.push_str(&loaded.text[first + old.len()..]);
            text
        };
        let preview = snippet(&new_text, first, first + new.len());
        let replacements = positions.len();
        let committed = commit(&ctx, loaded, new_text).await?;
        let mut output =
            format!("Edited `{shown}`: {replacements} replacement(s), first at line {first_line}.\n{preview}");
        for note in &committed.notes {
            output.push_str(&format!("\nNote: {note}."));
        }
        Ok(ToolOutput::new(format!("Edited {shown}"), output)
            .with("path", shown)
            .with("strategy", "exact")
            .with("replacements", replacements)
            .with("firstLine", first_line)
            .with("via", committed.via))
    }
}

/// Dice coefficient of the character bigrams of two trimmed lines, in 0..=1.
fn line_similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (a.trim(), b.trim());
    if a == b {
        return 1.0;
    }
    let bigrams = |s: &str| -> Vec<(char, char)> {
        let chars: Vec<char> = s.chars().collect();
        let mut pairs: Vec<(char, char)> = chars.windows(2).map(|w| (w[0], w[1])).collect();
        pairs.sort_unstable();
        pairs
    };
    let (x, y) = (bigrams(a), bigrams(b));
    if x.is_empty() || y.is_empty() {
        return 0.0;
    }
    let (mut i, mut j, mut common) = (0, 0, 0);
    while i < x.len() && j < y.len() {
        match x[i].cmp(&y[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                common += 1;
                i += 1;
                j += 1;
            }
        }
    }
    2.0 * common as f64 / (x.len() + y.len()) as f64
}

/// "Not found", with the most similar block of the file and its differences from old_string.
fn not_found_error(shown: &str, text: &str, old_string: &str) -> ToolError {
    let wanted: Vec<&str> = old_string.lines().collect();
    let lines: Vec<&str> = text.lines().take(MAX_SCAN_LINES).collect();
    let window = wanted.len().max(1);
    let mut best: Option<(f64, usize)> = None;
    if !wanted.is_empty() && !lines.is_empty() {
        for start in 0..lines.len().saturating_sub(window - 1).max(1) {
            let score = wanted
                .iter()
                .zip(&lines[start..(start + window).min(lines.len())])
                .map(|(w, l)| line_similarity(w, l))
                .sum::<f64>()
                / window as f64;
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, start));
            }
        }
    }
    let mut message = format!("old_string was not found in `{shown}`.");
    let mut error = ToolError::new("");
    match best {
        Some((score, start)) if score >= 0.5 => {
            let end = (start + window).min(lines.len());
            let block = lines[start..end].join("\n");
            let whitespace_only = wanted.iter().zip(&lines[start..end]).all(|(w, l)| w.trim() == l.trim());
            message.push_str(&format!(
                " The closest text is lines {}-{} ({:.0}% similar{}):\n{}",
                start + 1,
                end,
                score * 100.0,
                if whitespace_only { "; it differs only in whitespace or indentation" } else { "" },
                numbered(text, start + 1, end)
            ));
            let diff = similar::TextDiff::from_lines(old_string.trim_end_matches('\n'), &block)
                .unified_diff()
                .context_radius(1)
                .missing_newline_hint(false)
                .header("old_string", shown)
                .to_string();
            message.push_str(&format!("Differences (- your old_string, + the file):\n{diff}"));
            message.push_str("Read the file again if unsure, then retry with old_string copied exactly from it (without line-number prefixes).");
            error = error.with("closestLine", start + 1).with("similarity", (score * 100.0).round() / 100.0);
        }
        _ => message.push_str(" No similar text either: read the file to see its current content, then retry."),
    }
    error.message = message;
    error.with("notFound", true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_shows_the_closest_block_and_a_diff() {
        let text = "fn a() {\n    let x = 1;\n    x + 1\n}\n\nfn b() {\n    let y = 2;\n}\n";
        let err = not_found_error("src/lib.rs", text, "    let x = 10;\n    x + 1\n");
        expect_test::expect![[r#"
            old_string was not found in `src/lib.rs`. The closest text is lines 2-3 (92% similar):
                 2	    let x = 1;
                 3	    x + 1
            Differences (- your old_string, + the file):
            --- old_string
            +++ src/lib.rs
            @@ -1,2 +1,2 @@
            -    let x = 10;
            +    let x = 1;
                 x + 1
            Read the file again if unsure, then retry with old_string copied exactly from it (without line-number prefixes)."#]]
        .assert_eq(&err.message);
    }
}
