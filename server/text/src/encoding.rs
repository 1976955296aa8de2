//! Position encodings (LSP 3.17 `PositionEncodingKind`) over a rope, and minimal changes.
//!
//! LSP positions are (line, character) with the character counted in UTF-8 bytes, UTF-16 code
//! units or Unicode scalar values, as negotiated. Ropey indexes chars, so every conversion goes
//! through a char index. Line breaks are `\n`, `\r\n` and `\r`, as in LSP (ropey's `cr_lines`).

use ropey::{Rope, RopeSlice};

use crate::TextError;

/// How the `character` of a [`Position`] counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PositionEncoding {
    /// UTF-8 bytes.
    Utf8,
    /// UTF-16 code units (the LSP default).
    #[default]
    Utf16,
    /// Unicode scalar values (what we show the model, 0-based here).
    Utf32,
}

/// A 0-based (line, character) position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// 0-based line.
    pub line: u32,
    /// 0-based column, counted in the encoding in use.
    pub character: u32,
}

/// Whether every char of `rope` is ASCII (one byte, one UTF-16 unit): known from its root's
/// counts, without a scan.
fn is_ascii(rope: &Rope) -> bool {
    rope.len_bytes() == rope.len_chars()
}

/// The line's text without its line break.
fn line_content(rope: &Rope, line: usize) -> RopeSlice<'_> {
    let slice = rope.line(line);
    let mut len = slice.len_chars();
    if len > 0 && slice.char(len - 1) == '\n' {
        len -= 1;
    }
    if len > 0 && slice.char(len - 1) == '\r' {
        len -= 1;
    }
    slice.slice(..len)
}

/// Converts a position to a char index. A character past the end of its line means the end of
/// the line (LSP says so); a line past the end of the document is an error.
pub fn position_to_char(rope: &Rope, position: Position, encoding: PositionEncoding) -> Result<usize, TextError> {
    let line = position.line as usize;
    if line >= rope.len_lines() {
        // One line past the end with character 0 is how clients address "the very end".
        if line == rope.len_lines() && position.character == 0 {
            return Ok(rope.len_chars());
        }
        return Err(TextError::BadPosition {
            line: position.line,
            character: position.character,
            lines: rope.len_lines(),
        });
    }
    if !is_ascii(rope) {
        return Ok(line_to_char_in(rope, line, position.character as usize, encoding));
    }
    // Every encoding counts one per char, and a char is a byte: the line's length is where the
    // next line starts, less its break (no slices, whose lengths ropey counts again).
    let start = rope.line_to_char(line);
    let end = if line + 1 < rope.len_lines() { rope.line_to_char(line + 1) } else { rope.len_chars() };
    let mut len = end - start;
    for byte in [b'\n', b'\r'] {
        if len > 0 && rope.byte(start + len - 1) == byte {
            len -= 1;
        }
    }
    Ok(start + (position.character as usize).min(len))
}

/// The char index of `column` (in `encoding`) on `line`, which exists: any text.
fn line_to_char_in(rope: &Rope, line: usize, column: usize, encoding: PositionEncoding) -> usize {
    let content = line_content(rope, line);
    let offset = match encoding {
        PositionEncoding::Utf8 => content.byte_to_char(column.min(content.len_bytes())),
        PositionEncoding::Utf16 => content.utf16_cu_to_char(column.min(content.len_utf16_cu())),
        PositionEncoding::Utf32 => column.min(content.len_chars()),
    };
    rope.line_to_char(line) + offset
}

/// Converts a char index (clamped to the document) to a position.
pub fn char_to_position(rope: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    let char_idx = char_idx.min(rope.len_chars());
    if !is_ascii(rope) {
        return position_in(rope, char_idx, encoding);
    }
    let line = rope.char_to_line(char_idx);
    Position { line: line as u32, character: (char_idx - rope.line_to_char(line)) as u32 }
}

/// The position of `char_idx` (within the text) in `encoding`: any text.
fn position_in(rope: &Rope, char_idx: usize, encoding: PositionEncoding) -> Position {
    let line = rope.char_to_line(char_idx);
    let slice = rope.line(line).slice(..char_idx - rope.line_to_char(line));
    let character = match encoding {
        PositionEncoding::Utf8 => slice.len_bytes(),
        PositionEncoding::Utf16 => slice.len_utf16_cu(),
        PositionEncoding::Utf32 => slice.len_chars(),
    };
    Position { line: line as u32, character: character as u32 }
}

/// The smallest single replacement that turns `old` into `new`: `old[start..old_end]` becomes
/// `new[start..new_end]`. Byte offsets, always on char boundaries.
pub fn minimal_change(old: &str, new: &str) -> (usize, usize, usize) {
    let prefix = old
        .char_indices()
        .zip(new.chars())
        .find(|((_, a), b)| a != b)
        .map_or(old.len().min(new.len()), |((i, _), _)| i);
    // Keep the prefix on a boundary valid in both strings (it is: equal chars up to it).
    let max_suffix = old.len().min(new.len()) - prefix;
    let suffix = old[prefix..]
        .chars()
        .rev()
        .zip(new[prefix..].chars().rev())
        .take_while(|(a, b)| a == b)
        .map(|(a, _)| a.len_utf8())
        .scan(0usize, |acc, len| {
            *acc += len;
            Some(*acc)
        })
        .take_while(|total| *total <= max_suffix)
        .last()
        .unwrap_or(0);
    (prefix, old.len() - suffix, new.len() - suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pos(line: u32, character: u32) -> Position {
        Position { line, character }
    }

    #[test]
    fn encodings_agree_on_astral_and_multibyte_chars() {
        // 'é' is 2 bytes / 1 unit; '𝄞' is 4 bytes / 2 units.
        let rope = Rope::from_str("aé𝄞b\r\nx\n");
        let b = rope.line_to_char(0) + 3; // index of 'b'
        assert_eq!(position_to_char(&rope, pos(0, 7), PositionEncoding::Utf8).ok(), Some(b));
        assert_eq!(position_to_char(&rope, pos(0, 4), PositionEncoding::Utf16).ok(), Some(b));
        assert_eq!(position_to_char(&rope, pos(0, 3), PositionEncoding::Utf32).ok(), Some(b));
        for enc in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
            let p = char_to_position(&rope, b, enc);
            assert_eq!(position_to_char(&rope, p, enc).ok(), Some(b), "{enc:?}");
        }
    }

    #[test]
    fn column_past_line_end_clamps_before_the_crlf() {
        let rope = Rope::from_str("ab\r\ncd");
        assert_eq!(position_to_char(&rope, pos(0, 99), PositionEncoding::Utf16).ok(), Some(2));
        assert_eq!(char_to_position(&rope, 4, PositionEncoding::Utf16), pos(1, 0));
        // One past the last line at column 0 is the end; further is an error.
        assert_eq!(position_to_char(&rope, pos(2, 0), PositionEncoding::Utf16).ok(), Some(6));
        assert!(position_to_char(&rope, pos(3, 0), PositionEncoding::Utf16).is_err());
    }

    proptest::proptest! {
        /// All-ASCII texts take a shortcut; it gives what the general path gives, for any
        /// line breaks (`\n`, `\r\n`, a lone `\r`), positions past a line's end or the text's,
        /// and every encoding. Texts with other chars check the general path against itself.
        #[test]
        fn the_ascii_shortcut_agrees_with_the_general_path(
            pieces in proptest::collection::vec(proptest::sample::select(vec!["a", "bc", "\n", "\r", "\r\n", "\t", "é", "𝄞"]), 0..40),
            ascii_only in proptest::bool::ANY,
            line in 0u32..12,
            character in 0u32..12,
            index in 0usize..80,
        ) {
            let text: String = pieces.iter().filter(|p| !ascii_only || p.is_ascii()).copied().collect();
            let rope = Rope::from_str(&text);
            for encoding in [PositionEncoding::Utf8, PositionEncoding::Utf16, PositionEncoding::Utf32] {
                let at = Position { line, character };
                if (line as usize) < rope.len_lines() {
                    let general = line_to_char_in(&rope, line as usize, character as usize, encoding);
                    proptest::prop_assert_eq!(position_to_char(&rope, at, encoding).ok(), Some(general));
                }
                let general = position_in(&rope, index.min(rope.len_chars()), encoding);
                proptest::prop_assert_eq!(char_to_position(&rope, index, encoding), general);
            }
        }
    }

    #[test]
    fn minimal_change_finds_the_changed_middle() {
        assert_eq!(minimal_change("abcdef", "abXYef"), (2, 4, 4));
        assert_eq!(minimal_change("aaa", "aaaa"), (3, 3, 4));
        assert_eq!(minimal_change("same", "same"), (4, 4, 4));
        assert_eq!(minimal_change("xé", "xè"), (1, 3, 3));
        assert_eq!(minimal_change("", "new"), (0, 0, 3));
        let (s, oe, ne) = minimal_change("ab", "abab");
        assert_eq!(format!("{}{}{}", &"ab"[..s], &"abab"[s..ne], &"ab"[oe..]), "abab");
    }
}
