//! Hunks of a staged change: a unified diff with stable hunk ids, and applying a subset.
//!
//! A staged change is one file's old and new text. [`diff`] shows it as a unified diff whose hunks
//! carry ids (`h1`, `h2`, … in order), so the editor can accept some hunks and reject the others;
//! [`apply_subset`] then builds the old text with exactly the accepted hunks applied.
//!
//! The ids are not stored anywhere: they are recomputed from the (old, new) pair, which is why the
//! diff must be deterministic. It is: same pair, same hunks, same ids. For the same reason there is
//! no time limit on the diff (similar's deadline would make the result depend on the machine's
//! speed, and the ids shown to the person could then name other hunks than the ones applied).
//!
//! How a text is cut and compared:
//! - Lines end at `\n` only, and a line keeps its terminator, so `a\n`, `a\r\n` and a final `a`
//!   without newline are three different lines: changing a line ending or the final newline is a
//!   change like any other, and applying hunks is byte-exact. A lone `\r` is part of the line (as
//!   in git), not a line break.
//! - Hunks are similar's groups of changes with [`CONTEXT`] lines of context on each side. Two
//!   changes separated by at most `2 × CONTEXT` unchanged lines share their context and so form
//!   one hunk: they are accepted or rejected together (as in `git add -p` before a split).
//! - The lines that both texts share at the start and at the end are stripped (byte-wise, then cut
//!   back to a line boundary) before the Patience diff sees the rest, so a one-line change in a
//!   50 MB file costs two `memcmp`s and a line count, not a diff of a million lines (about 12 ms
//!   in a release build); a caller that knows where its change is ([`diff_knowing`]) saves those
//!   too. Everything between the first and the last change is still diffed, so
//!   changes at both ends of such a file take about a second. Patience's "unique line" anchors are
//!   computed over that middle only.

use std::fmt::Write as _;
use std::ops::Range;

use similar::{Algorithm, DiffOp, DiffTag};

/// Unchanged lines shown (and grouped) around each change, as `diff -u` and git do.
pub const CONTEXT: usize = 3;

/// One hunk of a staged change. Line numbers are 1-based, as in the `@@` header; for an empty
/// side (`*_lines == 0`) the start is the line *before* the hunk (0 at the top of the file), which
/// is the unified-diff convention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// `h1`, `h2`, … in order of position; stable for the same (old, new) pair.
    pub id: String,
    /// First line of the hunk in the old text.
    pub old_start: usize,
    /// Lines of the old text the hunk covers, context included.
    pub old_lines: usize,
    /// First line of the hunk in the new text.
    pub new_start: usize,
    /// Lines of the new text the hunk covers, context included.
    pub new_lines: usize,
    /// The hunk as unified-diff text: the `@@` header, then one line per ` `, `-` or `+` line
    /// (with its own terminator, `\r\n` included), and `\ No newline at end of file` after a last
    /// line without one.
    pub patch: String,
    /// Context lines a patch hunk behind this change left unchecked to be placed (`patch -F`);
    /// 0 when none did. [`diff`] leaves it 0: the tool that placed the patch sets it
    /// ([`Hunk::overlaps`] finds the hunks its placed lines fall in).
    pub fuzz: usize,
}

impl Hunk {
    /// Whether the hunk covers any of the new text's lines `first..first + count` (1-based).
    pub fn overlaps(&self, first: usize, count: usize) -> bool {
        let start = self.new_start.max(1);
        let end = start + self.new_lines.max(1);
        first < end && start < first + count.max(1)
    }
}

/// A staged change as the editor shows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StagedDiff {
    /// The hunks, in order.
    pub hunks: Vec<Hunk>,
    /// The whole unified diff: `--- a/<path>`, `+++ b/<path>`, then every hunk's patch. Empty
    /// when the texts are equal (as `git diff` prints nothing).
    pub unified: String,
}

impl StagedDiff {
    /// The old and new texts are equal.
    pub fn is_empty(&self) -> bool {
        self.hunks.is_empty()
    }
}

/// Why a subset of hunks cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HunkError {
    /// An accepted id that is not a hunk of this change (ids come from [`diff`] of the same texts).
    #[error("no hunk `{0}` in this change; accept ids from the diff it was staged with (`h1`, `h2`, ...)")]
    UnknownHunk(String),
}

/// The diff of `old` and `new` (Patience, [`CONTEXT`] lines of context), with headers
/// `a/<path>` and `b/<path>`.
pub fn diff(path: &str, old: &str, new: &str) -> StagedDiff {
    diff_knowing(path, old, new, Same::default())
}

/// What a caller that made a change already knows of it: the old and new texts agree on their
/// first `prefix` bytes, which hold `newlines` newlines, and on their last `suffix` bytes. Zeros
/// claim nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Same {
    /// Bytes at the start that both texts share.
    pub prefix: usize,
    /// Newlines in those bytes.
    pub newlines: usize,
    /// Bytes at the end that both texts share.
    pub suffix: usize,
}

/// [`diff`], the same result, without comparing or counting what `same` says: an edit in a large
/// file need not compare megabytes it did not touch, nor count their lines again. `same` must be
/// true (checked in debug builds).
pub fn diff_knowing(path: &str, old: &str, new: &str, same: Same) -> StagedDiff {
    let lines = LineDiff::new(old, new, same);
    let hunks: Vec<Hunk> = lines.groups.iter().enumerate().map(|(i, group)| lines.hunk(i, group)).collect();
    let mut unified = String::new();
    if !hunks.is_empty() {
        let _ = write!(unified, "--- a/{path}\n+++ b/{path}\n");
        for hunk in &hunks {
            unified.push_str(&hunk.patch);
        }
    }
    StagedDiff { hunks, unified }
}

/// `old` with exactly the hunks of [`diff`]`(old, new)` whose ids are in `accepted` applied, the
/// others left as they are in `old`. All ids give `new`, none gives `old`. Duplicate ids are
/// harmless; an id that is not a hunk of this change is an error and nothing is applied.
pub fn apply_subset(old: &str, new: &str, accepted: &[&str]) -> Result<String, HunkError> {
    let lines = LineDiff::new(old, new, Same::default());
    let mut take = vec![false; lines.groups.len()];
    for id in accepted {
        match parse_id(id).filter(|i| *i < take.len()) {
            Some(i) => take[i] = true,
            None => return Err(HunkError::UnknownHunk((*id).to_owned())),
        }
    }
    // Outside the window both texts are the common prefix and suffix, so they come from `old`.
    // Inside it, between hunks, old and new lines are equal; each hunk comes from the side chosen.
    let mut out = String::with_capacity(old.len().max(new.len()));
    out.push_str(&old[..lines.window_start]);
    let mut at = 0;
    for (group, take) in lines.groups.iter().zip(take) {
        let (old_range, new_range) = group_ranges(group);
        push_lines(&mut out, &lines.old[at..old_range.start]);
        if take {
            push_lines(&mut out, &lines.new[new_range]);
        } else {
            push_lines(&mut out, &lines.old[old_range.clone()]);
        }
        at = old_range.end;
    }
    push_lines(&mut out, &lines.old[at..]);
    out.push_str(&old[lines.old_window_end..]);
    Ok(out)
}

/// Lines added and removed, over all hunks.
pub fn stats(diff: &StagedDiff) -> (usize, usize) {
    let (mut added, mut removed) = (0, 0);
    for hunk in &diff.hunks {
        // Every patch line starts with its tag; the header starts with `@` and the no-newline
        // marker with `\`, so neither is counted.
        for line in hunk.patch.split_inclusive('\n') {
            match line.as_bytes().first() {
                Some(b'+') => added += 1,
                Some(b'-') => removed += 1,
                _ => {}
            }
        }
    }
    (added, removed)
}

/// `h<n>` (1-based, no leading zeros) to the hunk's index.
fn parse_id(id: &str) -> Option<usize> {
    let digits = id.strip_prefix('h')?;
    if digits.starts_with('0') || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse::<usize>().ok()?.checked_sub(1)
}

/// The line diff of two texts, restricted to a window: the differing middle plus up to
/// [`CONTEXT`] common lines on each side. Outside the window the texts are byte-identical.
struct LineDiff<'a> {
    /// Lines of `old` inside the window.
    old: Vec<&'a str>,
    /// Lines of `new` inside the window.
    new: Vec<&'a str>,
    /// Lines before the window (the same number in both texts).
    first_line: usize,
    /// Byte offset of the window (the same in both texts: it is inside the common prefix).
    window_start: usize,
    /// Byte offset where the window ends in `old` (the common suffix starts at or before it).
    old_window_end: usize,
    /// The hunks, as similar's groups of ops, indexing `old` and `new` above.
    groups: Vec<Vec<DiffOp>>,
}

impl<'a> LineDiff<'a> {
    fn new(old: &'a str, new: &'a str, same: Same) -> Self {
        let (ob, nb) = (old.as_bytes(), new.as_bytes());
        debug_assert!(
            same.prefix <= ob.len().min(nb.len())
                && same.suffix <= ob.len().min(nb.len())
                && ob[..same.prefix] == nb[..same.prefix]
                && ob[ob.len() - same.suffix..] == nb[nb.len() - same.suffix..]
                && memchr::memchr_iter(b'\n', &ob[..same.prefix]).count() == same.newlines,
            "a wrong hint: {same:?}"
        );
        // The common prefix, cut back to the end of its last complete line. (A common last line
        // without newline only happens when the texts are equal, which gives no hunks anyway.)
        let prefix = same.prefix + common_prefix_len(&ob[same.prefix..], &nb[same.prefix..]);
        let prefix_end = memchr::memrchr(b'\n', &ob[..prefix]).map_or(0, |i| i + 1);
        // The common suffix after that, moved forward to a point where a line starts in both.
        // What `same` says holds only as far as it does not reach back over `prefix_end`.
        let known = same.suffix.min(ob.len() - prefix_end).min(nb.len() - prefix_end);
        let suffix = known + common_suffix_len(&ob[prefix_end..ob.len() - known], &nb[prefix_end..nb.len() - known]);
        let (mut old_mid_end, mut new_mid_end) = (ob.len() - suffix, nb.len() - suffix);
        if !(line_starts_at(ob, old_mid_end, prefix_end) && line_starts_at(nb, new_mid_end, prefix_end)) {
            match memchr::memchr(b'\n', &ob[old_mid_end..]) {
                Some(i) => {
                    old_mid_end += i + 1;
                    new_mid_end += i + 1;
                }
                None => (old_mid_end, new_mid_end) = (ob.len(), nb.len()),
            }
        }
        // Context: up to CONTEXT common lines on each side of the middle.
        let mut window_start = prefix_end;
        let mut before = 0;
        while before < CONTEXT && window_start > 0 {
            window_start = memchr::memrchr(b'\n', &ob[..window_start - 1]).map_or(0, |i| i + 1);
            before += 1;
        }
        let mut old_window_end = old_mid_end;
        let mut after = 0;
        while after < CONTEXT && old_window_end < ob.len() {
            old_window_end = memchr::memchr(b'\n', &ob[old_window_end..]).map_or(ob.len(), |i| old_window_end + i + 1);
            after += 1;
        }
        let new_window_end = new_mid_end + (old_window_end - old_mid_end);
        // Counted from the end of what `same` says, whichever side of it the window starts.
        let first_line = if window_start >= same.prefix {
            same.newlines + memchr::memchr_iter(b'\n', &ob[same.prefix..window_start]).count()
        } else {
            same.newlines - memchr::memchr_iter(b'\n', &ob[window_start..same.prefix]).count()
        };

        let old_lines = split_lines(&old[window_start..old_window_end]);
        let new_lines = split_lines(&new[window_start..new_window_end]);
        let (old_mid, new_mid) = (before..old_lines.len() - after, before..new_lines.len() - after);
        let mut ops = Vec::new();
        push_op(&mut ops, DiffOp::Equal { old_index: 0, new_index: 0, len: before });
        for op in similar::capture_diff(Algorithm::Patience, &old_lines, old_mid.clone(), &new_lines, new_mid.clone()) {
            push_op(&mut ops, op);
        }
        push_op(&mut ops, DiffOp::Equal { old_index: old_mid.end, new_index: new_mid.end, len: after });
        let groups = if ops.iter().all(|op| op.tag() == DiffTag::Equal) {
            Vec::new()
        } else {
            similar::group_diff_ops(ops, CONTEXT)
        };
        Self { old: old_lines, new: new_lines, first_line, window_start, old_window_end, groups }
    }

    /// The `index`-th hunk, with absolute line numbers and its patch text.
    fn hunk(&self, index: usize, group: &[DiffOp]) -> Hunk {
        let (old_range, new_range) = group_ranges(group);
        let (old_start, old_lines) = header_range(self.first_line + old_range.start, old_range.len());
        let (new_start, new_lines) = header_range(self.first_line + new_range.start, new_range.len());
        let mut patch = format!("@@ -{} +{} @@\n", show_range(old_start, old_lines), show_range(new_start, new_lines));
        for op in group {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            match tag {
                DiffTag::Equal => push_patch_lines(&mut patch, ' ', &self.old[old_range]),
                DiffTag::Delete => push_patch_lines(&mut patch, '-', &self.old[old_range]),
                DiffTag::Insert => push_patch_lines(&mut patch, '+', &self.new[new_range]),
                DiffTag::Replace => {
                    push_patch_lines(&mut patch, '-', &self.old[old_range]);
                    push_patch_lines(&mut patch, '+', &self.new[new_range]);
                }
            }
        }
        Hunk { id: format!("h{}", index + 1), old_start, old_lines, new_start, new_lines, patch, fuzz: 0 }
    }
}

/// Appends `op`, merging it into the previous op when both are equal runs (grouping splits hunks
/// at long equal runs, so a run must not be counted in pieces) and dropping empty runs.
fn push_op(ops: &mut Vec<DiffOp>, op: DiffOp) {
    if let DiffOp::Equal { len, .. } = op {
        if len == 0 {
            return;
        }
        if let Some(DiffOp::Equal { len: last, .. }) = ops.last_mut() {
            *last += len;
            return;
        }
    }
    ops.push(op);
}

/// The old and new line ranges a group of ops covers.
fn group_ranges(group: &[DiffOp]) -> (Range<usize>, Range<usize>) {
    match (group.first(), group.last()) {
        (Some(first), Some(last)) => {
            (first.old_range().start..last.old_range().end, first.new_range().start..last.new_range().end)
        }
        _ => (0..0, 0..0),
    }
}

/// A 0-based range start and length as the header shows them: 1-based, and for an empty range
/// the line before it.
fn header_range(start: usize, len: usize) -> (usize, usize) {
    (if len == 0 { start } else { start + 1 }, len)
}

/// `start,len`, or just `start` for one line (as diff and git write it).
fn show_range(start: usize, len: usize) -> String {
    if len == 1 { start.to_string() } else { format!("{start},{len}") }
}

fn push_patch_lines(patch: &mut String, tag: char, lines: &[&str]) {
    for line in lines {
        patch.push(tag);
        patch.push_str(line);
        if !line.ends_with('\n') {
            patch.push_str("\n\\ No newline at end of file\n");
        }
    }
}

fn push_lines(out: &mut String, lines: &[&str]) {
    for line in lines {
        out.push_str(line);
    }
}

/// Lines ending at `\n`, terminators kept; a last line without one is kept too.
fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// Whether a line starts at `at` in `bytes`, given that one starts at `floor` and `at >= floor`.
fn line_starts_at(bytes: &[u8], at: usize, floor: usize) -> bool {
    at == floor || bytes.get(at.wrapping_sub(1)) == Some(&b'\n')
}

/// Bytes compared per step before looking at single bytes: slice equality is a `memcmp`, which
/// stays fast in debug builds and on 50 MB inputs.
const CHUNK: usize = 4096;

fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let max = a.len().min(b.len());
    let mut n = 0;
    while n + CHUNK <= max && a[n..n + CHUNK] == b[n..n + CHUNK] {
        n += CHUNK;
    }
    n + a[n..max].iter().zip(&b[n..max]).take_while(|(x, y)| x == y).count()
}

fn common_suffix_len(a: &[u8], b: &[u8]) -> usize {
    let max = a.len().min(b.len());
    let mut n = 0;
    while n + CHUNK <= max && a[a.len() - n - CHUNK..a.len() - n] == b[b.len() - n - CHUNK..b.len() - n] {
        n += CHUNK;
    }
    n + a[..a.len() - n].iter().rev().zip(b[..b.len() - n].iter().rev()).take_while(|(x, y)| x == y).count()
}

#[cfg(test)]
#[path = "../tests/support/line_edits.rs"]
mod line_edits;

#[cfg(test)]
mod tests {
    use std::fmt::Write as _;

    use expect_test::{Expect, expect};
    use proptest::prelude::*;

    use super::*;

    /// `l1\n` … `ln\n`.
    fn numbered(n: usize) -> String {
        (1..=n).map(|i| format!("l{i}\n")).collect()
    }

    fn ids(staged: &StagedDiff) -> Vec<&str> {
        staged.hunks.iter().map(|h| h.id.as_str()).collect()
    }

    /// Shows every hunk's fields, then the unified diff (`\r` as `<CR>`), after checking that the
    /// unified diff is the hunks' patches under the header and that all / no hunks give new / old.
    fn check(old: &str, new: &str, expect: Expect) {
        let staged = diff("src/lib.rs", old, new);
        let patches: String = staged.hunks.iter().map(|h| h.patch.as_str()).collect();
        let header = if patches.is_empty() { "" } else { "--- a/src/lib.rs\n+++ b/src/lib.rs\n" };
        assert_eq!(staged.unified, format!("{header}{patches}"));
        assert_eq!(apply_subset(old, new, &ids(&staged)).as_deref(), Ok(new));
        assert_eq!(apply_subset(old, new, &[]).as_deref(), Ok(old));
        let mut shown = String::new();
        for h in &staged.hunks {
            let _ =
                writeln!(shown, "{}: old {}+{} new {}+{}", h.id, h.old_start, h.old_lines, h.new_start, h.new_lines);
        }
        shown.push_str(&staged.unified);
        expect.assert_eq(&shown.replace('\r', "<CR>"));
    }

    #[test]
    fn one_change() {
        check(
            &numbered(10),
            &numbered(10).replace("l5\n", "five\n"),
            expect![[r#"
                h1: old 2+7 new 2+7
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -2,7 +2,7 @@
                 l2
                 l3
                 l4
                -l5
                +five
                 l6
                 l7
                 l8
            "#]],
        );
    }

    #[test]
    fn two_separated_changes() {
        let old = numbered(20);
        let new = old.replace("l3\n", "three\n").replace("l15\n", "fifteen\nfifteen and a half\n");
        check(
            &old,
            &new,
            expect![[r#"
                h1: old 1+6 new 1+6
                h2: old 12+7 new 12+8
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,6 +1,6 @@
                 l1
                 l2
                -l3
                +three
                 l4
                 l5
                 l6
                @@ -12,7 +12,8 @@
                 l12
                 l13
                 l14
                -l15
                +fifteen
                +fifteen and a half
                 l16
                 l17
                 l18
            "#]],
        );
        assert_eq!(apply_subset(&old, &new, &["h2"]), Ok(old.replace("l15\n", "fifteen\nfifteen and a half\n")));
        assert_eq!(apply_subset(&old, &new, &["h1", "h1"]), Ok(old.replace("l3\n", "three\n")));
    }

    /// Changes with at most 2 × CONTEXT unchanged lines between them share one hunk.
    #[test]
    fn close_changes_share_a_hunk() {
        let old = numbered(30);
        let hunks = |second: &str| diff("f", &old, &old.replace("l5\n", "x\n").replace(second, "y\n")).hunks.len();
        assert_eq!(hunks("l12\n"), 1, "6 unchanged lines between");
        assert_eq!(hunks("l13\n"), 2, "7 unchanged lines between");
    }

    #[test]
    fn insertion_at_start() {
        check(
            &numbered(6),
            &format!("// header\n\n{}", numbered(6)),
            expect![[r#"
                h1: old 1+3 new 1+5
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,3 +1,5 @@
                +// header
                +
                 l1
                 l2
                 l3
            "#]],
        );
    }

    #[test]
    fn deletion_at_end() {
        check(
            &numbered(8),
            &numbered(6),
            expect![[r#"
                h1: old 4+5 new 4+3
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -4,5 +4,3 @@
                 l4
                 l5
                 l6
                -l7
                -l8
            "#]],
        );
    }

    #[test]
    fn change_to_last_line_without_final_newline() {
        check(
            "a\nb\nc",
            "a\nb\nC",
            expect![[r#"
                h1: old 1+3 new 1+3
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,3 +1,3 @@
                 a
                 b
                -c
                \ No newline at end of file
                +C
                \ No newline at end of file
            "#]],
        );
    }

    #[test]
    fn adding_and_removing_the_final_newline() {
        check(
            "a\nb",
            "a\nb\n",
            expect![[r#"
                h1: old 1+2 new 1+2
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,2 +1,2 @@
                 a
                -b
                \ No newline at end of file
                +b
            "#]],
        );
        check(
            "a\nb\n",
            "a\nb",
            expect![[r#"
                h1: old 1+2 new 1+2
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,2 +1,2 @@
                 a
                -b
                +b
                \ No newline at end of file
            "#]],
        );
    }

    #[test]
    fn crlf_file() {
        check(
            "fn a() {}\r\nfn b() {}\r\nfn c() {}\r\n",
            "fn a() {}\r\nfn b() { 1 }\r\nfn c() {}\r\n",
            expect![[r#"
                h1: old 1+3 new 1+3
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,3 +1,3 @@
                 fn a() {}<CR>
                -fn b() {}<CR>
                +fn b() { 1 }<CR>
                 fn c() {}<CR>
            "#]],
        );
    }

    /// A line ending is part of its line: changing only the ending is a change.
    #[test]
    fn line_ending_change_is_a_change() {
        check(
            "a\r\nb\r\nc\r\n",
            "a\r\nb\nc\r\n",
            expect![[r#"
                h1: old 1+3 new 1+3
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1,3 +1,3 @@
                 a<CR>
                -b<CR>
                +b
                 c<CR>
            "#]],
        );
    }

    #[test]
    fn new_and_emptied_file() {
        check(
            "",
            "a\nb",
            expect![[r#"
                h1: old 0+0 new 1+2
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -0,0 +1,2 @@
                +a
                +b
                \ No newline at end of file
            "#]],
        );
        check(
            "a\n",
            "",
            expect![[r#"
                h1: old 1+1 new 0+0
                --- a/src/lib.rs
                +++ b/src/lib.rs
                @@ -1 +0,0 @@
                -a
            "#]],
        );
    }

    #[test]
    fn equal_texts_have_no_hunks() {
        check("a\nb", "a\nb", expect![""]);
        assert!(diff("f", "", "").is_empty());
    }

    #[test]
    fn unknown_ids_are_refused() {
        let (old, new) = (numbered(3), numbered(4));
        for id in ["h0", "h2", "h01", "1", "H1", "", "h+1"] {
            assert_eq!(apply_subset(&old, &new, &["h1", id]), Err(HunkError::UnknownHunk(id.to_owned())), "{id}");
        }
        let message = apply_subset(&old, &old, &["h1"]).map_err(|e| e.to_string());
        expect![[r#"
            Err(
                "no hunk `h1` in this change; accept ids from the diff it was staged with (`h1`, `h2`, ...)",
            )
        "#]]
        .assert_debug_eq(&message);
    }

    #[test]
    fn stats_count_changed_lines() {
        let old = numbered(20);
        let new = old.replace("l3\n", "three\n").replace("l15\n", "").replace("l20\n", "l20\nl21\nl22");
        assert_eq!(stats(&diff("f", &old, &new)), (3, 2));
        assert_eq!(stats(&diff("f", &old, &old)), (0, 0));
    }

    /// A large file with changes near its end: only the lines around them are diffed (the common
    /// prefix and suffix are stripped first), and the line numbers are still those of the file.
    #[test]
    fn large_input_keeps_line_numbers() {
        const LINES: usize = 300_000;
        let line = |i: usize| format!("l{i} of a large file\n");
        let old: String = (1..=LINES).map(line).collect();
        assert!(old.len() > 6_000_000);
        let insert = |text: &str| text.replacen(&line(LINES - 20), &format!("inserted\n{}", line(LINES - 20)), 1);
        let new = insert(&old).replacen(&line(LINES - 2), "", 1);
        let staged = diff("big.txt", &old, &new);
        let ranges: Vec<_> =
            staged.hunks.iter().map(|h| (h.id.as_str(), h.old_start, h.old_lines, h.new_start, h.new_lines)).collect();
        assert_eq!(ranges, [("h1", LINES - 23, 6, LINES - 23, 7), ("h2", LINES - 5, 6, LINES - 4, 5)]);
        expect![[r#"
            @@ -299977,6 +299977,7 @@
             l299977 of a large file
             l299978 of a large file
             l299979 of a large file
            +inserted
             l299980 of a large file
             l299981 of a large file
             l299982 of a large file
            @@ -299995,6 +299996,5 @@
             l299995 of a large file
             l299996 of a large file
             l299997 of a large file
            -l299998 of a large file
             l299999 of a large file
             l300000 of a large file
        "#]]
        .assert_eq(&staged.hunks.iter().map(|h| h.patch.as_str()).collect::<String>());
        assert_eq!(stats(&staged), (1, 1));
        assert_eq!(apply_subset(&old, &new, &["h1"]), Ok(insert(&old)));
        assert_eq!(apply_subset(&old, &new, &["h2"]), Ok(old.replacen(&line(LINES - 2), "", 1)));
        assert_eq!(apply_subset(&old, &new, &["h1", "h2"]), Ok(new));
    }

    /// The old and new text of a hunk's patch (context on both sides).
    fn sides(patch: &str) -> (String, String) {
        let lines: Vec<&str> = patch.split_inclusive('\n').skip(1).collect();
        let (mut old, mut new) = (String::new(), String::new());
        for (i, line) in lines.iter().enumerate() {
            let mut content = line.get(1..).unwrap_or_default();
            if lines.get(i + 1).is_some_and(|next| next.starts_with('\\')) {
                content = content.strip_suffix('\n').unwrap_or(content);
            }
            match line.as_bytes().first() {
                Some(b' ') => {
                    old.push_str(content);
                    new.push_str(content);
                }
                Some(b'-') => old.push_str(content),
                Some(b'+') => new.push_str(content),
                _ => {}
            }
        }
        (old, new)
    }

    /// 0-based line range of a hunk side, from the header convention.
    fn range(start: usize, len: usize) -> Range<usize> {
        let start = if len == 0 { start } else { start - 1 };
        start..start + len
    }

    /// Checks the hunks of (a, b) against the texts, and the subset `mask` against an independent
    /// oracle: a's lines with each accepted hunk's old range replaced by its patch's new side.
    fn check_subset(a: &str, b: &str, mask: u64) -> Result<(), TestCaseError> {
        let staged = diff("f", a, b);
        let (a_lines, b_lines): (Vec<&str>, Vec<&str>) =
            (a.split_inclusive('\n').collect(), b.split_inclusive('\n').collect());
        let all = ids(&staged);
        prop_assert_eq!(apply_subset(a, b, &all), Ok(b.to_owned()));
        prop_assert_eq!(apply_subset(a, b, &[]), Ok(a.to_owned()));
        prop_assert_eq!(staged.is_empty(), a == b);
        let mut accepted = Vec::new();
        let mut previous: Option<(Range<usize>, Range<usize>)> = None;
        for (i, h) in staged.hunks.iter().enumerate() {
            prop_assert_eq!(&h.id, &format!("h{}", i + 1));
            let (old_range, new_range) = (range(h.old_start, h.old_lines), range(h.new_start, h.new_lines));
            if let Some((old_prev, new_prev)) = previous {
                prop_assert!(
                    old_range.start > old_prev.end && new_range.start > new_prev.end,
                    "hunks overlap or touch"
                );
            }
            let (old_side, new_side) = sides(&h.patch);
            prop_assert_eq!(&old_side, &a_lines.get(old_range.clone()).unwrap_or_default().concat());
            prop_assert_eq!(&new_side, &b_lines.get(new_range.clone()).unwrap_or_default().concat());
            prop_assert!(old_side != new_side);
            if mask >> (i % 64) & 1 == 1 {
                accepted.push(h.id.as_str());
            }
            previous = Some((old_range, new_range));
        }
        // Back to front, so that each splice leaves the ranges of the hunks still to do in place.
        let mut oracle: Vec<String> = a_lines.iter().map(|l| (*l).to_owned()).collect();
        for h in staged.hunks.iter().rev().filter(|h| accepted.contains(&h.id.as_str())) {
            oracle.splice(range(h.old_start, h.old_lines), [sides(&h.patch).1]);
        }
        prop_assert_eq!(apply_subset(a, b, &accepted), Ok(oracle.concat()));
        Ok(())
    }

    /// Pairs at the edges (a common prefix or suffix that ends inside a line, a line that differs
    /// only in its terminator: found by the proptest against wrong cuts), either way round.
    #[test]
    fn cuts_at_line_boundaries() -> Result<(), TestCaseError> {
        for &(a, b) in line_edits::EDGE_PAIRS {
            for mask in 0..4 {
                check_subset(a, b, mask)?;
                check_subset(b, a, mask)?;
            }
        }
        Ok(())
    }

    fn line() -> impl Strategy<Value = String> {
        let text = prop::sample::select(vec!["a", "b", "c", "", "é", "r\rr", "{", "}"]);
        let ending = prop::sample::select(vec!["\n", "\n", "\n", "\r\n"]);
        (text, ending).prop_map(|(t, e)| format!("{t}{e}"))
    }

    /// Lines, then maybe a last line without newline.
    fn text(lines: Vec<String>, last: Option<&str>) -> String {
        let mut text = lines.concat();
        text.push_str(last.unwrap_or_default());
        text
    }

    /// Two independent texts (many small hunks), or a text and a few edits of it (separate hunks).
    fn pair() -> impl Strategy<Value = (String, String)> {
        let last = || proptest::option::of(prop::sample::select(vec!["a", "z"]));
        let independent = (prop::collection::vec(line(), 0..16), last(), prop::collection::vec(line(), 0..16), last())
            .prop_map(|(a, a_last, b, b_last)| (text(a, a_last), text(b, b_last)));
        let edit = (any::<prop::sample::Index>(), 0..3u8, line());
        let edited = (prop::collection::vec(line(), 0..40), prop::collection::vec(edit, 0..5), last(), last())
            .prop_map(|(a, edits, a_last, b_last)| {
                let mut b = a.clone();
                line_edits::apply(&mut b, edits);
                (text(a, a_last), text(b, b_last))
            });
        prop_oneof![independent, edited]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn any_subset_applies_exactly((a, b) in pair(), mask in any::<u64>()) {
            check_subset(&a, &b, mask)?;
        }

        /// Whatever true part of the common prefix and suffix the caller gives (overlapping,
        /// cut inside a line or a character), the diff is the one computed without it.
        #[test]
        fn what_the_caller_knows_changes_nothing((a, b) in pair(), p in any::<prop::sample::Index>(), q in any::<prop::sample::Index>()) {
            let (ab, bb) = (a.as_bytes(), b.as_bytes());
            let lcp = ab.iter().zip(bb).take_while(|(x, y)| x == y).count();
            let lcs = ab.iter().rev().zip(bb.iter().rev()).take_while(|(x, y)| x == y).count();
            let prefix = p.index(lcp + 1);
            let same = Same {
                prefix,
                newlines: ab[..prefix].iter().filter(|c| **c == b'\n').count(),
                suffix: q.index(lcs + 1),
            };
            prop_assert_eq!(diff_knowing("f", &a, &b, same), diff("f", &a, &b), "{:?}", same);
        }
    }
}
