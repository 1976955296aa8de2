//! A text's lines as a rope counts them (line breaks: `\n`, `\r\n` and a lone `\r`), indexed
//! once. The `lsp` tool asks a few lines of a few files per call; a rope of a small file (one
//! leaf) rescans its whole text for every line it is asked, and building it costs more than the
//! index.

use crate::{Position, PositionEncoding};

/// A text and where each of its lines starts.
pub struct Lines {
    text: String,
    /// Byte offset of each line's start; the first is 0.
    starts: Vec<usize>,
}

impl Lines {
    /// The lines of `text`.
    pub fn new(text: String) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![0];
        let mut from = 0;
        while let Some(at) = memchr::memchr2(b'\n', b'\r', &bytes[from..]) {
            let at = from + at;
            let crlf = bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n');
            from = at + if crlf { 2 } else { 1 };
            starts.push(from);
        }
        Self { text, starts }
    }

    /// How many lines: one more than line breaks (a text ending in a break ends with an empty
    /// line), as `Rope::len_lines`.
    pub fn len_lines(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line `n` with its line break, as `Rope::line`; empty past the end.
    pub fn line(&self, n: usize) -> &str {
        let Some(&start) = self.starts.get(n) else { return "" };
        let end = self.starts.get(n + 1).copied().unwrap_or(self.text.len());
        &self.text[start..end]
    }

    /// 0-based line `n` without its line break; empty past the end.
    pub fn content(&self, n: usize) -> &str {
        let mut content = self.line(n);
        for end in ['\n', '\r'] {
            content = content.strip_suffix(end).unwrap_or(content);
        }
        content
    }

    /// `position`, whose character counts in `encoding`, with its character counted in chars
    /// (UTF-32), as [`crate::position_to_char`] then [`crate::char_to_position`] give it on a
    /// rope of the same text: a character past the end of its line is the line's end, the line
    /// after the last with character 0 is the end of the text; `None` for a line past that.
    pub fn to_utf32(&self, position: Position, encoding: PositionEncoding) -> Option<Position> {
        let line = position.line as usize;
        let count = self.len_lines();
        if line >= count {
            if line != count || position.character != 0 {
                return None;
            }
            // The end of the text, where the last line ends.
            let last = count - 1;
            let character = self.line(last).chars().count();
            return Some(Position { line: last as u32, character: character as u32 });
        }
        let content = self.content(line);
        let column = position.character as usize;
        // The char holding code unit `column` (as `width` counts them), or the line's end.
        let holding = |width: fn(char) -> usize| {
            let mut at = 0;
            for (index, c) in content.chars().enumerate() {
                at += width(c);
                if at > column {
                    return index;
                }
            }
            content.chars().count()
        };
        let character = match encoding {
            PositionEncoding::Utf8 => holding(char::len_utf8),
            PositionEncoding::Utf16 => holding(char::len_utf16),
            PositionEncoding::Utf32 => holding(|_| 1),
        };
        Some(Position { line: position.line, character: character as u32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rope, char_to_position, position_to_char};
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The same lines as the rope the tool used before, for any mix of `\n`, `\r\n`, lone
        /// `\r`, multi-byte characters and the Unicode breaks a rope with only CR lines does not
        /// count (U+2028, form feed, NEL).
        #[test]
        fn lines_are_the_rope_s_lines(text in "[a\\r\\né𝄞\u{2028}\u{c}\u{85} ]{0,60}") {
            let rope = Rope::from_str(&text);
            let lines = Lines::new(text.clone());
            prop_assert_eq!(lines.len_lines(), rope.len_lines());
            for n in 0..rope.len_lines() {
                prop_assert_eq!(lines.line(n), rope.line(n).to_string(), "line {}", n);
            }
            prop_assert_eq!(lines.line(rope.len_lines()), "");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// The same position as the rope's conversion gives (or none where it is an error), for
        /// any line (past the end too), any column (inside a multi-byte character or a surrogate
        /// pair too) and every encoding.
        #[test]
        fn positions_convert_as_on_the_rope(
            text in "[a\\r\\né𝄞\u{2028} ]{0,40}",
            line in 0u32..14,
            character in 0u32..24,
            encoding in prop_oneof![
                Just(PositionEncoding::Utf8),
                Just(PositionEncoding::Utf16),
                Just(PositionEncoding::Utf32)
            ],
        ) {
            let rope = Rope::from_str(&text);
            let position = Position { line, character };
            let expected = position_to_char(&rope, position, encoding)
                .ok()
                .map(|index| char_to_position(&rope, index, PositionEncoding::Utf32));
            prop_assert_eq!(Lines::new(text.clone()).to_utf32(position, encoding), expected);
        }
    }
}
