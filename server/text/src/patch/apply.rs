//! Applying one file's hunks to its text: placing each hunk, then splicing it in.
//!
//! Lines the patch does not touch are copied byte for byte, context lines included (so a hunk
//! placed ignoring whitespace keeps the file's own whitespace). Added lines are the patch's
//! bytes, line ending included: a line the patch ends in `\r\n` is written so, a line it ends in
//! `\n` too (a new CRLF file, a file converted to CRLF or back to LF, are written as `git apply`
//! writes them). Only a patch that has lost its carriage returns is not taken at its word: a
//! hunk whose context or removed lines lack the `\r` of the CRLF lines they were placed on (a
//! model's patch, or one pasted through an editor), or, for a hunk without such lines, a patch
//! with no `\r` at all on a mostly CRLF file. Its added lines without a `\r` get the file's line
//! ending.

use std::borrow::Cow;

use super::compare::{self, Pass, View};
use super::{Closest, FilePatch, Hunk, HunkLine, Location, Mismatch, PatchError};
use crate::LineEnding;

/// A file patch applied to a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Applied {
    /// The new text (empty for a deletion).
    pub text: String,
    /// Where and how each hunk was placed, in order.
    pub hunks: Vec<HunkReport>,
}

/// Where and how one hunk was placed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HunkReport {
    /// 1-based number of the hunk in its file, as messages count.
    pub index: usize,
    /// How it was placed: `exact` (where the patch says), `offset` (its exact text, elsewhere),
    /// `whitespace` (its text ignoring whitespace), `context` (a hunk without line numbers,
    /// found by its exact text), `punctuation` (ignoring typographic punctuation too),
    /// `unverified` (a hunk that only adds lines and has no context: placed by its line number
    /// alone, nothing confirmed it), `append` (added lines without context or `@@` line, at the
    /// end of the file, as `apply_patch` does).
    pub strategy: &'static str,
    /// Lines between where the header says the hunk starts and where it was placed (0 for hunks
    /// without line numbers).
    pub offset: isize,
    /// 1-based line of the new text where the hunk's lines start (for a hunk that only removes
    /// lines, the line that now follows where they were).
    pub line: usize,
    /// Leading or trailing context lines left unchecked to place the hunk (`patch -F`): 0, or at
    /// most [`MAX_FUZZ`] (strategy `fuzz`).
    pub fuzz: usize,
    /// The context lines left unchecked that differ from the file (they keep the file's text).
    pub ignored: Vec<Mismatch>,
}

/// At most this many leading and this many trailing context lines of a hunk may be left
/// unchecked, as `patch -F2` does; removed lines never are.
pub const MAX_FUZZ: usize = 2;

/// Applies `file`'s hunks to `old_text`, the file's current content exactly as it is (either
/// line ending, BOM removed). For a creation `old_text` is not used: the new file is what the
/// patch says, and whether an existing file may be replaced is the caller's decision.
pub fn apply(file: &FilePatch, old_text: &str) -> Result<Applied, PatchError> {
    let path = file.display_path();
    if file.binary {
        return Err(PatchError::Binary { path });
    }
    let old_text = if file.is_creation() { "" } else { old_text };
    let eol = match LineEnding::detect(old_text) {
        LineEnding::Lf => "\n",
        LineEnding::Crlf => "\r\n",
    };
    let lines = split_lines(old_text);
    let view = View::new(lines.iter().map(|line| line.text).collect());
    let mut out = Out { text: String::with_capacity(old_text.len() + 256), eol, open: false, lines: 0 };
    let mut cursor = 0;
    let mut shift: isize = 0;
    let carries_cr = file.hunks.iter().flat_map(|hunk| &hunk.lines).any(|line| match line {
        HunkLine::Context(text) | HunkLine::Remove(text) | HunkLine::Add(text) => text.ends_with('\r'),
    });
    let mut reports = Vec::with_capacity(file.hunks.len());
    for (index, hunk) in file.hunks.iter().enumerate() {
        let place = Place { path: &path, number: index + 1, view: &view, lo: cursor };
        let placed = match &hunk.location {
            Location::Numbered { old_start, .. } => place.numbered(hunk, *old_start, shift)?,
            Location::Searched { anchors, end_of_file } => place.searched(hunk, anchors, *end_of_file)?,
        };
        for line in &lines[cursor..placed.at] {
            out.push(line.text, line.end);
        }
        let new_line = out.lines + 1;
        // A fuzzed hunk's dropped trailing lines are the file's, newline or not.
        let ends_hunk = placed.lines.as_ptr_range().end == hunk.lines.as_ptr_range().end;
        let last_new = placed.lines.iter().rposition(|line| !matches!(line, HunkLine::Remove(_))).filter(|_| ends_hunk);
        // Whether the patch kept its carriage returns here: its old lines against the file's.
        let (mut lost, mut seen) = (false, false);
        let mut old_index = placed.at;
        for line in placed.lines {
            if let HunkLine::Context(text) | HunkLine::Remove(text) = line {
                let end = lines[old_index].end;
                lost |= end == "\r\n" && !text.ends_with('\r');
                seen |= !end.is_empty();
                old_index += 1;
            }
        }
        let added_eol = if lost || !seen && !carries_cr { eol } else { "\n" };
        old_index = placed.at;
        for (i, line) in placed.lines.iter().enumerate() {
            match line {
                HunkLine::Context(_) => {
                    let line = &lines[old_index];
                    out.push(line.text, line.end);
                    old_index += 1;
                }
                HunkLine::Remove(_) => old_index += 1,
                HunkLine::Add(text) => {
                    // The last line of a file without a final newline keeps its text as the patch
                    // has it, a trailing `\r` included (git's diff of `b\r` at the end of a file).
                    if hunk.new_no_newline && Some(i) == last_new {
                        out.push(text, "");
                        continue;
                    }
                    let (text, end) = match text.strip_suffix('\r') {
                        Some(text) => (text, "\r\n"),
                        None => (text.as_str(), added_eol),
                    };
                    out.push(text, end);
                }
            }
        }
        cursor = old_index;
        if let Some(offset) = placed.offset {
            shift = offset;
        }
        reports.push(HunkReport {
            index: index + 1,
            strategy: placed.strategy,
            offset: placed.offset.unwrap_or(0),
            line: new_line,
            fuzz: placed.fuzz,
            ignored: placed.ignored,
        });
    }
    for line in &lines[cursor..] {
        out.push(line.text, line.end);
    }
    if file.is_deletion() {
        // Without hunks (`*** Delete File`, or git deleting an empty file) there is nothing to
        // check, except that git's empty file is still empty.
        let checked = !file.hunks.is_empty() || file.old_mode.is_some();
        if checked && out.lines > 0 {
            return Err(PatchError::DeleteMismatch { path, remaining: out.lines });
        }
        out.text.clear();
    }
    Ok(Applied { text: out.text, hunks: reports })
}

/// A line of the file: its text without the terminator, and the terminator (`\n`, `\r\n`, or
/// empty for a last line without one).
struct FileLine<'a> {
    text: &'a str,
    end: &'a str,
}

fn split_lines(text: &str) -> Vec<FileLine<'_>> {
    let bytes = text.as_bytes();
    let mut lines = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut start = 0;
    for newline in memchr::memchr_iter(b'\n', bytes) {
        let cut = if newline > start && bytes[newline - 1] == b'\r' { newline - 1 } else { newline };
        lines.push(FileLine { text: &text[start..cut], end: &text[cut..=newline] });
        start = newline + 1;
    }
    if start < text.len() {
        lines.push(FileLine { text: &text[start..], end: "" });
    }
    lines
}

/// The new text being built.
struct Out {
    text: String,
    eol: &'static str,
    /// The last line pushed has no terminator: it was the file's last line, and now is not.
    open: bool,
    lines: usize,
}

impl Out {
    fn push(&mut self, text: &str, end: &str) {
        if self.open {
            self.text.push_str(self.eol);
        }
        self.text.push_str(text);
        self.text.push_str(end);
        self.open = end.is_empty();
        self.lines += 1;
    }
}

/// The largest line number a hunk header is taken at its word for.
const MAX_LINE: usize = 1 << 40;

/// Where a hunk goes.
struct Placed<'h> {
    /// Line index of the file where its old lines start.
    at: usize,
    /// Its lines (a trailing blank context line may have been dropped to make it fit).
    lines: &'h [HunkLine],
    strategy: &'static str,
    /// Offset from its header's line, for hunks that have one.
    offset: Option<isize>,
    /// Context lines left unchecked at either end (see [`MAX_FUZZ`]).
    fuzz: usize,
    /// Those of them that differ from the file.
    ignored: Vec<Mismatch>,
}

enum Nearest {
    None,
    One(usize),
    Tie(usize, usize),
}

enum Search {
    NotFound,
    /// A hunk of added lines only, without an anchor: it goes at the end.
    Append,
    Found(usize, Pass),
    Ambiguous(Vec<usize>, Pass),
}

/// Placing one hunk of one file.
struct Place<'p, 'a> {
    path: &'p str,
    number: usize,
    view: &'p View<'a>,
    /// Line index where the previous hunk's old lines end: hunks apply in order and never overlap.
    lo: usize,
}

impl Place<'_, '_> {
    fn numbered<'h>(&self, hunk: &'h Hunk, old_start: usize, shift: isize) -> Result<Placed<'h>, PatchError> {
        let old: Vec<&str> = hunk.old_lines().collect();
        let (n, k) = (self.view.len(), old.len());
        // An empty old side's start names the line it follows; otherwise its first line. A
        // header may state any number: cap it so that the arithmetic below cannot overflow.
        let old_start = old_start.min(MAX_LINE);
        let stated = (if old.is_empty() { old_start } else { old_start.saturating_sub(1) }) as isize;
        let expected = stated + shift;
        if old.is_empty() {
            // Nothing to look for: the stated line is all there is.
            if expected < self.lo as isize || expected > n as isize {
                return Err(self.insertion_out_of_range(expected));
            }
            // Into an empty file there is only one place; elsewhere nothing confirms it.
            let strategy = if n == 0 { "exact" } else { "unverified" };
            return Ok(Placed {
                at: expected as usize,
                lines: &hunk.lines,
                strategy,
                offset: Some(shift),
                fuzz: 0,
                ignored: Vec::new(),
            });
        }
        let must_end = hunk.old_no_newline || hunk.new_no_newline;
        // Diff gives a hunk less context on one side only at an end of the file (GNU patch and
        // git read it so too): there it is tried first, after the stated line.
        let (leading, trailing) = context_sides(&hunk.lines);
        let edge = match (leading.cmp(&trailing), k <= n) {
            (std::cmp::Ordering::Greater, true) => Some(n - k),
            (std::cmp::Ordering::Less, true) if stated == 0 => Some(0),
            _ => None,
        }
        .filter(|&at| at >= self.lo);
        for &pass in compare::NUMBERED {
            let pattern = compare::normalize_all(pass, &old);
            let at_stated = expected >= self.lo as isize && self.view.matches_at(pass, expected as usize, &pattern);
            let at_edge = edge.filter(|&at| !at_stated && !must_end && self.view.matches_at(pass, at, &pattern));
            let nearest = match at_edge {
                Some(at) => Nearest::One(at),
                None => self.nearest(pass, &pattern, expected, must_end),
            };
            match nearest {
                Nearest::None => {}
                Nearest::One(at) => {
                    // Moved from where it was expected: the nearest fit is taken only when it is
                    // the only one (nearer is not truer when the lines repeat).
                    // (The end of the file, where diff leaves a hunk lopsided, is not a guess.)
                    if at as isize != expected && at_edge.is_none() {
                        let (n, k) = (self.view.len(), pattern.len());
                        let fits = self.view.find_all(pass, &pattern, self.lo, n - k, 10);
                        if fits.len() > 1 {
                            let count = if fits.len() >= 10 { "10 or more".to_owned() } else { fits.len().to_string() };
                            let below = if self.lo == 0 {
                                String::new()
                            } else {
                                format!(" below line {}, where hunk {} ends", self.lo, self.number - 1)
                            };
                            return Err(self.ambiguous(
                                fits.clone(),
                                format!(
                                    "is not at line {}, and fits {count} places{below} ({}): the file changed \
                                     around it, so it cannot be placed safely; regenerate the patch against the \
                                     current file, or give the hunk more context lines",
                                    expected + 1,
                                    pass.describe()
                                ),
                            ));
                        }
                        // Where its header says, it fits with outer context lines unchecked: that
                        // place is as good a reading as the exact fit elsewhere (repeated blocks),
                        // so neither is safe.
                        if self.fits_fuzzed_at(hunk, expected) || self.nearly_at(pass, &pattern, expected) {
                            return Err(self.ambiguous(
                                vec![expected.max(0) as usize, at],
                                format!(
                                    "fits line {} exactly but line {}, where its header says, with outer context                                      lines unchecked: the file changed around it, so it cannot be placed safely;                                      regenerate the patch against the current file",
                                    at + 1,
                                    expected + 1
                                ),
                            ));
                        }
                    }
                    let offset = at as isize - stated;
                    let strategy = match pass {
                        Pass::Exact if offset == 0 => "exact",
                        Pass::Exact => "offset",
                        _ => pass.strategy(),
                    };
                    return Ok(Placed {
                        at,
                        lines: &hunk.lines,
                        strategy,
                        offset: Some(offset),
                        fuzz: 0,
                        ignored: Vec::new(),
                    });
                }
                Nearest::Tie(above, below) => {
                    let distance = expected.abs_diff(above as isize);
                    return Err(self.ambiguous(
                        vec![above, below],
                        format!(
                            "is not at line {}, and fits equally well {} lines above and below it, at lines {} and {} \
                             ({}): the file changed around it, so it cannot be placed safely; regenerate the patch \
                             against the current file, or give the hunk more context lines",
                            expected + 1,
                            distance,
                            above + 1,
                            below + 1,
                            pass.describe()
                        ),
                    ));
                }
            }
        }
        if let Some(placed) = self.fuzzed(hunk, stated, expected, must_end)? {
            return Ok(placed);
        }
        Err(self.not_found(&old, Some(expected)))
    }

    /// The hunk placed with up to [`MAX_FUZZ`] of its leading and trailing context lines left
    /// unchecked, as `patch -F2` does, but only safely: every removed line and every remaining
    /// context line matches, the place is the only one in the file (below the previous hunk),
    /// and at least one line of context remains, or the hunk sits at the start or end of the file.
    /// The fewest lines left unchecked win; two places at the same count are ambiguous. A hunk
    /// whose last line has no final newline (`must_end`) still ends the file, its unchecked
    /// trailing lines included.
    fn fuzzed<'h>(
        &self,
        hunk: &'h Hunk,
        stated: isize,
        expected: isize,
        must_end: bool,
    ) -> Result<Option<Placed<'h>>, PatchError> {
        let (leading, trailing) = context_sides(&hunk.lines);
        let n = self.view.len();
        let (max_lead, max_trail) = (leading.min(MAX_FUZZ), trailing.min(MAX_FUZZ));
        for total in 1..=max_lead + max_trail {
            let mut places: Vec<(usize, usize, usize)> = Vec::new();
            let mut ambiguous: Vec<usize> = Vec::new();
            for lead in total.saturating_sub(max_trail)..=total.min(max_lead) {
                let trail = total - lead;
                let lines = &hunk.lines[lead..hunk.lines.len() - trail];
                let old: Vec<&str> = old_lines(lines).collect();
                if old.is_empty() || old.len() + trail > n || self.lo > n - old.len() - trail {
                    continue;
                }
                // Real context: a line that says something (a lone `}` fits anywhere).
                let context = lines
                    .iter()
                    .filter(|l| matches!(l, HunkLine::Context(text) if text.chars().any(char::is_alphanumeric)))
                    .count();
                for &pass in compare::NUMBERED {
                    let pattern = compare::normalize_all(pass, &old);
                    // A hunk that ends the file still does, its unchecked lines included.
                    let from = if must_end { n - old.len() - trail } else { self.lo };
                    let fits = self.view.find_all(pass, &pattern, from, n - old.len() - trail, 2);
                    match fits.as_slice() {
                        [] => continue,
                        [at] => {
                            let anchored = *at == 0 || at + old.len() == n;
                            if context > 0 || anchored {
                                places.push((*at, lead, trail));
                            }
                        }
                        _ => ambiguous.extend(fits),
                    }
                    break;
                }
            }
            let mut starts: Vec<isize> = places.iter().map(|(at, lead, _)| *at as isize - *lead as isize).collect();
            starts.sort_unstable();
            starts.dedup();
            match (starts.len(), ambiguous.is_empty()) {
                (0, true) => continue,
                (1, true) => {
                    let (at, lead, trail) = places[0];
                    let start = at as isize - lead as isize;
                    if start != expected && self.nearly_at_any(hunk, expected) {
                        // Where its header says, the hunk is there but for one line (a line it
                        // removes, changed since): that is its place, stale, not the lookalike.
                        return Err(self.ambiguous(
                            vec![expected.max(0) as usize, start.max(0) as usize],
                            format!(
                                "fits line {} with {total} of its outer context lines unchecked, but line {}, \
                                 where its header says, holds it with one line changed: the file changed there \
                                 since the patch was made, so it cannot be applied safely; read the file again \
                                 and regenerate the patch against its current content",
                                start + 1,
                                expected + 1
                            ),
                        ));
                    }
                    let ignored = self.ignored(hunk, at, lead, trail);
                    return Ok(Some(Placed {
                        at,
                        lines: &hunk.lines[lead..hunk.lines.len() - trail],
                        strategy: "fuzz",
                        offset: Some(at as isize - lead as isize - stated),
                        fuzz: lead.max(trail),
                        ignored,
                    }));
                }
                _ => {
                    let mut all: Vec<usize> = places.iter().map(|(at, _, _)| *at).chain(ambiguous).collect();
                    all.sort_unstable();
                    all.dedup();
                    return Err(self.ambiguous(
                        all,
                        format!(
                            "does not match where its header says, and with {total} of its outer context lines left \
                             unchecked it fits more than one place: regenerate the patch against the current file"
                        ),
                    ));
                }
            }
        }
        Ok(None)
    }

    /// Whether `pattern` (three lines or more) matches at `expected` but for one line: the
    /// hunk's own place, changed since, rather than a lookalike elsewhere.
    fn nearly_at(&self, pass: Pass, pattern: &[Cow<'_, str>], expected: isize) -> bool {
        if expected < self.lo as isize || pattern.len() < 3 {
            return false;
        }
        let at = expected as usize;
        (0..pattern.len()).any(|skip| {
            let mut rest = pattern.to_vec();
            rest.remove(skip);
            let before = self.view.matches_at(pass, at, &rest[..skip]);
            before && self.view.matches_at(pass, at + skip + 1, &rest[skip..])
        })
    }

    /// Whether all of the hunk's old lines match at `expected` but one, in any pass.
    fn nearly_at_any(&self, hunk: &Hunk, expected: isize) -> bool {
        let old: Vec<&str> = hunk.old_lines().collect();
        compare::NUMBERED.iter().any(|&pass| self.nearly_at(pass, &compare::normalize_all(pass, &old), expected))
    }

    /// Whether the hunk, placed at `expected`, matches there with up to [`MAX_FUZZ`] of its
    /// leading and trailing context lines left unchecked (at least one).
    fn fits_fuzzed_at(&self, hunk: &Hunk, expected: isize) -> bool {
        if expected < self.lo as isize {
            return false;
        }
        let (leading, trailing) = context_sides(&hunk.lines);
        for lead in 0..=leading.min(MAX_FUZZ) {
            for trail in 0..=trailing.min(MAX_FUZZ) {
                if lead + trail == 0 {
                    continue;
                }
                let old: Vec<&str> = old_lines(&hunk.lines[lead..hunk.lines.len() - trail]).collect();
                if old.is_empty() {
                    continue;
                }
                let at = expected as usize + lead;
                let fits = compare::NUMBERED
                    .iter()
                    .any(|&pass| self.view.matches_at(pass, at, &compare::normalize_all(pass, &old)));
                if fits {
                    return true;
                }
            }
        }
        false
    }

    /// The context lines a fuzzed hunk left unchecked (`lead` before its lines placed at `at`,
    /// `trail` after) that differ from the file.
    fn ignored(&self, hunk: &Hunk, at: usize, lead: usize, trail: usize) -> Vec<Mismatch> {
        let placed = &hunk.lines[lead..hunk.lines.len() - trail];
        let end = at + old_lines(placed).count();
        let before = (0..lead).filter_map(|i| Some((at.checked_sub(lead - i)?, &hunk.lines[i])));
        let after = (0..trail).map(|i| (end + i, &hunk.lines[hunk.lines.len() - trail + i]));
        before
            .chain(after)
            .filter_map(|(line, hunk_line)| {
                let HunkLine::Context(text) = hunk_line else { return None };
                let file = if line < self.view.len() { self.view.raw(line) } else { "" };
                let differs =
                    Pass::Collapse.normalize(file) != Pass::Collapse.normalize(text) || line >= self.view.len();
                differs.then(|| Mismatch {
                    line: line + 1,
                    file: shorten(file),
                    patch: shorten(text.strip_suffix('\r').unwrap_or(text)),
                })
            })
            .collect()
    }

    /// The match nearest to `expected`, looking above and below alike, as GNU patch does.
    fn nearest(&self, pass: Pass, pattern: &[Cow<'_, str>], expected: isize, must_end: bool) -> Nearest {
        let (n, k) = (self.view.len(), pattern.len());
        if k > n || self.lo > n - k {
            return Nearest::None;
        }
        let (lo, hi) = (self.lo as isize, (n - k) as isize);
        if must_end {
            // `\ No newline at end of file`: the hunk's old lines end the file.
            return if self.view.matches_at(pass, n - k, pattern) { Nearest::One(n - k) } else { Nearest::None };
        }
        let fits = |at: isize| lo <= at && at <= hi && self.view.matches_at(pass, at as usize, pattern);
        // Only the distances that reach a line between `lo` and `hi`.
        let nearest = (lo - expected).max(expected - hi).max(0);
        let farthest = (expected - lo).max(hi - expected);
        for distance in nearest..=farthest {
            let above = expected - distance;
            let below = expected + distance;
            match (fits(above), distance > 0 && fits(below)) {
                (true, true) => return Nearest::Tie(above as usize, below as usize),
                (true, false) => return Nearest::One(above as usize),
                (false, true) => return Nearest::One(below as usize),
                (false, false) => {}
            }
        }
        Nearest::None
    }

    fn searched<'h>(&self, hunk: &'h Hunk, anchors: &[String], end_of_file: bool) -> Result<Placed<'h>, PatchError> {
        let mut from = self.lo;
        let mut last_anchor: Option<(&str, Vec<usize>)> = None;
        for (i, anchor) in anchors.iter().enumerate() {
            let hits = self.find_anchor(anchor, from);
            let Some(&first) = hits.first() else {
                return Err(self.anchor_not_found(anchor, from));
            };
            if i + 1 < anchors.len() {
                from = first + 1;
            } else {
                last_anchor = Some((anchor, hits));
            }
        }
        let mut lines = hunk.lines.as_slice();
        loop {
            let old: Vec<&str> = old_lines(lines).collect();
            match self.search(&old, from, last_anchor.as_ref().map(|(_, hits)| hits.as_slice()), end_of_file) {
                Search::Found(at, pass) => {
                    let strategy = if pass == Pass::Exact { "context" } else { pass.strategy() };
                    return Ok(Placed { at, lines, strategy, offset: None, fuzz: 0, ignored: Vec::new() });
                }
                Search::Append => {
                    return Ok(Placed {
                        at: self.view.len(),
                        lines,
                        strategy: "append",
                        offset: None,
                        fuzz: 0,
                        ignored: Vec::new(),
                    });
                }
                Search::Ambiguous(places, pass) => {
                    let below = last_anchor
                        .as_ref()
                        .map_or_else(String::new, |(anchor, _)| format!(", each below a line matching `@@ {anchor}`"));
                    let message = format!(
                        "fits at lines {} ({}){below}: add an `@@ <line above the change, such as the enclosing \
                         function's signature>` header or more context lines so that it fits one place only",
                        list(&places),
                        pass.describe()
                    );
                    return Err(self.ambiguous(places, message));
                }
                Search::NotFound => {
                    // Models end a hunk with a blank context line for the file's final newline
                    // (codex does the same retry).
                    if old.len() > 1 && matches!(lines.last(), Some(HunkLine::Context(text)) if text.trim().is_empty())
                    {
                        lines = &lines[..lines.len() - 1];
                        continue;
                    }
                    let old: Vec<&str> = hunk.old_lines().collect();
                    let anchor = last_anchor.as_ref().and_then(|(anchor, hits)| Some((*anchor, *hits.first()?)));
                    return Err(self.not_found_searched(&old, from, anchor));
                }
            }
        }
    }

    /// Where `old` is, at or after `from`: from each anchor hit on when there are anchors (the
    /// first fit from each; different fits from different hits are ambiguous), else the only fit
    /// at the first pass that finds any.
    fn search(&self, old: &[&str], from: usize, anchor_hits: Option<&[usize]>, end_of_file: bool) -> Search {
        let n = self.view.len();
        if old.is_empty() {
            return match anchor_hits {
                // Right below the `@@` line.
                Some([hit]) => Search::Found(hit + 1, Pass::Exact),
                Some(hits) => Search::Ambiguous(hits.to_vec(), Pass::Exact),
                // Nothing to anchor on: append, as codex does.
                None => Search::Append,
            };
        }
        if old.len() > n {
            return Search::NotFound;
        }
        let last = n - old.len();
        if end_of_file {
            let start = anchor_hits.and_then(|hits| hits.first()).map_or(from, |hit| *hit);
            if last < start {
                return Search::NotFound;
            }
            return match self.first_fit(old, last, last) {
                Some((at, pass)) => Search::Found(at, pass),
                None => Search::NotFound,
            };
        }
        match anchor_hits {
            Some(hits) => {
                let mut places: Vec<(usize, Pass)> = Vec::new();
                // From the anchor line itself: models often repeat it as the first context line.
                for &hit in hits {
                    if let Some(place) = self.first_fit(old, hit, last)
                        && !places.iter().any(|(at, _)| *at == place.0)
                    {
                        places.push(place);
                    }
                }
                match places.as_slice() {
                    [] => Search::NotFound,
                    [(at, pass)] => Search::Found(*at, *pass),
                    [(_, pass), ..] => Search::Ambiguous(places.iter().map(|(at, _)| *at).collect(), *pass),
                }
            }
            None => {
                if from > last {
                    return Search::NotFound;
                }
                for &pass in compare::SEARCHED {
                    let pattern = compare::normalize_all(pass, old);
                    let hits = self.view.find_all(pass, &pattern, from, last, 10);
                    match hits.as_slice() {
                        [] => {}
                        [at] => return Search::Found(*at, pass),
                        _ => return Search::Ambiguous(hits, pass),
                    }
                }
                Search::NotFound
            }
        }
    }

    /// The first index in `from..=to` where `old` fits, at the first pass that finds one.
    fn first_fit(&self, old: &[&str], from: usize, to: usize) -> Option<(usize, Pass)> {
        if from > to {
            return None;
        }
        compare::SEARCHED.iter().find_map(|&pass| {
            let pattern = compare::normalize_all(pass, old);
            self.view.find_all(pass, &pattern, from, to, 1).first().map(|&at| (at, pass))
        })
    }

    /// The lines at or after `from` matching an `@@` anchor under any pass (a line matching only
    /// ignoring whitespace may be the one the model meant, so it stays a candidate); only when
    /// none does, the lines that contain it.
    fn find_anchor(&self, anchor: &str, from: usize) -> Vec<usize> {
        let n = self.view.len();
        if from >= n {
            return Vec::new();
        }
        let find = |pass: Pass| self.view.find_all(pass, &[pass.normalize(anchor)], from, n - 1, 50);
        let mut hits: Vec<usize> = compare::SEARCHED.iter().flat_map(|&pass| find(pass)).collect();
        hits.sort_unstable();
        hits.dedup();
        if hits.is_empty() {
            hits = find(Pass::Contains);
        }
        hits
    }

    fn ambiguous(&self, places: Vec<usize>, detail: String) -> PatchError {
        PatchError::Ambiguous {
            path: self.path.to_owned(),
            hunk: self.number,
            candidates: places.iter().map(|at| at + 1).collect(),
            message: format!("hunk {} of `{}` {detail}", self.number, self.path),
        }
    }

    fn insertion_out_of_range(&self, expected: isize) -> PatchError {
        let n = self.view.len();
        let detail = if expected > n as isize {
            format!("inserts after line {expected}, but the file has only {n} lines")
        } else {
            format!(
                "inserts after line {expected}, inside the lines hunk {} changes (up to line {}): hunks must be in \
                 file order and must not overlap",
                self.number - 1,
                self.lo
            )
        };
        PatchError::HunkFailed {
            path: self.path.to_owned(),
            hunk: self.number,
            expected_line: Some(expected.max(0) as usize + 1),
            closest: None,
            message: format!(
                "hunk {} of `{}` {detail}; regenerate the patch against the current file",
                self.number, self.path
            ),
        }
    }

    fn anchor_not_found(&self, anchor: &str, from: usize) -> PatchError {
        let after = if from > 0 { format!(" below line {from}, where the previous hunk ends") } else { String::new() };
        PatchError::AnchorNotFound {
            path: self.path.to_owned(),
            hunk: self.number,
            anchor: anchor.to_owned(),
            message: format!(
                "hunk {} of `{}`: its header `@@ {anchor}` matches no line of the file{after}; the text after `@@` \
                 must be a line of the file above the change (such as the enclosing function's signature), or \
                 leave it out",
                self.number, self.path
            ),
        }
    }

    fn not_found(&self, old: &[&str], expected: Option<isize>) -> PatchError {
        let expected = expected.unwrap_or(self.lo as isize);
        let closest = self.closest(old, self.lo, expected);
        let place = format!(
            "does not match at line {}{}",
            expected.max(0) + 1,
            if self.lo > 0 {
                format!(", nor anywhere below line {} where hunk {} ends", self.lo, self.number - 1)
            } else {
                ", nor anywhere else in the file".to_owned()
            }
        );
        let mut message = format!("hunk {} of `{}` {place}", self.number, self.path);
        self.explain(&mut message, old, closest.as_ref());
        message.push_str("; read the file again and regenerate the patch against its current content");
        PatchError::HunkFailed {
            path: self.path.to_owned(),
            hunk: self.number,
            expected_line: Some(expected.max(0) as usize + 1),
            closest: closest.map(Box::new),
            message,
        }
    }

    fn not_found_searched(&self, old: &[&str], from: usize, anchor: Option<(&str, usize)>) -> PatchError {
        let start = anchor.map_or(from, |(_, hit)| hit);
        let closest = self.closest(old, start, start as isize);
        let mut message = format!("hunk {} of `{}` was not found", self.number, self.path);
        if let Some((anchor, hit)) = anchor {
            message.push_str(&format!(" below `@@ {anchor}` (line {})", hit + 1));
        } else if from > 0 {
            message.push_str(&format!(" below line {from}, where the previous hunk ends"));
        }
        message.push_str(&format!(": its {} context and removed lines are not in the file", old.len()));
        self.explain(&mut message, old, closest.as_ref());
        message.push_str(
            "; copy the context and `-` lines exactly from the current file (read it again if it may have changed)",
        );
        PatchError::HunkFailed {
            path: self.path.to_owned(),
            hunk: self.number,
            expected_line: Some(start + 1),
            closest: closest.map(Box::new),
            message,
        }
    }

    /// Appends what resembles the hunk, and whether it sits before the previous hunk.
    fn explain(&self, message: &mut String, old: &[&str], closest: Option<&Closest>) {
        if let Some(closest) = closest {
            message.push_str(&format!(
                "; the closest text is at line {} ({} of {} lines match",
                closest.line, closest.matching, closest.total
            ));
            match &closest.mismatch {
                Some(m) if m.file.is_empty() && m.line > self.view.len() => {
                    message.push_str(&format!(", but the file ends before `{}`)", m.patch));
                }
                Some(m) => {
                    message.push_str(&format!("; line {} is `{}` where the patch has `{}`)", m.line, m.file, m.patch))
                }
                None => message.push_str(" when whitespace inside lines is ignored)"),
            }
        }
        if self.lo > 0 && !old.is_empty() && old.len() <= self.view.len() {
            let pattern = compare::normalize_all(Pass::Collapse, old);
            let last = self.lo.saturating_sub(1).min(self.view.len() - old.len());
            if let Some(&at) = self.view.find_all(Pass::Collapse, &pattern, 0, last, 1).first() {
                message.push_str(&format!(
                    "; it matches at line {}, above where hunk {} ends (line {}): hunks must be in file order and \
                     must not overlap",
                    at + 1,
                    self.number - 1,
                    self.lo
                ));
            }
        }
    }

    /// The window of the file at or after `from` sharing the most lines with `old` (whitespace
    /// ignored), nearest `expected` among equals.
    fn closest(&self, old: &[&str], from: usize, expected: isize) -> Option<Closest> {
        let n = self.view.len();
        if old.is_empty() || from >= n || n.saturating_mul(old.len()) > 20_000_000 {
            return None;
        }
        let pattern = compare::normalize_all(Pass::Collapse, old);
        let file = self.view.lines(Pass::Collapse);
        let score = |at: usize| pattern.iter().zip(&file[at..]).filter(|(want, have)| want == have).count();
        let (mut best_at, mut best_score) = (from, 0);
        for at in from..n {
            let s = score(at);
            let closer = expected.abs_diff(at as isize) < expected.abs_diff(best_at as isize);
            if s > best_score || s == best_score && s > 0 && closer {
                (best_at, best_score) = (at, s);
            }
        }
        if best_score == 0 {
            return None;
        }
        let mismatch =
            pattern.iter().enumerate().find(|(j, want)| file.get(best_at + j) != Some(want)).map(|(j, _)| {
                let line = best_at + j;
                Mismatch {
                    line: line + 1,
                    file: if line < n { shorten(self.view.raw(line)) } else { String::new() },
                    patch: shorten(old[j].strip_suffix('\r').unwrap_or(old[j])),
                }
            });
        Some(Closest { line: best_at + 1, matching: best_score, total: old.len(), mismatch })
    }
}

/// How many context lines a hunk has before its first change and after its last.
fn context_sides(lines: &[HunkLine]) -> (usize, usize) {
    let is_context = |line: &&HunkLine| matches!(line, HunkLine::Context(_));
    let leading = lines.iter().take_while(is_context).count();
    if leading == lines.len() {
        return (0, 0);
    }
    (leading, lines.iter().rev().take_while(is_context).count())
}

fn old_lines(lines: &[HunkLine]) -> impl Iterator<Item = &str> {
    lines.iter().filter_map(|line| match line {
        HunkLine::Context(text) | HunkLine::Remove(text) => Some(text.as_str()),
        HunkLine::Add(_) => None,
    })
}

/// `12, 40 and 77` (1-based), at most ten.
fn list(places: &[usize]) -> String {
    let shown: Vec<String> = places.iter().take(10).map(|at| (at + 1).to_string()).collect();
    match shown.split_last() {
        _ if places.len() > 10 => format!("{}, …", shown.join(", ")),
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        Some((last, _)) => last.clone(),
        None => String::new(),
    }
}

fn shorten(text: &str) -> String {
    crate::clip(text, 100)
}
