//! Patches: unified diffs (`git diff`, `diff -u`) and the `*** Begin Patch` format, parsed and
//! applied to text. Pure: no IO; the caller reads and writes files.
//!
//! [`parse`] detects the format and returns one [`FilePatch`] per file, with paths exactly as the
//! patch spells them (`a/src/lib.rs`); [`strip_path`] removes leading components and
//! [`detect_strip`] picks how many. [`apply`] applies one file's hunks to that file's current
//! text and reports where and how each hunk was placed.
//!
//! Placing a hunk never guesses. Lines are compared exactly first, and only when that finds
//! nothing, more tolerantly. With each comparison a unified hunk is tried at the line its header
//! states (moved by the offset earlier hunks were found at), then at the end (or start) of the
//! file when its context is lopsided the way diff leaves it there, then at the nearest line above
//! or below (comparisons: exact, trailing whitespace ignored, all whitespace ignored). A
//! `*** Begin Patch` hunk has no line numbers: it is searched for below the previous one (from
//! its `@@` line, if any; comparisons: exact, trailing whitespace ignored, indentation ignored,
//! typographic punctuation read as ASCII). When two places fit equally well the hunk is refused
//! ([`PatchError::Ambiguous`]) and the message names them. Hunks apply in order, never overlapping.

mod apply;
mod begin;
mod compare;
mod error;
mod unified;

pub use apply::{Applied, HunkReport, MAX_FUZZ, apply};
pub use error::{Closest, Mismatch, PatchError};

/// The syntax a patch is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchFormat {
    /// A unified diff: `git diff`, `git format-patch`, `diff -u`.
    Unified,
    /// The `*** Begin Patch` / `*** End Patch` format of OpenAI's `apply_patch` tool.
    BeginPatch,
}

/// A parsed patch: what happens to each file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Patch {
    /// The syntax it was written in.
    pub format: PatchFormat,
    /// One entry per file, in patch order.
    pub files: Vec<FilePatch>,
}

/// What a patch does to one file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilePatch {
    /// The path before the change, as the patch writes it (`a/src/lib.rs`); `None` when the
    /// patch creates the file (`--- /dev/null`, `*** Add File`).
    pub old_path: Option<String>,
    /// The path after the change; `None` when the patch deletes the file (`+++ /dev/null`,
    /// `*** Delete File`). Different from `old_path` for a rename or copy (`*** Move to`).
    pub new_path: Option<String>,
    /// The changes to the text, in file order.
    pub hunks: Vec<Hunk>,
    /// The patch changes a binary file (`Binary files … differ`, `GIT binary patch`): it carries
    /// no text to apply, and [`apply`] refuses it with [`PatchError::Binary`].
    pub binary: bool,
    /// `copy from` / `copy to`: the new path is a copy and the old file stays.
    pub copy: bool,
    /// The file mode before (`old mode`, `deleted file mode`), if the patch states one.
    pub old_mode: Option<String>,
    /// The file mode after (`new mode`, `new file mode`), if the patch states one.
    pub new_mode: Option<String>,
    /// What the patch says that is not applied to the text, or that was repaired while parsing
    /// (a mode change, a hunk whose header miscounts its lines), for the caller to report.
    pub notes: Vec<String>,
    /// 1-based line of the patch text where this file's section starts.
    pub patch_line: usize,
}

impl FilePatch {
    /// The path to name in messages: the new path (the old one for a deletion), without git's
    /// `a/` / `b/` prefix when the patch uses them.
    pub fn display_path(&self) -> String {
        let path = self.new_path.as_deref().or(self.old_path.as_deref()).unwrap_or("");
        if self.has_git_prefixes() { strip_path(path, 1).unwrap_or_else(|| path.to_owned()) } else { path.to_owned() }
    }

    /// The patch creates the file.
    pub fn is_creation(&self) -> bool {
        self.old_path.is_none()
    }

    /// The patch deletes the file.
    pub fn is_deletion(&self) -> bool {
        self.new_path.is_none()
    }

    /// The file moves (or is copied, see [`FilePatch::copy`]) to another path.
    pub fn is_rename(&self) -> bool {
        match (&self.old_path, &self.new_path) {
            (Some(old), Some(new)) => {
                if self.has_git_prefixes() {
                    strip_path(old, 1) != strip_path(new, 1)
                } else {
                    old != new
                }
            }
            _ => false,
        }
    }

    /// Paths are written git's way: `a/…` before, `b/…` after (or `/dev/null`).
    pub fn has_git_prefixes(&self) -> bool {
        let old_ok = self.old_path.as_deref().is_none_or(|p| p.starts_with("a/"));
        let new_ok = self.new_path.as_deref().is_none_or(|p| p.starts_with("b/"));
        old_ok && new_ok && (self.old_path.is_some() || self.new_path.is_some())
    }
}

/// One hunk: a run of context, removed and added lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hunk {
    /// Where the hunk belongs.
    pub location: Location,
    /// Its lines, in order. Texts have no line terminator; a text ending in `\r` came from a
    /// line that ended in `\r\n` (in a patch not itself written in CRLF), and an added one is
    /// written back that way.
    pub lines: Vec<HunkLine>,
    /// The old side's last line has no final newline (`\ No newline at end of file`).
    pub old_no_newline: bool,
    /// The new side's last line has no final newline.
    pub new_no_newline: bool,
    /// 1-based line of the patch text where the hunk starts (its `@@` line, if any).
    pub patch_line: usize,
}

impl Hunk {
    /// The lines the file has before the change: context and removed lines.
    pub fn old_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|line| match line {
            HunkLine::Context(text) | HunkLine::Remove(text) => Some(text.as_str()),
            HunkLine::Add(_) => None,
        })
    }

    /// The lines the file has after the change: context and added lines.
    pub fn new_lines(&self) -> impl Iterator<Item = &str> {
        self.lines.iter().filter_map(|line| match line {
            HunkLine::Context(text) | HunkLine::Add(text) => Some(text.as_str()),
            HunkLine::Remove(_) => None,
        })
    }
}

/// How a hunk says where it belongs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Location {
    /// A unified diff's `@@ -old_start,old_len +new_start,new_len @@ section` header. The counts
    /// are the lines the hunk actually has (see [`FilePatch::notes`] when the header disagreed).
    Numbered {
        /// 1-based first line of the old side; for an empty old side, the line it comes after
        /// (0: the start of the file).
        old_start: usize,
        /// Number of context and removed lines.
        old_len: usize,
        /// 1-based first line of the new side.
        new_start: usize,
        /// Number of context and added lines.
        new_len: usize,
        /// The text after the closing `@@` (git puts the enclosing function there); not used
        /// to place the hunk.
        section: Option<String>,
    },
    /// No line numbers (`*** Begin Patch`, or a bare `@@` in a unified diff): the hunk is found
    /// by its context and removed lines, below the previous hunk.
    Searched {
        /// The `@@ <line>` headers, in order: each is found first and the hunk is searched for
        /// below the last one (typically a function or class signature).
        anchors: Vec<String>,
        /// `*** End of File`: the hunk's old lines end the file.
        end_of_file: bool,
    },
}

/// One line of a hunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HunkLine {
    /// Unchanged (` `): must be in the file, and stays.
    Context(String),
    /// Removed (`-`): must be in the file, and goes.
    Remove(String),
    /// Added (`+`).
    Add(String),
}

/// Parses patch text: a unified diff or a `*** Begin Patch` block, detected from the text.
/// Text before the first file header (a commit message, an email) is ignored.
pub fn parse(text: &str) -> Result<Patch, PatchError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = split_patch_lines(text);
    match detect_format(&lines) {
        Some(Detected::BeginPatch { body }) => {
            Ok(Patch { format: PatchFormat::BeginPatch, files: begin::parse(&lines, body)? })
        }
        Some(Detected::ContextDiff { line }) => Err(PatchError::Parse {
            line,
            message: "context diffs (`diff -c`, `***` / `---` headers) are not supported; send a unified diff \
                      (`diff -u`, `git diff`) or a `*** Begin Patch` block"
                .to_owned(),
        }),
        Some(Detected::Unified) | None => {
            let files = unified::parse(&lines)?;
            if files.is_empty() {
                return Err(PatchError::NoPatch);
            }
            Ok(Patch { format: PatchFormat::Unified, files })
        }
    }
}

/// `path` without its first `strip` components, as `patch -p<strip>` does: with 1, git's
/// `a/src/lib.rs` becomes `src/lib.rs`. `None` for `/dev/null` and when nothing is left.
pub fn strip_path(path: &str, strip: usize) -> Option<String> {
    if path == "/dev/null" || path.is_empty() {
        return None;
    }
    let mut rest = path;
    for _ in 0..strip {
        let slash = rest.find('/')?;
        // `a//b` is one separator, as for the kernel.
        rest = rest[slash + 1..].trim_start_matches('/');
    }
    (!rest.is_empty()).then(|| rest.to_owned())
}

/// The strip level (0 to 3) under which the most of the patch's existing-file paths exist,
/// asked through `exists`. Ties, and patches whose files all are new, go to 1 when every file
/// uses git's `a/` / `b/` prefixes and to the lowest level otherwise.
pub fn detect_strip(patch: &Patch, exists: &dyn Fn(&str) -> bool) -> usize {
    let git = !patch.files.is_empty() && patch.files.iter().all(FilePatch::has_git_prefixes);
    // Only the old path must exist: new files and rename targets do not, yet.
    let paths: Vec<&str> = patch.files.iter().filter_map(|f| f.old_path.as_deref()).collect();
    let count = |level: usize| paths.iter().filter(|p| strip_path(p, level).is_some_and(|p| exists(&p))).count();
    let counts: Vec<usize> = (0..=3).map(count).collect();
    let best = counts.iter().copied().max().unwrap_or(0);
    if git && counts[1] == best {
        return 1;
    }
    counts.iter().position(|&c| c == best).unwrap_or(0)
}

/// The patch's lines, without their `\n`. A `\r` before it belongs to the line (git's diff of a
/// CRLF line, an added CRLF file), unless the patch itself was written in CRLF (pasted on
/// Windows): then the lines no tool writes with a `\r` (`diff …`, `index …`, `@@ … @@`, the
/// `***` markers) mostly end in one, and every line loses one `\r`. A patch without such lines
/// loses them when most of its lines end in one.
fn split_patch_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.ends_with('\n') || text.is_empty() {
        lines.pop();
    }
    let structural = |line: &&&str| ["@@", "diff ", "index ", "***"].iter().any(|p| line.starts_with(p));
    let markers: Vec<&&str> = lines.iter().filter(structural).collect();
    let (total, crlf) = if markers.is_empty() {
        (lines.len(), lines.iter().filter(|l| l.ends_with('\r')).count())
    } else {
        (markers.len(), markers.iter().filter(|l| l.ends_with('\r')).count())
    };
    if crlf * 2 > total {
        for line in &mut lines {
            *line = line.strip_suffix('\r').unwrap_or(line);
        }
    }
    lines
}

enum Detected {
    /// Index of the first line after `*** Begin Patch` (or of the first file marker when the
    /// begin marker is missing).
    BeginPatch {
        body: usize,
    },
    Unified,
    ContextDiff {
        line: usize,
    },
}

fn detect_format(lines: &[&str]) -> Option<Detected> {
    for (i, raw) in lines.iter().enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let trimmed = line.trim();
        if trimmed == "*** Begin Patch" {
            return Some(Detected::BeginPatch { body: i + 1 });
        }
        if ["*** Update File:", "*** Add File:", "*** Delete File:"].iter().any(|m| trimmed.starts_with(m)) {
            return Some(Detected::BeginPatch { body: i });
        }
        let next = lines.get(i + 1).map_or("", |l| l.strip_suffix('\r').unwrap_or(l));
        if line.starts_with("diff --git ") || line.starts_with("--- ") && next.starts_with("+++ ") {
            return Some(Detected::Unified);
        }
        if line.starts_with("*** ") && next.starts_with("--- ") {
            return Some(Detected::ContextDiff { line: i + 1 });
        }
    }
    None
}
