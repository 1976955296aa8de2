//! `edit`: replaces a string that occurs once (or every exact occurrence with `replace_all`).
//! Placing goes through `tandem_text::matcher`: exact, then fuzzy stages that forgive formatting
//! (never content). When the string is not found, found more than once, differs from the file on
//! a line the edit changes, or is already applied, the error says where to look.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;

use tandem_text::LineEnding;
use tandem_text::hunks::Same;
use tandem_text::matcher::{self, Closest, Difference, MatchError, Strategy};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{
    attach_diagnostics, check_fresh, commit, diff_metadata, diff_metadata_knowing, load_shown, numbered,
    reviewed_title, snippet, snippet_at,
};

/// At most this many occurrences are listed in an "ambiguous" error.
const MAX_LISTED: usize = 10;

const DESCRIPTION: &str = "Replace text in a file. old_string should be copied exactly from the file (without the \
    line-number prefix that `read` shows) and occur exactly once, unless replace_all is true (every exact occurrence). \
    Give enough surrounding lines to make it unique. Formatting differences are forgiven, never content: \
    indentation (new_string may be written in old_string's indentation or the file's; mixing them is refused), tabs \
    vs spaces, trailing whitespace, blank lines, line-number prefixes, \\n escapes, typographic quotes. A line whose \
    text differs from the file is tolerated only if the edit leaves it unchanged (the file's text is kept there); \
    if the edit changes or removes such a line, nothing is written and the error shows the lines that differ. An edit \
    the file already contains is refused as already applied. An empty old_string creates a new file with new_string. \
    Edits apply to the editor's unsaved text when the file is open there.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Path of the file: absolute, or relative to the working directory.
    file_path: String,
    /// The exact text to replace, including indentation. It must occur exactly once unless
    /// replace_all is set. Empty only to create a new file.
    old_string: String,
    /// The text to put in its place.
    new_string: String,
    /// Replace every occurrence (default false).
    replace_all: Option<bool>,
}

tool!(pub(crate) Edit(Args) = Decl::new("edit", ToolGroup::Fs, DESCRIPTION)
    .aliases(&["edit_file", "str_replace", "replace"])
    .keywords(&["modify", "change", "replace", "fix", "update"])
    .writes()
    .always_load());

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
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
        return Ok(ToolOutput::new(format!("Edited {shown}"), format!("Filled the empty file `{shown}`:\n{preview}"))
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
    // Where the change is, the edit knows: nothing before or after it is counted again.
    let mut preview = snippet_at(&applied.text, applied.start, applied.end, applied.line);
    let same = applied.same();
    let forgiven = applied.forgiven_json();
    let forgiven_count = applied.forgiven.len();
    let Applied { text: new_text, strategy, similarity, replacements, line, .. } = applied;
    let mut diff = diff_metadata_knowing(&shown, &loaded.text, &new_text, same);
    let committed = commit(&ctx, loaded, new_text).await?;
    committed.show_applied(&mut preview, &mut diff);
    let how = if strategy == "exact" { String::new() } else { format!(" (matched {strategy})") };
    let kept = if forgiven_count == 0 {
        String::new()
    } else {
        format!(
            " {forgiven_count} line group(s) of old_string differ from the file on lines the edit keeps; the file's text was kept there (metadata.forgiven)."
        )
    };
    let mut output =
        format!("Edited `{shown}`: {replacements} replacement(s), first at line {line}{how}.{kept}\n{preview}");
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
    if forgiven_count > 0 {
        result = result.with("forgiven", forgiven);
    }
    attach_diagnostics(&ctx, &[path], &mut result).await;
    Ok(result)
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
    /// Lines the edit keeps whose text differs from old_string's: the file's text stayed.
    pub forgiven: Vec<Difference>,
}

impl Applied {
    /// What the old text and the new one share: everything before the first change, and for a
    /// single replacement everything after it (the same bytes end both texts).
    pub fn same(&self) -> Same {
        let suffix = if self.replacements == 1 { self.text.len() - self.end } else { 0 };
        Same { prefix: self.start, newlines: self.line - 1, suffix }
    }

    /// `forgiven` as metadata: `[{ line, file, old_string }]`.
    pub fn forgiven_json(&self) -> Value {
        Value::Array(
            self.forgiven
                .iter()
                .map(|d| json!({ "line": d.line, "file": d.file.join("\n"), "old_string": d.old.join("\n") }))
                .collect(),
        )
    }
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
        let all = matcher::replace_all(text, old, new, ending).map_err(|err| match_error(shown, text, old, err))?;
        return Ok(Applied {
            text: all.text,
            strategy: "exact",
            similarity: 1.0,
            replacements: all.count,
            line: all.line,
            start: all.start,
            end: all.first_end,
            forgiven: Vec::new(),
        });
    }
    let found = matcher::find(text, old, new, ending).map_err(|err| match_error(shown, text, old, err))?;
    // The text around the match is kept as it is: the edit changes nothing exactly when the
    // replacement is what the match covers (no need to compare whole texts).
    if found.replacement == text[found.start..found.end] {
        return Err(already_applied(shown, found.line, found.strategy));
    }
    let mut new_text = tandem_text::memory::string(text.len() - (found.end - found.start) + found.replacement.len());
    new_text.push_str(&text[..found.start]);
    new_text.push_str(&found.replacement);
    new_text.push_str(&text[found.end..]);
    Ok(Applied {
        strategy: found.strategy.name(),
        similarity: found.similarity,
        replacements: 1,
        line: found.line,
        start: found.start,
        end: found.start + found.replacement.len(),
        text: new_text,
        forgiven: found.forgiven,
    })
}

fn already_applied(shown: &str, line: usize, strategy: Strategy) -> ToolError {
    let how = if strategy == Strategy::Exact { String::new() } else { format!(" (matched {strategy})") };
    ToolError::new(format!(
        "already applied: `{shown}` already contains new_string at line {line}{how}, so nothing was written; read the file to check, and if the change is meant to be made again, give old_string with more surrounding lines"
    ))
    .with("unchanged", true)
    .with("alreadyApplied", true)
    .with("line", line)
}

/// The model-facing error for a matcher refusal.
fn match_error(shown: &str, text: &str, old: &str, err: MatchError) -> ToolError {
    match err {
        MatchError::NotFound { closest } => not_found_error(shown, text, old, closest),
        MatchError::Ambiguous { strategy, lines } => {
            let listed: Vec<String> = lines.iter().take(MAX_LISTED).map(ToString::to_string).collect();
            let more = if lines.len() > MAX_LISTED {
                format!(" and {} more", lines.len() - MAX_LISTED)
            } else {
                String::new()
            };
            let how = if strategy == Strategy::Exact { String::new() } else { format!(" when matched {strategy}") };
            ToolError::new(format!(
                "old_string occurs {} times in `{shown}`{how} (starting at lines {}{more}); include more surrounding lines to pick one, or set replace_all to change every exact occurrence",
                lines.len(),
                listed.join(", ")
            ))
            .with("ambiguous", true)
            .with("strategy", strategy.name())
            .with("occurrences", lines.len())
        }
        MatchError::Conflict { strategy, first_line, last_line, differences } => {
            conflict_error(shown, text, strategy, first_line, last_line, &differences)
        }
        MatchError::Indentation { strategy, first_line, old, file, new } => {
            let show = |indent: &str| -> String {
                if indent.is_empty() {
                    return "none".to_owned();
                }
                let tabs = indent.matches('\t').count();
                let spaces = indent.matches(' ').count();
                match (tabs, spaces) {
                    (0, s) => format!("{s} space(s)"),
                    (t, 0) => format!("{t} tab(s)"),
                    (t, s) => format!("{t} tab(s) and {s} space(s)"),
                }
            };
            ToolError::new(format!(
                "old_string matches lines starting at {first_line} of `{shown}` ({strategy}), but with other indentation, and new_string's indentation fits neither: old_string is indented by {}, the file by {}, new_string by {}. Nothing was written. Write new_string with the same indentation as old_string, or copy both exactly from the file (read it again)",
                show(&old),
                show(&file),
                show(&new)
            ))
            .with("indentation", json!({ "old_string": old, "file": file, "new_string": new }))
            .with("strategy", strategy.name())
            .with("closestLine", first_line)
        }
        MatchError::AlreadyApplied { strategy, line } => already_applied(shown, line, strategy),
    }
}

/// "These lines differ": the block found, and each line the edit changes that the file has
/// otherwise.
fn conflict_error(
    shown: &str,
    text: &str,
    strategy: Strategy,
    first_line: usize,
    last_line: usize,
    differences: &[Difference],
) -> ToolError {
    let mut message = format!(
        "old_string does not match `{shown}`: the closest block is lines {first_line}-{last_line} (found {strategy}), and these lines differ from old_string where the edit changes them:"
    );
    for d in differences {
        let quote = |lines: &[String]| -> String {
            if lines.iter().all(|l| l.trim().is_empty()) {
                return if lines.is_empty() { "nothing".to_owned() } else { "a blank line".to_owned() };
            }
            lines.iter().map(|l| format!("`{}`", l.trim())).collect::<Vec<_>>().join(", ")
        };
        message.push_str(&format!(
            "\n  line {}: the file has {}; old_string has {}",
            d.line,
            quote(&d.file),
            quote(&d.old)
        ));
    }
    message.push_str(&format!(
        "\nNothing was written. The file's lines {first_line}-{last_line}:\n{}Copy old_string exactly from the file (read it again if unsure) and retry.",
        numbered(text, first_line, last_line)
    ));
    ToolError::new(message)
        .with("notFound", true)
        .with("strategy", strategy.name())
        .with("closestLine", first_line)
        .with(
            "differences",
            Value::Array(
                differences
                    .iter()
                    .map(|d| json!({ "line": d.line, "file": d.file.join("\n"), "old_string": d.old.join("\n") }))
                    .collect(),
            ),
        )
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
    // Escaped once too often, and not readable one way only by the escape stage (see
    // `tandem_text::matcher`): say how to send it rather than leave the model to guess.
    if old_string.contains("\\n") && !old_string.contains('\n') {
        message.push_str(
            "\nold_string has `\\n` escapes and no line break: send old_string and new_string with real line breaks, and backslashes exactly as the file has them (the `\\n` of a string literal as two characters).",
        );
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

    /// Strings escaped once too often, whose escapes could not be read one way only, are told
    /// how to send them.
    #[test]
    fn not_found_with_escaped_line_breaks_says_to_send_real_ones() {
        let text = "fn count() -> usize {\n    let line;\n    line = 0;\n    line\n}\n";
        let old = r"let line;\n    line = 0;";
        let err = not_found_error("src/lib.rs", text, old, matcher::closest(text, old));
        assert!(
            err.message.ends_with(
                "old_string has `\\n` escapes and no line break: send old_string and new_string with real line breaks, and backslashes exactly as the file has them (the `\\n` of a string literal as two characters)."
            ),
            "{}",
            err.message
        );
        let plain = not_found_error("src/lib.rs", text, "let line = 1;", None);
        assert!(!plain.message.contains("escapes"), "{}", plain.message);
    }
}
