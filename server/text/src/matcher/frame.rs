//! The indentation frame of an edit placed where the file's indentation differs from
//! `old_string`'s: is `new_string` written in `old_string`'s frame (shift it by the same
//! difference) or already in the file's (keep it)? Tabs against spaces are decided the same way.
//!
//! Evidence first: lines of `new_string` that are verbatim (indentation included) lines of
//! `old_string` but not of the file's block say "old frame", the other way round "file frame".
//! Without such lines, the common indentation decides: equal to `old_string`'s → old frame,
//! equal to the block's → file frame, neither → refused, with the three indentations shown.

use super::{indent, key};

/// Which frame `new_string` is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `old_string`'s: its lines are moved into the file's frame.
    Old,
    /// The file's: its lines are kept as they are.
    File,
}

/// The frame decided for one edit, and how a line of `old_string`'s frame maps to the file's.
#[derive(Debug)]
pub(super) struct Frame {
    pub(super) kind: Kind,
    /// Indentation of an `old_string` line → that of the block's line beside it.
    map: Vec<(String, String)>,
    needle_base: String,
    block_base: String,
    /// One level of indentation in `old_string` and in the file, when they differ in kind
    /// (`"    "` against `"\t"`).
    unit: Option<(String, String)>,
    /// Columns every mapped indentation moves by, when all are of one kind and move alike.
    shift: Option<(u8, isize)>,
    /// `old_string` indents with tabs and the file's block with spaces only.
    tabs_to_spaces: bool,
}

/// `new_string`'s indentation fits neither frame: the three common indentations.
#[derive(Debug)]
pub(super) struct Misfit {
    pub(super) old: String,
    pub(super) file: String,
    pub(super) new: String,
}

/// The longest common leading whitespace of the non-blank lines.
pub(super) fn base(lines: &[&str]) -> String {
    let mut iter = lines.iter().filter(|l| !l.trim().is_empty()).map(|l| indent(l));
    let Some(first) = iter.next() else { return String::new() };
    let mut common = first;
    for other in iter {
        let shared = common.bytes().zip(other.bytes()).take_while(|(a, b)| a == b).count();
        common = &common[..shared];
    }
    common.to_owned()
}

/// The whitespace characters the non-blank lines indent with: (spaces, tabs).
fn chars(lines: &[&str]) -> (bool, bool) {
    let mut found = (false, false);
    for line in lines.iter().filter(|l| !l.trim().is_empty()) {
        let own = indent(line);
        found.0 |= own.contains(' ');
        found.1 |= own.contains('\t');
    }
    found
}

/// `new`'s indentation characters are among `frame`'s (or either indents with nothing).
fn same_kind(new: (bool, bool), frame: (bool, bool)) -> bool {
    frame == (false, false) || (!new.0 || frame.0) && (!new.1 || frame.1)
}

/// Decides the frame of `w` (`new_string`'s lines) for `n` (`old_string`'s) placed at `b` (the
/// file's block), whose aligned lines are `pairs` (index in `n`, index in `b`). Refused when
/// `new_string` is in `old_string`'s frame but a line of it cannot be moved into the file's (an
/// indentation of tabs, say, that no level of the file's spaces stands for).
pub(super) fn decide(n: &[&str], b: &[&str], w: &[&str], pairs: &[(usize, usize)]) -> Result<Frame, Misfit> {
    let frame = decide_kind(n, b, w, pairs)?;
    if frame.kind == Kind::Old && w.iter().any(|line| frame.foreign(line)) {
        return Err(Misfit { old: frame.needle_base.clone(), file: frame.block_base.clone(), new: base(w) });
    }
    Ok(frame)
}

fn decide_kind(n: &[&str], b: &[&str], w: &[&str], pairs: &[(usize, usize)]) -> Result<Frame, Misfit> {
    let mut map: Vec<(String, String)> = Vec::new();
    for &(i, j) in pairs {
        if n[i].trim().is_empty() || b[j].trim().is_empty() {
            continue;
        }
        let (from, to) = (indent(n[i]), indent(b[j]));
        if !map.iter().any(|(k, _)| k == from) {
            map.push((from.to_owned(), to.to_owned()));
        }
    }
    let (needle_base, block_base) = (base(n), base(b));
    let unit = unit_of(&map);
    let shift = shift_of(&map);
    let tabs_to_spaces = chars(n).1 && !chars(b).1;
    let frame = |kind| Frame {
        kind,
        map: map.clone(),
        needle_base: needle_base.clone(),
        block_base: block_base.clone(),
        unit: unit.clone(),
        shift,
        tabs_to_spaces,
    };
    let drifted = needle_base != block_base || map.iter().any(|(from, to)| from != to);
    if !drifted {
        return Ok(frame(Kind::Old));
    }
    let with_indent = |l: &&str| format!("{}{}", indent(l), key(l));
    let in_n: Vec<String> = n.iter().filter(|l| !l.trim().is_empty()).map(with_indent).collect();
    let in_b: Vec<String> = b.iter().filter(|l| !l.trim().is_empty()).map(with_indent).collect();
    let (mut old_votes, mut file_votes) = (0, 0);
    for line in w.iter().filter(|l| !l.trim().is_empty()).map(with_indent) {
        match (in_n.contains(&line), in_b.contains(&line)) {
            (true, false) => old_votes += 1,
            (false, true) => file_votes += 1,
            _ => {}
        }
    }
    let new_base = base(w);
    let misfit = || Misfit { old: needle_base.clone(), file: block_base.clone(), new: new_base.clone() };
    match (old_votes > 0, file_votes > 0) {
        (true, false) => return Ok(frame(Kind::Old)),
        (false, true) => return Ok(frame(Kind::File)),
        (true, true) => return Err(misfit()),
        (false, false) => {}
    }
    if w.iter().all(|l| l.trim().is_empty()) {
        return Ok(frame(Kind::Old));
    }
    let new_chars = chars(w);
    let old_fits = new_base == needle_base && same_kind(new_chars, chars(n));
    let file_fits = new_base == block_base && same_kind(new_chars, chars(b));
    match (old_fits, file_fits) {
        (true, _) => Ok(frame(Kind::Old)),
        (false, true) => Ok(frame(Kind::File)),
        (false, false) => Err(misfit()),
    }
}

/// The one character every mapped indentation is made of and the columns they all move by.
fn shift_of(map: &[(String, String)]) -> Option<(u8, isize)> {
    let (first, _) = map.iter().find(|(from, to)| !from.is_empty() || !to.is_empty())?;
    let c = first.bytes().next().or_else(|| map.iter().find_map(|(_, to)| to.bytes().next()))?;
    let uniform = |s: &String| s.bytes().all(|b| b == c);
    let mut delta = None;
    for (from, to) in map {
        if !uniform(from) || !uniform(to) {
            return None;
        }
        let d = to.len() as isize - from.len() as isize;
        if delta.is_some_and(|seen| seen != d) {
            return None;
        }
        delta = Some(d);
    }
    Some((c, delta?))
}

/// One level of indentation in `old_string` against the file's, when the two differ in kind:
/// from a mapped pair of only spaces against only tabs.
fn unit_of(map: &[(String, String)]) -> Option<(String, String)> {
    map.iter().find_map(|(from, to)| {
        let spaces_to_tabs = |s: &str, t: &str| {
            let (spaces, tabs) = (s.len(), t.len());
            (spaces > 0
                && tabs > 0
                && s.bytes().all(|c| c == b' ')
                && t.bytes().all(|c| c == b'\t')
                && spaces % tabs == 0)
                .then(|| " ".repeat(spaces / tabs))
        };
        if let Some(unit) = spaces_to_tabs(from, to) {
            return Some((unit, "\t".to_owned()));
        }
        spaces_to_tabs(to, from).map(|unit| ("\t".to_owned(), unit))
    })
}

impl Frame {
    /// `line`, written in `old_string`'s frame, moved into the file's: an indentation seen on an
    /// `old_string` line takes the block's beside it; a deeper one keeps its extra part (levels
    /// converted between tabs and spaces); one outside `old_string`'s base is left as it is.
    pub(super) fn to_file(&self, line: &str) -> String {
        if line.trim().is_empty() {
            return line.to_owned();
        }
        let own = indent(line);
        let rest = &line[own.len()..];
        if let Some((_, to)) = self.map.iter().find(|(from, _)| from == own) {
            return format!("{to}{rest}");
        }
        if let Some((c, delta)) = self.shift
            && own.bytes().all(|b| b == c)
        {
            let columns = (own.len() as isize + delta).max(0) as usize;
            return format!("{}{rest}", char::from(c).to_string().repeat(columns));
        }
        let longest =
            self.map.iter().filter(|(from, _)| own.starts_with(from.as_str())).max_by_key(|(from, _)| from.len());
        let (from, to) = match longest {
            Some((from, to)) => (from.as_str(), to.as_str()),
            None if own.starts_with(self.needle_base.as_str()) => (self.needle_base.as_str(), self.block_base.as_str()),
            None => {
                return match self.levels_up(own) {
                    Some(to) => format!("{to}{rest}"),
                    None => line.to_owned(),
                };
            }
        };
        let extra = &own[from.len()..];
        let extra = match &self.unit {
            Some((a, b)) => extra.replace(a.as_str(), b),
            None => extra.to_owned(),
        };
        format!("{to}{extra}{rest}")
    }

    /// An indentation shallower than `old_string`'s base, of whole levels, when the two frames
    /// indent with different characters: the block's base with as many levels fewer (one tab
    /// for each four spaces the file's base has beyond it, say). `None` when that is not whole
    /// levels of both.
    fn levels_up(&self, own: &str) -> Option<String> {
        let (a, b) = self.unit.as_ref()?;
        let levels = |text: &str, unit: &str| -> Option<usize> {
            (text.len().is_multiple_of(unit.len()) && text.as_bytes().chunks(unit.len()).all(|c| c == unit.as_bytes()))
                .then(|| text.len() / unit.len())
        };
        let (own, needle, block) = (levels(own, a)?, levels(&self.needle_base, a)?, levels(&self.block_base, b)?);
        let up = needle.checked_sub(own)?;
        Some(b.repeat(block.checked_sub(up)?))
    }

    /// `line`, in `old_string`'s frame of tabs, would keep a tab in the file's frame of spaces.
    /// (Spaces left after tabs are alignment, which files indented with tabs use too.)
    fn foreign(&self, line: &str) -> bool {
        self.tabs_to_spaces && !line.trim().is_empty() && indent(&self.to_file(line)).contains('\t')
    }
}
