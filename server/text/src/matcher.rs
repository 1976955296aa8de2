//! Where an edit's `old_string` is in a text: exact, then a chain of fuzzy strategies, each of
//! which must find exactly one candidate.
//!
//! Order (strictest first): exact → line-number prefixes stripped (`read` output pasted back) →
//! trailing whitespace ignored → indentation-flexible (new text re-indented to the block) →
//! whitespace-normalized → escape-normalized (`\n`, `\t`, `\"` written literally) → Unicode
//! punctuation normalized → blank lines dropped or added → block anchor (first and last lines
//! anchor, the middle scored). The block anchor comes last, after the blank-line stage the issue
//! lists after it, because it is the only stage that accepts lines that differ in substance: every
//! stricter reading is tried first.
//!
//! Safety rules: a stage that finds two or more candidates stops the chain with
//! [`MatchError::Ambiguous`] (a looser stage would only find more); block-anchor needs both
//! anchors to be distinctive lines (not `}`, `end`, blank, ...), a block within a size guard of
//! `old_string`, and a similarity of at least [`BLOCK_ANCHOR_THRESHOLD`].

use std::borrow::Cow;
use std::fmt;

use crate::LineEnding;

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
    /// Lines equal but for their indentation; `new_string` was re-indented to match.
    IndentationFlexible,
    /// Lines equal once runs of whitespace are collapsed.
    WhitespaceNormalized,
    /// `old_string` had escape sequences (`\n`, `\t`, `\"`) where the file has the characters.
    EscapeNormalized,
    /// Lines equal once typographic punctuation is mapped to ASCII.
    UnicodeNormalized,
    /// Lines equal once blank lines are ignored.
    BlankLines,
    /// First and last lines equal, the middle similar enough.
    BlockAnchor,
}

impl Strategy {
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

/// A placed edit: replace `text[start..end]` with `replacement`.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// Start byte of the replaced region.
    pub start: usize,
    /// End byte of the replaced region.
    pub end: usize,
    /// What goes there: `new_string` with the file's line endings, re-indented or unescaped
    /// when the strategy calls for it.
    pub replacement: String,
    /// The stage that matched.
    pub strategy: Strategy,
    /// 1.0 for every stage but block-anchor, which reports its score.
    pub similarity: f64,
    /// 1-based line of `start`.
    pub line: usize,
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

/// Typographic punctuation to ASCII, as models often write it the other way round.
fn ascii_punctuation(line: &str) -> Cow<'_, str> {
    if line.is_ascii() {
        return Cow::Borrowed(line.trim_end());
    }
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => out.push('\''),
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => out.push('"'),
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}' | '\u{2212}' => out.push('-'),
            '\u{00A0}' | '\u{2007}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{3000}' => out.push(' '),
            '\u{2026}' => out.push_str("..."),
            c => out.push(c),
        }
    }
    Cow::Owned(out.trim_end().to_owned())
}

/// `\n`, `\t`, `\r`, `\"`, `\'`, `\\` and `` \` `` written as escapes, turned into the characters.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(q @ ('"' | '\'' | '\\' | '`')) => out.push(q),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
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

/// How a stage builds the replacement for a candidate.
type Replace<'a> = &'a dyn Fn(Candidate) -> String;

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

/// Candidates equal to the needle once blank lines are dropped from both, within a size guard.
fn blank_line_candidates(lines: &[Line<'_>], needle: &[&str]) -> Vec<Candidate> {
    let wanted: Vec<&str> = needle.iter().map(|l| l.trim_end()).filter(|l| !l.is_empty()).collect();
    if wanted.is_empty() {
        return Vec::new();
    }
    let max_count = needle.len() + needle.len() / 2 + 2;
    let mut found = Vec::new();
    for first in 0..lines.len() {
        if lines[first].text.trim_end() != wanted[0] {
            continue;
        }
        let (mut k, mut i) = (1, first + 1);
        while k < wanted.len() && i < lines.len() && i - first < max_count {
            let line = lines[i].text.trim_end();
            if line.is_empty() {
                i += 1;
                continue;
            }
            if line != wanted[k] {
                break;
            }
            k += 1;
            i += 1;
        }
        if k == wanted.len() {
            found.push(Candidate { first, count: i - first, similarity: 1.0 });
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

/// `new` re-indented the way the block's indentation differs from the needle's: each
/// indentation string seen on a needle line maps to the one on the block's line beside it; other
/// lines get the block's base indentation in place of the needle's.
fn reindent(new: &str, needle: &[&str], block: &[&str]) -> String {
    let mut map: Vec<(&str, &str)> = Vec::new();
    for (n, b) in needle.iter().zip(block) {
        if !n.trim().is_empty() && !map.iter().any(|(k, _)| k == &indent(n)) {
            map.push((indent(n), indent(b)));
        }
    }
    let base = |lines: &[&str]| -> String {
        lines
            .iter()
            .filter(|l| !l.trim().is_empty())
            .map(|l| indent(l))
            .min_by_key(|i| i.len())
            .unwrap_or("")
            .to_owned()
    };
    let (needle_base, block_base) = (base(needle), base(block));
    let mut out = String::with_capacity(new.len() + 16);
    for (i, line) in new.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        if line.trim().is_empty() {
            out.push_str(line);
            continue;
        }
        let own = indent(line);
        // The line beside it in old_string had the same indentation: take the block's line's.
        let beside = needle.get(i).zip(block.get(i)).filter(|(n, b)| indent(n) == own && !b.trim().is_empty());
        if let Some((_, b)) = beside {
            out.push_str(indent(b));
        } else if let Some((_, to)) = map.iter().find(|(from, _)| *from == own) {
            out.push_str(to);
        } else if let Some(rest) = own.strip_prefix(needle_base.as_str()) {
            out.push_str(&block_base);
            out.push_str(rest);
        } else {
            out.push_str(own);
        }
        out.push_str(line.trim_start());
    }
    out
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

fn to_match(
    text: &str,
    lines: &[Line<'_>],
    c: Candidate,
    trailing: bool,
    replacement: String,
    strategy: Strategy,
) -> Match {
    let last = lines[c.first + c.count - 1];
    let end = if trailing { last.next } else { last.end };
    Match {
        start: lines[c.first].start,
        end: end.min(text.len()),
        replacement,
        strategy,
        similarity: c.similarity,
        line: c.first + 1,
    }
}

/// One stage's verdict.
enum Stage {
    Found(Match),
    Next,
}

fn decide(
    text: &str,
    lines: &[Line<'_>],
    candidates: Vec<Candidate>,
    trailing: bool,
    strategy: Strategy,
    replacement: &dyn Fn(Candidate) -> String,
) -> Result<Stage, MatchError> {
    match candidates.len() {
        0 => Ok(Stage::Next),
        1 => {
            let c = candidates[0];
            Ok(Stage::Found(to_match(text, lines, c, trailing, replacement(c), strategy)))
        }
        _ => Err(MatchError::Ambiguous { strategy, lines: candidates.iter().map(|c| c.first + 1).collect() }),
    }
}

/// Finds the one place `old` (with `new` its replacement) belongs in `text`, whose line ending
/// is `ending`. `old` must not be empty.
pub fn find(text: &str, old: &str, new: &str, ending: LineEnding) -> Result<Match, MatchError> {
    // Exact, in the file's line endings first, then as given (files with mixed endings).
    let forms = [(ending.apply(old).into_owned(), ending.apply(new).into_owned()), (old.to_owned(), new.to_owned())];
    for (o, n) in &forms {
        let mut hits = text.match_indices(o.as_str()).map(|(i, _)| i);
        if let Some(first) = hits.next() {
            let rest: Vec<usize> = hits.collect();
            if rest.is_empty() {
                let line = memchr::memchr_iter(b'\n', &text.as_bytes()[..first]).count() + 1;
                return Ok(Match {
                    start: first,
                    end: first + o.len(),
                    replacement: n.clone(),
                    strategy: Strategy::Exact,
                    similarity: 1.0,
                    line,
                });
            }
            let mut lines = vec![first];
            lines.extend(rest);
            let lines = lines.iter().map(|p| memchr::memchr_iter(b'\n', &text.as_bytes()[..*p]).count() + 1).collect();
            return Err(MatchError::Ambiguous { strategy: Strategy::Exact, lines });
        }
    }

    let lines = split_lines(text);
    if let Some(stripped) = strip_line_numbers(old) {
        let new = strip_line_numbers(new).unwrap_or_else(|| new.to_owned());
        return match find(text, &stripped, &new, ending) {
            Ok(found) => Ok(Match { strategy: Strategy::LineNumbers, ..found }),
            Err(err) => Err(err),
        };
    }
    let (needle, trailing) = needle_lines(old);
    let new_converted = ending.apply(new).into_owned();
    let block_of = |c: Candidate| -> Vec<&str> { lines[c.first..c.first + c.count].iter().map(|l| l.text).collect() };
    let as_is = |_: Candidate| new_converted.clone();
    let reindented = |c: Candidate| ending.apply(&reindent(new, &needle, &block_of(c))).into_owned();

    // Stage by stage, each computed only when the stricter ones found nothing.
    // The model's drift is usually in new_string too: where the block has none of it, take it
    // out of the replacement (trailing whitespace, typographic punctuation).
    let trimmed = |c: Candidate| {
        let block = block_of(c);
        if block.iter().any(|l| l.trim_end().len() != l.len()) {
            return new_converted.clone();
        }
        let lines: Vec<&str> = new.split('\n').map(str::trim_end).collect();
        ending.apply(&lines.join("\n")).into_owned()
    };
    let ascii = |c: Candidate| {
        let block = block_of(c);
        if block.iter().any(|l| !l.is_ascii()) {
            return new_converted.clone();
        }
        let lines: Vec<String> = new.split('\n').map(|l| ascii_punctuation(l).into_owned()).collect();
        ending.apply(&lines.join("\n")).into_owned()
    };
    let stages: [(Strategy, Normalize, Replace<'_>); 4] = [
        (Strategy::TrailingWhitespace, trim_end, &trimmed),
        (Strategy::IndentationFlexible, trim, &reindented),
        (Strategy::WhitespaceNormalized, collapse_whitespace, &reindented),
        (Strategy::UnicodeNormalized, ascii_punctuation, &ascii),
    ];
    for (strategy, normalize, replacement) in stages {
        // Escapes come before Unicode punctuation, as the chain's order says.
        if strategy == Strategy::UnicodeNormalized {
            let unescaped = unescape(old);
            if unescaped != old {
                match find(text, &unescaped, &unescape(new), ending) {
                    Ok(found) => return Ok(Match { strategy: Strategy::EscapeNormalized, ..found }),
                    Err(MatchError::Ambiguous { lines, .. }) => {
                        return Err(MatchError::Ambiguous { strategy: Strategy::EscapeNormalized, lines });
                    }
                    Err(MatchError::NotFound { .. }) => {}
                }
            }
        }
        let candidates = line_candidates(&lines, &needle, normalize);
        if let Stage::Found(found) = decide(text, &lines, candidates, trailing, strategy, replacement)? {
            return Ok(found);
        }
    }
    let blank = blank_line_candidates(&lines, &needle);
    if let Stage::Found(found) = decide(text, &lines, blank, trailing, Strategy::BlankLines, &as_is)? {
        return Ok(found);
    }
    let anchored = anchor_candidates(&lines, &needle);
    if let Stage::Found(found) = decide(text, &lines, anchored, trailing, Strategy::BlockAnchor, &reindented)? {
        return Ok(found);
    }
    Err(MatchError::NotFound { closest: closest(text, old) })
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
