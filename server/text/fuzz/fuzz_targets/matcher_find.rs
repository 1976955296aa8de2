//! `matcher::find(text, old, new, ending)` with the input split at `0xFF` bytes (never in
//! UTF-8) into text, old and new (each part decoded lossily), for both line endings. A second
//! call searches for a block of `text` itself, altered the way models alter what they copy
//! (indentation, trailing whitespace, quotes, line-number prefixes, escapes, blank lines, one
//! changed line), chosen by the bytes of `old`: random bytes rarely reach the fuzzy stages.
//!
//! When `find` places the edit, the range must be in `text`, on char boundaries, the edited text
//! buildable (and different from `text`: an edit that changes nothing is refused as already
//! applied), `line` the 1-based line of `start`, and the similarity within 0..=1.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tandem_text::LineEnding;
use tandem_text::matcher::{self, MatchError};

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0xFF).map(String::from_utf8_lossy);
    let text = parts.next().unwrap_or_default();
    let old = parts.next().unwrap_or_default();
    let new = parts.next().unwrap_or_default();
    check(&text, &old, &new);
    check(&text, &altered_block(&text, old.as_bytes()), &new);
});

fn check(text: &str, old: &str, new: &str) {
    // `find` requires a non-empty `old` (the edit tool refuses an empty one before calling it).
    if old.is_empty() {
        return;
    }
    for ending in [LineEnding::Lf, LineEnding::Crlf] {
        match matcher::find(text, old, new, ending) {
            Ok(found) => {
                assert!(found.start <= found.end, "start {} > end {}", found.start, found.end);
                assert!(found.end <= text.len(), "end {} > text.len() {}", found.end, text.len());
                assert!(text.is_char_boundary(found.start), "start {} not on a char boundary", found.start);
                assert!(text.is_char_boundary(found.end), "end {} not on a char boundary", found.end);
                let mut edited = String::with_capacity(text.len() + found.replacement.len());
                edited.push_str(&text[..found.start]);
                edited.push_str(&found.replacement);
                edited.push_str(&text[found.end..]);
                assert_ne!(edited, text, "an edit that changes nothing must be refused as already applied");
                let line = text[..found.start].matches('\n').count() + 1;
                assert_eq!(found.line, line, "line of start {}", found.start);
                assert!((0.0..=1.0).contains(&found.similarity), "similarity {}", found.similarity);
            }
            Err(MatchError::Ambiguous { lines, .. }) => assert!(lines.len() >= 2, "ambiguous with {lines:?}"),
            Err(MatchError::Conflict { first_line, last_line, differences, .. }) => {
                assert!(first_line <= last_line, "conflict block {first_line}-{last_line}");
                assert!(!differences.is_empty(), "a conflict names the lines that differ");
            }
            Err(MatchError::NotFound { .. } | MatchError::Indentation { .. } | MatchError::AlreadyApplied { .. }) => {}
        }
    }
    let _ = matcher::closest(text, old);
}

/// Up to 6 lines of `text` from a line picked by `recipe[0]`, altered as `recipe[2]` says.
fn altered_block(text: &str, recipe: &[u8]) -> String {
    let r = |i: usize| usize::from(recipe.get(i).copied().unwrap_or(0));
    let lines: Vec<&str> = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let first = r(0) % lines.len();
    let block = &lines[first..(first + 1 + r(1) % 6).min(lines.len())];
    let how = r(2) % 10;
    let altered: Vec<String> = block
        .iter()
        .enumerate()
        .map(|(i, line)| match how {
            0 => line.trim_end().to_owned(),
            1 => format!("  {line}"),
            2 => line.trim_start().to_owned(),
            3 => line.split_whitespace().collect::<Vec<_>>().join(" "),
            4 => line.replace('"', "\u{201c}").replace('\'', "\u{2019}").replace('-', "\u{2014}"),
            5 => format!("{:>6}\t{line}", first + i + 1),
            6 if i == 1 => format!("{line} changed"),
            8 => line.replace('\t', "\\t").replace('"', "\\\""),
            _ => (*line).to_owned(),
        })
        .collect();
    let separator = match how {
        7 => "\n\n",
        8 => "\\n",
        _ => "\n",
    };
    altered.join(separator)
}
