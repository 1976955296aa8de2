//! `edit`: replaces an exact string that occurs once (or every occurrence with `replace_all`).
//! When the string is not found, or found more than once, the error says where to look.
//! (The fuzzy fallback chain is its own piece of work; today only exact matches apply.)

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tandem_protocol::ToolGroup;

use tandem_text::LineEnding;
use tandem_text::matcher::{self, Closest, MatchError, Strategy};

use super::{
    attach_diagnostics, check_fresh, commit, diff_metadata, line_of, load_shown, numbered, reviewed_title, snippet,
};
use crate::tool::parse_args;
use crate::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec, schema_for};

/// At most this many occurrences are listed in an "ambiguous" error.
const MAX_LISTED: usize = 10;

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
        let loaded = load_shown(&ctx, &path).await?;
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
            let diff = diff_metadata(&shown, &loaded.text, &new_text);
            let committed = commit(&ctx, loaded, new_text).await?;
            return Ok(ToolOutput::new(
                format!("Edited {shown}"),
                format!("Filled the empty file `{shown}`:\n{preview}"),
            )
            .with("path", shown)
            .with("strategy", "exact")
            .with("replacements", 1)
            .with("via", committed.via)
            .with_all(diff));
        }
        let applied = apply_one(
            &loaded.text,
            &shown,
            &args.old_string,
            &args.new_string,
            args.replace_all.unwrap_or(false),
            loaded.line_ending(),
        )?;
        let mut preview = snippet(&applied.text, applied.start, applied.end);
        let Applied { text: new_text, strategy, similarity, replacements, line, .. } = applied;
        let mut diff = diff_metadata(&shown, &loaded.text, &new_text);
        let committed = commit(&ctx, loaded, new_text).await?;
        committed.show_applied(&mut preview, &mut diff);
        let how = if strategy == "exact" { String::new() } else { format!(" (matched {strategy})") };
        let mut output =
            format!("Edited `{shown}`: {replacements} replacement(s), first at line {line}{how}.\n{preview}");
        for note in &committed.notes {
            output.push_str(&format!("\nNote: {note}."));
        }
        let mut result = ToolOutput::new(reviewed_title(format!("Edited {shown}"), [&committed]), output)
            .with("path", shown)
            .with("strategy", strategy)
            .with("similarity", (similarity * 100.0).round() / 100.0)
            .with("replacements", replacements)
            .with("firstLine", line)
            .with("via", committed.via)
            .with_all(diff);
        attach_diagnostics(&ctx, &[path], &mut result).await;
        Ok(result)
    }
}

/// An edit placed in a text.
pub(crate) struct Applied {
    /// The whole new text.
    pub text: String,
    /// The stage that placed it (`exact`, `indentation-flexible`, ...).
    pub strategy: &'static str,
    /// Its score (1 unless block-anchor).
    pub similarity: f64,
    /// How many places changed.
    pub replacements: usize,
    /// 1-based line of the first change.
    pub line: usize,
    /// Changed byte range of the first replacement in the new text.
    pub start: usize,
    /// End of that range.
    pub end: usize,
}

/// Places one edit in `text` (the file `shown`): exact, then the fuzzy chain; every occurrence
/// with `replace_all` (exact only: a fuzzy match is never multiplied). Errors say where to look.
pub(crate) fn apply_one(
    text: &str,
    shown: &str,
    old: &str,
    new: &str,
    replace_all: bool,
    ending: LineEnding,
) -> Result<Applied, ToolError> {
    if old.is_empty() {
        return Err(ToolError::new(format!(
            "old_string is empty; give the text to replace in `{shown}` (an empty old_string only creates a missing file)"
        )));
    }
    if old == new {
        return Err(ToolError::new("old_string and new_string are identical; the edit would change nothing"));
    }
    if replace_all {
        let forms =
            [(ending.apply(old).into_owned(), ending.apply(new).into_owned()), (old.to_owned(), new.to_owned())];
        let Some((o, n, count)) = forms.into_iter().find_map(|(o, n)| {
            let count = text.matches(o.as_str()).count();
            (count > 0).then_some((o, n, count))
        }) else {
            return Err(not_found_error(shown, text, old, matcher::closest(text, old)));
        };
        let start = text.find(o.as_str()).unwrap_or(0);
        let line = line_of(text, start);
        let new_text = text.replace(o.as_str(), &n);
        return Ok(Applied {
            text: new_text,
            strategy: "exact",
            similarity: 1.0,
            replacements: count,
            line,
            start,
            end: start + n.len(),
        });
    }
    match matcher::find(text, old, new, ending) {
        Ok(found) => {
            let mut new_text = String::with_capacity(text.len() + found.replacement.len());
            new_text.push_str(&text[..found.start]);
            new_text.push_str(&found.replacement);
            new_text.push_str(&text[found.end..]);
            if new_text == text {
                return Err(ToolError::new(format!(
                    "`{shown}` already contains new_string at line {} (matched {}): the edit seems applied already; read the file to check",
                    found.line, found.strategy
                ))
                .with("unchanged", true));
            }
            Ok(Applied {
                strategy: found.strategy.name(),
                similarity: found.similarity,
                replacements: 1,
                line: found.line,
                start: found.start,
                end: found.start + found.replacement.len(),
                text: new_text,
            })
        }
        Err(MatchError::Ambiguous { strategy, lines }) => {
            let listed: Vec<String> = lines.iter().take(MAX_LISTED).map(ToString::to_string).collect();
            let more = if lines.len() > MAX_LISTED {
                format!(" and {} more", lines.len() - MAX_LISTED)
            } else {
                String::new()
            };
            let how = if strategy == Strategy::Exact { String::new() } else { format!(" when matched {strategy}") };
            Err(ToolError::new(format!(
                "old_string occurs {} times in `{shown}`{how} (starting at lines {}{more}); include more surrounding lines to pick one, or set replace_all to change every exact occurrence",
                lines.len(),
                listed.join(", ")
            ))
            .with("ambiguous", true)
            .with("strategy", strategy.name())
            .with("occurrences", lines.len()))
        }
        Err(MatchError::NotFound { closest }) => Err(not_found_error(shown, text, old, closest)),
    }
}

/// "Not found", with the most similar block of the file and its differences from old_string.
fn not_found_error(shown: &str, text: &str, old_string: &str, closest: Option<Closest>) -> ToolError {
    let mut message = format!("old_string was not found in `{shown}`, exactly or with any tolerated difference.");
    let mut error = ToolError::new("");
    match closest {
        Some(closest) => {
            let whitespace_only = old_string.lines().map(str::trim).filter(|l| !l.is_empty()).eq(closest
                .text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty()));
            message.push_str(&format!(
                " The closest text is lines {}-{} ({:.0}% similar{}):\n{}",
                closest.first_line,
                closest.last_line,
                closest.similarity * 100.0,
                if whitespace_only { "; it differs only in whitespace or indentation" } else { "" },
                numbered(text, closest.first_line, closest.last_line)
            ));
            let diff = similar::TextDiff::from_lines(old_string.trim_end_matches('\n'), closest.text.as_str())
                .unified_diff()
                .context_radius(1)
                .missing_newline_hint(false)
                .header("old_string", shown)
                .to_string();
            message.push_str(&format!("Differences (- your old_string, + the file):\n{diff}"));
            message.push_str(
                "Read the file again if unsure, then retry with old_string copied exactly from it (without line-number prefixes).",
            );
            error = error
                .with("closestLine", closest.first_line)
                .with("similarity", (closest.similarity * 100.0).round() / 100.0);
        }
        None => message.push_str(" No similar text either: read the file to see its current content, then retry."),
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
        let old = "    let x = 10;\n    x + 1\n";
        let err = not_found_error("src/lib.rs", text, old, matcher::closest(text, old));
        expect_test::expect![[r#"
            old_string was not found in `src/lib.rs`, exactly or with any tolerated difference. The closest text is lines 2-3 (92% similar):
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
