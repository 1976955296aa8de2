//! Property tests of `tandem_text::patch`: a diff made by `similar` applies back exactly, in
//! either line ending; a `*** Begin Patch` made from the same diff is applied exactly or refused
//! as ambiguous, never placed wrong; a patch whose lines carry their own line endings (LF and
//! CRLF mixed at random) writes exactly those bytes.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use similar::{ChangeTag, TextDiff};
use tandem_text::patch::{self, PatchError};

#[path = "support/line_edits.rs"]
mod line_edits;

/// Lines from a small alphabet, so that repeats (and whitespace-only differences) are common.
fn text(final_newline: impl Strategy<Value = bool>) -> impl Strategy<Value = String> {
    let line = prop::sample::select(vec!["a", "b", "c", "", " a", "a ", "fn x() {", "}", "\ta"]);
    (prop::collection::vec(line, 0..14), final_newline).prop_map(|(lines, final_newline)| {
        let mut text = lines.join("\n");
        if final_newline && !lines.is_empty() {
            text.push('\n');
        }
        text
    })
}

/// Two texts: unrelated, or the second made from the first by a few local edits (which leaves
/// long runs of shared, often repeated, context).
fn pair(final_newline: impl Strategy<Value = bool> + Clone + 'static) -> impl Strategy<Value = (String, String)> {
    let line = prop::sample::select(vec!["a", "b", "c", "", " a", "x", "}"]);
    let independent = (text(final_newline.clone()), text(final_newline.clone()));
    let edits = prop::collection::vec((any::<prop::sample::Index>(), 0..3u8, line), 1..4);
    let edited = (text(final_newline.clone()), edits, final_newline).prop_map(|(a, edits, final_newline)| {
        let mut lines: Vec<&str> = a.lines().collect();
        line_edits::apply(&mut lines, edits);
        let mut b = lines.join("\n");
        if final_newline && !lines.is_empty() {
            b.push('\n');
        }
        (a, b)
    });
    prop_oneof![independent, edited]
}

fn unified(a: &str, b: &str, radius: usize) -> String {
    TextDiff::from_lines(a, b).unified_diff().context_radius(radius).header("a/f", "b/f").to_string()
}

fn apply_unified(diff: &str, old: &str) -> Result<String, TestCaseError> {
    let parsed = patch::parse(diff).map_err(|e| TestCaseError::fail(format!("{e}\n{diff}")))?;
    prop_assert_eq!(parsed.files.len(), 1);
    let applied = patch::apply(&parsed.files[0], old).map_err(|e| TestCaseError::fail(format!("{e}\n{diff}")))?;
    Ok(applied.text)
}

/// The same change as a `*** Begin Patch`: one `@@` hunk per group of `similar`'s ops, and
/// `*** End of File` on hunks that reach the end. With `anchored`, each hunk's `@@` line is the
/// line above it, trimmed (as models write a function signature).
fn begin_patch(a: &str, b: &str, radius: usize, anchored: bool) -> String {
    let diff = TextDiff::from_lines(a, b);
    let old_len = diff.old_len();
    let old_lines: Vec<&str> = a.lines().collect();
    let mut out = String::from("*** Begin Patch\n*** Update File: f\n");
    for group in diff.grouped_ops(radius) {
        let start = group.first().map_or(0, |op| op.old_range().start);
        match start.checked_sub(1).and_then(|above| old_lines.get(above)) {
            Some(above) if anchored && !above.trim().is_empty() => {
                out.push_str("@@ ");
                out.push_str(above.trim());
                out.push('\n');
            }
            _ => out.push_str("@@\n"),
        }
        for op in &group {
            for change in diff.iter_changes(op) {
                out.push(match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                });
                out.push_str(change.value().trim_end_matches('\n'));
                out.push('\n');
            }
        }
        if group.last().is_some_and(|op| op.old_range().end == old_len && !op.old_range().is_empty()) {
            out.push_str("*** End of File\n");
        }
    }
    out.push_str("*** End Patch\n");
    out
}

fn check_unified(a: &str, b: &str) -> Result<(), TestCaseError> {
    for radius in [0, 1, 3] {
        let diff = unified(a, b, radius);
        if a == b {
            prop_assert!(diff.is_empty());
            continue;
        }
        prop_assert_eq!(apply_unified(&diff, a)?, b, "radius {}:\n{}", radius, diff);
    }
    Ok(())
}

fn check_crlf(a: &str, b: &str) -> Result<(), TestCaseError> {
    // A file without any line break has no line ending to keep.
    if a == b || !a.contains('\n') {
        return Ok(());
    }
    let (a_crlf, b_crlf) = (a.replace('\n', "\r\n"), b.replace('\n', "\r\n"));
    for radius in [0, 3] {
        let diff = unified(a, b, radius);
        prop_assert_eq!(apply_unified(&diff, &a_crlf)?, b_crlf.clone(), "LF patch on a CRLF file:\n{}", diff);
        // And a CRLF patch (as pasted on Windows) on the LF file.
        let diff_crlf = diff.replace('\n', "\r\n");
        prop_assert_eq!(apply_unified(&diff_crlf, a)?, b, "CRLF patch on an LF file:\n{}", diff);
    }
    Ok(())
}

fn check_begin_patch(a: &str, b: &str) -> Result<(), TestCaseError> {
    if a == b {
        return Ok(());
    }
    for (radius, anchored) in [(1, false), (3, false), (1, true), (3, true)] {
        let text = begin_patch(a, b, radius, anchored);
        let parsed = patch::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.files.len(), 1);
        match patch::apply(&parsed.files[0], a) {
            Ok(applied) => prop_assert_eq!(applied.text, b, "placed wrong:\n{}", text),
            Err(PatchError::Ambiguous { .. }) => {}
            Err(err) => return Err(TestCaseError::fail(format!("{err}\n{text}"))),
        }
    }
    Ok(())
}

/// A text whose lines end in `\n` or `\r\n` at random, its last line with or without one; the
/// second text made from it by a few local edits whose lines end either way too (a line that
/// only changes its ending among them).
fn mixed_endings_pair() -> impl Strategy<Value = (String, String)> {
    let line = prop::sample::select(vec!["a", "b", "c", "", " a", "x", "}"]);
    let ending = prop::sample::select(vec!["\n", "\r\n"]);
    let lines = prop::collection::vec((line.clone(), ending.clone()), 0..14);
    let edits = prop::collection::vec((any::<prop::sample::Index>(), 0..4u8, line, ending), 1..5);
    (lines, edits, any::<bool>(), any::<bool>()).prop_map(|(lines, edits, a_final, b_final)| {
        let join = |lines: &[(&str, &str)], final_newline: bool| {
            let mut text = String::new();
            for (i, (line, ending)) in lines.iter().enumerate() {
                text.push_str(line);
                if i + 1 < lines.len() || final_newline {
                    text.push_str(ending);
                }
            }
            text
        };
        let mut edited = lines.clone();
        for (at, kind, line, ending) in edits {
            let at = at.index(edited.len() + 1);
            match kind {
                0 => edited.insert(at, (line, ending)),
                1 if at < edited.len() => edited[at] = (line, ending),
                2 if at < edited.len() => edited[at].1 = ending,
                _ if at < edited.len() => {
                    edited.remove(at);
                }
                _ => {}
            }
        }
        (join(&lines, a_final), join(&edited, b_final))
    })
}

/// Diffs whose lines carry their own line endings apply to exactly the other text: every
/// added line is written with the bytes the patch gives it. Without context (`-U0`), a hunk
/// that only adds lines has nothing to show whether the patch kept its carriage returns; a
/// patch with none at all on a mostly CRLF file is read as one that lost them (a model's
/// patch), and its added lines take the file's CRLF.
fn check_own_endings(a: &str, b: &str) -> Result<(), TestCaseError> {
    if a == b {
        return Ok(());
    }
    let crlf_file = tandem_text::LineEnding::detect(a) == tandem_text::LineEnding::Crlf;
    for radius in [0, 1, 3] {
        let diff = unified(a, b, radius);
        if radius == 0 && crlf_file && !diff.contains('\r') {
            continue;
        }
        prop_assert_eq!(apply_unified(&diff, a)?, b, "radius {}:\n{}", radius, diff.replace('\r', "␍"));
    }
    if a.ends_with('\n') && b.ends_with('\n') {
        for radius in [1, 3] {
            let text = begin_patch(a, b, radius, false);
            let parsed = patch::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(parsed.files.len(), 1);
            match patch::apply(&parsed.files[0], a) {
                Ok(applied) => prop_assert_eq!(applied.text, b, "begin patch:\n{}", text.replace('\r', "␍")),
                Err(PatchError::Ambiguous { .. }) => {}
                Err(err) => return Err(TestCaseError::fail(format!("{err}\n{text}"))),
            }
        }
    }
    // The same lines as a new file.
    if !b.is_empty() {
        let diff = unified("", b, 3).replace("--- a/f", "--- /dev/null");
        prop_assert_eq!(apply_unified(&diff, "")?, b, "new file:\n{}", diff.replace('\r', "␍"));
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn patches_write_their_own_line_endings((a, b) in mixed_endings_pair()) {
        check_own_endings(&a, &b)?;
    }

    #[test]
    fn similar_diffs_apply_exactly((a, b) in pair(any::<bool>())) {
        check_unified(&a, &b)?;
    }

    #[test]
    fn similar_diffs_apply_across_line_endings((a, b) in pair(any::<bool>())) {
        check_crlf(&a, &b)?;
    }

    #[test]
    fn begin_patches_apply_exactly_or_are_refused((a, b) in pair(Just(true))) {
        check_begin_patch(&a, &b)?;
    }
}

#[test]
fn edge_cases_apply_exactly() -> Result<(), TestCaseError> {
    // Texts without a `\r` of their own: the CRLF check writes each `\n` as `\r\n`, and
    // `similar` ends a line at a lone `\r` too, which no patch does.
    for &(a, b) in line_edits::EDGE_PAIRS.iter().filter(|(a, b)| !a.contains('\r') && !b.contains('\r')) {
        check_unified(a, b)?;
        check_crlf(a, b)?;
    }
    Ok(())
}

/// A last line that ends in a lone `\r` without a final newline keeps the `\r` (found by
/// feeding `hunks::diff` output to `patch::apply`; git apply agrees).
#[test]
fn lone_cr_on_a_last_line_without_newline_is_kept() -> Result<(), String> {
    let (old, new) = ("a\n", "a\nb\r");
    let staged = tandem_text::hunks::diff("f", old, new);
    let parsed = tandem_text::patch::parse(&staged.unified).map_err(|e| e.to_string())?;
    let applied = tandem_text::patch::apply(&parsed.files[0], old).map_err(|e| e.to_string())?;
    assert_eq!(applied.text, new);
    Ok(())
}
