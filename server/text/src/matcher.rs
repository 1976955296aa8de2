//! Where an edit's `old_string` is in a text, and what goes there: exact, then a chain of fuzzy
//! stages, each of which must find exactly one candidate.
//!
//! Order (strictest first): exact → line-number prefixes stripped (`read` output pasted back) →
//! trailing whitespace ignored → indentation ignored → whitespace-normalized → escape-normalized
//! (`\n`, `\t`, `\"` written literally; decoded per kind, only the kinds the match needs, and
//! `new_string` as `old_string`: [`escapes`]) → Unicode punctuation normalized → blank lines
//! dropped or added → block anchor (first and last lines anchor, the middle scored).
//!
//! The rule: fuzzy stages forgive formatting, never content. A fuzzy stage only *locates* a
//! block; what is written there is a three-way apply ([`merge`]): the model's change
//! (`old_string` → `new_string`) carried onto the block, the block's own text kept on every line
//! the edit keeps. A line where `old_string` and the block differ in content (any difference but
//! whitespace and typographic punctuation; only the block anchor lets such lines through) is
//! forgiven when the edit keeps it, and the edit is refused ([`MatchError::Conflict`]) when the
//! edit removes or changes it. `new_string`'s indentation is taken in `old_string`'s frame or in
//! the file's, whichever it is written in ([`frame`]); in neither, the edit is refused
//! ([`MatchError::Indentation`]). Blank lines `old_string` lacked are put back as the file's and
//! go only where every reading of the edit's diff puts them (`merge.rs`). An edit the file already
//! holds is refused ([`MatchError::AlreadyApplied`]) and nothing is written.
//!
//! Safety rules of the chain: a stage that finds two or more candidates stops it with
//! [`MatchError::Ambiguous`] (a looser stage would only find more); block-anchor needs both
//! anchors to be distinctive lines (not `}`, `end`, blank, ...), a block within a size guard of
//! `old_string`, and a similarity of at least [`BLOCK_ANCHOR_THRESHOLD`].

mod escapes;
mod frame;
mod merge;

use std::borrow::Cow;
use std::fmt;

use crate::LineEnding;
use crate::typography::ascii_only;

/// Minimum similarity of the lines between the anchors for the block-anchor stage.
pub const BLOCK_ANCHOR_THRESHOLD: f64 = 0.8;
/// A text is searched line by line at most this far for the closest block (error messages).
const MAX_CLOSEST_SCAN_LINES: usize = 50_000;

/// The stage that placed an edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// Byte-exact (after converting `\n` to the file's line ending).
    Exact,
    /// `old_string` carried `read`'s line-number prefixes.
    LineNumbers,
    /// Lines equal but for trailing whitespace.
    TrailingWhitespace,
    /// Lines equal but for their indentation.
    IndentationFlexible,
    /// Lines equal once runs of whitespace are collapsed.
    WhitespaceNormalized,
    /// `old_string` had escape sequences (`\n`, `\t`, `\"`) where the file has the characters;
    /// the kinds it needed decoded were decoded in `new_string` too, no others.
    EscapeNormalized,
    /// Lines equal once typographic punctuation is mapped to ASCII.
    UnicodeNormalized,
    /// Lines equal once blank lines are ignored.
    BlankLines,
    /// First and last lines equal, the middle similar enough.
    BlockAnchor,
}

impl Strategy {
    /// The stage's place in the chain, strictest first.
    fn rank(self) -> usize {
        match self {
            Self::Exact => 0,
            Self::LineNumbers => 1,
            Self::TrailingWhitespace => 2,
            Self::IndentationFlexible => 3,
            Self::WhitespaceNormalized => 4,
            Self::EscapeNormalized => 5,
            Self::UnicodeNormalized => 6,
            Self::BlankLines => 7,
            Self::BlockAnchor => 8,
        }
    }

    /// The name reported in `metadata.strategy`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::LineNumbers => "line-numbers",
            Self::TrailingWhitespace => "line-trimmed",
            Self::IndentationFlexible => "indentation-flexible",
            Self::WhitespaceNormalized => "whitespace-normalized",
            Self::EscapeNormalized => "escape-normalized",
            Self::UnicodeNormalized => "unicode-normalized",
            Self::BlankLines => "blank-lines",
            Self::BlockAnchor => "block-anchor",
        }
    }
}

impl fmt::Display for Strategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Lines where the file and `old_string` differ in content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// 1-based line of the file where the file's lines start (where they would be, when the
    /// file has none).
    pub line: usize,
    /// The file's lines (may be empty: `old_string` has lines the file lacks).
    pub file: Vec<String>,
    /// `old_string`'s lines (may be empty: the file has lines `old_string` lacks).
    pub old: Vec<String>,
}

/// A placed edit: replace `text[start..end]` with `replacement`.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// Start byte of the replaced region.
    pub start: usize,
    /// End byte of the replaced region.
    pub end: usize,
    /// What goes there: for an exact match `new_string` with the file's line endings; for a
    /// fuzzy one, the three-way result (the file's own lines where the edit keeps them, the
    /// edit's new lines in the file's indentation).
    pub replacement: String,
    /// The stage that matched.
    pub strategy: Strategy,
    /// 1.0 for every stage but block-anchor, which reports its score.
    pub similarity: f64,
    /// 1-based line of `start`.
    pub line: usize,
    /// Lines the edit keeps whose content in the file differs from `old_string`: the file's
    /// text stayed there.
    pub forgiven: Vec<Difference>,
}

/// The most similar block, for "not found" errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Closest {
    /// 1-based first line.
    pub first_line: usize,
    /// 1-based last line.
    pub last_line: usize,
    /// Average line similarity in 0..=1.
    pub similarity: f64,
    /// The block's text.
    pub text: String,
}

/// Why an edit could not be placed.
#[derive(Clone, Debug, PartialEq)]
pub enum MatchError {
    /// No stage found it.
    NotFound {
        /// The most similar block, if any is similar at all.
        closest: Option<Closest>,
    },
    /// A stage found several candidates.
    Ambiguous {
        /// The stage.
        strategy: Strategy,
        /// 1-based first lines of the candidates.
        lines: Vec<usize>,
    },
    /// A stage found the block, but lines the edit removes or changes are not in the file as
    /// `old_string` has them.
    Conflict {
        /// The stage.
        strategy: Strategy,
        /// 1-based first line of the block.
        first_line: usize,
        /// 1-based last line of the block.
        last_line: usize,
        /// The lines that differ.
        differences: Vec<Difference>,
    },
    /// The block's indentation differs from `old_string`'s, and `new_string`'s fits neither.
    Indentation {
        /// The stage.
        strategy: Strategy,
        /// 1-based first line of the block.
        first_line: usize,
        /// Common indentation of `old_string`.
        old: String,
        /// Common indentation of the file's block.
        file: String,
        /// Common indentation of `new_string`.
        new: String,
    },
    /// The file already holds `new_string` where `old_string` would have matched.
    AlreadyApplied {
        /// How `new_string` was found.
        strategy: Strategy,
        /// 1-based first line of where the file holds it.
        line: usize,
    },
}

/// A line of the searched text.
#[derive(Clone, Copy, Debug)]
struct Line<'a> {
    start: usize,
    /// End of the content (before `\r\n` / `\n`).
    end: usize,
    /// After the terminator.
    next: usize,
    text: &'a str,
}

fn split_lines(text: &str) -> Vec<Line<'_>> {
    let mut lines = Vec::new();
    let mut start = 0;
    let bytes = text.as_bytes();
    for newline in memchr::memchr_iter(b'\n', bytes) {
        let end = if newline > start && bytes[newline - 1] == b'\r' { newline - 1 } else { newline };
        lines.push(Line { start, end, next: newline + 1, text: &text[start..end] });
        start = newline + 1;
    }
    if start < text.len() {
        lines.push(Line { start, end: text.len(), next: text.len(), text: &text[start..] });
    }
    lines
}

/// `old_string` as lines (terminators and a trailing `\r` removed), and whether it ended with
/// a line break.
fn needle_lines(old: &str) -> (Vec<&str>, bool) {
    let trailing = old.ends_with('\n');
    let body = if trailing { &old[..old.len() - 1] } else { old };
    (body.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect(), trailing)
}

fn indent(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

fn trim_end(line: &str) -> Cow<'_, str> {
    Cow::Borrowed(line.trim_end())
}

fn trim(line: &str) -> Cow<'_, str> {
    Cow::Borrowed(line.trim())
}

fn collapse_whitespace(line: &str) -> Cow<'_, str> {
    let trimmed = line.trim();
    let collapsed = trimmed.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed == trimmed { Cow::Borrowed(trimmed) } else { Cow::Owned(collapsed) }
}

/// [`ascii_only`](crate::typography::ascii_only), trailing whitespace removed.
fn ascii_punctuation(line: &str) -> Cow<'_, str> {
    match ascii_only(line) {
        Cow::Borrowed(line) => Cow::Borrowed(line.trim_end()),
        Cow::Owned(line) => Cow::Owned(line.trim_end().to_owned()),
    }
}

/// A line's content: what is left when formatting is ignored (runs of whitespace, indentation,
/// typographic punctuation). Two lines with different keys differ in content.
fn key(line: &str) -> String {
    collapse_whitespace(&ascii_only(line)).into_owned()
}

/// Lines too common to anchor a block: closing brackets, keywords that end blocks, blank.
fn is_common_anchor(line: &str) -> bool {
    let line = line.trim();
    const COMMON: &[&str] = &[
        "",
        "}",
        "{",
        ")",
        "]",
        "};",
        "});",
        "})",
        ");",
        "],",
        "},",
        ")",
        "end",
        "fi",
        "done",
        "esac",
        "else",
        "else:",
        "else {",
        "} else {",
        "try:",
        "finally:",
        "return",
        "return;",
        "break;",
        "continue;",
        "pass",
        "*/",
        "/*",
        "//",
        "#",
        "\"\"\"",
        "'''",
        "```",
        "</div>",
        "<div>",
        "default:",
        "begin",
        "then",
        "do",
    ];
    COMMON.contains(&line) || line.chars().all(|c| !c.is_alphanumeric())
}

/// Dice coefficient of the char bigrams of two lines (trimmed), in 0..=1.
pub fn line_similarity(a: &str, b: &str) -> f64 {
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

/// A candidate block: `count` lines of the text starting at line index `first`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Candidate {
    first: usize,
    count: usize,
    similarity: f64,
}

/// How a stage compares lines.
type Normalize = for<'a> fn(&'a str) -> Cow<'a, str>;

/// Candidates whose lines equal the needle's line for line under `normalize`.
fn line_candidates(lines: &[Line<'_>], needle: &[&str], normalize: Normalize) -> Vec<Candidate> {
    if needle.is_empty() || needle.len() > lines.len() {
        return Vec::new();
    }
    let wanted: Vec<Cow<'_, str>> = needle.iter().map(|l| normalize(l)).collect();
    let mut found = Vec::new();
    for first in 0..=lines.len() - needle.len() {
        if normalize(lines[first].text) != wanted[0] {
            continue;
        }
        if (1..needle.len()).all(|k| normalize(lines[first + k].text) == wanted[k]) {
            found.push(Candidate { first, count: needle.len(), similarity: 1.0 });
        }
    }
    found
}

/// Candidates equal to the needle under `normalize` once blank lines are dropped from both,
/// within a size guard.
fn blank_line_candidates(lines: &[Line<'_>], needle: &[&str], normalize: Normalize) -> Vec<Candidate> {
    let wanted: Vec<Cow<'_, str>> = needle.iter().map(|l| normalize(l)).filter(|l| !l.trim().is_empty()).collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let max_count = needle.len() + needle.len() / 2 + 2;
    let mut found = Vec::new();
    for first in 0..lines.len() {
        if normalize(lines[first].text) != wanted[0] {
            continue;
        }
        let (mut k, mut i) = (1, first + 1);
        while k < wanted.len() && i < lines.len() && i - first < max_count {
            if lines[i].text.trim().is_empty() {
                i += 1;
                continue;
            }
            if normalize(lines[i].text) != wanted[k] {
                break;
            }
            k += 1;
            i += 1;
        }
        if k == wanted.len() {
            // Blank lines old_string starts or ends with: as many of the file's, where it has them.
            let blank = |line: &Line<'_>| line.text.trim().is_empty();
            let leading = needle.iter().take_while(|l| l.trim().is_empty()).count();
            let trailing = needle.iter().rev().take_while(|l| l.trim().is_empty()).count();
            let above = lines[..first].iter().rev().take_while(|l| blank(l)).count().min(leading);
            let below = lines[i..].iter().take_while(|l| blank(l)).count().min(trailing);
            found.push(Candidate { first: first - above, count: i - first + above + below, similarity: 1.0 });
        }
    }
    found
}

/// Block-anchor candidates: first and last lines equal (trimmed), both distinctive, the block
/// within a size guard, the middle at least [`BLOCK_ANCHOR_THRESHOLD`] similar.
fn anchor_candidates(lines: &[Line<'_>], needle: &[&str]) -> Vec<Candidate> {
    // Two anchors and at least two lines between them: with a single middle line, a changed
    // value there (the very thing an edit may be about) would pass as "similar".
    if needle.len() < 4 {
        return Vec::new();
    }
    let (head, tail) = (needle[0].trim(), needle[needle.len() - 1].trim());
    // A common line (`}`, `end`, blank) may support an anchor but never anchors alone.
    if is_common_anchor(head) && is_common_anchor(tail) {
        return Vec::new();
    }
    let slack = (needle.len() / 4).max(2);
    let (min_count, max_count) = (needle.len().saturating_sub(slack).max(3), needle.len() + slack);
    let middle: String = needle[1..needle.len() - 1].iter().map(|l| l.trim()).collect::<Vec<_>>().join("\n");
    let mut found = Vec::new();
    for first in 0..lines.len() {
        if lines[first].text.trim() != head {
            continue;
        }
        // Several ends for one start (`}` closes inner blocks too): keep the most similar.
        let mut best: Option<Candidate> = None;
        for count in min_count..=max_count {
            let last = first + count - 1;
            if last >= lines.len() {
                break;
            }
            if lines[last].text.trim() != tail {
                continue;
            }
            let block: String = lines[first + 1..last].iter().map(|l| l.text.trim()).collect::<Vec<_>>().join("\n");
            let similarity = similar::TextDiff::from_chars(middle.as_str(), block.as_str()).ratio() as f64;
            if similarity >= BLOCK_ANCHOR_THRESHOLD && best.is_none_or(|b| similarity > b.similarity) {
                best = Some(Candidate { first, count, similarity });
            }
        }
        found.extend(best);
    }
    found
}

/// The needle with `read`'s `cat -n` prefixes (`   12\t`) removed, if every non-empty line has one.
fn strip_line_numbers(text: &str) -> Option<String> {
    let mut any = false;
    let mut out = Vec::new();
    for line in text.split('\n') {
        if line.is_empty() {
            out.push(line);
            continue;
        }
        let (number, rest) = line.split_once('\t')?;
        if number.trim().is_empty() || !number.trim().chars().all(|c| c.is_ascii_digit()) {
            return None;
        }
        any = true;
        out.push(rest);
    }
    any.then(|| out.join("\n"))
}

/// The strings an exact match looks for, in order: `old` and `new` in the file's line endings,
/// then as given (files with mixed endings); one form when the endings change nothing.
fn exact_forms(old: &str, new: &str, ending: LineEnding) -> Vec<(String, String)> {
    let mut forms = vec![(ending.apply(old).into_owned(), ending.apply(new).into_owned())];
    if forms[0].0 != old || forms[0].1 != new {
        forms.push((old.to_owned(), new.to_owned()));
    }
    forms
}

/// How much text the exact search looks at before counting its lines (see [`occurrences`]):
/// small enough to stay in the CPU's cache between the two.
const SEARCH_WINDOW: usize = 256 * 1024;

/// Every exact occurrence of `needle` in `text` that `memmem::find_iter` gives (leftmost first,
/// none overlapping), and the line of the first. The first is looked for window by window, and
/// each window's lines are counted right after the search went over it, while it is in the
/// cache: on a big file, counting the lines before the first occurrence in a pass of its own
/// costs as much as the search.
fn occurrences(text: &str, needle: &str) -> (Vec<usize>, usize) {
    occurrences_in(text.as_bytes(), needle.as_bytes(), SEARCH_WINDOW)
}

fn occurrences_in(text: &[u8], needle: &[u8], window: usize) -> (Vec<usize>, usize) {
    let finder = memchr::memmem::Finder::new(needle);
    let (mut from, mut newlines) = (0, 0);
    while from < text.len() {
        let end = (from + window).min(text.len());
        // Any occurrence that starts before `end` lies within this slice, and the leftmost one
        // in it is the leftmost from `from` on.
        let slice = &text[from..(end + needle.len().saturating_sub(1)).min(text.len())];
        if let Some(at) = finder.find(slice) {
            let first = from + at;
            newlines += memchr::memchr_iter(b'\n', &text[from..first]).count();
            let mut hits = vec![first];
            let after = first + needle.len();
            hits.extend(finder.find_iter(&text[after..]).map(|at| after + at));
            return (hits, newlines + 1);
        }
        newlines += memchr::memchr_iter(b'\n', &text[from..end]).count();
        from = end;
    }
    (Vec::new(), newlines + 1)
}

fn line_at(text: &str, byte: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..byte]).count() + 1
}

/// Exact `old` at `start..end` lies inside an exact `new` the text already holds: the edit
/// (which only adds around `old`) is there already.
fn holds_new_around(text: &str, start: usize, end: usize, old: &str, new: &str) -> bool {
    new.len() > old.len()
        && new.match_indices(old).any(|(at, _)| {
            let (before, after) = (&new[..at], &new[at + old.len()..]);
            text[..start].ends_with(before) && text[end..].starts_with(after)
        })
}

/// The text split into lines, `old_string` and `new_string` as lines: what the fuzzy stages
/// work on.
struct Fuzzy<'t> {
    text: &'t str,
    lines: Vec<Line<'t>>,
    needle: Vec<&'t str>,
    trailing: bool,
    new: Vec<&'t str>,
    new_trailing: bool,
    eol: &'static str,
}

impl<'t> Fuzzy<'t> {
    /// The three-way apply of the edit at candidate `c`, placed by `strategy`.
    fn apply(&self, c: Candidate, strategy: Strategy) -> Result<Match, MatchError> {
        let block_lines = &self.lines[c.first..c.first + c.count];
        let block: Vec<&str> = block_lines.iter().map(|l| l.text).collect();
        let merged = merge::merge(&self.needle, &block, &self.new).map_err(|refusal| match refusal {
            merge::Refusal::Conflict(differences) => MatchError::Conflict {
                strategy,
                first_line: c.first + 1,
                last_line: c.first + c.count,
                differences: differences.into_iter().map(|d| Difference { line: d.line + c.first + 1, ..d }).collect(),
            },
            merge::Refusal::Frame(misfit) => MatchError::Indentation {
                strategy,
                first_line: c.first + 1,
                old: misfit.old,
                file: misfit.file,
                new: misfit.new,
            },
        })?;
        let last = block_lines[block_lines.len() - 1];
        let region_end = if self.trailing { last.next } else { last.end };
        let region_terminator = &self.text[last.end..last.next];
        let mut replacement = String::new();
        let count = merged.out.len();
        for (k, out) in merged.out.iter().enumerate() {
            let (line, own) = match out {
                merge::Out::Block(j) | merge::Out::Repaired(j) => {
                    let line = block_lines[*j];
                    (line.text, &self.text[line.end..line.next])
                }
                merge::Out::New(line) => (line.as_str(), ""),
            };
            replacement.push_str(line);
            let own = if own.is_empty() { self.eol } else { own };
            let terminator = match (k + 1 == count, self.trailing, self.new_trailing) {
                (false, _, _) => own,
                (true, true, true) => region_terminator,
                (true, false, true) => self.eol,
                (true, _, false) => "",
            };
            replacement.push_str(terminator);
        }
        let (start, end) = (block_lines[0].start, region_end.min(self.text.len()));
        if self.text[start..end] == replacement {
            return Err(MatchError::AlreadyApplied { strategy, line: c.first + 1 });
        }
        Ok(Match {
            start,
            end,
            replacement,
            strategy,
            similarity: c.similarity,
            line: c.first + 1,
            forgiven: merged.forgiven.into_iter().map(|d| Difference { line: d.line + c.first + 1, ..d }).collect(),
        })
    }

    /// One stage's candidates: none → the next stage; one → applied (unless it lies where the
    /// file holds new_string already); more → ambiguous.
    fn decide(&self, candidates: Vec<Candidate>, strategy: Strategy) -> Result<Option<Match>, MatchError> {
        match candidates.as_slice() {
            [] => Ok(None),
            [c] if self.new_covers(*c, strategy) => Err(MatchError::AlreadyApplied { strategy, line: c.first + 1 }),
            // A loose fit for old_string while the file holds new_string somewhere else: the edit
            // may be made already there, or still due here; which one is a guess, so ask.
            [c] if strategy != Strategy::Exact
                && let Some((line, _)) = self.holds_new()
                && line != c.first + 1 =>
            {
                Err(MatchError::Ambiguous { strategy, lines: vec![c.first + 1, line] })
            }
            // Indentation, whitespace or punctuation forgiven here, blank lines forgiven there:
            // neither stage is looser than the other, so which place old_string means is a guess.
            [c] if let Some(other) = self.blank_lines_elsewhere(*c, strategy) => {
                Err(MatchError::Ambiguous { strategy, lines: vec![c.first + 1, other.first + 1] })
            }
            [c] => self.apply(*c, strategy).map(Some),
            _ => Err(MatchError::Ambiguous { strategy, lines: candidates.iter().map(|c| c.first + 1).collect() }),
        }
    }

    /// For a line stage's one candidate `c`: a place elsewhere that the blank-lines stage would
    /// take (old_string's lines as they are, blank lines dropped or added), if there is one.
    fn blank_lines_elsewhere(&self, c: Candidate, strategy: Strategy) -> Option<Candidate> {
        let line_stage = matches!(
            strategy,
            Strategy::TrailingWhitespace
                | Strategy::IndentationFlexible
                | Strategy::WhitespaceNormalized
                | Strategy::UnicodeNormalized
        );
        if !line_stage {
            return None;
        }
        // The stage's own fit, found again (its blank lines as old_string has them), is no other.
        let same = |b: &Candidate| b.first == c.first && b.count == c.count;
        blank_line_candidates(&self.lines, &self.needle, trim_end).into_iter().find(|b| !same(b))
    }

    /// Where the file holds `new_string` modulo formatting, when the edit adds or changes a
    /// distinctive line (an edit that only deletes leaves nothing to recognise).
    fn holds_new(&self) -> Option<(usize, Strategy)> {
        let old_keys: Vec<String> = self.needle.iter().map(|l| key(l)).collect();
        let adds = self.new.iter().any(|l| !is_common_anchor(l) && !old_keys.contains(&key(l)));
        if !adds {
            return None;
        }
        let stages: [(Strategy, Normalize); 4] = [
            (Strategy::Exact, |l| Cow::Borrowed(l)),
            (Strategy::IndentationFlexible, trim),
            (Strategy::WhitespaceNormalized, collapse_whitespace),
            (Strategy::UnicodeNormalized, ascii_punctuation),
        ];
        for (strategy, normalize) in stages {
            if let Some(c) = line_candidates(&self.lines, &self.new, normalize).first() {
                return Some((c.first + 1, strategy));
            }
        }
        blank_line_candidates(&self.lines, &self.new, trim_end).first().map(|c| (c.first + 1, Strategy::BlankLines))
    }

    /// The block `c`, placed by `strategy`, lies inside a place where the file holds
    /// `new_string` modulo formatting (an edit that adds lines around `old_string`, applied
    /// before): line for line (not for the blank-lines stage, which ignores the blank lines an
    /// edit may add), or, when the edit adds lines with content, with blank lines ignored (the
    /// lines `old_string` was placed on may then be lines new_string added).
    fn new_covers(&self, c: Candidate, strategy: Strategy) -> bool {
        let keys = |lines: &[&str]| -> Vec<String> { lines.iter().map(|l| key(l)).collect() };
        let (old_keys, new_keys) = (keys(&self.needle), keys(&self.new));
        let solid = |keys: &[String]| keys.iter().filter(|k| !k.is_empty()).count();
        let line_for_line =
            strategy != Strategy::BlankLines && old_keys != new_keys && self.new.len() > self.needle.len();
        let adds_content = solid(&new_keys) > solid(&old_keys);
        if !line_for_line && !adds_content {
            return false;
        }
        let reach = 2 * self.new.len() + 2;
        let from = c.first.saturating_sub(reach);
        let to = (c.first + c.count + reach).min(self.lines.len());
        let window = &self.lines[from..to];
        let covers = |w: &Candidate| w.first + from <= c.first && w.first + from + w.count >= c.first + c.count;
        line_for_line && line_candidates(window, &self.new, collapse_whitespace).iter().any(covers)
            || adds_content && blank_line_candidates(window, &self.new, collapse_whitespace).iter().any(covers)
    }
}

/// Finds the one place `old` (with `new` its replacement) belongs in `text`, whose line ending
/// is `ending`, and what goes there. `old` must not be empty.
pub fn find(text: &str, old: &str, new: &str, ending: LineEnding) -> Result<Match, MatchError> {
    match locate(text, old, new, ending, Chain::Full) {
        Err(MatchError::NotFound { .. }) => Err(MatchError::NotFound { closest: closest(text, old) }),
        found => found,
    }
}

/// How much of the chain runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Chain {
    /// All of it.
    Full,
    /// For one reading of `old_string`'s escapes (the escape-normalized stage): the stages that
    /// forgive formatting only. Escapes left in the reading are the code's, and a reading that
    /// matches only with content forgiven (the block anchor) is not how `old_string` was meant.
    Reading,
}

/// [`find`] without the closest block on `NotFound`.
fn locate(text: &str, old: &str, new: &str, ending: LineEnding, chain: Chain) -> Result<Match, MatchError> {
    // Exact, in the file's line endings first, then as given (files with mixed endings).
    for (o, n) in &exact_forms(old, new, ending) {
        // memmem's vectorised search: many times faster than `str::match_indices` on big files.
        let (hits, line) = occurrences(text, o);
        if let Some(&first) = hits.first() {
            if hits.len() == 1 {
                if o == n || holds_new_around(text, first, first + o.len(), o, n) {
                    return Err(MatchError::AlreadyApplied { strategy: Strategy::Exact, line });
                }
                return Ok(Match {
                    start: first,
                    end: first + o.len(),
                    replacement: n.clone(),
                    strategy: Strategy::Exact,
                    similarity: 1.0,
                    line,
                    forgiven: Vec::new(),
                });
            }
            let lines = hits.iter().map(|p| line_at(text, *p)).collect();
            return Err(MatchError::Ambiguous { strategy: Strategy::Exact, lines });
        }
    }

    if let Some(stripped) = strip_line_numbers(old) {
        let new = strip_line_numbers(new).unwrap_or_else(|| new.to_owned());
        return match locate(text, &stripped, &new, ending, chain) {
            Ok(found) => Ok(Match { strategy: Strategy::LineNumbers, ..found }),
            Err(err) => Err(err),
        };
    }
    let (needle, trailing) = needle_lines(old);
    let (new_lines, new_trailing) = if new.is_empty() { (Vec::new(), false) } else { needle_lines(new) };
    let fuzzy = Fuzzy {
        text,
        lines: split_lines(text),
        needle,
        trailing,
        new: new_lines,
        new_trailing,
        eol: match ending {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
        },
    };

    let stages: [(Strategy, Normalize); 4] = [
        (Strategy::TrailingWhitespace, trim_end),
        (Strategy::IndentationFlexible, trim),
        (Strategy::WhitespaceNormalized, collapse_whitespace),
        (Strategy::UnicodeNormalized, ascii_punctuation),
    ];
    for (strategy, normalize) in stages {
        // Escapes come before Unicode punctuation, as the chain's order says.
        if strategy == Strategy::UnicodeNormalized
            && chain == Chain::Full
            && let Some(found) = escapes::find(text, old, new, ending)?
        {
            return Ok(found);
        }
        let candidates = line_candidates(&fuzzy.lines, &fuzzy.needle, normalize);
        if let Some(found) = fuzzy.decide(candidates, strategy)? {
            return Ok(found);
        }
    }
    let blank = blank_line_candidates(&fuzzy.lines, &fuzzy.needle, trim_end);
    if let Some(found) = fuzzy.decide(blank, Strategy::BlankLines)? {
        return Ok(found);
    }
    // Nothing holds old_string but for formatting: if the file holds new_string, the edit was
    // made already, and the looser block anchor must not make it again.
    if let Some((line, strategy)) = fuzzy.holds_new() {
        return Err(MatchError::AlreadyApplied { strategy, line });
    }
    if chain == Chain::Reading {
        return Err(MatchError::NotFound { closest: None });
    }
    let anchored = anchor_candidates(&fuzzy.lines, &fuzzy.needle);
    if let Some(found) = fuzzy.decide(anchored, Strategy::BlockAnchor)? {
        return Ok(found);
    }
    Err(MatchError::NotFound { closest: None })
}

/// Every exact occurrence of `old` replaced by `new` (`replace_all`: never fuzzy, a fuzzy match
/// is never multiplied), in the file's line endings first, then as given.
pub fn replace_all(text: &str, old: &str, new: &str, ending: LineEnding) -> Result<ReplacedAll, MatchError> {
    // One vectorised pass finds every occurrence; the new text is then built at its final size.
    let found = exact_forms(old, new, ending).into_iter().find_map(|(o, n)| {
        let at: Vec<usize> =
            if o.is_empty() { Vec::new() } else { memchr::memmem::find_iter(text.as_bytes(), o.as_bytes()).collect() };
        (!at.is_empty()).then_some((o, n, at))
    });
    let Some((o, n, at)) = found else {
        return Err(MatchError::NotFound { closest: closest(text, old) });
    };
    let mut out = crate::memory::string(text.len() - at.len() * o.len() + at.len() * n.len());
    let mut kept_from = 0;
    for &i in &at {
        out.push_str(&text[kept_from..i]);
        out.push_str(&n);
        kept_from = i + o.len();
    }
    out.push_str(&text[kept_from..]);
    let start = at[0];
    Ok(ReplacedAll { text: out, count: at.len(), start, first_end: start + n.len(), line: line_at(text, start) })
}

/// The result of [`replace_all`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplacedAll {
    /// The whole new text.
    pub text: String,
    /// How many occurrences were replaced.
    pub count: usize,
    /// Byte where the first replacement starts (in the old and the new text alike).
    pub start: usize,
    /// Byte of the new text where the first replacement ends.
    pub first_end: usize,
    /// 1-based line of the first occurrence.
    pub line: usize,
}

/// The block of `text` most similar to `old` (at least half similar), for error messages.
pub fn closest(text: &str, old: &str) -> Option<Closest> {
    let (needle, _) = needle_lines(old);
    let lines: Vec<&str> = text.lines().take(MAX_CLOSEST_SCAN_LINES).collect();
    if needle.is_empty() || lines.is_empty() {
        return None;
    }
    let window = needle.len();
    let mut best: Option<(f64, usize)> = None;
    for start in 0..lines.len().saturating_sub(window - 1).max(1) {
        let end = (start + window).min(lines.len());
        let score =
            needle.iter().zip(&lines[start..end]).map(|(w, l)| line_similarity(w, l)).sum::<f64>() / window as f64;
        if best.is_none_or(|(b, _)| score > b) {
            best = Some((score, start));
        }
    }
    let (similarity, start) = best.filter(|(score, _)| *score >= 0.5)?;
    let end = (start + window).min(lines.len());
    Some(Closest { first_line: start + 1, last_line: end, similarity, text: lines[start..end].join("\n") })
}

#[cfg(test)]
mod tests;
