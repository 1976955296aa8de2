//! The three-way apply of an edit placed by a fuzzy stage: `old_string` is what the model
//! believes the file says, the block is what the file says, `new_string` is what the model wants.
//! The model's change (`old_string` → `new_string`) is carried onto the block; the block's own
//! text stays on every line the edit keeps. Lines where `old_string` and the block differ in
//! content (anything but whitespace and typographic punctuation) are forgiven only when the edit
//! keeps them; when the edit removes or changes such a line, the edit is refused.
//!
//! Blank lines the block has and `old_string` lacks are put back ([`repair`]); the edit never saw
//! them, so where they go is read off the lines around them, and must not depend on an arbitrary
//! choice: beside lines the edit only inserts, before them and after them must be the same text
//! ([`keep_repaired`]); and when `new_string` repeats a line, so that the edit's diff can pair the
//! lines beside them in several ways, the apply is taken in each ([`Tokens::readings`]) and all
//! must agree. Otherwise the edit is refused as unclear.

use std::ops::Range;

use similar::{Algorithm, DiffTag, capture_diff_slices};

use super::frame::{self, Kind, Misfit};
use super::{Difference, ascii_only, key};

/// A line of the merged block.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum Out {
    /// The block's line at this index, kept byte for byte.
    Block(usize),
    /// A blank line of the block that `old_string` lacked, kept (see [`repair`]).
    Repaired(usize),
    /// A line of `new_string`, in the file's frame.
    New(String),
}

/// The merged block and the lines of the file kept although `old_string` had them otherwise.
#[derive(Debug)]
pub(super) struct Merged {
    pub(super) out: Vec<Out>,
    /// Block-relative line indexes in `Difference::line`.
    pub(super) forgiven: Vec<Difference>,
}

/// Why the edit cannot be carried onto the block.
#[derive(Debug)]
pub(super) enum Refusal {
    /// Lines the edit removes or changes differ in the file (block-relative indexes).
    Conflict(Vec<Difference>),
    /// `new_string`'s indentation fits neither frame.
    Frame(Misfit),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Side {
    /// A difference between `old_string` and the block.
    File,
    /// A change the edit makes.
    Edit,
}

/// A run of `old_string` lines (`n`) that one side has as `other` instead.
#[derive(Clone, Debug)]
struct Change {
    n: Range<usize>,
    other: Range<usize>,
    side: Side,
}

/// The changes from `a` to `b`, and the pairs of equal lines. Lines with content are aligned
/// first and blank lines only between them: a blank line is never what two texts share.
fn changes(a: &[String], b: &[String], side: Side) -> (Vec<Change>, Vec<(usize, usize)>) {
    let solid =
        |lines: &[String]| -> Vec<usize> { (0..lines.len()).filter(|&i| !lines[i].trim().is_empty()).collect() };
    let (solid_a, solid_b) = (solid(a), solid(b));
    let keys_a: Vec<&String> = solid_a.iter().map(|&i| &a[i]).collect();
    let keys_b: Vec<&String> = solid_b.iter().map(|&j| &b[j]).collect();
    let mut anchors = Vec::new();
    for op in capture_diff_slices(Algorithm::Myers, &keys_a, &keys_b) {
        let (tag, x, y) = op.as_tag_tuple();
        if tag == DiffTag::Equal {
            anchors.extend(x.zip(y).map(|(x, y)| (solid_a[x], solid_b[y])));
        }
    }
    let mut found: Vec<Change> = Vec::new();
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    for (x, y) in anchors.into_iter().chain(std::iter::once((a.len(), b.len()))) {
        for op in capture_diff_slices(Algorithm::Myers, &a[i..x], &b[j..y]) {
            let (tag, n, other) = op.as_tag_tuple();
            let (n, other) = (n.start + i..n.end + i, other.start + j..other.end + j);
            if tag == DiffTag::Equal {
                pairs.extend(n.zip(other));
                continue;
            }
            // An insertion next to a deletion is one change, whichever order the diff gives them.
            match found.last_mut() {
                Some(last) if last.n.end == n.start && last.other.end == other.start => {
                    last.n.end = n.end;
                    last.other.end = other.end;
                }
                _ => found.push(Change { n, other, side }),
            }
        }
        if x < a.len() {
            pairs.push((x, y));
        }
        (i, j) = (x + 1, y + 1);
    }
    (found, pairs)
}

/// Runs of lines as the edit's diff sees them: each line with content alone, each run of blank
/// lines as one.
fn runs(lines: &[String]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        match out.last_mut() {
            Some(last) if line.trim().is_empty() && lines[last.start].trim().is_empty() => last.end = i + 1,
            _ => out.push(i..i + 1),
        }
    }
    out
}

/// The token of a run of only blank lines old_string lacked: it matches no run of new_string.
const PUT_BACK: &str = "\0put back";

/// `n` (old_string, blank lines put back by [`repair`]) and `w` (new_string) as the edit's diff
/// compares them: runs of lines ([`runs`]) and a token for each.
struct Tokens {
    n_runs: Vec<Range<usize>>,
    w_runs: Vec<Range<usize>>,
    n: Vec<String>,
    w: Vec<String>,
}

impl Tokens {
    fn new(n: &[String], w: &[String], repaired: &[bool]) -> Self {
        let (n_runs, w_runs) = (runs(n), runs(w));
        let token = |lines: &[String], run: &Range<usize>| -> String {
            if lines[run.start].trim().is_empty() { "\0".to_owned() } else { lines[run.start].clone() }
        };
        // A run of only blank lines old_string lacked is nothing the edit could have kept: it
        // matches no run of new_string (`keep_repaired` decides where it goes).
        let n_tokens = n_runs
            .iter()
            .map(|r| if r.clone().all(|i| repaired[i]) { PUT_BACK.to_owned() } else { token(n, r) })
            .collect();
        let w_tokens = w_runs.iter().map(|r| token(w, r)).collect();
        Self { n_runs, w_runs, n: n_tokens, w: w_tokens }
    }

    /// The pairs of equal tokens of the shortest diff the Myers algorithm takes.
    fn myers(&self) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        for op in capture_diff_slices(Algorithm::Myers, &self.n, &self.w) {
            let (tag, x, y) = op.as_tag_tuple();
            if tag == DiffTag::Equal {
                pairs.extend(x.zip(y));
            }
        }
        pairs
    }

    /// The other readings of the edit that matter to the blank lines put back: for each run of
    /// only put-back blank lines, a shortest diff for every way the runs on either side of it
    /// can be paired (or left unpaired) in a shortest diff. Where the put-back lines go is
    /// decided by those pairings, so the merge is taken in each of these readings. `None`
    /// when there are too many to take.
    fn readings(&self) -> Option<Vec<Vec<(usize, usize)>>> {
        const MAX_READINGS: usize = 64;
        const MAX_CELLS: usize = 1_000_000;
        let put_back: Vec<usize> = (0..self.n.len()).filter(|&t| self.n[t] == PUT_BACK).collect();
        if put_back.is_empty() {
            return Some(Vec::new());
        }
        // Both texts between a start and an end that every shortest diff pairs.
        let a: Vec<&str> =
            std::iter::once("\0start").chain(self.n.iter().map(String::as_str)).chain(["\0end"]).collect();
        let b: Vec<&str> =
            std::iter::once("\0start").chain(self.w.iter().map(String::as_str)).chain(["\0end"]).collect();
        let (rows, cols) = (a.len() + 1, b.len() + 1);
        if rows.saturating_mul(cols) > MAX_CELLS {
            return None;
        }
        let eq = |x: usize, y: usize| a[x] == b[y];
        // before[x][y]: longest common subsequence of a[..x] and b[..y]; after[x][y]: of a[x..]
        // and b[y..].
        let mut before = vec![0u32; rows * cols];
        for x in 1..rows {
            for y in 1..cols {
                before[x * cols + y] = if eq(x - 1, y - 1) {
                    before[(x - 1) * cols + y - 1] + 1
                } else {
                    before[(x - 1) * cols + y].max(before[x * cols + y - 1])
                };
            }
        }
        let mut after = vec![0u32; rows * cols];
        for x in (0..a.len()).rev() {
            for y in (0..b.len()).rev() {
                after[x * cols + y] = if eq(x, y) {
                    after[(x + 1) * cols + y + 1] + 1
                } else {
                    after[(x + 1) * cols + y].max(after[x * cols + y + 1])
                };
            }
        }
        let (f, g) = (|x: usize, y: usize| before[x * cols + y], |x: usize, y: usize| after[x * cols + y]);
        let total = g(0, 0);
        // Pairs of a shortest diff of a[..x] and b[..y], and of a[x..] and b[y..].
        let head = |x: usize, y: usize| -> Vec<(usize, usize)> {
            let (mut x, mut y, mut out) = (x, y, Vec::new());
            while x > 0 && y > 0 {
                if eq(x - 1, y - 1) && f(x, y) == f(x - 1, y - 1) + 1 {
                    out.push((x - 1, y - 1));
                    (x, y) = (x - 1, y - 1);
                } else if f(x - 1, y) == f(x, y) {
                    x -= 1;
                } else {
                    y -= 1;
                }
            }
            out.reverse();
            out
        };
        let tail = |x: usize, y: usize| -> Vec<(usize, usize)> {
            let (mut x, mut y, mut out) = (x, y, Vec::new());
            while x < a.len() && y < b.len() {
                if eq(x, y) && g(x, y) == g(x + 1, y + 1) + 1 {
                    out.push((x, y));
                    (x, y) = (x + 1, y + 1);
                } else if g(x + 1, y) == g(x, y) {
                    x += 1;
                } else {
                    y += 1;
                }
            }
            out
        };
        // Each reading as the pairs it makes around a put-back run, and where the shortest
        // diffs before and after them start from.
        type Reading = (Vec<(usize, usize)>, (usize, usize), (usize, usize));
        let mut found: Vec<Reading> = Vec::new();
        for t in put_back {
            // In a and b, the put-back run is at t + 1, the runs beside it at p and q.
            let (p, q) = (t, t + 2);
            for c1 in (0..b.len()).filter(|&c1| eq(p, c1)) {
                // p paired with c1, q unpaired.
                if f(p, c1) + 1 + g(q + 1, c1 + 1) == total {
                    found.push((vec![(p, c1)], (p, c1), (q + 1, c1 + 1)));
                }
                // Both paired.
                for c2 in (c1 + 1..b.len()).filter(|&c2| eq(q, c2)) {
                    if f(p, c1) + 2 + g(q + 1, c2 + 1) == total {
                        found.push((vec![(p, c1), (q, c2)], (p, c1), (q + 1, c2 + 1)));
                    }
                }
                if found.len() > MAX_READINGS {
                    return None;
                }
            }
            // q paired with c2, p unpaired.
            for c2 in (0..b.len()).filter(|&c2| eq(q, c2)) {
                if f(p, c2) + 1 + g(q + 1, c2 + 1) == total {
                    found.push((vec![(q, c2)], (p, c2), (q + 1, c2 + 1)));
                }
            }
            // Neither paired: the put-back lines are between removed lines (one such reading
            // says it).
            if let Some(y) = (0..b.len()).find(|&y| f(p, y) + g(q + 1, y) == total) {
                found.push((Vec::new(), (p, y), (q + 1, y)));
            }
            if found.len() > MAX_READINGS {
                return None;
            }
        }
        let readings = found
            .into_iter()
            .map(|(middle, from, to)| {
                let mut pairs = head(from.0, from.1);
                pairs.extend(middle);
                pairs.extend(tail(to.0, to.1));
                // Back to the tokens' indexes, without the start and the end.
                let inside = |(x, y): (usize, usize)| x > 0 && y > 0 && x < a.len() - 1 && y < b.len() - 1;
                pairs.into_iter().filter(|&pair| inside(pair)).map(|(x, y)| (x - 1, y - 1)).collect()
            })
            .collect();
        Some(readings)
    }
}

/// The changes the edit makes, `n` (old_string, blank lines put back by [`repair`] marked in
/// `repaired`) to `w` (new_string), in the reading `pairs` (equal tokens of a shortest diff of
/// `tokens`), comparing runs of blank lines as units: how many blank lines a run has is
/// formatting, unless new_string has neither the file's count nor old_string's. `None` when the
/// edit inserts lines right before or after a run holding blank lines old_string lacked
/// (whether the new lines go before them, after them or between: unknown).
fn edit_changes(
    tokens: &Tokens,
    pairs: &[(usize, usize)],
    repaired: &[bool],
    lens: (usize, usize),
) -> Option<Vec<Change>> {
    let (n_runs, w_runs) = (&tokens.n_runs, &tokens.w_runs);
    let span = |runs: &[Range<usize>], range: Range<usize>, len: usize| -> Range<usize> {
        let start = runs.get(range.start).map_or(len, |r| r.start);
        let end = if range.is_empty() { start } else { runs[range.end - 1].end };
        start..end
    };
    let mut found: Vec<Change> = Vec::new();
    let mut push = |n: Range<usize>, other: Range<usize>| match found.last_mut() {
        Some(last) if last.n.end == n.start && last.other.end == other.start => {
            last.n.end = n.end;
            last.other.end = other.end;
        }
        _ => found.push(Change { n, other, side: Side::Edit }),
    };
    let (mut x, mut y) = (0, 0);
    for &(a, c) in pairs.iter().chain(std::iter::once(&(n_runs.len(), w_runs.len()))) {
        if x < a || y < c {
            push(span(n_runs, x..a, lens.0), span(w_runs, y..c, lens.1));
        }
        if a < n_runs.len() {
            let (run, other) = (n_runs[a].clone(), w_runs[c].clone());
            let put_back = run.clone().filter(|&i| repaired[i]).count();
            if other.len() != run.len() && other.len() != run.len() - put_back {
                push(run, other);
            }
        }
        (x, y) = (a + 1, c + 1);
    }
    let holds_put_back = |at: usize| n_runs.iter().any(|r| r.start == at && r.clone().any(|i| repaired[i]));
    let ends_put_back = |at: usize| n_runs.iter().any(|r| r.end == at && r.clone().any(|i| repaired[i]));
    let unclear = found
        .iter()
        .any(|c| c.n.is_empty() && !c.other.is_empty() && (holds_put_back(c.n.end) || ends_put_back(c.n.start)));
    (!unclear).then_some(found)
}

/// Changes grouped where they touch the same lines of `old_string` (or insert at the same point).
fn clusters(mut all: Vec<Change>) -> Vec<Vec<Change>> {
    all.sort_by_key(|c| (c.n.start, c.n.end, c.side));
    let mut groups: Vec<Vec<Change>> = Vec::new();
    let mut hi = 0;
    for change in all {
        let joins = groups.last().is_some_and(|group| {
            let lo = group[0].n.start;
            change.n.start < hi || change.n.is_empty() && lo == hi && change.n.start == lo
        });
        hi = if joins { hi.max(change.n.end) } else { change.n.end };
        match groups.last_mut() {
            Some(group) if joins => group.push(change),
            _ => groups.push(vec![change]),
        }
    }
    groups
}

/// A line as the edit compares it: indentation kept, trailing whitespace not.
fn compared(line: &str) -> String {
    line.trim_end().to_owned()
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// Carries the change `n` → `w` onto `b`. `n` and `b` were placed together by a stage: their
/// lines are equal under [`key`] but for what that stage tolerates.
pub(super) fn merge(n: &[&str], b: &[&str], w: &[&str]) -> Result<Merged, Refusal> {
    let (n, repaired) = repair(n, b);
    merge_repaired(&n, &repaired, b, w)
}

fn keys(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|l| key(l)).collect()
}

/// `n` with the blank lines the block has and `n` lacks put back (a dropped blank line is
/// formatting), and which lines were put back: the edit never saw them, so it cannot remove them.
fn repair<'a>(n: &[&'a str], b: &[&'a str]) -> (Vec<&'a str>, Vec<bool>) {
    let (file_changes, _) = align(n, b);
    let mut out = Vec::with_capacity(n.len() + 2);
    let mut repaired = Vec::with_capacity(n.len() + 2);
    let mut at = 0;
    for change in file_changes {
        if !change.n.is_empty() || !b[change.other.clone()].iter().all(|l| is_blank(l)) {
            continue;
        }
        out.extend_from_slice(&n[at..change.n.start]);
        repaired.resize(out.len(), false);
        out.extend_from_slice(&b[change.other.clone()]);
        repaired.resize(out.len(), true);
        at = change.n.start;
    }
    out.extend_from_slice(&n[at..]);
    repaired.resize(out.len(), false);
    (out, repaired)
}

/// Where `old_string`'s lines are in the block. Of the same length, line beside line (a block
/// placed with a line that differs: the lines around it must not slide to pair up with a
/// neighbour it resembles); else by a diff of their content.
fn align(n: &[&str], b: &[&str]) -> (Vec<Change>, Vec<(usize, usize)>) {
    let (n_keys, b_keys) = (keys(n), keys(b));
    if n.len() != b.len() {
        return changes(&n_keys, &b_keys, Side::File);
    }
    let mut found: Vec<Change> = Vec::new();
    let mut pairs = Vec::new();
    for i in 0..n.len() {
        if n_keys[i] == b_keys[i] {
            pairs.push((i, i));
            continue;
        }
        match found.last_mut() {
            Some(last) if last.n.end == i => {
                last.n.end = i + 1;
                last.other.end = i + 1;
            }
            _ => found.push(Change { n: i..i + 1, other: i..i + 1, side: Side::File }),
        }
    }
    (found, pairs)
}

fn merge_repaired(n: &[&str], repaired: &[bool], b: &[&str], w: &[&str]) -> Result<Merged, Refusal> {
    let (file_changes, pairs) = align(n, b);
    let frame = frame::decide(n, b, w, &pairs).map_err(Refusal::Frame)?;
    let mut beside: Vec<Option<usize>> = vec![None; n.len()];
    for &(i, j) in &pairs {
        beside[i] = Some(j);
    }
    let n_cmp: Vec<String> = match frame.kind {
        Kind::Old => n.iter().map(|l| compared(l)).collect(),
        Kind::File => (0..n.len())
            .map(|i| match beside[i] {
                Some(j) if !is_blank(n[i]) => format!("{}{}", super::indent(b[j]), n[i].trim()),
                _ => compared(&frame.to_file(n[i])),
            })
            .collect(),
    };
    let w_cmp: Vec<String> = w.iter().map(|l| compared(l)).collect();
    // Lines inserted beside blank lines old_string lacked: before, after or between them?
    let unclear = || {
        let put_back = (0..n.len()).filter(|&i| repaired[i]);
        Refusal::Conflict(
            put_back
                .filter_map(|i| beside[i].map(|j| Difference { line: j, file: vec![b[j].to_owned()], old: Vec::new() }))
                .collect(),
        )
    };
    let style = Style::of(n, b, &pairs);
    // A new line beside an `old_string` line of the same indentation (the line it replaces, or
    // the one it follows) takes the indentation of that line's place in the file: an
    // `old_string` that flattened the indentation maps one indentation to several.
    let beside_indent = |k: usize, partner: Option<usize>| -> Option<&str> {
        let i = partner?;
        let j = beside[i]?;
        (frame.kind == Kind::Old && !is_blank(n[i]) && !is_blank(b[j]) && super::indent(n[i]) == super::indent(w[k]))
            .then(|| super::indent(b[j]))
    };
    let new_line = |k: usize, partner: Option<usize>| -> Out {
        let line = match (frame.kind, beside_indent(k, partner)) {
            (Kind::Old, Some(own)) if !is_blank(w[k]) => format!("{own}{}", w[k].trim_start()),
            (Kind::Old, _) => frame.to_file(w[k]),
            (Kind::File, _) => w[k].to_owned(),
        };
        Out::New(style.apply(line))
    };
    let lines_of = |change: &Change| -> Vec<Out> {
        change
            .other
            .clone()
            .enumerate()
            .map(|(t, k)| {
                let partner = if t < change.n.len() { Some(change.n.start + t) } else { change.n.start.checked_sub(1) };
                new_line(k, partner)
            })
            .collect()
    };

    // The edit carried onto the block in one reading of it (its changes).
    let carry = |edit_changes: Vec<Change>| -> Result<Merged, Refusal> {
        let mut merged = Merged { out: Vec::new(), forgiven: Vec::new() };
        let mut conflicts = Vec::new();
        let mut at = 0;
        let all: Vec<Change> = file_changes.iter().cloned().chain(edit_changes).collect();
        for group in clusters(all) {
            let lo = group[0].n.start;
            merged.out.extend(beside[at..lo].iter().flatten().map(|&j| Out::Block(j)));
            at = group.iter().map(|c| c.n.end).max().unwrap_or(lo);
            let (files, edits): (Vec<&Change>, Vec<&Change>) = group.iter().partition(|c| c.side == Side::File);
            if edits.is_empty() {
                for change in &files {
                    merged.out.extend(change.other.clone().map(Out::Block));
                    if differs_in_content(n, b, change) {
                        merged.forgiven.push(difference(n, b, change));
                    }
                }
            } else if files.is_empty() {
                for change in &edits {
                    match keep_repaired(change, repaired, &beside, w, &lines_of) {
                        Some(lines) => merged.out.extend(lines),
                        None => conflicts.extend(change.n.clone().filter(|&i| repaired[i]).filter_map(|i| {
                            beside[i].map(|j| Difference { line: j, file: vec![b[j].to_owned()], old: Vec::new() })
                        })),
                    }
                }
            } else if let Some(resolved) = resolve(b, w, &files, &edits, &lines_of) {
                merged.out.extend(resolved);
            } else {
                conflicts.extend(files.iter().map(|change| difference(n, b, change)));
            }
        }
        merged.out.extend(beside[at..].iter().flatten().map(|&j| Out::Block(j)));
        if !conflicts.is_empty() {
            return Err(Refusal::Conflict(conflicts));
        }
        merged.out = without_doubled_blanks(merged.out, b);
        Ok(merged)
    };

    let tokens = Tokens::new(&n_cmp, &w_cmp, repaired);
    let lens = (n.len(), w.len());
    let merged = carry(edit_changes(&tokens, &tokens.myers(), repaired, lens).ok_or_else(unclear)?)?;
    // Where blank lines old_string lacked go depends on which lines of new_string the lines
    // beside them are: when the edit's diff can be taken several ways (new_string repeats a
    // line), every reading must give the same text, or the edit is unclear.
    let text = |merged: &Merged| -> Vec<String> {
        merged
            .out
            .iter()
            .map(|line| match line {
                Out::Block(j) | Out::Repaired(j) => b[*j].to_owned(),
                Out::New(line) => line.clone(),
            })
            .collect()
    };
    let wanted = text(&merged);
    for pairs in tokens.readings().ok_or_else(unclear)? {
        let other = edit_changes(&tokens, &pairs, repaired, lens).map(carry);
        if !matches!(&other, Some(Ok(other)) if text(other) == wanted) {
            return Err(unclear());
        }
    }
    Ok(merged)
}

/// A blank line `old_string` lacked, kept beside lines the edit removed, drops out when it now
/// doubles another blank line of the file (unless the block itself has blank lines in a row).
/// Blank lines of new_string are the edit's own: beside them it stays.
fn without_doubled_blanks(out: Vec<Out>, b: &[&str]) -> Vec<Out> {
    let blank = |line: &Out| match line {
        Out::Block(j) | Out::Repaired(j) => is_blank(b[*j]),
        Out::New(_) => false,
    };
    let doubles = b.windows(2).any(|pair| is_blank(pair[0]) && is_blank(pair[1]));
    let mut kept: Vec<Out> = Vec::with_capacity(out.len());
    for (k, line) in out.iter().enumerate() {
        if let Out::Repaired(j) = line {
            let next_blank = out.get(k + 1).is_some_and(blank);
            let previous_blank = kept.last().is_some_and(blank);
            if doubles || !(next_blank || previous_blank) {
                kept.push(Out::Block(*j));
            }
            continue;
        }
        kept.push(line.clone());
    }
    kept
}

/// The lines of an edit whose removed lines include lines put back by [`repair`]: those stay,
/// before or after the edit's lines, and stand for as many blank lines the edit's lines start or
/// end with there. `None` when where they go is not clear: between removed lines, or beside lines
/// the edit only inserts (unless those start and end with as many blank lines, so that before
/// them and after them is the same text).
fn keep_repaired(
    change: &Change,
    repaired: &[bool],
    beside: &[Option<usize>],
    w: &[&str],
    lines_of: &dyn Fn(&Change) -> Vec<Out>,
) -> Option<Vec<Out>> {
    let kept = |range: Range<usize>| -> Vec<Out> { range.filter_map(|i| beside[i].map(Out::Repaired)).collect() };
    let n = change.n.clone();
    let lead = n.clone().take_while(|&i| repaired[i]).count();
    let trail = if lead == n.len() { 0 } else { n.clone().rev().take_while(|&i| repaired[i]).count() };
    let inner = n.start + lead..n.end - trail;
    if inner.clone().any(|i| repaired[i]) {
        return None;
    }
    if lead == 0 && trail == 0 {
        return Some(lines_of(change));
    }
    let other = change.other.clone();
    let blank_run = |range: Range<usize>| range.clone().all(|k| k < w.len() && is_blank(w[k]));
    // new_string's own copy of the blank lines, if it has them where they are.
    let (mut from, mut to) = (other.start, other.end);
    if lead > 0 && to - from >= lead && blank_run(from..from + lead) {
        from += lead;
    }
    if trail > 0 && to - from >= trail && blank_run(to - trail..to) {
        to -= trail;
    }
    if inner.is_empty() && from < other.end && !(from > other.start && blank_run(other.end - lead..other.end)) {
        // Only lines the edit never saw are removed: the edit inserts beside blank lines it did
        // not know of, before them or after them. Unknown, unless its lines start and end with
        // as many blank lines: then the file's blank lines stand for either, the same text.
        // (Starting with them is not enough: the model may have added the blank line and its
        // lines right before the file's, and the file's stays after them.)
        return None;
    }
    let mut out = kept(n.start..n.start + lead);
    out.extend(lines_of(&Change { n: inner, other: from..to, side: change.side }));
    out.extend(kept(n.end - trail..n.end));
    Some(out)
}

/// A cluster where the file differs from `old_string` and the edit changes the same lines: safe
/// only when both made the same change, or when the file only has blank lines more, at the
/// point the edit inserts, and the edit's lines start or end with as many blank lines.
fn resolve(
    b: &[&str],
    w: &[&str],
    files: &[&Change],
    edits: &[&Change],
    lines_of: &dyn Fn(&Change) -> Vec<Out>,
) -> Option<Vec<Out>> {
    let ([file], [edit]) = (files, edits) else { return None };
    let file_keys: Vec<String> = b[file.other.clone()].iter().map(|l| key(l)).collect();
    let edit_keys: Vec<String> = w[edit.other.clone()].iter().map(|l| key(l)).collect();
    if file.n == edit.n && file_keys == edit_keys {
        return Some(file.other.clone().map(Out::Block).collect());
    }
    let blanks = file.other.len();
    let only_blank_lines = file.n.is_empty() && b[file.other.clone()].iter().all(|l| is_blank(l));
    if !only_blank_lines || !edit.n.is_empty() || edit.n.start != file.n.start || edit.other.len() <= blanks {
        return None;
    }
    let inserted = &w[edit.other.clone()];
    let (start, end) = (edit.other.start, edit.other.end);
    if inserted[inserted.len() - blanks..].iter().all(|l| is_blank(l)) {
        let mut out = lines_of(&Change { other: start..end - blanks, ..(*edit).clone() });
        out.extend(file.other.clone().map(Out::Block));
        return Some(out);
    }
    if inserted[..blanks].iter().all(|l| is_blank(l)) {
        let mut out: Vec<Out> = file.other.clone().map(Out::Block).collect();
        out.extend(lines_of(&Change { other: start + blanks..end, ..(*edit).clone() }));
        return Some(out);
    }
    None
}

/// The file's lines differ from `old_string`'s in more than blank lines.
fn differs_in_content(n: &[&str], b: &[&str], change: &Change) -> bool {
    let solid = |lines: &[&str]| -> Vec<String> { lines.iter().filter(|l| !is_blank(l)).map(|l| key(l)).collect() };
    solid(&n[change.n.clone()]) != solid(&b[change.other.clone()])
}

fn difference(n: &[&str], b: &[&str], change: &Change) -> Difference {
    Difference {
        line: change.other.start,
        file: b[change.other.clone()].iter().map(|l| (*l).to_owned()).collect(),
        old: n[change.n.clone()].iter().map(|l| (*l).to_owned()).collect(),
    }
}

/// Formatting `old_string` has and the file does not, taken out of the edit's new lines too:
/// trailing whitespace, typographic punctuation.
struct Style {
    trim_end: bool,
    ascii: bool,
}

impl Style {
    fn of(n: &[&str], b: &[&str], pairs: &[(usize, usize)]) -> Self {
        let block_trimmed = b.iter().all(|l| l.trim_end().len() == l.len());
        let block_ascii = b.iter().all(|l| l.is_ascii());
        let trim_end = block_trimmed && pairs.iter().any(|&(i, _)| n[i].trim_end().len() != n[i].len());
        let ascii = block_ascii && pairs.iter().any(|&(i, _)| !n[i].is_ascii());
        Self { trim_end, ascii }
    }

    fn apply(&self, line: String) -> String {
        let line = if self.ascii { ascii_only(&line).into_owned() } else { line };
        if self.trim_end { line.trim_end().to_owned() } else { line }
    }
}
