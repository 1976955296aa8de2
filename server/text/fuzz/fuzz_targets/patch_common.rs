//! Shared by `unified_parse` and `begin_patch_parse`: parse a patch, then apply each file of it to
//! a few texts derived from the patch itself. Nothing may panic; an `Ok` result must report
//! every hunk, in order.

use tandem_text::patch::{self, FilePatch, Hunk, Location};

/// Parses `text` and applies what it parsed to the derived texts.
pub fn check(text: &str) {
    let Ok(parsed) = patch::parse(text) else { return };
    // Path helpers the apply tool calls on every parsed patch.
    let _ = patch::detect_strip(&parsed, &|p| p.len() % 3 == 0);
    for file in &parsed.files {
        let _ = file.display_path();
        let _ = (file.is_creation(), file.is_deletion(), file.is_rename());
        for path in [&file.old_path, &file.new_path].into_iter().flatten() {
            for strip in 0..4 {
                let _ = patch::strip_path(path, strip);
            }
        }
        for old_text in derived_texts(file) {
            if let Ok(applied) = patch::apply(file, &old_text) {
                assert_eq!(applied.hunks.len(), file.hunks.len(), "one report per hunk");
                for (i, report) in applied.hunks.iter().enumerate() {
                    assert_eq!(report.index, i + 1, "reports in hunk order");
                }
            }
        }
    }
}

/// Texts to apply `file` to: empty, its old side (as the hunks give it, with `\n` and `\r\n`,
/// with and without a final newline), the old side placed at the hunks' stated lines, and
/// its new side (applying twice).
fn derived_texts(file: &FilePatch) -> Vec<String> {
    let old: Vec<&str> = file.hunks.iter().flat_map(Hunk::old_lines).collect();
    let new: Vec<&str> = file.hunks.iter().flat_map(Hunk::new_lines).collect();
    let mut texts = vec![String::new()];
    for lines in [&old, &new] {
        let lf = lines.join("\n");
        let crlf = lines.join("\r\n");
        texts.push(format!("{lf}\n"));
        texts.push(format!("{crlf}\r\n"));
        texts.push(lf);
        texts.push(crlf);
    }
    texts.push(placed_old_side(file));
    texts
}

/// The old side with each numbered hunk's old lines at the line its header states (filler lines
/// between), so exact placement and offsets are exercised, not only the search.
fn placed_old_side(file: &FilePatch) -> String {
    let mut lines: Vec<String> = Vec::new();
    for (n, hunk) in file.hunks.iter().enumerate() {
        if let Location::Numbered { old_start, .. } = hunk.location {
            // Caps the filler: a header may state any line number.
            let target = old_start.saturating_sub(1).min(lines.len() + 64);
            while lines.len() < target {
                lines.push(format!("filler {n} {}", lines.len()));
            }
        }
        lines.extend(hunk.old_lines().map(str::to_owned));
    }
    let mut text = lines.join("\n");
    if !file.hunks.last().is_some_and(|h| h.old_no_newline) {
        text.push('\n');
    }
    text
}
