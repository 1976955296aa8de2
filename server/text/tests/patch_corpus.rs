//! Corpus test of `tandem_text::patch` on real changes nobody here wrote: consecutive versions of
//! crates in the cargo registry (`~/.cargo/registry/src`), or else consecutive commits of a git
//! repository found on the machine. Each changed file becomes `git diff --no-index` patches at
//! `-U3`, `-U1` and `-U0`; each is applied by us, by `git apply` and by GNU `patch` to the
//! pre-image, and again to the pre-image with lines prepended (the patch unchanged), and the
//! result is compared byte for byte with the post-image.
//!
//! The table and the time per patch (ours against `git apply`, process spawn included: the P5
//! benchmark comparison) are written straight to stderr, so they show without `--nocapture`.
//! Without git or any corpus the test says why and passes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use tandem_text::patch;

const CONTEXTS: [usize; 3] = [3, 1, 0];
/// Lines prepended to the pre-image for the offset runs.
const OFFSET_LINES: usize = 25;
/// More file changes than this are sampled evenly, to stay well under a minute in debug builds.
const MAX_CASES: usize = 300;
/// Past this, the remaining changes are left out (and the report says so): a loaded machine
/// spawns processes slowly, and the test must stay well under a minute.
const TIME_BUDGET: Duration = Duration::from_secs(40);
const MAX_FILE_BYTES: u64 = 512 * 1024;

/// One changed file: its content before and after (`None`: absent).
struct Case {
    label: String,
    name: String,
    pre: Option<String>,
    post: Option<String>,
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

/// Results per (context, offset run, tool).
#[derive(Default)]
struct Results {
    tallies: BTreeMap<(usize, bool, Tool), Tally>,
    failures: BTreeMap<(usize, bool, Tool), Vec<String>>,
    strategies: BTreeMap<&'static str, usize>,
    tandem_time: Duration,
    tandem_runs: u32,
    git_time: Duration,
    git_runs: u32,
}

impl Results {
    fn record(&mut self, key: (usize, bool, Tool), label: &str, outcome: Outcome) {
        self.tallies.entry(key).or_default().add(&outcome);
        let detail = match outcome {
            Outcome::Ok => return,
            Outcome::Failed(why) => why,
            Outcome::Wrong => "applied, but the result differs from the post-image".to_owned(),
        };
        let failures = self.failures.entry(key).or_default();
        if failures.len() < 4 {
            failures.push(format!("{label}: {}", detail.lines().next().unwrap_or("")));
        }
    }

    fn tally(&self, key: (usize, bool, Tool)) -> Tally {
        self.tallies.get(&key).copied().unwrap_or_default()
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

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => stack.push(path),
                Ok(kind) if kind.is_file() => {
                    if let Ok(relative) = path.strip_prefix(root) {
                        out.push(relative.to_path_buf());
                    }
                }
                _ => {}
            }
        }
    }
    out.sort();
    out
}

/// `1.2.3-rc.1` → comparable numbers; `None` when it is not a version.
fn version_key(version: &str) -> Option<(Vec<u64>, String)> {
    let (core, pre) = version.split_once('-').unwrap_or((version, "~"));
    let numbers: Option<Vec<u64>> = core.split('.').map(|n| n.parse().ok()).collect();
    numbers.filter(|n| n.len() == 3).map(|n| (n, pre.to_owned()))
}

/// Consecutive versions of every crate with more than one version in the registry.
fn registry_pairs() -> (String, Vec<(PathBuf, PathBuf)>) {
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cargo")));
    let Some(src) = cargo_home.map(|home| home.join("registry").join("src")) else {
        return ("no CARGO_HOME or HOME".to_owned(), Vec::new());
    };
    let mut versions: BTreeMap<String, Vec<(Vec<u64>, String, PathBuf)>> = BTreeMap::new();
    for index in std::fs::read_dir(&src).into_iter().flatten().flatten() {
        for krate in std::fs::read_dir(index.path()).into_iter().flatten().flatten() {
            let dir_name = krate.file_name().to_string_lossy().into_owned();
            // `name-1.2.3`: the version starts after the last `-` that is followed by a digit
            // and parses (names have dashes, pre-releases too).
            let split = dir_name
                .match_indices('-')
                .map(|(at, _)| at)
                .filter(|&at| version_key(&dir_name[at + 1..]).is_some())
                .min();
            if let Some(at) = split
                && let Some((numbers, pre)) = version_key(&dir_name[at + 1..])
            {
                versions.entry(dir_name[..at].to_owned()).or_default().push((numbers, pre, krate.path()));
            }
        }
    }
    let mut pairs = Vec::new();
    for list in versions.values_mut() {
        list.sort();
        for window in list.windows(2) {
            pairs.push((window[0].2.clone(), window[1].2.clone()));
        }
    }
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
            cases.push(Case { label, name, pre, post });
        }
    }
    cases
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

fn offset_prefix(pre: &str) -> String {
    let eol = if pre.contains("\r\n") { "\r\n" } else { "\n" };
    (0..OFFSET_LINES).map(|i| format!("// line {i} added above the code the patch was made against{eol}")).collect()
}

fn apply_tandem(diff: &str, pre: &str, expected: Option<&str>, results: &mut Results) -> Outcome {
    let start = Instant::now();
    let applied = patch::parse(diff).and_then(|parsed| match parsed.files.as_slice() {
        [file] => patch::apply(file, pre).map(|applied| (file.is_deletion(), applied)),
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
            if result == expected { Outcome::Ok } else { Outcome::Wrong }
        }
        Err(err) => Outcome::Failed(err.to_string()),
    }
}

/// One application of one patch: the file, the text it is applied to, what must come out.
struct Attempt<'a> {
    case: &'a Case,
    context: usize,
    pre: Option<&'a str>,
    expected: Option<&'a str>,
}

/// Applies `diff_path` with an external tool in a fresh `work` directory holding the pre-image.
fn apply_external(
    tool: Tool,
    work: &Path,
    diff_path: &Path,
    attempt: &Attempt<'_>,
    results: &mut Results,
) -> Result<Outcome, String> {
    let Attempt { case, context, pre, expected } = *attempt;
    std::fs::remove_dir_all(work).ok();
    std::fs::create_dir_all(work).map_err(|e| format!("mkdir {}: {e}", work.display()))?;
    let target = work.join(&case.name);
    if let Some(pre) = pre {
        std::fs::write(&target, pre).map_err(|e| format!("write {}: {e}", target.display()))?;
    }
    let mut command = match tool {
        Tool::Git => {
            let mut command = Command::new("git");
            command.args(["apply", "-p2", "--whitespace=nowarn"]);
            if context == 0 {
                command.arg("--unidiff-zero");
            }
            command.arg(diff_path);
            command
        }
        Tool::Gnu => {
            let mut command = Command::new("patch");
            command
                .args(["-p2", "--batch", "--silent", "--no-backup-if-mismatch", "--reject-file=-", "-i"])
                .arg(diff_path);
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
        let mut why = String::from_utf8_lossy(&output.stderr).trim().to_owned();
        if why.is_empty() {
            why = String::from_utf8_lossy(&output.stdout).trim().to_owned();
        }
        return Ok(Outcome::Failed(why));
    }
    let result = std::fs::read(&target).ok().map(|bytes| String::from_utf8_lossy(&bytes).into_owned());
    Ok(if result.as_deref() == expected { Outcome::Ok } else { Outcome::Wrong })
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
        let names: Vec<String> = pairs
            .iter()
            .map(|(old, new)| {
                let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                format!("{} → {}", name(old), name(new))
            })
            .collect();
        let shown = names.iter().take(4).cloned().collect::<Vec<_>>().join(", ");
        let more = if names.len() > 4 { format!(" and {} more", names.len() - 4) } else { String::new() };
        (format!("{} crate version pairs in {registry} ({shown}{more})", pairs.len()), registry_cases(&pairs))
    };
    if cases.is_empty() {
        say(&format!(
            "\npatch corpus: SKIPPED: no corpus found: no crate with two versions under {registry}, and no git repository \
             with history under ~/.cargo/git, /usr/local/src, /usr/src or /opt (set TANDEM_PATCH_CORPUS_GIT to one)\n"
        ));
        return Ok(());
    }
    let (total, cases) = sample(cases);
    let started = Instant::now();
    let tmp = tempfile::tempdir().map_err(|e| format!("tempdir: {e}"))?;
    let (old_dir, new_dir, work) = (tmp.path().join("old"), tmp.path().join("new"), tmp.path().join("work"));
    let diff_path = tmp.path().join("change.diff");
    let mut results = Results::default();
    let (mut modified, mut added, mut deleted) = (0, 0, 0);
    let mut unanchored_zero = 0;
    let mut done = 0;
    for case in &cases {
        if started.elapsed() > TIME_BUDGET {
            break;
        }
        done += 1;
        match (&case.pre, &case.post) {
            (Some(_), Some(_)) => modified += 1,
            (None, _) => added += 1,
            (_, None) => deleted += 1,
        }
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
        for context in CONTEXTS {
            let output = run(Command::new("git")
                .current_dir(tmp.path())
                .args(["diff", "--no-index", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/"])
                .arg(format!("-U{context}"))
                .args([&old_arg, &new_arg]))?;
            if output.status.code() != Some(1) {
                return Err(format!("git diff failed on {}: {}", case.label, String::from_utf8_lossy(&output.stderr)));
            }
            let diff =
                String::from_utf8(output.stdout).map_err(|e| format!("{}: diff is not UTF-8: {e}", case.label))?;
            std::fs::write(&diff_path, &diff).map_err(|e| format!("write diff: {e}"))?;
            let pre = case.pre.as_deref().unwrap_or("");
            let mut runs = vec![(false, pre.to_owned(), case.post.clone())];
            if let (Some(pre), Some(post)) = (&case.pre, &case.post) {
                let prefix = offset_prefix(pre);
                runs.push((true, format!("{prefix}{pre}"), Some(format!("{prefix}{post}"))));
                // A zero-context hunk that only inserts has nothing to find: it goes where its
                // header says. If it comes first, the offset cannot be known (by any tool).
                let first_inserts = patch::parse(&diff)
                    .ok()
                    .and_then(|p| p.files.first()?.hunks.first().map(|h| h.old_lines().next().is_none()));
                if context == 0 && first_inserts == Some(true) {
                    unanchored_zero += 1;
                }
            }
            for (offset, pre, post) in &runs {
                let outcome = apply_tandem(&diff, pre, post.as_deref(), &mut results);
                results.record((context, *offset, Tool::Tandem), &case.label, outcome);
                let attempt =
                    Attempt { case, context, pre: case.pre.as_ref().map(|_| pre.as_str()), expected: post.as_deref() };
                let git = apply_external(Tool::Git, &work, &diff_path, &attempt, &mut results)?;
                results.record((context, *offset, Tool::Git), &case.label, git);
                if gnu {
                    let gnu = apply_external(Tool::Gnu, &work, &diff_path, &attempt, &mut results)?;
                    results.record((context, *offset, Tool::Gnu), &case.label, gnu);
                }
            }
        }
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
        "  {done} file changes{scope}: {modified} modified, {added} added, {deleted} deleted; {git_version}; {}",
        match (&patch_version, gnu) {
            (Some(version), true) => version.clone(),
            (Some(version), false) => format!("`patch` is not GNU patch ({version}): its column is left out"),
            (None, _) => "GNU patch is not installed: its column is left out".to_owned(),
        }
    )
    .ok();
    writeln!(report, "  ok / failed / wrong (wrong: applied, but not byte-identical to the post-image)").ok();
    writeln!(
        report,
        "  {:<22} {:>18} {:>18} {:>18}",
        "patch",
        "tandem",
        "git apply",
        if gnu { "GNU patch" } else { "-" }
    )
    .ok();
    for context in CONTEXTS {
        for offset in [false, true] {
            let row = if offset { format!("-U{context}, +{OFFSET_LINES} lines above") } else { format!("-U{context}") };
            let cell = |tool| results.tally((context, offset, tool)).show();
            let gnu_cell = if gnu { cell(Tool::Gnu) } else { "-".to_owned() };
            writeln!(report, "  {row:<22} {:>18} {:>18} {gnu_cell:>18}", cell(Tool::Tandem), cell(Tool::Git)).ok();
        }
    }
    writeln!(
        report,
        "  -U0 patches whose first hunk only inserts (no line to find, so no tool can see an offset): {unanchored_zero}"
    )
    .ok();
    let strategies: Vec<String> = results.strategies.iter().map(|(name, count)| format!("{name} {count}")).collect();
    writeln!(report, "  hunks placed by tandem: {}", strategies.join(", ")).ok();
    let per = |time: Duration, runs: u32| time.as_secs_f64() * 1000.0 / f64::from(runs.max(1));
    let (ours, git) = (per(results.tandem_time, results.tandem_runs), per(results.git_time, results.git_runs));
    writeln!(
        report,
        "  time per patch (P5): tandem {ours:.3} ms ({} build, parse + apply, in process), git apply {git:.3} ms \
         (process spawn included): git apply takes {:.1}× as long",
        if cfg!(debug_assertions) { "debug" } else { "release" },
        git / ours.max(1e-9)
    )
    .ok();
    for ((context, offset, tool), failures) in &results.failures {
        let tool = match tool {
            Tool::Tandem => "tandem",
            Tool::Git => "git apply",
            Tool::Gnu => "GNU patch",
        };
        let run = if *offset { format!("-U{context}, offset") } else { format!("-U{context}") };
        for failure in failures {
            writeln!(report, "  e.g. {tool} at {run}: {failure}").ok();
        }
    }
    writeln!(report, "  ran in {:.1} s", started.elapsed().as_secs_f64()).ok();
    say(&report);

    // Patches applied where they were made must reproduce the post-image exactly.
    for context in CONTEXTS {
        let tally = results.tally((context, false, Tool::Tandem));
        if tally.failed + tally.wrong > 0 {
            return Err(format!("-U{context}: {} failed, {} wrong; see the report above", tally.failed, tally.wrong));
        }
    }
    // After an offset, a hunk lands wrong when its context repeats nearer to the stated line
    // than its true place (with `-U1`, a lone `}` does): no tool can know. So: at least as many
    // exact results as each reference tool, and with `-U3` hardly any misses.
    for context in CONTEXTS {
        let ours = results.tally((context, true, Tool::Tandem));
        for tool in [Tool::Git, Tool::Gnu] {
            let theirs = results.tally((context, true, tool));
            if ours.ok < theirs.ok {
                return Err(format!(
                    "-U{context} with lines prepended: {} exact, fewer than another tool's {}",
                    ours.ok, theirs.ok
                ));
            }
        }
        let misses = ours.failed + ours.wrong;
        if context == 3 && misses * 100 > ours.ok + misses {
            return Err(format!(
                "-U3 with lines prepended: {misses} of {} missed; see the report above",
                ours.ok + misses
            ));
        }
    }
    Ok(())
}
