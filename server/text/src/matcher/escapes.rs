//! The escape-normalized stage: `old_string` written with escape sequences (`\n`, `\t`, `\"`,
//! ...) where the file has the characters, as a model escapes a string once too often.
//!
//! Escapes are decoded all or nothing per kind, and only the kinds the match needs: the kinds
//! `old_string` holds are tried as sets, each set's reading placed by the rest of the chain; the
//! strictest placement wins, among equals the one decoding the fewest kinds (readings placed at
//! different lines are ambiguous). `new_string` is then decoded exactly as `old_string` was:
//! a `\\` the code has of its own (`replace("'", "\\\\'")`) stays as written unless
//! `old_string` itself needed its `\\` decoded to match. Never guessed:
//!
//! - An escape of a kind `old_string` did not need is read by what the strings show. It is the
//!   code's own where the model writes that character as it is: the code's own escapes of that
//!   kind in `old_string`, or the character itself unescaped in either string (a `"`, a tab, a
//!   line break, a `\` before a letter that is no escape; a model that leaves `"` unescaped
//!   leaves `\` so too, as every string escaping treats them alike). A `\"` with no `"` in sight
//!   is the model's (the code's own `\"` sits inside a `"…"` string). Otherwise the edit reads
//!   two ways and is refused.
//! - `\\n` when only line breaks are decoded is the code's `\` before a line break (a
//!   continuation line) or the code's `\\n`: refused, unless `old_string` has it too (the file
//!   has it as written).
//! - A `\n` (or `\t`, `\r`) of `new_string` inside a quoted literal of its line (`b'\n'`,
//!   `"a\nb"`), unless `old_string` needed its `\\` decoded, is the code's own escape as
//!   much as a line break: refused, unless `old_string`'s escapes inside literals placed it
//!   (the file has literals across lines there).
//! - A line of `new_string` written exactly as a line of the matched block (indentation aside)
//!   is the file's text, and stays as written.
//!
//! A refused reading is reported as not found, with the matched block as the closest text.

use super::{Chain, Closest, Match, MatchError, Strategy, locate, split_lines};
use crate::LineEnding;

/// The escapes, by the character after the backslash, and what each stands for.
const ESCAPES: [(u8, char); 7] =
    [(b'n', '\n'), (b't', '\t'), (b'r', '\r'), (b'"', '"'), (b'\'', '\''), (b'\\', '\\'), (b'`', '`')];
const LINE_BREAK: usize = 0;
const TAB: usize = 1;
const RETURN: usize = 2;
const QUOTE: usize = 3;
const BACKSLASH: usize = 5;

/// A set of escape kinds: bit `i` is `ESCAPES[i]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Kinds(u8);

/// The kind of the escape starting at byte `at` (a backslash followed by one of [`ESCAPES`]).
/// Escapes are read left to right, each backslash with the character after it, so `\\n` is an
/// escaped backslash and an `n` whichever kinds are decoded. All bytes compared are ASCII, so a
/// byte index never splits a character.
fn kind_at(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes[at] != b'\\' {
        return None;
    }
    let next = *bytes.get(at + 1)?;
    ESCAPES.iter().position(|(c, _)| *c == next)
}

/// One piece of a text, as escapes are read.
enum Piece {
    /// An escape of kind `.0`; `.1`: the escape is `\\` and the character right after it is one
    /// of [`ESCAPES`]' (`\\n`: also readable as `\` and `\n`).
    Escape(usize, Option<usize>),
    /// Any other byte.
    Byte(u8),
}

/// The pieces of `text` with their byte offsets.
fn pieces(text: &str) -> impl Iterator<Item = (usize, Piece)> + '_ {
    let bytes = text.as_bytes();
    let mut at = 0;
    std::iter::from_fn(move || {
        let here = at;
        let byte = *bytes.get(here)?;
        Some(match kind_at(bytes, here) {
            Some(kind) => {
                at += 2;
                let after = (kind == BACKSLASH).then(|| bytes.get(at)).flatten();
                let follower = after.and_then(|next| ESCAPES.iter().position(|(c, _)| c == next));
                (here, Piece::Escape(kind, follower))
            }
            None => {
                at += 1;
                (here, Piece::Byte(byte))
            }
        })
    })
}

impl Kinds {
    /// The kinds of escape `text` holds.
    fn of(text: &str) -> Kinds {
        let mut kinds = Kinds(0);
        for (_, piece) in pieces(text) {
            if let Piece::Escape(kind, _) = piece {
                kinds.0 |= 1 << kind;
            }
        }
        kinds
    }

    fn has(self, kind: usize) -> bool {
        self.0 & (1 << kind) != 0
    }

    /// Every non-empty subset, fewest kinds first.
    fn subsets(self) -> Vec<Kinds> {
        let mut subsets: Vec<Kinds> = (1..=self.0).filter(|&bits| bits & self.0 == bits).map(Kinds).collect();
        subsets.sort_by_key(|kinds| kinds.0.count_ones());
        subsets
    }

    /// `text` with the escapes of these kinds turned into their characters, the others as written.
    fn decode(self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (at, piece) in pieces(text) {
            if let Piece::Escape(kind, _) = piece
                && self.has(kind)
            {
                out.push_str(&text[copied..at]);
                out.push(ESCAPES[kind].1);
                copied = at + 2;
            }
        }
        out.push_str(&text[copied..]);
        out
    }

    /// The kinds whose escapes the strings show to be the code's own (see the module's notes),
    /// these kinds being decoded.
    fn written_as_is(self, old: &str, new: &str) -> Kinds {
        let mut kinds = Kinds(Kinds::of(old).0 & !self.0);
        for (_, piece) in pieces(old).chain(pieces(new)) {
            // A backslash here starts no escape: the model wrote it as it is.
            let Piece::Byte(byte) = piece else { continue };
            if let Some(kind) = ESCAPES.iter().position(|(_, c)| u8::try_from(*c).is_ok_and(|c| c == byte)) {
                kinds.0 |= 1 << kind;
                if kind == QUOTE {
                    kinds.0 |= 1 << BACKSLASH;
                }
            }
        }
        kinds
    }

    /// `new` read as `old` was, these kinds decoded: `None` where it reads two ways. A line
    /// written as one of `keep` (the matched block's lines as the file has them; indentation
    /// aside, which the chain places) stays as written.
    fn decode_new(self, new: &str, old: &str, keep: &[&str]) -> Option<String> {
        let as_is = self.written_as_is(old, new);
        // A `\"` with no `"` in sight is the model's: the code's own sits inside a `"…"` string.
        let kinds = if as_is.has(QUOTE) { self } else { Kinds(self.0 | (1 << QUOTE)) };
        let line = |text: &str| -> Option<String> {
            let own = text.strip_suffix('\r').unwrap_or(text).trim_start();
            if !own.is_empty() && keep.iter().any(|kept| kept.trim_start() == own) {
                return Some(text.to_owned());
            }
            // An escape kept as the code's own stands in a literal: out of one (`\tlet x`), it is
            // the model's as much.
            if whitespace_escapes(text, kinds).any(|(kind, inside)| !inside && !kinds.has(kind)) {
                return None;
            }
            for (at, piece) in pieces(text) {
                let Piece::Escape(kind, follower) = piece else { continue };
                if !kinds.has(kind) && !as_is.has(kind) {
                    return None;
                }
                if kind == BACKSLASH
                    && !kinds.has(BACKSLASH)
                    && follower.is_some_and(|next| kinds.has(next))
                    && !old.contains(&text[at..at + 3])
                {
                    return None;
                }
            }
            Some(kinds.decode(text))
        };
        // A model whose `\\` was not seen decoded may have left the code's own `\n` as it is:
        // one inside a literal of a new line reads two ways, unless `old_string`'s own placed
        // ones (the file has literals across lines here).
        if !self.has(BACKSLASH) && decoded_in_a_literal(new, kinds) && !decoded_in_a_literal(old, self) {
            return None;
        }
        let mut out = String::with_capacity(new.len());
        let mut start = 0;
        for (at, piece) in pieces(new) {
            let width = match piece {
                Piece::Byte(b'\n') => 1,
                Piece::Escape(LINE_BREAK, _) if kinds.has(LINE_BREAK) => 2,
                _ => continue,
            };
            out.push_str(&line(&new[start..at])?);
            out.push('\n');
            start = at + width;
        }
        out.push_str(&line(&new[start..])?);
        Some(out)
    }
}

/// The escapes of a whitespace kind (`\n`, `\t`, `\r`) in `text`, each with whether it sits
/// inside a quoted literal of its line: after an odd number of `"` (a `'"'` aside), or as the
/// whole of a `'…'` character. Lines end at line breaks and at `\n` escapes of `decoded`.
fn whitespace_escapes(text: &str, decoded: Kinds) -> impl Iterator<Item = (usize, bool)> + '_ {
    let bytes = text.as_bytes();
    let mut open = false;
    pieces(text).filter_map(move |(at, piece)| match piece {
        Piece::Byte(b'\n') => {
            open = false;
            None
        }
        Piece::Byte(b'"') => {
            open ^= !quoted_char(bytes, at, 1);
            None
        }
        Piece::Escape(QUOTE, _) if decoded.has(QUOTE) => {
            open = !open;
            None
        }
        Piece::Escape(kind @ (LINE_BREAK | TAB | RETURN), _) => {
            let inside = open || quoted_char(bytes, at, 2);
            if kind == LINE_BREAK && decoded.has(LINE_BREAK) {
                open = false;
            }
            Some((kind, inside))
        }
        _ => None,
    })
}

/// Whether the `width` bytes at `at` are the whole of a `'…'` character (`'"'`, `'\n'`).
fn quoted_char(bytes: &[u8], at: usize, width: usize) -> bool {
    at > 0 && bytes[at - 1] == b'\'' && bytes.get(at + width) == Some(&b'\'')
}

/// Whether an escape of a whitespace kind that `decoded` turns into its character sits inside a
/// quoted literal (see [`whitespace_escapes`]).
fn decoded_in_a_literal(text: &str, decoded: Kinds) -> bool {
    whitespace_escapes(text, decoded).any(|(kind, inside)| inside && decoded.has(kind))
}

/// Where a result of the chain puts the edit (1-based lines), to tell readings apart.
fn lines_of(result: &Result<Match, MatchError>) -> Vec<usize> {
    match result {
        Ok(found) => vec![found.line],
        Err(MatchError::Ambiguous { lines, .. }) => lines.clone(),
        Err(MatchError::Conflict { first_line, .. } | MatchError::Indentation { first_line, .. }) => {
            vec![*first_line]
        }
        Err(MatchError::AlreadyApplied { line, .. }) => vec![*line],
        Err(MatchError::NotFound { .. }) => Vec::new(),
    }
}

/// The stage that produced a result of the chain.
fn strategy_of(result: &Result<Match, MatchError>) -> Option<Strategy> {
    match result {
        Ok(found) => Some(found.strategy),
        Err(
            MatchError::Ambiguous { strategy, .. }
            | MatchError::Conflict { strategy, .. }
            | MatchError::Indentation { strategy, .. }
            | MatchError::AlreadyApplied { strategy, .. },
        ) => Some(*strategy),
        Err(MatchError::NotFound { .. }) => None,
    }
}

/// The escape-normalized stage for `old` → `new` in `text`: `Ok(None)` when no reading of
/// `old`'s escapes places it (or it has none).
pub(super) fn find(text: &str, old: &str, new: &str, ending: LineEnding) -> Result<Option<Match>, MatchError> {
    // The readings placed by the strictest stage that places any.
    let mut best: Vec<(Kinds, Result<Match, MatchError>)> = Vec::new();
    for kinds in Kinds::of(old).subsets() {
        let result = locate(text, &kinds.decode(old), &kinds.decode(new), ending, Chain::Reading);
        let Some(strategy) = strategy_of(&result) else { continue };
        let best_rank = best.first().and_then(|(_, r)| strategy_of(r)).map(Strategy::rank);
        match best_rank {
            Some(rank) if strategy.rank() > rank => continue,
            Some(rank) if strategy.rank() < rank => best.clear(),
            _ => {}
        }
        best.push((kinds, result));
    }
    let Some((kinds, first)) = best.first() else { return Ok(None) };
    let place = lines_of(first);
    if best.iter().any(|(_, result)| lines_of(result) != place) {
        let mut lines: Vec<usize> = best.iter().flat_map(|(_, result)| lines_of(result)).collect();
        lines.sort_unstable();
        lines.dedup();
        return Err(MatchError::Ambiguous { strategy: Strategy::EscapeNormalized, lines });
    }
    let result = match first {
        Ok(found) => {
            // The block's lines as the file has them, whole and as far as the match goes on
            // its first and last line.
            let from = text[..found.start].rfind('\n').map_or(0, |at| at + 1);
            let to = if text[..found.end].ends_with('\n') {
                found.end
            } else {
                text[found.end..].find('\n').map_or(text.len(), |at| found.end + at)
            };
            let whole = split_lines(&text[from..to]);
            let block: Vec<&str> =
                whole.iter().chain(&split_lines(&text[found.start..found.end])).map(|line| line.text).collect();
            match kinds.decode_new(new, old, &block) {
                None => {
                    return Err(MatchError::NotFound {
                        closest: Some(Closest {
                            first_line: found.line,
                            last_line: found.line + whole.len().max(1) - 1,
                            similarity: found.similarity,
                            text: whole.iter().map(|line| line.text).collect::<Vec<_>>().join("\n"),
                        }),
                    });
                }
                Some(decoded) if decoded == kinds.decode(new) => first.clone(),
                Some(decoded) => locate(text, &kinds.decode(old), &decoded, ending, Chain::Reading),
            }
        }
        Err(_) => first.clone(),
    };
    match result {
        Ok(found) => Ok(Some(Match { strategy: Strategy::EscapeNormalized, ..found })),
        Err(MatchError::Ambiguous { lines, .. }) => {
            Err(MatchError::Ambiguous { strategy: Strategy::EscapeNormalized, lines })
        }
        Err(err) => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_decode_all_or_nothing() {
        let text = r#"a\nb \\ c\"d\x"#;
        let all = Kinds::of(text);
        assert_eq!(all.subsets().len(), 7);
        let line_breaks = Kinds(1 << LINE_BREAK);
        assert_eq!(line_breaks.decode(text), "a\nb \\\\ c\\\"d\\x");
        assert_eq!(all.decode(text), "a\nb \\ c\"d\\x");
        // An escaped backslash before an `n` is not a line break.
        assert_eq!(line_breaks.decode(r"\\n"), r"\\n");
        assert_eq!(Kinds::of(r"\\n"), Kinds(1 << BACKSLASH));
    }

    #[test]
    fn new_string_reads_one_way_or_not_at_all() {
        let line_breaks = Kinds(1 << LINE_BREAK);
        let old = r#"f("a");\ng();"#;
        // Unescaped quotes: the model writes `"` and `\` as they are; the code's `\\` stays.
        assert_eq!(line_breaks.decode_new(r#"f("\\");\ng();"#, old, &[]).as_deref(), Some("f(\"\\\\\");\ng();"));
        // No character shows how the model writes a tab: `\t` reads two ways.
        assert_eq!(line_breaks.decode_new(r#"f(\ta);\ng();"#, "f();\\ng();", &[]), None);
        // A `\"` with no `"` in sight is the model's, a `\\` without evidence reads two ways.
        assert_eq!(
            line_breaks.decode_new(r#"f(\"a\");\ng();"#, "f();\\ng();", &[]).as_deref(),
            Some("f(\"a\");\ng();")
        );
        assert_eq!(line_breaks.decode_new(r#"f(\"a\\\\\");\ng();"#, "f();\\ng();", &[]), None);
        // `\\n`: a continuation line, or the code's `\\n`.
        assert_eq!(line_breaks.decode_new(r#"f("a \\n b");\ng();"#, old, &[]), None);
        assert!(line_breaks.decode_new(r#"f("a \\n b");\ng();"#, r#"f("a \\n b");\ng();"#, &[]).is_some());
        // A line the file has stays as written, whatever was decoded.
        let all = Kinds::of(r#"\"\\\n"#);
        assert_eq!(
            all.decode_new(r#"x = "\\";\ny = \"\\\\\";"#, r#"\"\\\n"#, &[r#"x = "\\";"#]).as_deref(),
            Some("x = \"\\\\\";\ny = \"\\\\\";")
        );
    }
}
