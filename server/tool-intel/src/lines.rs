//! A text's lines as a rope counts them (line breaks: `\n`, `\r\n` and a lone `\r`), indexed
//! once. The `lsp` tool asks a few lines of a few files per call; a rope of a small file (one
//! leaf) rescans its whole text for every line it is asked, and building it costs more than the
//! index.

/// A text and where each of its lines starts.
pub(crate) struct Lines {
    text: String,
    /// Byte offset of each line's start; the first is 0.
    starts: Vec<usize>,
}

impl Lines {
    pub(crate) fn new(text: String) -> Self {
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
    pub(crate) fn len_lines(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line `n` with its line break, as `Rope::line`; empty past the end.
    pub(crate) fn line(&self, n: usize) -> &str {
        let Some(&start) = self.starts.get(n) else { return "" };
        let end = self.starts.get(n + 1).copied().unwrap_or(self.text.len());
        &self.text[start..end]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tandem_text::Rope;

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
}
