//! Rebasing a reviewed change onto text that moved on while the person reviewed it.
//!
//! A change is staged against one text (`base`) and shown to the person as hunks. While they
//! decide, the text can change under it: they type above or below the hunk, undo, a formatter
//! runs on save, another program writes the file. [`rebase`] carries the change (`base` →
//! `proposed`) over to the text as it is now (`current`) exactly, or refuses: every changed
//! region of the change, with [`CONTEXT`] unchanged lines on each side (as its hunk showed them),
//! must be untouched in `current`, and is then replaced where those lines are now. Anything else
//! (an edit inside a hunk or its context, an insertion at the very place the change inserts) is a
//! [`Conflict`]: the change would not land as shown, so it does not land at all.
//!
//! Lines are cut as in [`crate::hunks`]: at `\n`, each keeping its terminator, so the result is
//! byte-exact.

use std::ops::Range;

use similar::{Algorithm, DiffOp};

use crate::hunks::CONTEXT;

/// Why a change cannot be carried over to the current text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct Conflict {
    /// The lines of the current text (1-based, inclusive) that changed where the change is.
    pub current_lines: (usize, usize),
    /// The lines of the reviewed text (1-based, inclusive) the change's hunk covers there.
    pub reviewed_lines: (usize, usize),
}

impl Conflict {
    fn describe(&self) -> String {
        let lines = |(a, b): (usize, usize)| if a == b { format!("line {a}") } else { format!("lines {a}-{b}") };
        format!(
            "the text changed at {} while the change to {} (as reviewed) was waiting",
            lines(self.current_lines),
            lines(self.reviewed_lines)
        )
    }
}

/// `current` with the change `base` → `proposed` applied where its lines are now; `current`
/// itself when the change is empty, `proposed` when `current` is `base`.
pub fn rebase(base: &str, proposed: &str, current: &str) -> Result<String, Conflict> {
    if current == base {
        return Ok(proposed.to_owned());
    }
    let base_lines = lines(base);
    let ours = edits(&base_lines, &lines(proposed));
    let current_lines = lines(current);
    let theirs = edits(&base_lines, &current_lines);
    let n = base_lines.len();
    for our in &ours {
        let guarded = our.old.start.saturating_sub(CONTEXT)..(our.old.end + CONTEXT).min(n);
        for their in &theirs {
            let clash = if their.old.is_empty() {
                // An insertion: inside the guarded lines, or where the change inserts too (which
                // of the two comes first is anyone's guess).
                let at = their.old.start;
                (guarded.start < at && at < guarded.end) || (our.old.is_empty() && at == our.old.start)
            } else {
                their.old.start < guarded.end.max(guarded.start + 1) && guarded.start < their.old.end
            };
            if clash {
                return Err(Conflict {
                    current_lines: (their.new.start + 1, their.new.end.max(their.new.start + 1)),
                    reviewed_lines: (guarded.start + 1, guarded.end.max(guarded.start + 1)),
                });
            }
        }
    }
    // The two sets of edits touch disjoint lines of `base`: apply both, in order.
    let mut all: Vec<(&Edit, bool)> = ours.iter().map(|e| (e, true)).chain(theirs.iter().map(|e| (e, false))).collect();
    all.sort_by_key(|(e, _)| (e.old.start, e.old.end));
    let proposed_lines = lines(proposed);
    let mut out = String::with_capacity(current.len() + proposed.len().saturating_sub(base.len()));
    let mut at = 0;
    for (edit, is_ours) in all {
        for line in &base_lines[at..edit.old.start] {
            out.push_str(line);
        }
        let source = if is_ours { &proposed_lines } else { &current_lines };
        for line in &source[edit.new.clone()] {
            out.push_str(line);
        }
        at = edit.old.end;
    }
    for line in &base_lines[at..] {
        out.push_str(line);
    }
    Ok(out)
}

/// One replaced run of lines: `old` of the base, `new` of the other text.
struct Edit {
    old: Range<usize>,
    new: Range<usize>,
}

fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The runs of lines that differ between `old` and `new`, in order.
fn edits(old: &[&str], new: &[&str]) -> Vec<Edit> {
    let ops = similar::capture_diff_slices(Algorithm::Patience, old, new);
    let mut out: Vec<Edit> = Vec::new();
    for op in ops {
        let (old_range, new_range) = match op {
            DiffOp::Equal { .. } => continue,
            other => (other.old_range(), other.new_range()),
        };
        // Adjacent deletes and inserts are one replacement.
        match out.last_mut() {
            Some(last) if last.old.end == old_range.start && last.new.end == new_range.start => {
                last.old.end = old_range.end;
                last.new.end = new_range.end;
            }
            _ => out.push(Edit { old: old_range, new: new_range }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const CALC: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n";

    fn fixed(text: &str) -> String {
        text.replace("return a / b", "return a // b")
    }

    #[test]
    fn a_line_typed_above_the_hunk_moves_it_down() {
        let current = format!("# note\n{CALC}");
        assert_eq!(rebase(CALC, &fixed(CALC), &current), Ok(fixed(&current)));
    }

    #[test]
    fn a_line_typed_below_or_far_away_is_kept() {
        let current = CALC.replace("    return a + b\n", "    return a + b  # checked\n");
        assert_eq!(rebase(CALC, &fixed(CALC), &current), Ok(fixed(&current)));
        let current = format!("{CALC}\n\ndef sub(a, b):\n    return a - b\n");
        assert_eq!(rebase(CALC, &fixed(CALC), &current), Ok(fixed(&current)));
    }

    #[test]
    fn an_edit_inside_the_hunk_or_its_context_is_a_conflict() {
        let current = CALC.replace("return a / b", "return a / b  # mine");
        let err = rebase(CALC, &fixed(CALC), &current).err();
        assert_eq!(err.map(|e| e.current_lines), Some((10, 10)));
        // The line above the changed one is context: changing it is a conflict too.
        let current = CALC.replace("def div(a, b):", "def div(a, b):  # divides");
        assert!(rebase(CALC, &fixed(CALC), &current).is_err());
        // An insertion right above the changed line.
        let current = CALC.replace("    return a / b", "    assert b\n    return a / b");
        let err = rebase(CALC, &fixed(CALC), &current).err().map(|e| e.to_string()).unwrap_or_default();
        assert_eq!(err, "the text changed at line 10 while the change to lines 7-10 (as reviewed) was waiting");
    }

    #[test]
    fn the_same_text_again_after_an_undo_takes_the_change_as_proposed() {
        assert_eq!(rebase(CALC, &fixed(CALC), CALC), Ok(fixed(CALC)));
    }

    #[test]
    fn a_change_at_the_end_and_an_insertion_at_the_end_conflict() {
        let base = "a\nb\n";
        assert!(rebase(base, "a\nb\nours\n", "a\nb\ntheirs\n").is_err());
        assert!(rebase(base, "ours\na\nb\n", "theirs\na\nb\n").is_err());
    }

    fn text() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec("[abc]{0,2}", 0..30)
    }

    fn join(lines: &[String]) -> String {
        lines.iter().map(|l| format!("{l}\n")).collect()
    }

    proptest! {
        /// The rebased text is the current text with exactly the change's replacements: diffing
        /// it against `current` shows the same lines removed and added as base → proposed.
        #[test]
        fn a_rebase_carries_exactly_the_change(base in text(), proposed_edit in (0usize..30, "[xyz]{1,3}"), theirs in text()) {
            let mut ours = base.clone();
            let at = proposed_edit.0.min(ours.len());
            ours.insert(at, proposed_edit.1.clone());
            let (b, p) = (join(&base), join(&ours));
            // The person's text: theirs appended far below, or the base itself.
            let mut current_lines = base.clone();
            current_lines.extend(theirs);
            let c = join(&current_lines);
            match rebase(&b, &p, &c) {
                Ok(out) => {
                    let mut expected = current_lines.clone();
                    expected.insert(at, proposed_edit.1.clone());
                    // The insertion may land at another equal position; the line multiset and
                    // the order of the person's lines are what must hold.
                    let mut got: Vec<&str> = out.lines().collect();
                    let mut want: Vec<&str> = expected.iter().map(String::as_str).collect();
                    got.sort_unstable();
                    want.sort_unstable();
                    prop_assert_eq!(got, want);
                    prop_assert!(out.len() == c.len() + proposed_edit.1.len() + 1);
                }
                Err(conflict) => {
                    // Only when the person's lines touch the change's place (its guarded lines).
                    prop_assert!(conflict.reviewed_lines.0 >= 1);
                }
            }
        }

        /// Nothing of the person's text is ever lost or moved: removing the change's lines from
        /// the result gives `current` back.
        #[test]
        fn the_person_s_text_survives(base in text(), top in text(), line in "[xyz]{1,3}", at in 0usize..30) {
            let mut ours = base.clone();
            let at = at.min(ours.len());
            ours.insert(at, line.clone());
            let (b, p) = (join(&base), join(&ours));
            let c = format!("{}{b}", join(&top));
            if let Ok(out) = rebase(&b, &p, &c) {
                let mut rest: Vec<&str> = out.lines().collect();
                let pos = rest.iter().position(|l| *l == line);
                prop_assert!(pos.is_some());
                if let Some(pos) = pos {
                    rest.remove(pos);
                }
                prop_assert_eq!(rest.join("\n"), c.lines().collect::<Vec<_>>().join("\n"));
            }
        }
    }
}
