//! `grep`: lines matching a regular expression, in files on disk or, for files open in the
//! editor, in the editor's (maybe unsaved) text.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use globset::{GlobBuilder, GlobMatcher};
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkState;
use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};
use tandem_tool_fs::blocking;

/// Results shown when the call does not say.
const DEFAULT_MAX_RESULTS: usize = 200;

const DESCRIPTION: &str = "Search file contents with a regular expression (Rust regex syntax, like ripgrep). \
    output_mode `content` (default) shows `path:line:text` (context lines as `path-line-text`), \
    `files_with_matches` the paths, `count` the matching lines per file. Filter files with `glob` \
    (e.g. `*.rs`) or `type` (e.g. `rust`, `py`, `js`). Smart case unless case_insensitive is given: \
    a pattern without uppercase letters ignores case. Files open in the editor are searched as the \
    editor has them (unsaved changes included). Respects .gitignore; skips hidden and binary files.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Regular expression to search for (Rust regex syntax; escape `( ) [ ] { } . * + ? | \ ^ $`
    /// to match them literally).
    pattern: String,
    /// File or directory to search: absolute, or relative to the workspace root (default: the root).
    path: Option<String>,
    /// Only files matching this glob, e.g. `*.rs` or `src/**/*.{ts,tsx}` (with a `/`, it matches
    /// the path relative to the searched directory; without, the file name).
    glob: Option<String>,
    /// Only files of this type, as ripgrep names them: `rust`, `py`, `js`, `ts`, `go`, `md`, ...
    #[serde(rename = "type")]
    file_type: Option<String>,
    /// Ignore case (default: smart case, i.e. ignore case unless the pattern has an uppercase letter).
    case_insensitive: Option<bool>,
    /// Lines of context to show before each match (content mode).
    context_before: Option<usize>,
    /// Lines of context to show after each match (content mode).
    context_after: Option<usize>,
    /// Lines of context to show before and after each match (content mode).
    context: Option<usize>,
    /// `content` (matching lines, default), `files_with_matches` (paths) or `count` (matches per file).
    output_mode: Option<OutputMode>,
    /// Results shown at most: matching lines in content mode, files otherwise (default 200).
    max_results: Option<usize>,
    /// Let the pattern span lines; `.` then also matches a newline (default false).
    multiline: Option<bool>,
}

#[derive(Clone, Copy, Debug, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
// The variants are described in `Args::output_mode`'s documentation: without their own, the
// schema is a plain enum (what the model reads is not said twice).
enum OutputMode {
    Content,
    FilesWithMatches,
    Count,
}

tool!(pub(crate) Grep(Args) = Decl::new("grep", ToolGroup::Search, DESCRIPTION)
    .aliases(&["search"])
    .keywords(&["search", "regex", "find", "content", "text", "ripgrep"])
    .always_load(), grep);

async fn grep(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    blocking(move || run(args, &ctx)).await
}

/// One line of a file's results.
struct Line {
    number: u64,
    matched: bool,
    text: String,
}

/// What the search found in one file: its lines in content mode, only its count otherwise.
struct FileHits {
    lines: Vec<Line>,
    matches: usize,
}

/// Collects the matching and context lines of one file: in content mode at most `keep`
/// matching lines (and their context) are kept, the rest only counted; in count mode nothing
/// is kept; in files mode the search of the file stops at its first match. Memory is bounded
/// by what the tool shows, not by what it scans.
struct Collect {
    mode: OutputMode,
    keep: usize,
    after: u64,
    lines: Vec<Line>,
    matches: usize,
    kept: usize,
    last_kept: u64,
    binary: bool,
}

impl Collect {
    fn new(mode: OutputMode, keep: usize, after: usize) -> Self {
        Self { mode, keep, after: after as u64, lines: Vec::new(), matches: 0, kept: 0, last_kept: 0, binary: false }
    }

    fn push(&mut self, first: Option<u64>, bytes: &[u8], matched: bool) {
        let first = first.unwrap_or(0);
        for (i, line) in bytes.split_inclusive(|b| *b == b'\n').enumerate() {
            let number = first + i as u64;
            self.matches += usize::from(matched);
            let wanted = self.mode == OutputMode::Content
                && if matched {
                    self.kept < self.keep
                } else {
                    self.kept < self.keep || number <= self.last_kept + self.after
                };
            if !wanted {
                continue;
            }
            if matched {
                self.kept += 1;
                self.last_kept = number;
            }
            let line = line.strip_suffix(b"\n").unwrap_or(line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let text = super::cut_line(&String::from_utf8_lossy(line)).into_owned();
            self.lines.push(Line { number, matched, text });
        }
    }
}

impl Sink for Collect {
    type Error = std::io::Error;

    fn matched(&mut self, _: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.push(mat.line_number(), mat.bytes(), true);
        // Files mode needs one match per file: stop reading it.
        Ok(self.mode != OutputMode::FilesWithMatches)
    }

    fn context(&mut self, _: &Searcher, context: &SinkContext<'_>) -> Result<bool, Self::Error> {
        self.push(context.line_number(), context.bytes(), false);
        Ok(true)
    }

    /// A NUL byte: the search of this file stops there. Matches before it are kept (as ripgrep
    /// reports them); a file whose first block already holds a NUL has none and is skipped.
    fn binary_data(&mut self, _: &Searcher, _: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// The files with matches that the output can show, in path order, and the totals of all.
///
/// Each file is worth its matching lines in content mode and one result otherwise. Once the
/// files with the smallest paths are worth `keep`, the files after them are dropped whole (the
/// output lists results in path order, so those would never be shown); only the totals
/// remember them. What is held is thus the output cap plus one file's share, however many
/// files match and in whatever order the walker hands them over.
struct Found {
    mode: OutputMode,
    keep: usize,
    files: std::collections::BTreeMap<PathBuf, FileHits>,
    /// What the held files are worth.
    held: usize,
    /// Every file with a match, held or dropped.
    total_files: usize,
    /// Every matching line (content and count modes; files mode stops at a file's first).
    total_matches: usize,
}

impl Found {
    fn new(mode: OutputMode, keep: usize) -> Self {
        Self { mode, keep, files: Default::default(), held: 0, total_files: 0, total_matches: 0 }
    }

    fn worth(mode: OutputMode, hit: &FileHits) -> usize {
        match mode {
            OutputMode::Content => hit.lines.iter().filter(|l| l.matched).count(),
            OutputMode::FilesWithMatches | OutputMode::Count => 1,
        }
    }

    fn add(&mut self, path: &Path, hit: FileHits) {
        self.total_files += 1;
        self.total_matches += hit.matches;
        self.held += Self::worth(self.mode, &hit);
        self.files.insert(path.to_path_buf(), hit);
        // Drop the last file while the ones before it are worth enough.
        while let Some(entry) = self.files.last_entry() {
            let own = Self::worth(self.mode, entry.get());
            if self.held - own < self.keep {
                break;
            }
            entry.remove();
            self.held -= own;
        }
    }
}

fn run(args: Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let target = ctx.workspace.resolve(args.path.as_deref().unwrap_or("."), &ctx.working_dir)?;
    let shown = ctx.workspace.display(&target);
    // A file open in the editor but never saved exists only in the cache.
    if !target.exists() && ctx.cache.get(&target).is_none() {
        return Err(ToolError::new(format!("`{shown}` does not exist; use `list` or `glob` to find the right path")));
    }
    let pattern = args.pattern.as_str();
    let multiline = args.multiline.unwrap_or(false);
    let matcher = build_matcher(pattern, args.case_insensitive, multiline)?;
    let filter: Option<(GlobMatcher, bool)> = match args.glob.as_deref().filter(|g| !g.is_empty()) {
        None => None,
        Some(glob) => {
            let compiled = GlobBuilder::new(glob)
                .literal_separator(true)
                .build()
                .map_err(|err| ToolError::new(format!("invalid glob `{glob}`: {err}")))?;
            Some((compiled.compile_matcher(), glob.contains('/')))
        }
    };
    let types = match args.file_type.as_deref().filter(|t| !t.is_empty()) {
        None => None,
        Some(name) => {
            let mut builder = ignore::types::TypesBuilder::new();
            builder.add_defaults();
            builder.select(name);
            Some(builder.build().map_err(|err| {
                ToolError::new(format!(
                    "unknown file type `{name}` ({err}); use a ripgrep type name such as `rust`, `py`, `js`, `ts`, `go`, `md`, or filter with `glob`"
                ))
            })?)
        }
    };
    let both = args.context.unwrap_or(0);
    let before = args.context_before.unwrap_or(both);
    let after = args.context_after.unwrap_or(both);
    let mode = args.output_mode.unwrap_or(OutputMode::Content);
    let (before, after) = if mode == OutputMode::Content { (before, after) } else { (0, 0) };
    let mut searcher = SearcherBuilder::new();
    searcher
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .multi_line(multiline)
        .before_context(before)
        .after_context(after);
    let max = args.max_results.unwrap_or(DEFAULT_MAX_RESULTS).max(1);

    let hits = Mutex::new(Found::new(mode, max));
    let search = |path: &Path, searcher: &mut Searcher| {
        let mut sink = Collect::new(mode, max, after);
        let outcome = match ctx.cache.get(path) {
            Some(doc) => searcher.search_slice(&matcher, doc.rope.to_string().as_bytes(), &mut sink),
            None => searcher.search_path(&matcher, path, &mut sink),
        };
        if outcome.is_ok() && sink.matches > 0 {
            let found = FileHits { lines: sink.lines, matches: sink.matches };
            hits.lock().unwrap_or_else(|e| e.into_inner()).add(path, found);
        }
    };
    if target.is_dir() {
        let mut walker = super::walker(&target);
        if let Some(types) = types {
            walker.types(types);
        }
        walker.build_parallel().run(|| {
            let (search, filter, target) = (&search, &filter, &target);
            let mut searcher = searcher.build();
            Box::new(move |entry| {
                let Ok(entry) = entry else { return WalkState::Continue };
                if !entry.file_type().is_some_and(|t| t.is_file()) {
                    return WalkState::Continue;
                }
                if let Some((glob, by_path)) = filter {
                    let relative = entry.path().strip_prefix(target).unwrap_or(entry.path());
                    let subject = if *by_path { relative.as_os_str() } else { entry.file_name() };
                    if !glob.is_match(subject) {
                        return WalkState::Continue;
                    }
                }
                search(entry.path(), &mut searcher);
                WalkState::Continue
            })
        });
    } else {
        // A file named explicitly is searched whatever the filters say, as ripgrep does.
        search(&target, &mut searcher.build());
    }
    let found = hits.into_inner().unwrap_or_else(|e| e.into_inner());
    Ok(format(ctx, &found, max, (before, after), pattern, &shown))
}

fn build_matcher(pattern: &str, case_insensitive: Option<bool>, multiline: bool) -> Result<RegexMatcher, ToolError> {
    let mut builder = RegexMatcherBuilder::new();
    builder.multi_line(true).crlf(true);
    match case_insensitive {
        Some(yes) => builder.case_insensitive(yes),
        None => builder.case_smart(true),
    };
    if multiline {
        // `crlf` also set a line terminator, which would stop matches at line ends.
        builder.dot_matches_new_line(true).line_terminator(None);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern).map_err(|err| {
        ToolError::new(format!(
            "invalid regex `{pattern}`: {err}\nThe pattern is a Rust regular expression: to match one of `( ) [ ] {{ }} . * + ? | \\ ^ $` literally, escape it with `\\` (e.g. `fn foo\\(` or `a\\.b`){}",
            if pattern.contains('\n') || pattern.contains("\\n") { "; to match across lines, set multiline" } else { "" }
        ))
        .with("invalidRegex", true)
    })
}

fn format(
    ctx: &ToolContext,
    found: &Found,
    max: usize,
    (before, after): (usize, usize),
    pattern: &str,
    shown: &str,
) -> ToolOutput {
    let (mode, total, files) = (found.mode, found.total_matches, found.total_files);
    let mut out = String::new();
    let mut truncated = false;
    let with_context = before + after > 0;
    match mode {
        OutputMode::FilesWithMatches | OutputMode::Count => {
            for (path, hit) in found.files.iter().take(max) {
                out.push_str(&ctx.workspace.display(path));
                if mode == OutputMode::Count {
                    out.push_str(&format!(":{}", hit.matches));
                }
                out.push('\n');
            }
            if files > max {
                truncated = true;
                out.push_str(&format!(
                    "… {} more files not shown; narrow the search with path, glob or type\n",
                    files - max
                ));
            }
        }
        OutputMode::Content => {
            let mut shown_matches = 0usize;
            'files: for (i, (path, hit)) in found.files.iter().enumerate() {
                let path = ctx.workspace.display(path);
                let mut previous: Option<u64> = None;
                let mut last_match = 0u64;
                if with_context && i > 0 && !out.is_empty() {
                    out.push_str("--\n");
                }
                for line in &hit.lines {
                    if line.matched {
                        if shown_matches == max {
                            truncated = true;
                            break 'files;
                        }
                        shown_matches += 1;
                        last_match = line.number;
                    } else if shown_matches == max && line.number > last_match + after as u64 {
                        // Context that only belongs to a match not shown.
                        truncated = shown_matches < total;
                        break 'files;
                    }
                    if with_context && previous.is_some_and(|p| line.number > p + 1) {
                        out.push_str("--\n");
                    }
                    previous = Some(line.number);
                    let separator = if line.matched { ':' } else { '-' };
                    out.push_str(&format!("{path}{separator}{}{separator}{}\n", line.number, line.text));
                }
            }
            truncated |= shown_matches < total;
            if truncated {
                out.push_str(&format!(
                    "… {} more matching lines not shown ({total} in {files} files); narrow the search with path, glob or type, or raise max_results\n",
                    total - shown_matches
                ));
            }
        }
    }
    if files == 0 {
        out = format!("No matches for `{pattern}` in `{shown}`.");
    }
    // Files mode reads each file only to its first match: it knows files, not matches.
    if mode == OutputMode::FilesWithMatches {
        let title = format!("Found {files} files with matches for {pattern}");
        return ToolOutput::new(title, out.trim_end().to_owned()).with("files", files).with("truncated", truncated);
    }
    let title = format!("Found {total} matches in {files} files for {pattern}");
    ToolOutput::new(title, out.trim_end().to_owned())
        .with("matches", total)
        .with("files", files)
        .with("truncated", truncated)
}

#[cfg(test)]
mod found_tests {
    use proptest::prelude::*;

    use super::*;

    fn hit(mode: OutputMode, keep: usize, matched: usize) -> FileHits {
        let shown = if mode == OutputMode::Content { matched.min(keep) } else { 0 };
        let lines = (0..shown).map(|n| Line { number: n as u64 + 1, matched: true, text: String::new() }).collect();
        FileHits { lines, matches: matched }
    }

    fn mode() -> impl Strategy<Value = OutputMode> {
        prop_oneof![Just(OutputMode::Content), Just(OutputMode::FilesWithMatches), Just(OutputMode::Count)]
    }

    proptest! {
        /// Whatever order the walker hands files over in, what is held stays within the output
        /// cap plus one file's share, the totals count every file, and the files held are the
        /// ones the output shows: those with the smallest paths, worth the cap.
        #[test]
        fn what_is_held_is_bounded_by_the_output_and_is_what_it_shows(
            mode in mode(),
            keep in 1usize..30,
            files in proptest::collection::btree_map(0u32..5000, 1usize..40, 0..300),
            order in any::<u64>(),
        ) {
            let mut arrivals: Vec<(u32, usize)> = files.iter().map(|(k, v)| (*k, *v)).collect();
            // A shuffle of the arrival order, seeded.
            let mut state = order | 1;
            for i in (1..arrivals.len()).rev() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                arrivals.swap(i, (state % (i as u64 + 1)) as usize);
            }
            let mut found = Found::new(mode, keep);
            let biggest = files.values().map(|m| (*m).min(keep)).max().unwrap_or(0);
            for (name, matched) in &arrivals {
                found.add(Path::new(&format!("f{name:05}")), hit(mode, keep, *matched));
                let worth: usize = found.files.values().map(|h| Found::worth(mode, h)).sum();
                prop_assert_eq!(worth, found.held);
                let bound = if mode == OutputMode::Content { keep + biggest } else { keep };
                prop_assert!(found.held <= bound, "{} held, bound {}", found.held, bound);
            }
            prop_assert_eq!(found.total_files, files.len());
            prop_assert_eq!(found.total_matches, files.values().sum::<usize>());
            // The reference: every file in path order, taken until worth the cap.
            let mut expected = Vec::new();
            let mut worth = 0;
            for (name, matched) in &files {
                if worth >= keep {
                    break;
                }
                expected.push(format!("f{name:05}"));
                worth += if mode == OutputMode::Content { (*matched).min(keep) } else { 1 };
            }
            let held: Vec<String> = found.files.keys().map(|p| p.display().to_string()).collect();
            prop_assert_eq!(held, expected);
        }
    }
}
