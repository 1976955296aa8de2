//! Random edits of a list of lines, for the property tests of the crate's unit tests
//! (`src/hunks.rs`) and of `tests/patch_prop.rs`.

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
