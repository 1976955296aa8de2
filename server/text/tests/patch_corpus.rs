//! Corpus test of `tandem_text::patch` on real changes nobody here wrote: consecutive versions of
//! crates in the cargo registry (`~/.cargo/registry/src`), or else consecutive commits of a git
//! repository found on the machine. Each changed file becomes `git diff --no-index` patches, and
//! each patch is applied in several variants by us, by `git apply` and by GNU `patch -F2`, side by
//! side: `-U3`, `-U1`, `-U0` where they were made; lines added at the top or in the middle of the
//! file; hunk headers with wrong counts; one outer context line changed in the file since; the
//! file's whitespace drifted; a CRLF file with an LF patch; and a stale file (a removed line
//! changed since), where every tool must refuse. A result is compared byte for byte with the
//! post-image (changed alike where the variant changed the pre-image).
//!
//! Line endings have cases of their own, made from real files of the registry, whose patches
//! carry carriage returns: a CRLF file added, an LF file converted to CRLF and a CRLF file
//! converted to LF. Where the patch was made, `git apply` must write the post-image for them,
//! and so must we: our bytes are then `git apply`'s.
//!
//! The table and the time per patch (ours against `git apply`, process spawn included) are
//! written straight to stderr, so they show without `--nocapture`. The test fails when we write
//! anything WRONG, pass fewer than 98% of all variants, or pass fewer than GNU patch. Without git
//! or any corpus the test says why and passes.

use std::collections::BTreeMap;
mod support;

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use support::{files_under, registry_src, version_pairs};
use tandem_text::patch::{self, HunkLine, Location};

/// Lines added above or in the middle of the pre-image for the offset variants.
const OFFSET_LINES: usize = 25;
/// More file changes than this are sampled evenly, to stay within the time budget.
const MAX_CASES: usize = 300;
/// Past this, the remaining changes are left out (and the report says so): a loaded machine
/// spawns processes slowly.
const TIME_BUDGET: Duration = Duration::from_secs(60);
const MAX_FILE_BYTES: u64 = 512 * 1024;

/// One changed file: its content before and after (`None`: absent).
struct Case {
    label: String,
    name: String,
    pre: Option<String>,
    post: Option<String>,
    /// For the line-ending cases, which change of line endings it is.
    shape: Option<Shape>,
}

/// The line-ending cases.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Shape {
    /// A CRLF file is added.
    AddsCrlf,
    /// An LF file becomes CRLF.
    ToCrlf,
    /// A CRLF file becomes LF.
    ToLf,
}

impl Shape {
    const ALL: [Shape; 3] = [Self::AddsCrlf, Self::ToCrlf, Self::ToLf];

    fn name(self) -> &'static str {
        match self {
            Self::AddsCrlf => "adds a CRLF file",
            Self::ToCrlf => "converts LF to CRLF",
            Self::ToLf => "converts CRLF to LF",
        }
    }
}

/// Line-ending cases of each shape (at most).
const PER_SHAPE: usize = 8;

/// The variants, in report order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Variant {
    U3,
    U1,
    U0,
    TopU3,
    TopU1,
    MiddleU3,
    BadCounts,
    ContextChanged,
    Whitespace,
    Crlf,
    Stale,
}

impl Variant {
    const ALL: [Variant; 11] = [
        Self::U3,
        Self::U1,
        Self::U0,
        Self::TopU3,
        Self::TopU1,
        Self::MiddleU3,
        Self::BadCounts,
        Self::ContextChanged,
        Self::Whitespace,
        Self::Crlf,
        Self::Stale,
    ];

    fn name(self) -> &'static str {
        match self {
            Self::U3 => "-U3",
            Self::U1 => "-U1",
            Self::U0 => "-U0",
            Self::TopU3 => "-U3, lines added at top",
            Self::TopU1 => "-U1, lines added at top",
            Self::MiddleU3 => "-U3, lines added mid-file",
            Self::BadCounts => "-U3, wrong hunk counts",
            Self::ContextChanged => "-U3, 1 context changed",
            Self::Whitespace => "-U3, whitespace drift",
            Self::Crlf => "-U3, CRLF file, LF patch",
            Self::Stale => "-U3, stale (must fail)",
        }
    }

    fn context(self) -> usize {
        match self {
            Self::U1 | Self::TopU1 => 1,
            Self::U0 => 0,
            _ => 3,
        }
    }
}

#[derive(Clone, Copy, Default)]
struct Tally {
    ok: usize,
    failed: usize,
    wrong: usize,
}

impl Tally {
    fn add(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Ok => self.ok += 1,
            Outcome::Failed(_) => self.failed += 1,
            Outcome::Wrong => self.wrong += 1,
        }
    }

    fn show(&self) -> String {
        format!("{} / {} / {}", self.ok, self.failed, self.wrong)
    }
}

/// One application: `Ok` is the expected file (or, for a stale file, a refusal).
enum Outcome {
    Ok,
    Failed(String),
    Wrong,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Tool {
    Tandem,
    Git,
    Gnu,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Self::Tandem => "tandem",
            Self::Git => "git apply",
            Self::Gnu => "GNU patch",
        }
    }
}

/// Results per (variant, tool).
#[derive(Default)]
struct Results {
    tallies: BTreeMap<(Variant, Tool), Tally>,
    /// The line-ending cases, all variants together.
    shapes: BTreeMap<(Shape, Tool), Tally>,
    /// Line-ending cases where the patch was made (`-U3`, `-U1`, `-U0`) that a tool did not
    /// write as the post-image.
    shape_misses: Vec<String>,
    failures: BTreeMap<(Variant, Tool), Vec<String>>,
    strategies: BTreeMap<&'static str, usize>,
    tandem_time: Duration,
    tandem_runs: u32,
    git_time: Duration,
    git_runs: u32,
}

impl Results {
    fn record(&mut self, key: (Variant, Tool), case: &Case, outcome: Outcome) {
        let label = &case.label;
        if let Some(shape) = case.shape {
            self.shapes.entry((shape, key.1)).or_default().add(&outcome);
            let made_here = matches!(key.0, Variant::U3 | Variant::U1 | Variant::U0);
            let wrong = matches!(outcome, Outcome::Wrong) && key.1 == Tool::Tandem;
            if wrong || made_here && !matches!(outcome, Outcome::Ok) && key.1 != Tool::Gnu {
                self.shape_misses.push(format!("{} at {}: {label}", key.1.name(), key.0.name()));
            }
            return;
        }
        self.tallies.entry(key).or_default().add(&outcome);
        let detail = match outcome {
            Outcome::Ok => return,
            Outcome::Failed(why) => format!("refused: {why}"),
            Outcome::Wrong if key.0 == Variant::Stale => "applied to a stale file".to_owned(),
            Outcome::Wrong => "applied, but the result differs from the post-image".to_owned(),
        };
        let failures = self.failures.entry(key).or_default();
        if failures.len() < 3 {
            failures.push(format!("{label}: {}", detail.lines().next().unwrap_or("")));
        }
    }

    fn tally(&self, key: (Variant, Tool)) -> Tally {
        self.tallies.get(&key).copied().unwrap_or_default()
    }

    fn total(&self, tool: Tool) -> Tally {
        let mut total = Tally::default();
        for variant in Variant::ALL {
            let t = self.tally((variant, tool));
            total.ok += t.ok;
            total.failed += t.failed;
            total.wrong += t.wrong;
        }
        total
    }
}

fn say(text: &str) {
    // Straight to the process's stderr: libtest captures `eprintln!`, and this report is the point.
    std::io::stderr().write_all(text.as_bytes()).ok();
}

fn run(command: &mut Command) -> Result<Output, String> {
    command.output().map_err(|e| format!("cannot run {command:?}: {e}"))
}

fn tool_version(program: &str) -> Option<String> {
    let output = Command::new(program).arg("--version").output().ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).lines().next().unwrap_or("").to_owned())
}

fn read_text(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// Consecutive versions of every crate with more than one version in the registry.
fn registry_pairs() -> (String, Vec<(PathBuf, PathBuf)>) {
    let Some(src) = registry_src() else {
        return ("no CARGO_HOME or HOME".to_owned(), Vec::new());
    };
    let pairs = version_pairs(&src, false);
    (src.display().to_string(), pairs)
}

fn registry_cases(pairs: &[(PathBuf, PathBuf)]) -> Vec<Case> {
    let mut cases = Vec::new();
    for (old_root, new_root) in pairs {
        let old_name = old_root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let new_name = new_root.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let old_files = files_under(old_root);
        let new_files = files_under(new_root);
        let mut all: Vec<&PathBuf> = old_files.iter().chain(&new_files).collect();
        all.sort();
        all.dedup();
        for relative in all {
            let in_old = old_files.binary_search(relative).is_ok();
            let in_new = new_files.binary_search(relative).is_ok();
            let pre = if in_old { read_text(&old_root.join(relative)) } else { None };
            let post = if in_new { read_text(&new_root.join(relative)) } else { None };
            // Skip binary and oversized files (on either side), and unchanged ones.
            if in_old && pre.is_none() || in_new && post.is_none() || pre == post {
                continue;
            }
            let name = relative.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let label = format!("{old_name}→{new_name}/{}", relative.display());
            cases.push(Case { label, name, pre, post, shape: None });
        }
    }
    cases
}

/// The line-ending cases, from real files of the registry: CRLF files (every line break a
/// `\r\n`; at most two of a crate) added and converted to LF; LF files spread evenly over the
/// registry converted to CRLF. Only the first bytes of a file are read to tell its line endings.
fn line_ending_cases() -> Vec<Case> {
    let Some(src) = registry_src() else { return Vec::new() };
    let mut crates = Vec::new();
    for index in std::fs::read_dir(&src).into_iter().flatten().flatten() {
        crates.extend(std::fs::read_dir(index.path()).into_iter().flatten().flatten().map(|krate| krate.path()));
    }
    crates.sort();
    let files: Vec<(usize, PathBuf)> = crates
        .iter()
        .enumerate()
        .flat_map(|(k, root)| files_under(root).into_iter().map(move |relative| (k, root.join(relative))))
        .collect();
    let mut crlf_per_crate: BTreeMap<usize, usize> = BTreeMap::new();
    let head = |path: &Path| -> Option<Vec<u8>> {
        use std::io::Read as _;
        let mut head = vec![0; 4096];
        let read = std::fs::File::open(path).ok()?.read(&mut head).ok()?;
        head.truncate(read);
        Some(head)
    };
    let label = |path: &Path| path.strip_prefix(&src).unwrap_or(path).display().to_string();
    let name = |path: &Path| path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut cases = Vec::new();
    let (mut crlf, mut lf) = (0, 0);
    let lf_step = (files.len() / PER_SHAPE).max(1);
    for (i, (krate, path)) in files.iter().enumerate() {
        let wanted_lf = i % lf_step == lf_step / 2 && lf < PER_SHAPE;
        let wanted_crlf = crlf < PER_SHAPE && crlf_per_crate.get(krate).is_none_or(|n| *n < 2);
        if !wanted_lf && !wanted_crlf {
            continue;
        }
        let Some(head) = head(path) else { continue };
        let has_cr = has_crlf(&head);
        if !(has_cr && wanted_crlf || !has_cr && wanted_lf) {
            continue;
        }
        let Some(text) = read_text(path) else { continue };
        let lines = text.matches('\n').count();
        if !(3..=400).contains(&lines) {
            continue;
        }
        if has_cr {
            if text.matches("\r\n").count() != lines {
                continue;
            }
            crlf += 1;
            *crlf_per_crate.entry(*krate).or_default() += 1;
            let to_lf = text.replace("\r\n", "\n");
            cases.push(Case {
                label: format!("{} (added)", label(path)),
                name: name(path),
                pre: None,
                post: Some(text.clone()),
                shape: Some(Shape::AddsCrlf),
            });
            cases.push(Case {
                label: format!("{} (to LF)", label(path)),
                name: name(path),
                pre: Some(text),
                post: Some(to_lf),
                shape: Some(Shape::ToLf),
            });
        } else if !text.contains('\r') {
            lf += 1;
            cases.push(Case {
                label: format!("{} (to CRLF)", label(path)),
                name: name(path),
                post: Some(text.replace('\n', "\r\n")),
                pre: Some(text),
                shape: Some(Shape::ToCrlf),
            });
        }
    }
    cases
}

fn has_crlf(bytes: &[u8]) -> bool {
    bytes.windows(2).any(|pair| pair == b"\r\n")
}

/// Modified files of the last commits of a git repository on the machine (not this one: its
/// history is ours). Used only when the registry has no crate in two versions.
fn git_history_cases() -> (String, Vec<Case>) {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let mut roots: Vec<PathBuf> = std::env::var_os("TANDEM_PATCH_CORPUS_GIT").map(PathBuf::from).into_iter().collect();
    for parent in [
        home.join(".cargo/git/db"),
        home.join(".cargo/git/checkouts"),
        "/usr/local/src".into(),
        "/usr/src".into(),
        "/opt".into(),
    ] {
        for entry in std::fs::read_dir(parent).into_iter().flatten().flatten() {
            roots.push(entry.path());
            for inner in std::fs::read_dir(entry.path()).into_iter().flatten().flatten() {
                roots.push(inner.path());
            }
        }
    }
    let ours = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).map(Path::to_path_buf);
    for root in roots {
        let git = |args: &[&str]| -> Option<String> {
            let output = Command::new("git").arg("-C").arg(&root).args(args).output().ok()?;
            output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
        };
        let Some(top) = git(&["rev-parse", "--absolute-git-dir"]) else { continue };
        if ours.as_ref().is_some_and(|ours| Path::new(top.trim()).starts_with(ours)) {
            continue;
        }
        let Some(commits) = git(&["rev-list", "--max-count=60", "--no-merges", "HEAD"]) else { continue };
        let mut cases = Vec::new();
        for commit in commits.lines() {
            let Some(files) = git(&["diff", "--name-only", "--diff-filter=M", &format!("{commit}^"), commit]) else {
                continue;
            };
            for file in files.lines().take(10) {
                let pre = git(&["show", &format!("{commit}^:{file}")]);
                let post = git(&["show", &format!("{commit}:{file}")]);
                if let (Some(pre), Some(post)) = (pre, post)
                    && !pre.contains('\0')
                    && pre != post
                {
                    let name = file.rsplit('/').next().unwrap_or(file).to_owned();
                    cases.push(Case {
                        label: format!("{}@{commit:.8}/{file}", root.display()),
                        name,
                        pre: Some(pre),
                        post: Some(post),
                        shape: None,
                    });
                }
            }
        }
        if !cases.is_empty() {
            return (format!("commits of {}", root.display()), cases);
        }
    }
    (String::new(), Vec::new())
}

fn sample(mut cases: Vec<Case>) -> (usize, Vec<Case>) {
    let total = cases.len();
    if total <= MAX_CASES {
        return (total, cases);
    }
    let step = total as f64 / MAX_CASES as f64;
    let keep: Vec<usize> = (0..MAX_CASES).map(|i| (i as f64 * step) as usize).collect();
    let mut index = 0;
    cases.retain(|_| {
        let kept = keep.binary_search(&index).is_ok();
        index += 1;
        kept
    });
    (total, cases)
}

/// What a variant applies the patch to, and what must come out (`None`: a deletion, or, for a
/// stale file, a refusal).
struct Trial {
    diff: String,
    pre: String,
    expected: Option<String>,
    must_fail: bool,
}

fn lines_of(text: &str) -> Vec<String> {
    text.split_inclusive('\n').map(str::to_owned).collect()
}

/// Where each line of the pre-image is in the post-image (`None`: removed), from a patch's hunks.
fn pre_to_post(diff: &str, pre_lines: usize) -> Option<Vec<Option<usize>>> {
    let parsed = patch::parse(diff).ok()?;
    let file = parsed.files.first()?;
    let mut map = vec![None; pre_lines];
    let (mut old, mut new) = (0usize, 0usize);
    for hunk in &file.hunks {
        let Location::Numbered { old_start, new_start, old_len, new_len, .. } = hunk.location else { return None };
        let old_at = if old_len == 0 { old_start } else { old_start - 1 };
        let new_at = if new_len == 0 { new_start } else { new_start - 1 };
        while old < old_at {
            *map.get_mut(old)? = Some(new);
            old += 1;
            new += 1;
        }
        new = new.max(new_at);
        for line in &hunk.lines {
            match line {
                HunkLine::Context(_) => {
                    *map.get_mut(old)? = Some(new);
                    old += 1;
                    new += 1;
                }
                HunkLine::Remove(_) => old += 1,
                HunkLine::Add(_) => new += 1,
            }
        }
    }
    while old < pre_lines {
        map[old] = Some(new);
        old += 1;
        new += 1;
    }
    Some(map)
}

/// The pre- and post-image with the same lines changed by `change` (on the pre-image's lines
/// that `pick` selects, and the post-image's lines they became).
fn alike(
    pre: &str,
    post: &str,
    map: &[Option<usize>],
    pick: impl Fn(usize, &str) -> bool,
    change: impl Fn(&str) -> String,
) -> (String, String) {
    let mut pre_lines = lines_of(pre);
    let mut post_lines = lines_of(post);
    for (i, pre_line) in pre_lines.iter_mut().enumerate() {
        if !pick(i, pre_line) {
            continue;
        }
        let changed = change(pre_line);
        if let Some(Some(j)) = map.get(i)
            && let Some(line) = post_lines.get_mut(*j)
        {
            line.clone_from(&changed);
        }
        *pre_line = changed;
    }
    (pre_lines.concat(), post_lines.concat())
}

/// A line with a marker added before its line break.
fn marked(line: &str, marker: &str) -> String {
    match line.strip_suffix('\n') {
        Some(body) => format!("{body}{marker}\n"),
        None => format!("{line}{marker}"),
    }
}

/// Every hunk header's counts off by one (the parser and the tools must cope or refuse).
fn wrong_counts(diff: &str) -> String {
    let mut out = String::new();
    for (i, line) in diff.split_inclusive('\n').enumerate() {
        let rewritten = line.strip_prefix("@@ -").and_then(|rest| {
            let (ranges, tail) = rest.split_once(" @@")?;
            let (old, new) = ranges.split_once(" +")?;
            let bump = |range: &str| -> Option<String> {
                let (start, len) = range.split_once(',').unwrap_or((range, "1"));
                let len: usize = len.parse().ok()?;
                let len = if i % 2 == 0 { len + 1 } else { len.saturating_sub(1) };
                Some(format!("{start},{len}"))
            };
            Some(format!("@@ -{} +{} @@{tail}", bump(old)?, bump(new)?))
        });
        out.push_str(rewritten.as_deref().unwrap_or(line));
    }
    out
}

/// The trials of one variant for one changed file (`None`: the variant does not apply to it).
fn trial(variant: Variant, case: &Case, diff: &str, rng: &mut u64) -> Option<Trial> {
    let mut pick = |bound: usize| {
        *rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((*rng >> 33) as usize) % bound.max(1)
    };
    let plain =
        |pre: String, expected: Option<String>| Some(Trial { diff: diff.to_owned(), pre, expected, must_fail: false });
    let whole = |v| matches!(v, Variant::U3 | Variant::U1 | Variant::U0);
    if whole(variant) {
        return plain(case.pre.clone().unwrap_or_default(), case.post.clone());
    }
    let (pre, post) = (case.pre.as_deref()?, case.post.as_deref()?);
    let eol = if pre.contains("\r\n") { "\r\n" } else { "\n" };
    let added: String = (0..OFFSET_LINES)
        .map(|i| format!("// line {i} added above the code the patch was made against{eol}"))
        .collect();
    let pre_count = lines_of(pre).len();
    let map = pre_to_post(diff, pre_count)?;
    match variant {
        Variant::U3 | Variant::U1 | Variant::U0 => None,
        Variant::TopU3 | Variant::TopU1 => plain(format!("{added}{pre}"), Some(format!("{added}{post}"))),
        Variant::MiddleU3 => {
            // A line the patch leaves alone, at least 4 lines from any change, between two changes.
            let untouched = |i: usize| {
                (i.saturating_sub(4)..(i + 5).min(pre_count))
                    .all(|k| map[k].is_some() && (k == 0 || map[k - 1].is_some_and(|p| Some(p + 1) == map[k])))
            };
            let changed: Vec<usize> = (0..pre_count).filter(|&i| map[i].is_none()).collect();
            let (first, last) = (*changed.first()?, *changed.last()?);
            let candidates: Vec<usize> = (first + 1..last).filter(|&i| untouched(i)).collect();
            let at = *candidates.get(pick(candidates.len()))?;
            let to = map[at]?;
            let (pre_lines, post_lines) = (lines_of(pre), lines_of(post));
            let new_pre = format!("{}{added}{}", pre_lines[..at].concat(), pre_lines[at..].concat());
            let new_post = format!("{}{added}{}", post_lines[..to].concat(), post_lines[to..].concat());
            plain(new_pre, Some(new_post))
        }
        Variant::BadCounts => Some(Trial {
            diff: wrong_counts(diff),
            pre: pre.to_owned(),
            expected: Some(post.to_owned()),
            must_fail: false,
        }),
        Variant::ContextChanged => {
            // One of a hunk's two outermost context lines on either side, changed in the file.
            let parsed = patch::parse(diff).ok()?;
            let file = parsed.files.first()?;
            let hunk = file.hunks.get(pick(file.hunks.len()))?;
            let Location::Numbered { old_start, .. } = hunk.location else { return None };
            let old: Vec<bool> = hunk
                .lines
                .iter()
                .filter(|l| !matches!(l, HunkLine::Add(_)))
                .map(|l| matches!(l, HunkLine::Context(_)))
                .collect();
            let lead = old.iter().take_while(|c| **c).count();
            let trail = old.iter().rev().take_while(|c| **c).count();
            let mut outer: Vec<usize> = (0..lead.min(2)).collect();
            outer.extend((old.len() - trail.min(2)..old.len()).filter(|k| *k >= lead.min(2)));
            let k = *outer.get(pick(outer.len()))?;
            let target = old_start - 1 + k;
            let (new_pre, new_post) = alike(
                pre,
                post,
                &map,
                |i, line| i == target && !line.trim().is_empty(),
                |l| marked(l, " // changed since"),
            );
            (new_pre != pre).then(|| Trial {
                diff: diff.to_owned(),
                pre: new_pre,
                expected: Some(new_post),
                must_fail: false,
            })
        }
        Variant::Whitespace => {
            let (new_pre, new_post) =
                alike(pre, post, &map, |i, line| i % 3 == 1 && !line.trim().is_empty(), |l| marked(l, "  "));
            plain(new_pre, Some(new_post))
        }
        Variant::Crlf => (!pre.contains('\r') && !post.contains('\r')).then(|| Trial {
            diff: diff.to_owned(),
            pre: pre.replace('\n', "\r\n"),
            expected: Some(post.replace('\n', "\r\n")),
            must_fail: false,
        }),
        Variant::Stale => {
            // One removed line of a hunk, changed in the file since.
            let removed: Vec<usize> = (0..pre_count).filter(|&i| map[i].is_none()).collect();
            let target = *removed.get(pick(removed.len()))?;
            let mut pre_lines = lines_of(pre);
            if pre_lines[target].trim().is_empty() {
                return None;
            }
            pre_lines[target] = marked(&pre_lines[target], " /* changed since */");
            Some(Trial { diff: diff.to_owned(), pre: pre_lines.concat(), expected: None, must_fail: true })
        }
    }
}

fn apply_tandem(trial: &Trial, deletion: bool, results: &mut Results) -> Outcome {
    let start = Instant::now();
    let applied = patch::parse(&trial.diff).and_then(|parsed| match parsed.files.as_slice() {
        [file] => patch::apply(file, &trial.pre).map(|applied| (file.is_deletion(), applied)),
        _ => Err(patch::PatchError::NoPatch),
    });
    results.tandem_time += start.elapsed();
    results.tandem_runs += 1;
    match applied {
        Ok((deleted, applied)) => {
            for report in &applied.hunks {
                *results.strategies.entry(report.strategy).or_default() += 1;
            }
            let result = (!deleted).then_some(applied.text.as_str());
            if !trial.must_fail && result == trial.expected.as_deref() && deleted == deletion {
                Outcome::Ok
            } else {
                Outcome::Wrong
            }
        }
        Err(_) if trial.must_fail => Outcome::Ok,
        Err(err) => Outcome::Failed(err.to_string()),
    }
}

/// Applies the trial's patch with an external tool in a fresh `work` directory holding the
/// pre-image.
fn apply_external(
    tool: Tool,
    work: &Path,
    case: &Case,
    trial: &Trial,
    context: usize,
    results: &mut Results,
) -> Result<Outcome, String> {
    std::fs::remove_dir_all(work).ok();
    std::fs::create_dir_all(work).map_err(|e| format!("mkdir {}: {e}", work.display()))?;
    let target = work.join(&case.name);
    if case.pre.is_some() {
        std::fs::write(&target, &trial.pre).map_err(|e| format!("write {}: {e}", target.display()))?;
    }
    let diff_path = work.with_extension("diff");
    std::fs::write(&diff_path, &trial.diff).map_err(|e| format!("write diff: {e}"))?;
    let mut command = match tool {
        Tool::Git => {
            let mut command = Command::new("git");
            command.args(["apply", "-p2", "--whitespace=nowarn"]);
            if context == 0 {
                command.arg("--unidiff-zero");
            }
            command.arg(&diff_path);
            command
        }
        Tool::Gnu => {
            let mut command = Command::new("patch");
            command
                .args(["-p2", "-F2", "--batch", "--silent", "--no-backup-if-mismatch", "--reject-file=-", "-i"])
                .arg(&diff_path);
            command
        }
        Tool::Tandem => return Err("not an external tool".to_owned()),
    };
    // Never let git find a repository above the temporary directory.
    command.current_dir(work).env("GIT_CEILING_DIRECTORIES", work.parent().unwrap_or(work));
    let start = Instant::now();
    let output = run(&mut command)?;
    if tool == Tool::Git {
        results.git_time += start.elapsed();
        results.git_runs += 1;
    }
    if !output.status.success() {
        if trial.must_fail {
            return Ok(Outcome::Ok);
        }
        let mut why = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if why.is_empty() {
            why = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        }
        return Ok(Outcome::Failed(why));
    }
    let result = std::fs::read(&target).ok().map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    Ok(if !trial.must_fail && result == trial.expected { Outcome::Ok } else { Outcome::Wrong })
}

/// Makes the case's patches with `git diff` in `tmp` and applies every variant with each tool.
fn run_case(case: &Case, tmp: &Path, gnu: bool, rng: &mut u64, results: &mut Results) -> Result<(), String> {
    let (old_dir, new_dir, work) = (tmp.join("old"), tmp.join("new"), tmp.join("work"));
    for dir in [&old_dir, &new_dir] {
        std::fs::remove_dir_all(dir).ok();
        std::fs::create_dir_all(dir).map_err(|e| format!("mkdir: {e}"))?;
    }
    let side = |dir: &Path, text: &Option<String>| -> Result<String, String> {
        match text {
            Some(text) => {
                let path = dir.join(&case.name);
                std::fs::write(&path, text).map_err(|e| format!("write {}: {e}", path.display()))?;
                Ok(format!("{}/{}", dir.file_name().map(|n| n.to_string_lossy()).unwrap_or_default(), case.name))
            }
            None => Ok("/dev/null".to_owned()),
        }
    };
    let (old_arg, new_arg) = (side(&old_dir, &case.pre)?, side(&new_dir, &case.post)?);
    let mut diffs: BTreeMap<usize, String> = BTreeMap::new();
    for context in [3, 1, 0] {
        let output = run(Command::new("git")
            .current_dir(tmp)
            .args(["diff", "--no-index", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/"])
            .arg(format!("-U{context}"))
            .args([&old_arg, &new_arg]))?;
        if output.status.code() != Some(1) {
            return Err(format!("git diff failed on {}: {}", case.label, String::from_utf8_lossy(&output.stderr)));
        }
        let diff = String::from_utf8(output.stdout).map_err(|e| format!("{}: diff is not UTF-8: {e}", case.label))?;
        diffs.insert(context, diff);
    }
    for variant in Variant::ALL {
        let diff = &diffs[&variant.context()];
        let Some(trial) = trial(variant, case, diff, rng) else { continue };
        let outcome = apply_tandem(&trial, case.post.is_none(), results);
        results.record((variant, Tool::Tandem), case, outcome);
        let git = apply_external(Tool::Git, &work, case, &trial, variant.context(), results)?;
        results.record((variant, Tool::Git), case, git);
        if gnu {
            let gnu = apply_external(Tool::Gnu, &work, case, &trial, variant.context(), results)?;
            results.record((variant, Tool::Gnu), case, gnu);
        }
    }
    Ok(())
}

#[test]
fn real_changes_apply_like_git_apply_and_gnu_patch() -> Result<(), String> {
    let Some(git_version) = tool_version("git") else {
        say("\npatch corpus: SKIPPED: git is not installed (it makes the patches)\n");
        return Ok(());
    };
    let patch_version = tool_version("patch");
    let gnu = patch_version.as_deref().is_some_and(|v| v.contains("GNU patch"));
    let (registry, pairs) = registry_pairs();
    let (source, cases) = if pairs.is_empty() {
        git_history_cases()
    } else {
        (format!("{} crate version pairs in {registry}", pairs.len()), registry_cases(&pairs))
    };
    if cases.is_empty() {
        say(&format!(
            "\npatch corpus: SKIPPED: no corpus found: no crate with two versions under {registry}, and no git repository \
             with history under ~/.cargo/git, /usr/local/src, /usr/src or /opt (set TANDEM_PATCH_CORPUS_GIT to one)\n"
        ));
        return Ok(());
    }
    let (total, cases) = sample(cases);
    let tmp = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let mut results = Results::default();
    // The line-ending cases first, on their own random numbers and outside the time budget, so
    // that the sample of the registry runs as it would without them.
    let line_cases = line_ending_cases();
    let mut rng = 0x1e_u64;
    for case in &line_cases {
        run_case(case, tmp.path(), gnu, &mut rng, &mut results)?;
    }
    let started = Instant::now();
    let mut rng = 0x5eed_u64;
    let mut done = 0;
    for case in &cases {
        if started.elapsed() > TIME_BUDGET {
            break;
        }
        done += 1;
        run_case(case, tmp.path(), gnu, &mut rng, &mut results)?;
    }

    let mut report = String::new();
    let mut scope = String::new();
    if total > cases.len() {
        scope = format!(" (an even sample of {} of {total})", cases.len());
    }
    if done < cases.len() {
        scope.push_str(&format!(
            " (the {} s time budget ran out after {done} of {})",
            TIME_BUDGET.as_secs(),
            cases.len()
        ));
    }
    writeln!(report, "\npatch corpus: {source}").ok();
    writeln!(
        report,
        "  {done} file changes{scope}; {git_version}; {}",
        match (&patch_version, gnu) {
            (Some(version), true) => format!("{version} with -F2"),
            (Some(version), false) => format!("`patch` is not GNU patch ({version}): its column is left out"),
            (None, _) => "GNU patch is not installed: its column is left out".to_owned(),
        }
    )
    .ok();
    writeln!(
        report,
        "  pass / fail / WRONG (WRONG: written, but not the post-image; for a stale file, written at all)"
    )
    .ok();
    writeln!(
        report,
        "  {:<26} {:>16} {:>16} {:>16}",
        "variant",
        "tandem",
        "git apply",
        if gnu { "GNU patch -F2" } else { "-" }
    )
    .ok();
    for variant in Variant::ALL {
        let cell = |tool| results.tally((variant, tool)).show();
        let gnu_cell = if gnu { cell(Tool::Gnu) } else { "-".to_owned() };
        writeln!(report, "  {:<26} {:>16} {:>16} {gnu_cell:>16}", variant.name(), cell(Tool::Tandem), cell(Tool::Git))
            .ok();
    }
    let share = |t: Tally| t.ok as f64 * 100.0 / (t.ok + t.failed + t.wrong).max(1) as f64;
    let (ours, git, theirs) = (results.total(Tool::Tandem), results.total(Tool::Git), results.total(Tool::Gnu));
    writeln!(
        report,
        "  {:<26} {:>16} {:>16} {:>16}",
        "all variants",
        format!("{} ({:.1}%)", ours.show(), share(ours)),
        format!("{} ({:.1}%)", git.show(), share(git)),
        if gnu { format!("{} ({:.1}%)", theirs.show(), share(theirs)) } else { "-".to_owned() }
    )
    .ok();
    if line_cases.is_empty() {
        writeln!(report, "  line endings: no registry file to make the cases from").ok();
    } else {
        writeln!(report, "  line endings ({} real files of the registry, every variant):", line_cases.len()).ok();
        for shape in Shape::ALL {
            let cell = |tool| results.shapes.get(&(shape, tool)).copied().unwrap_or_default().show();
            let gnu_cell = if gnu { cell(Tool::Gnu) } else { "-".to_owned() };
            writeln!(
                report,
                "  {:<26} {:>16} {:>16} {gnu_cell:>16}",
                shape.name(),
                cell(Tool::Tandem),
                cell(Tool::Git)
            )
            .ok();
        }
    }
    let strategies: Vec<String> = results.strategies.iter().map(|(name, count)| format!("{name} {count}")).collect();
    writeln!(report, "  hunks placed by tandem: {}", strategies.join(", ")).ok();
    let per = |time: Duration, runs: u32| time.as_secs_f64() * 1000.0 / f64::from(runs.max(1));
    let (ours_ms, git_ms) = (per(results.tandem_time, results.tandem_runs), per(results.git_time, results.git_runs));
    writeln!(
        report,
        "  time per patch: tandem {ours_ms:.3} ms ({} build, parse + apply, in process), git apply {git_ms:.3} ms \
         (process spawn included)",
        if cfg!(debug_assertions) { "debug" } else { "release" },
    )
    .ok();
    for ((variant, tool), failures) in &results.failures {
        for failure in failures {
            writeln!(report, "  e.g. {} at {}: {failure}", tool.name(), variant.name()).ok();
        }
    }
    writeln!(report, "  ran in {:.1} s", started.elapsed().as_secs_f64()).ok();
    say(&report);

    if ours.wrong > 0 {
        return Err(format!("tandem wrote {} wrong result(s); see the report above", ours.wrong));
    }
    // Where the patch was made, a change of line endings is written as the post-image by git
    // apply and by us alike, and nowhere do we write one wrong.
    if !results.shape_misses.is_empty() {
        return Err(format!(
            "line endings: {} application(s) not the post-image (or, for tandem, wrong at any variant), e.g.:\n{}",
            results.shape_misses.len(),
            results.shape_misses[..results.shape_misses.len().min(10)].join("\n")
        ));
    }
    // Patches applied where they were made must reproduce the post-image exactly.
    for variant in [Variant::U3, Variant::U1, Variant::U0] {
        let tally = results.tally((variant, Tool::Tandem));
        if tally.failed > 0 {
            return Err(format!("{}: {} failed; see the report above", variant.name(), tally.failed));
        }
    }
    if share(ours) < 98.0 {
        return Err(format!("tandem passed {:.1}% of all variants, under 98%; see the report above", share(ours)));
    }
    if gnu && ours.ok < theirs.ok {
        return Err(format!("tandem passed {} variants, GNU patch -F2 {}", ours.ok, theirs.ok));
    }
    Ok(())
}
