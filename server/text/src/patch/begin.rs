//! The `*** Begin Patch` format of OpenAI's `apply_patch` tool (codex):
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path        (then the content, every line prefixed with `+`)
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path     (optional)
//! @@ fn enclosing()         (optional: a line above the change, found first)
//!  context
//! -removed
//! +added
//! *** End of File           (optional: the hunk ends the file)
//! *** End Patch
//! ```
//!
//! Read leniently where models commonly slip: a missing `*** End Patch` (or `*** Begin Patch`
//! before the first file marker), an empty context line without its leading space, blank lines
//! between sections, several `@@` lines stacked, unified `@@ -1,2 +1,3 @@` numbers (ignored).

use super::{FilePatch, Hunk, HunkLine, Location, PatchError};

const SECTION_HELP: &str = "expected `*** Add File: <path>`, `*** Update File: <path>`, `*** Delete File: <path>` \
                            or `*** End Patch` (every line of an added file starts with `+`; every line of an \
                            update hunk starts with ` `, `-`, `+` or `@@`)";

/// Parses the sections from line index `body` (just after `*** Begin Patch`). A line's trailing
/// `\r` is its own (see `split_patch_lines`): markers ignore it, hunk lines keep it.
pub(super) fn parse(lines: &[&str], body: usize) -> Result<Vec<FilePatch>, PatchError> {
    let mut files = Vec::new();
    let mut at = body;
    while at < lines.len() {
        let line = lines[at].trim();
        if line == "*** End Patch" {
            // What follows (a heredoc's `EOF`, prose) is not ours.
            break;
        }
        if line.is_empty() {
            at += 1;
            continue;
        }
        if let Some(path) = line.strip_prefix("*** Add File:") {
            let path = section_path(path, at, "Add File")?;
            at = add_file(lines, at, path, &mut files);
        } else if let Some(path) = line.strip_prefix("*** Delete File:") {
            let path = section_path(path, at, "Delete File")?;
            files.push(FilePatch { old_path: Some(path), new_path: None, patch_line: at + 1, ..FilePatch::default() });
            at += 1;
            // Models sometimes list the deleted content; there is nothing to check it against.
            while lines.get(at).is_some_and(|l| l.starts_with('-')) {
                at += 1;
            }
        } else if let Some(path) = line.strip_prefix("*** Update File:") {
            let path = section_path(path, at, "Update File")?;
            at = update_file(lines, at, path, &mut files)?;
        } else {
            return Err(PatchError::Parse {
                line: at + 1,
                message: format!("found `{}`: {SECTION_HELP}", shorten(line)),
            });
        }
    }
    if files.is_empty() {
        return Err(PatchError::Parse {
            line: body.min(lines.len()).max(1),
            message: "the patch has no `*** Add File:`, `*** Update File:` or `*** Delete File:` section".to_owned(),
        });
    }
    Ok(files)
}

fn section_path(path: &str, at: usize, marker: &str) -> Result<String, PatchError> {
    let path = path.trim();
    if path.is_empty() {
        return Err(PatchError::Parse {
            line: at + 1,
            message: format!("`*** {marker}:` needs a path after the colon"),
        });
    }
    Ok(path.to_owned())
}

/// Reads an `*** Add File` section starting at its marker; returns the index after it.
fn add_file(lines: &[&str], marker: usize, path: String, files: &mut Vec<FilePatch>) -> usize {
    let mut content = Vec::new();
    let mut at = marker + 1;
    while at < lines.len() {
        let line = lines[at];
        if let Some(text) = line.strip_prefix('+') {
            content.push(HunkLine::Add(text.to_owned()));
        } else if blank(line) && lines[at..].iter().find(|l| !blank(l)).is_some_and(|l| l.starts_with('+')) {
            // A blank line without its `+`, inside the content.
            content.push(HunkLine::Add(line.to_owned()));
        } else {
            break;
        }
        at += 1;
    }
    let hunks = if content.is_empty() {
        Vec::new()
    } else {
        let location =
            Location::Numbered { old_start: 0, old_len: 0, new_start: 1, new_len: content.len(), section: None };
        vec![Hunk { location, lines: content, old_no_newline: false, new_no_newline: false, patch_line: marker + 2 }]
    };
    files.push(FilePatch {
        old_path: None,
        new_path: Some(path),
        hunks,
        patch_line: marker + 1,
        ..FilePatch::default()
    });
    at
}

/// A hunk being read.
struct Chunk {
    anchors: Vec<String>,
    lines: Vec<HunkLine>,
    /// How many of the last lines were empty patch lines (context without its space).
    bare_tail: usize,
    end_of_file: bool,
    patch_line: usize,
}

impl Chunk {
    fn new(patch_line: usize) -> Self {
        Self { anchors: Vec::new(), lines: Vec::new(), bare_tail: 0, end_of_file: false, patch_line }
    }
}

/// Reads an `*** Update File` section starting at its marker; returns the index after it.
fn update_file(lines: &[&str], marker: usize, path: String, files: &mut Vec<FilePatch>) -> Result<usize, PatchError> {
    let mut at = marker + 1;
    let mut new_path = Some(path.clone());
    if let Some(target) = lines.get(at).and_then(|l| l.trim().strip_prefix("*** Move to:")) {
        new_path = Some(section_path(target, at, "Move to")?);
        at += 1;
    }
    let mut hunks = Vec::new();
    let mut current: Option<Chunk> = None;
    while at < lines.len() {
        let raw = lines[at];
        if raw.starts_with("***") {
            if raw.trim() != "*** End of File" {
                break;
            }
            match current.take() {
                Some(mut chunk) if !chunk.lines.is_empty() => {
                    chunk.end_of_file = true;
                    finish(chunk, &mut hunks)?;
                }
                _ => {
                    return Err(PatchError::Parse {
                        line: at + 1,
                        message: "`*** End of File` must follow the lines of a hunk".to_owned(),
                    });
                }
            }
            at += 1;
            continue;
        }
        if let Some(rest) = raw.strip_prefix("@@") {
            let anchor = anchor_text(rest);
            match current.as_mut() {
                // Stacked `@@ class Foo` / `@@ def bar`: each narrows the next.
                Some(chunk) if chunk.lines.is_empty() => chunk.anchors.extend(anchor),
                _ => {
                    if let Some(done) = current.take() {
                        finish(done, &mut hunks)?;
                    }
                    let mut chunk = Chunk::new(at + 1);
                    chunk.anchors.extend(anchor);
                    current = Some(chunk);
                }
            }
            at += 1;
            continue;
        }
        let line = match raw.as_bytes().first() {
            Some(b' ') => HunkLine::Context(raw[1..].to_owned()),
            Some(b'-') => HunkLine::Remove(raw[1..].to_owned()),
            Some(b'+') => HunkLine::Add(raw[1..].to_owned()),
            // A blank context line without its space.
            _ if blank(raw) => HunkLine::Context(raw.to_owned()),
            // `\ No newline at end of file`, carried over from unified diffs: this format
            // cannot say it, and the file keeps its final newline (or lack of one).
            Some(b'\\') => {
                at += 1;
                continue;
            }
            _ => {
                return Err(PatchError::Parse {
                    line: at + 1,
                    message: format!(
                        "`{}` in the `*** Update File: {path}` section does not start with ` ` (context), `-` \
                         (removed), `+` (added) or `@@`: if it is an unchanged line, put a space before it",
                        shorten(raw)
                    ),
                });
            }
        };
        let chunk = current.get_or_insert_with(|| Chunk::new(at + 1));
        chunk.bare_tail = if blank(raw) { chunk.bare_tail + 1 } else { 0 };
        chunk.lines.push(line);
        at += 1;
    }
    if let Some(chunk) = current {
        finish(chunk, &mut hunks)?;
    }
    if hunks.is_empty() && new_path.as_deref() == Some(path.as_str()) {
        return Err(PatchError::Parse {
            line: marker + 1,
            message: format!(
                "`*** Update File: {path}` has no hunks: add `@@` hunks of ` `/`-`/`+` lines, or leave the section out"
            ),
        });
    }
    files.push(FilePatch { old_path: Some(path), new_path, hunks, patch_line: marker + 1, ..FilePatch::default() });
    Ok(at)
}

fn finish(mut chunk: Chunk, hunks: &mut Vec<Hunk>) -> Result<(), PatchError> {
    // Blank lines at the end of a hunk separate it from the next section more often than they
    // are context; dropping context never changes the result, only how precisely it is placed.
    for _ in 0..chunk.bare_tail {
        chunk.lines.pop();
    }
    if chunk.lines.is_empty() {
        if let Some(anchor) = chunk.anchors.first() {
            return Err(PatchError::Parse {
                line: chunk.patch_line,
                message: format!("`@@ {anchor}` has no hunk lines under it"),
            });
        }
        return Ok(());
    }
    let location = Location::Searched { anchors: chunk.anchors, end_of_file: chunk.end_of_file };
    hunks.push(Hunk {
        location,
        lines: chunk.lines,
        old_no_newline: false,
        new_no_newline: false,
        patch_line: chunk.patch_line,
    });
    Ok(())
}

/// The text after `@@`: the anchor line, if any. Unified numbers (`-3,7 +3,8 @@ fn x`) are
/// dropped, keeping their section text; a closing `@@` is dropped too.
fn anchor_text(rest: &str) -> Option<String> {
    let mut text = rest.trim();
    if text.starts_with('-')
        && text.contains(" +")
        && let Some((_, section)) = text.split_once("@@")
    {
        text = section.trim();
    }
    text = text.strip_suffix("@@").map_or(text, str::trim_end);
    (!text.is_empty()).then(|| text.to_owned())
}

/// An empty patch line (its `\r`, if any, aside).
fn blank(line: &str) -> bool {
    line.is_empty() || line == "\r"
}

fn shorten(text: &str) -> String {
    crate::clip(text, 80)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors() {
        assert_eq!(anchor_text(" fn main() {"), Some("fn main() {".to_owned()));
        assert_eq!(anchor_text(""), None);
        assert_eq!(anchor_text(" -3,7 +3,8 @@ impl Foo"), Some("impl Foo".to_owned()));
        assert_eq!(anchor_text(" -3,7 +3,8 @@"), None);
        assert_eq!(anchor_text(" class A @@"), Some("class A".to_owned()));
    }
}
