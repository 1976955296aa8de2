//! Edits for the property tests of the crate's unit tests (`src/hunks.rs`) and of
//! `tests/patch_prop.rs`: random edits of a list of lines, and the pairs of texts the
//! properties once failed on or that sit at an edge.

use proptest::sample::Index;

/// Applies `edits` in order: kind 0 inserts its line before the one at its index (the end
/// included), 1 replaces that line, anything else removes it; 1 and the rest do nothing past
/// the last line.
pub fn apply<T>(lines: &mut Vec<T>, edits: Vec<(Index, u8, T)>) {
    for (at, kind, line) in edits {
        let at = at.index(lines.len() + 1);
        match kind {
            0 => lines.insert(at, line),
            1 if at < lines.len() => lines[at] = line,
            _ if at < lines.len() => {
                lines.remove(at);
            }
            _ => {}
        }
    }
}

/// (old, new) pairs at the edges: a common prefix or suffix that ends inside a line, a line that
/// differs only in its terminator, empty texts and lone `\r`s, missing final newlines, repeats.
pub const EDGE_PAIRS: &[(&str, &str)] = &[
    ("\n", "a\n"),
    ("a", "a\n"),
    ("", "a\n"),
    ("x\n", "a\nx\n"),
    ("ab\nc\n", "b\nc\n"),
    ("a\nb", "a\nab"),
    ("a\r\nb\r\n", "a\nb\r\n"),
    ("é\n", "ê\n"),
    ("a\rb\n", "a\nb\n"),
    ("a\n", ""),
    ("a\n", "a"),
    ("a", "b"),
    ("", "a"),
    ("a", ""),
    ("a\nb", "a\nb\nc"),
    ("x\n\n\n", "\n\nx\n"),
    ("a\na\na\n", "a\nb\na\n"),
];
