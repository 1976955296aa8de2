//! Line comparison passes, from exact to tolerant, and a file's lines normalized for each.
//!
//! A trailing `\r` never counts: a patch written with `\n` applies to a `\r\n` file and back.

use std::borrow::Cow;
use std::cell::OnceCell;

/// How two lines are compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pass {
    /// Byte for byte.
    Exact,
    /// Trailing whitespace ignored.
    TrimEnd,
    /// Every run of whitespace counts as one space; leading and trailing whitespace ignored.
    Collapse,
    /// Leading and trailing whitespace ignored.
    Trim,
    /// As `Trim`, and typographic punctuation (dashes, curly quotes, non-breaking spaces) read
    /// as its ASCII form: models retype code with them.
    Punct,
    /// The file's line contains the pattern (after `Punct` normalization). Only for `@@` anchors,
    /// which models often shorten (`@@ fn main` for `pub fn main() {`).
    Contains,
}

/// The passes for hunks that have line numbers (unified diffs).
pub(super) const NUMBERED: &[Pass] = &[Pass::Exact, Pass::TrimEnd, Pass::Collapse];
/// The passes for hunks found by search (`*** Begin Patch`).
pub(super) const SEARCHED: &[Pass] = &[Pass::Exact, Pass::TrimEnd, Pass::Trim, Pass::Punct];

const SLOTS: usize = 5;

impl Pass {
    fn slot(self) -> usize {
        match self {
            Self::Exact => 0,
            Self::TrimEnd => 1,
            Self::Collapse => 2,
            Self::Trim => 3,
            Self::Punct | Self::Contains => 4,
        }
    }

    /// `line` as this pass sees it.
    pub(super) fn normalize(self, line: &str) -> Cow<'_, str> {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match self {
            Self::Exact => Cow::Borrowed(line),
            Self::TrimEnd => Cow::Borrowed(line.trim_end()),
            Self::Trim => Cow::Borrowed(line.trim()),
            Self::Collapse => {
                let trimmed = line.trim();
                if !trimmed.contains("  ") && !trimmed.contains(|c: char| c.is_whitespace() && c != ' ') {
                    // Already single spaces only.
                    Cow::Borrowed(trimmed)
                } else {
                    Cow::Owned(trimmed.split_whitespace().collect::<Vec<_>>().join(" "))
                }
            }
            Self::Punct | Self::Contains => crate::typography::ascii_only(line.trim()),
        }
    }

    /// Whether a normalized file line matches a normalized pattern line.
    pub(super) fn matches(self, file: &str, pattern: &str) -> bool {
        match self {
            Self::Contains => !pattern.is_empty() && file.contains(pattern),
            _ => file == pattern,
        }
    }

    /// The strategy name reported for a hunk placed by this pass.
    pub(super) fn strategy(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::TrimEnd | Self::Collapse | Self::Trim => "whitespace",
            Self::Punct | Self::Contains => "punctuation",
        }
    }

    /// How the lines were compared, for messages.
    pub(super) fn describe(self) -> &'static str {
        match self {
            Self::Exact => "exactly",
            Self::TrimEnd => "ignoring trailing whitespace",
            Self::Collapse => "ignoring whitespace",
            Self::Trim => "ignoring indentation and trailing whitespace",
            Self::Punct => "ignoring whitespace and typographic punctuation",
            Self::Contains => "as part of a line",
        }
    }
}

/// A file's lines, normalized lazily once per pass.
pub(super) struct View<'a> {
    lines: Vec<&'a str>,
    normalized: [OnceCell<Vec<Cow<'a, str>>>; SLOTS],
}

impl<'a> View<'a> {
    pub(super) fn new(lines: Vec<&'a str>) -> Self {
        Self { lines, normalized: Default::default() }
    }

    pub(super) fn len(&self) -> usize {
        self.lines.len()
    }

    /// Line `index` as the file has it (without its terminator).
    pub(super) fn raw(&self, index: usize) -> &'a str {
        self.lines[index]
    }

    pub(super) fn lines(&self, pass: Pass) -> &[Cow<'a, str>] {
        self.normalized[pass.slot()].get_or_init(|| self.lines.iter().map(|line| pass.normalize(line)).collect())
    }

    /// Whether `pattern` (normalized for `pass`) matches the file at line index `at`.
    pub(super) fn matches_at(&self, pass: Pass, at: usize, pattern: &[Cow<'_, str>]) -> bool {
        let lines = self.lines(pass);
        at + pattern.len() <= lines.len()
            && pattern.iter().zip(&lines[at..]).all(|(want, have)| pass.matches(have, want))
    }

    /// Every index in `from..=to` where `pattern` matches, at most `limit` of them.
    pub(super) fn find_all(
        &self,
        pass: Pass,
        pattern: &[Cow<'_, str>],
        from: usize,
        to: usize,
        limit: usize,
    ) -> Vec<usize> {
        let mut found = Vec::new();
        let mut at = from;
        while at <= to && found.len() < limit {
            if self.matches_at(pass, at, pattern) {
                found.push(at);
            }
            at += 1;
        }
        found
    }
}

/// `lines` normalized for `pass`.
pub(super) fn normalize_all<'s>(pass: Pass, lines: &[&'s str]) -> Vec<Cow<'s, str>> {
    lines.iter().map(|line| pass.normalize(line)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passes_normalize_as_documented() {
        assert_eq!(Pass::Exact.normalize("a \r"), "a ");
        assert_eq!(Pass::TrimEnd.normalize("  a \t"), "  a");
        assert_eq!(Pass::Collapse.normalize("  a \t b  "), "a b");
        assert_eq!(Pass::Collapse.normalize("a b"), "a b");
        assert_eq!(Pass::Collapse.normalize("a\tb"), "a b");
        assert_eq!(Pass::Trim.normalize("  a  b "), "a  b");
        assert_eq!(
            Pass::Punct.normalize(" \u{201C}a\u{201D} \u{2014} \u{2018}b\u{2019}\u{00A0}c\u{2026}"),
            "\"a\" - 'b' c..."
        );
        assert!(Pass::Contains.matches("pub fn main() {", "fn main"));
        assert!(!Pass::Contains.matches("pub fn main() {", ""));
    }
}
