//! Unified diffs as `git diff`, `git format-patch` and `diff -u` write them: git's extended
//! headers, `/dev/null` sides, quoted paths, `\ No newline at end of file`, omitted counts.
//!
//! Hunk bodies are read by their header's counts, as `patch` and `git apply` do: that is what
//! tells a removed line `--- x` from the next file's header and a hunk from a mail signature.
//! A hunk that ends before its counts, or goes on after them (models miscount), is taken as
//! written, with a note.

use super::{FilePatch, Hunk, HunkLine, Location, PatchError};

const HEADER_HELP: &str = "write `@@ -<old start>,<old count> +<new start>,<new count> @@` (for example \
                           `@@ -12,7 +12,8 @@`), or a bare `@@` to have the hunk found by its context";

pub(super) fn parse(lines: &[&str]) -> Result<Vec<FilePatch>, PatchError> {
    // git writes `diff --git` before every file: when there is one, everything above the first
    // is a commit message or an email, which may well quote `---`, `+++` and `@@` lines.
    let start = lines.iter().position(|line| line.starts_with("diff --git ")).unwrap_or(0);
    let mut parser = Parser { lines, at: start };
    let mut files = Vec::new();
    while parser.at < lines.len() {
        let line = parser.header(parser.at);
        if let Some(rest) = line.strip_prefix("diff --git ") {
            files.push(parser.git_file(rest)?);
        } else if line.starts_with("--- ") && parser.header(parser.at + 1).starts_with("+++ ") {
            files.push(parser.plain_file()?);
        } else if line.starts_with("@@") {
            return Err(parser.error(
                parser.at,
                "this hunk has no file header above it: put `--- a/<path>` and `+++ b/<path>` lines before its `@@` line",
            ));
        } else if line.starts_with("+++ ") {
            return Err(parser.error(parser.at, "a `+++ b/<path>` line must directly follow a `--- a/<path>` line"));
        } else if let Some((old, new)) = binary_files_line(line) {
            let (old_path, new_path) = (header_path(old), header_path(new));
            files.push(FilePatch {
                old_path,
                new_path,
                binary: true,
                patch_line: parser.at + 1,
                ..FilePatch::default()
            });
            parser.at += 1;
        } else {
            // A commit message, a `diff -ru …` or `Only in …` line, a mail signature: not ours.
            parser.at += 1;
        }
    }
    Ok(files)
}

struct Parser<'a> {
    lines: &'a [&'a str],
    at: usize,
}

/// A hunk header's numbers.
struct Header {
    old_start: usize,
    old_len: usize,
    new_start: usize,
    new_len: usize,
    section: Option<String>,
}

impl<'a> Parser<'a> {
    /// Line `at` for header matching: a stray `\r` does not count; past the end is empty.
    fn header(&self, at: usize) -> &'a str {
        self.lines.get(at).map_or("", |line| line.strip_suffix('\r').unwrap_or(line))
    }

    fn error(&self, at: usize, message: impl Into<String>) -> PatchError {
        PatchError::Parse { line: at + 1, message: message.into() }
    }

    fn git_file(&mut self, names: &str) -> Result<FilePatch, PatchError> {
        let mut file = FilePatch { patch_line: self.at + 1, ..FilePatch::default() };
        let (mut from, mut to) = (None, None);
        let (mut created, mut deleted) = (false, false);
        let mut sides = None;
        self.at += 1;
        while self.at < self.lines.len() {
            let line = self.header(self.at);
            if let Some(mode) = line.strip_prefix("old mode ") {
                file.old_mode = Some(mode.trim().to_owned());
            } else if let Some(mode) = line.strip_prefix("new mode ") {
                file.new_mode = Some(mode.trim().to_owned());
            } else if let Some(mode) = line.strip_prefix("deleted file mode ") {
                deleted = true;
                file.old_mode = Some(mode.trim().to_owned());
            } else if let Some(mode) = line.strip_prefix("new file mode ") {
                created = true;
                file.new_mode = Some(mode.trim().to_owned());
            } else if let Some(path) = line.strip_prefix("rename from ").or_else(|| line.strip_prefix("rename old ")) {
                from = Some(unquote_or_raw(path));
            } else if let Some(path) = line.strip_prefix("rename to ").or_else(|| line.strip_prefix("rename new ")) {
                to = Some(unquote_or_raw(path));
            } else if let Some(path) = line.strip_prefix("copy from ") {
                file.copy = true;
                from = Some(unquote_or_raw(path));
            } else if let Some(path) = line.strip_prefix("copy to ") {
                to = Some(unquote_or_raw(path));
            } else if ["similarity index ", "dissimilarity index ", "index "].iter().any(|p| line.starts_with(p)) {
                // Blob ids and scores: nothing to apply.
            } else if binary_files_line(line).is_some() {
                file.binary = true;
            } else if line == "GIT binary patch" {
                file.binary = true;
                // Base85 data up to the next file.
                while self.at < self.lines.len() && !self.header(self.at).starts_with("diff --git ") {
                    self.at += 1;
                }
                break;
            } else if line.starts_with("--- ") && self.header(self.at + 1).starts_with("+++ ") {
                sides = Some((header_path(&line[4..]), header_path(&self.header(self.at + 1)[4..])));
                self.at += 2;
                break;
            } else {
                break;
            }
            self.at += 1;
        }
        let (git_old, git_new) = split_git_names(names, from.as_deref().zip(to.as_deref()));
        match sides {
            Some((old, new)) => (file.old_path, file.new_path) = (old, new),
            None => {
                file.old_path = (!created).then_some(git_old);
                file.new_path = (!deleted).then_some(git_new);
            }
        }
        note_modes(&mut file);
        if !file.binary {
            self.hunks(&mut file)?;
        }
        Ok(file)
    }

    fn plain_file(&mut self) -> Result<FilePatch, PatchError> {
        let start = self.at;
        let old_path = header_path(&self.header(start)[4..]);
        let new_path = header_path(&self.header(start + 1)[4..]);
        self.at += 2;
        let mut file = FilePatch { old_path, new_path, patch_line: start + 1, ..FilePatch::default() };
        self.hunks(&mut file)?;
        if file.hunks.is_empty() {
            return Err(self.error(
                start,
                "`--- `/`+++ ` file headers with no hunk after them: follow them with `@@ -<line>,<count> \
                 +<line>,<count> @@` and the hunk's lines",
            ));
        }
        Ok(file)
    }

    fn hunks(&mut self, file: &mut FilePatch) -> Result<(), PatchError> {
        while self.header(self.at).starts_with("@@") {
            let hunk = self.hunk(file)?;
            file.hunks.push(hunk);
        }
        Ok(())
    }

    fn hunk(&mut self, file: &mut FilePatch) -> Result<Hunk, PatchError> {
        let number = file.hunks.len() + 1;
        let header_at = self.at;
        let header_text = self.header(header_at);
        let header = parse_hunk_header(header_text).map_err(|message| self.error(header_at, message))?;
        self.at += 1;
        let counts = header.as_ref().map(|h| (h.old_len, h.new_len));
        let mut lines: Vec<HunkLine> = Vec::new();
        let (mut old, mut new) = (0usize, 0usize);
        let (mut old_no_newline, mut new_no_newline) = (false, false);
        // Empty patch lines read as empty context lines, which some editors leave behind by
        // trimming ` ` from blank context. At the end of a hunk that ends early they are more
        // likely blank separators, and are dropped.
        let mut bare_tail = 0usize;
        let mut complete = false;
        // Hunk lines go on after the counts are complete: the header undercounts them. They are
        // read up to the next header (`@@`, `diff `, `--- `/`+++ `), a signature or a line that
        // is no hunk line, and taken as written, with a note.
        let mut overflow = false;
        while let Some(&raw) = self.lines.get(self.at) {
            if raw.starts_with('\\') {
                let line_at = self.at;
                match lines.last() {
                    None => {
                        return Err(
                            self.error(line_at, "`\\ No newline at end of file` must follow a line of the hunk")
                        );
                    }
                    Some(HunkLine::Context(_)) => (old_no_newline, new_no_newline) = (true, true),
                    Some(HunkLine::Remove(_)) => old_no_newline = true,
                    Some(HunkLine::Add(_)) => new_no_newline = true,
                }
                self.at += 1;
                continue;
            }
            if !overflow && counts.is_some_and(|(o, n)| old >= o && new >= n) {
                complete = true;
                overflow = self.more_hunk_lines();
            }
            if complete && (!overflow || !self.more_hunk_lines()) {
                break;
            }
            if counts.is_none() && self.ends_unnumbered_hunk(self.at) {
                break;
            }
            if let Some((o, n)) = counts.filter(|_| !overflow) {
                // A hunk that counts more lines than it has, followed by the next file's headers
                // (`--- `, `+++ `, `@@`): those are headers, unless they exactly complete it.
                let next_file = raw.starts_with("--- ")
                    && self.header(self.at + 1).starts_with("+++ ")
                    && self.header(self.at + 2).starts_with("@@");
                if next_file && !(old + 1 >= o && new + 1 >= n) {
                    break;
                }
            }
            // An empty line: a blank context line without its space (its `\r` is kept, see
            // `split_patch_lines`).
            let bare = raw.is_empty() || raw == "\r";
            let (line, old_side, new_side) = match raw.as_bytes().first() {
                Some(b' ') => (HunkLine::Context(raw[1..].to_owned()), true, true),
                Some(b'-') => (HunkLine::Remove(raw[1..].to_owned()), true, false),
                Some(b'+') => (HunkLine::Add(raw[1..].to_owned()), false, true),
                _ if bare => (HunkLine::Context(raw.to_owned()), true, true),
                _ => break,
            };
            if old_side && old_no_newline || new_side && new_no_newline {
                return Err(self.error(
                    self.at,
                    "a line follows `\\ No newline at end of file` on the same side: that marker belongs after the \
                     file's last line only",
                ));
            }
            bare_tail = if bare { bare_tail + 1 } else { 0 };
            old += usize::from(old_side);
            new += usize::from(new_side);
            lines.push(line);
            self.at += 1;
        }
        if !complete {
            for _ in 0..bare_tail {
                lines.pop();
                old -= 1;
                new -= 1;
            }
        }
        if lines.is_empty() {
            return Err(self.error(header_at, format!("hunk {number} has no lines after its `@@` header")));
        }
        let location = match header {
            Some(h) => {
                if (h.old_len, h.new_len) != (old, new) {
                    file.notes.push(format!(
                        "hunk {number}: its header `{header_text}` counts {} old and {} new lines, but it has {old} \
                         and {new}; the lines were used as written",
                        h.old_len, h.new_len
                    ));
                }
                // The start of an empty old side names the line before it; keep that meaning
                // when the counts were wrong about the side being empty.
                let old_start = match (h.old_len, old) {
                    (0, 1..) => h.old_start.saturating_add(1),
                    (1.., 0) => h.old_start.saturating_sub(1),
                    _ => h.old_start,
                };
                Location::Numbered { old_start, old_len: old, new_start: h.new_start, new_len: new, section: h.section }
            }
            None => Location::Searched { anchors: Vec::new(), end_of_file: false },
        };
        Ok(Hunk { location, lines, old_no_newline, new_no_newline, patch_line: header_at + 1 })
    }

    /// A hunk without counts ends at the next header, or at a mail signature.
    fn ends_unnumbered_hunk(&self, at: usize) -> bool {
        let line = self.header(at);
        line.starts_with("@@")
            || line.starts_with("diff ")
            || line == "-- "
            || line.starts_with("--- ") && self.header(at + 1).starts_with("+++ ")
    }

    /// After a hunk whose counts are complete, the next line looks like one more hunk line: the
    /// counts are wrong, and the hunk goes on.
    fn more_hunk_lines(&self) -> bool {
        let line = self.header(self.at);
        let hunk_like = matches!(line.as_bytes().first(), Some(b' ' | b'+' | b'-'));
        let signature = line == "-- " || line == "--";
        let next_file = line.starts_with("--- ") && self.header(self.at + 1).starts_with("+++ ");
        hunk_like && !signature && !next_file
    }
}

fn parse_hunk_header(line: &str) -> Result<Option<Header>, String> {
    if line.starts_with("@@@") {
        return Err(format!(
            "`{line}` is a combined diff hunk (from a merge commit), which is not supported: diff against one parent"
        ));
    }
    let rest = &line[2..];
    if rest.trim().is_empty() || rest.trim() == "@@" {
        return Ok(None);
    }
    let malformed = || format!("malformed hunk header `{line}`: {HEADER_HELP}");
    let close = rest.find("@@").ok_or_else(malformed)?;
    let section = rest[close + 2..].trim();
    let mut ranges = rest[..close].split_whitespace();
    let old = ranges.next().and_then(|r| r.strip_prefix('-')).and_then(parse_range);
    let new = ranges.next().and_then(|r| r.strip_prefix('+')).and_then(parse_range);
    match (old, new, ranges.next()) {
        (Some((old_start, old_len)), Some((new_start, new_len)), None) => Ok(Some(Header {
            old_start,
            old_len,
            new_start,
            new_len,
            section: (!section.is_empty()).then(|| section.to_owned()),
        })),
        _ => Err(malformed()),
    }
}

/// `12,7` → (12, 7); `12` → (12, 1), as diff omits a count of one.
fn parse_range(range: &str) -> Option<(usize, usize)> {
    match range.split_once(',') {
        Some((start, len)) => Some((start.parse().ok()?, len.parse().ok()?)),
        None => Some((range.parse().ok()?, 1)),
    }
}

fn note_modes(file: &mut FilePatch) {
    let link = "120000";
    if file.old_mode.as_deref() == Some(link) || file.new_mode.as_deref() == Some(link) {
        file.notes.push(
            "the patch changes a symbolic link (mode 120000): its text is the link's target, not file content"
                .to_owned(),
        );
    }
    match (&file.old_mode, &file.new_mode, file.old_path.is_none()) {
        (Some(old), Some(new), _) if old != new => {
            file.notes.push(format!("file mode changes from {old} to {new}: not applied, only the text is"));
        }
        (None, Some(new), true) if new != "100644" => {
            file.notes.push(format!("the new file has mode {new}: not applied, only the text is"));
        }
        _ => {}
    }
}

/// `Binary files a/x and b/y differ` → (`a/x`, `b/y`).
fn binary_files_line(line: &str) -> Option<(&str, &str)> {
    line.strip_prefix("Binary files ")?.strip_suffix(" differ")?.split_once(" and ")
}

/// The path of a `--- ` / `+++ ` line (without the marker): unquoted, without the timestamp
/// `diff -u` appends after a tab; `None` for `/dev/null` and for `diff -N`'s epoch-dated stand-in
/// for a missing file.
fn header_path(text: &str) -> Option<String> {
    let text = text.strip_suffix('\r').unwrap_or(text);
    let (path, stamp) = match unquote(text) {
        Some((path, rest)) => (path, rest.trim_start()),
        None => match text.split_once('\t') {
            Some((path, stamp)) => (path.to_owned(), stamp),
            None => (text.trim_end().to_owned(), ""),
        },
    };
    let epoch = stamp.starts_with("1970-01-01 00:00:00") || stamp.starts_with("1969-12-31 ");
    (path != "/dev/null" && !path.is_empty() && !epoch).then_some(path)
}

fn unquote_or_raw(text: &str) -> String {
    unquote(text).map_or_else(|| text.trim_end().to_owned(), |(path, _)| path)
}

/// A C-style quoted path as git writes names with special characters (`"a/t\303\251st\tx"`):
/// the path and what follows the closing quote. `None` when `text` is not quoted.
fn unquote(text: &str) -> Option<(String, &str)> {
    let body = text.strip_prefix('"')?;
    let bytes = body.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some((String::from_utf8_lossy(&out).into_owned(), &body[i + 1..])),
            b'\\' if i + 1 < bytes.len() => {
                let escaped = bytes[i + 1];
                i += 2;
                let byte = match escaped {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'v' => 0x0b,
                    b'0'..=b'7' => {
                        let mut value = u32::from(escaped - b'0');
                        for _ in 0..2 {
                            if let Some(digit @ b'0'..=b'7') = bytes.get(i) {
                                value = value * 8 + u32::from(digit - b'0');
                                i += 1;
                            }
                        }
                        u8::try_from(value).unwrap_or(b'?')
                    }
                    other => other,
                };
                out.push(byte);
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    None
}

/// The two names of a `diff --git <old> <new>` line. They are ambiguous when they contain
/// spaces, so the rename/copy names (when given) or git's habit of using one name twice
/// (`a/x b/x`) pick the space that separates them.
fn split_git_names(names: &str, rename: Option<(&str, &str)>) -> (String, String) {
    let names = names.trim_end();
    if let Some((old, rest)) = unquote(names) {
        let rest = rest.trim_start();
        return (old, unquote_or_raw(rest));
    }
    if let Some(space) = names.find(" \"") {
        return (names[..space].to_owned(), unquote_or_raw(&names[space + 1..]));
    }
    let after_prefix = |p: &'_ str| -> String { p.split_once('/').map_or(p, |(_, rest)| rest).to_owned() };
    let fits = |at: usize| {
        let (old, new) = (&names[..at], &names[at + 1..]);
        match rename {
            Some((from, to)) => old.ends_with(from) && new.ends_with(to),
            None => after_prefix(old) == after_prefix(new),
        }
    };
    let spaces: Vec<usize> = names.match_indices(' ').map(|(at, _)| at).collect();
    let middle = names.len() / 2;
    let at = spaces
        .iter()
        .copied()
        .find(|&at| fits(at))
        .or_else(|| spaces.iter().copied().min_by_key(|&at| at.abs_diff(middle)));
    match at {
        Some(at) => (names[..at].to_owned(), names[at + 1..].to_owned()),
        None => (names.to_owned(), names.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_names_are_unescaped() {
        assert_eq!(unquote(r#""a/t\303\251st\tx" rest"#), Some(("a/tést\tx".to_owned(), " rest")));
        assert_eq!(unquote("plain"), None);
        assert_eq!(header_path("\"b/sp ace\"\t2024-01-01"), Some("b/sp ace".to_owned()));
        assert_eq!(header_path("a/x\t1970-01-01 00:00:00.000000000 +0000"), None);
        assert_eq!(header_path("/dev/null"), None);
    }

    #[test]
    fn git_names_with_spaces_split_where_they_agree() {
        let split = |names, rename| split_git_names(names, rename);
        assert_eq!(split("a/my file b/my file", None), ("a/my file".to_owned(), "b/my file".to_owned()));
        assert_eq!(split("a/x y b/z w", Some(("x y", "z w"))), ("a/x y".to_owned(), "b/z w".to_owned()));
        assert_eq!(split(r#""a/\"q\"" "b/\"q\"""#, None), (r#"a/"q""#.to_owned(), r#"b/"q""#.to_owned()));
    }

    #[test]
    fn hunk_headers() {
        let header = |line| {
            parse_hunk_header(line).map(|h| h.map(|h| (h.old_start, h.old_len, h.new_start, h.new_len, h.section)))
        };
        assert_eq!(header("@@ -1 +1 @@"), Ok(Some((1, 1, 1, 1, None))));
        assert_eq!(header("@@ -5,0 +6,2 @@ fn main() {"), Ok(Some((5, 0, 6, 2, Some("fn main() {".to_owned())))));
        assert_eq!(header("@@"), Ok(None));
        assert_eq!(header("@@ @@"), Ok(None));
        assert!(header("@@ -1,x +1 @@").is_err());
        assert!(header("@@@ -1 -1 +1 @@@").is_err());
    }
}
