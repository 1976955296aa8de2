//! Sidecar benchmarks against a peer measured in the same run.
//!
//! `cargo bench -p tandem --bench sidecar [-- [--quick] [P1|P2|P3|P4|P7|P8|P9|R1|A1|A1T|C1|A2|A3|M1|T1]...]`
//! (or `TANDEM_BENCH_QUICK=1`). Quick mode runs few iterations, for a smoke test.
//!
//! - P1: `grep` vs `rg` with the same ignore rules, interleaved, on two trees: a generated one of
//!   fixed shape (seeded: the same bytes everywhere) and `~/.cargo/registry/src` (real, but it
//!   grows). Three patterns in files-with-matches mode and one in content mode; the counts must
//!   agree. On the generated tree also the peak memory of a grep matching nearly every line
//!   (tandem's growth over its idle size against rg's whole peak, from GNU time) and what tandem
//!   keeps afterwards.
//! - P2: `glob` `**/*.rs` over the same two trees vs `rg --files -g '*.rs'`, on a warm server
//!   and as a process per call (`tandem tool glob`), against ripgrep 15 (`.tools/rg15/bin/rg`,
//!   or `$TANDEM_BENCH_RG15`; a row says MISSING without it) and the system's `rg`.
//! - P3: `tandem/tools/call read` round trip on a 4 KB file vs spawning `cat` on it, strictly
//!   interleaved (one spawn, one read); the syscalls per read, counted with `strace -f -c`. The
//!   client writes each request in one write and reads the answer on the asking thread; a trip
//!   ends at the answer's last byte (its JSON is parsed after, as `cat`'s output is not parsed).
//!   For reference, an unknown method's round trip, back to back and after a `cat` spawn.
//! - P4: `edit` near the end of a 50 MB file (staged, fsynced, renamed) vs `cp` + `sync` of it and
//!   a Python read-replace-write-fsync, interleaved (`cp` without sync for reference).
//! - P7: `lsp` definition/references via Tandem vs a direct async-lsp request to a warm instance of
//!   the same server (pyright, clangd, typescript-language-server, rust-analyzer), both started
//!   and warmed, then asked in turn (A/B interleaved, which goes first alternating), so that
//!   background work of either server falls on both sides alike; edit → fresh diagnostics per
//!   server.
//! - P8: cold start (spawn → `initialize` response) and idle RSS; `true` spawn for reference.
//! - A1: agent loop overhead per tool call: from the end of the provider's streamed tool call to
//!   the next request carrying the result (scripted provider over real HTTP), at turns 1, 20 and
//!   100 of one turn of 100 or more calls whose whole history goes with every request (three
//!   sessions of that turn, samples pooled), and the same tool called directly with
//!   `tandem/tools/call` for reference. Every client must send
//!   the whole history, so the peer of turn N is turn 1 plus the extra time a bare HTTP client
//!   takes to POST turn N's bigger body to the same provider (measured in the same run,
//!   interleaved); goal ≤ 1.25× of that: what Tandem adds does not grow with the history.
//! - A1T: A1's turn with OpenTelemetry export off and on (to an OTLP/HTTP receiver in the bench),
//!   sessions interleaved on two warm sidecars: the loop overhead per tool call of each and the
//!   ratio. Off, the agent's span call sites are disabled, so off is the loop before telemetry.
//! - A2: a long session: 100 tool calls reading 8 KB files each with a model whose window is
//!   32k tokens (the scripted provider counts 4 bytes a token and refuses larger requests as
//!   OpenAI does). Prints the bytes sent per request against the turn number (they must level
//!   off under the budget, as compaction keeps the history in it) and the loop overhead per call
//!   at turns 91–100 against turns 1–10 (goal ≤ 1.5×); then the same session with a window it
//!   never fills, for the cost of sending the whole history each time.
//! - R1: the approval latency the diagnostics preview adds, per server of P7 (same fixtures and
//!   edits): prompt → `tandem/session/requestPermission` with previews on (the default wait) vs
//!   `[review] preview_timeout_ms = 0`, interleaved on two warm sidecars, every proposal
//!   rejected; the added latency (difference of the medians) against the same server's edit →
//!   fresh diagnostics in the same run (goal ≤ it + 10%, every preview ready). A file no server
//!   serves must add ~0 (≤ 2 ms). rust-analyzer checks saved files only: its preview is "not
//!   available", reported without a goal.
//!
//! - A3: summary requests per 100 turns of reads of 4 KB, 50 KB and 200 KB files in 8k, 32k and
//!   128k windows (scripted provider), and each session's largest request against the budget.
//! - M1: the resident set after every call of a 1,000-call session whose every tenth call edits
//!   a 10 MiB file.
//! - T1: the tokens of the tool definitions in a first request (full profile, large window).
//!
//! The machine's load (`/proc/loadavg`, `/proc/pressure/cpu`) is printed at the start and end.
//!
//! The workspace is a temporary directory under `$TMPDIR` (default `/tmp`); set `TMPDIR` to
//! measure on another file system.

#![allow(clippy::print_stdout, reason = "a benchmark reports on stdout")]

mod a1t;
mod c1;
mod direct;
mod p7;
mod r1;
mod r3;
#[path = "../support/mod.rs"]
mod support;
mod tree;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use support::{Res, Sidecar};

/// Iteration counts of one run.
struct Plan {
    quick: bool,
    /// Timed runs of each P1 pattern and of P2, each side (after one warm-up run).
    p12_runs: usize,
    p3_warmup: usize,
    p3_calls: usize,
    p3_spawns: usize,
    p4_warmup: usize,
    p4_iterations: usize,
    p8_spawns: usize,
    p8_rss_samples: usize,
    a1_calls: usize,
    /// Bare POSTs per body size, for A1's transport floor.
    a1_posts: usize,
    /// Sessions A1 runs its scripted turn in, samples pooled.
    a1_runs: usize,
    /// Rounds of A1T (a session with telemetry off and one with it on each).
    a1t_rounds: usize,
    a2_calls: usize,
    /// Files of the generated tree of P1 and P2.
    tree_files: usize,
    /// Size of P4's big file: 50 MB in a full run; small in a smoke run, so that it fits a
    /// machine with little free disk (a smoke run's numbers are not read).
    big_bytes: usize,
    /// Files of C1's tree (twice over: ours and git's): 10,000 in a full run.
    c1_files: usize,
}

impl Plan {
    fn new(quick: bool) -> Self {
        if quick {
            Self {
                quick,
                p12_runs: 1,
                p3_warmup: 20,
                p3_calls: 200,
                p3_spawns: 100,
                p4_warmup: 1,
                p4_iterations: 3,
                p8_spawns: 5,
                p8_rss_samples: 1,
                a1_calls: 100,
                a1_posts: 3,
                a1_runs: 1,
                a1t_rounds: 2,
                a2_calls: 100,
                tree_files: 2_000,
                big_bytes: 4 * 1024 * 1024,
                c1_files: 1_000,
            }
        } else {
            Self {
                quick,
                p12_runs: 7,
                p3_warmup: 200,
                p3_calls: 2000,
                p3_spawns: 1000,
                p4_warmup: 2,
                p4_iterations: 20,
                p8_spawns: 20,
                p8_rss_samples: 3,
                a1_calls: 300,
                a1_posts: 21,
                a1_runs: 3,
                a1t_rounds: 6,
                a2_calls: 100,
                tree_files: 20_000,
                big_bytes: 50 * 1024 * 1024,
                c1_files: 10_000,
            }
        }
    }
}

/// A benchmark: runs and returns its summary rows.
type Bench = fn(&Plan) -> Res<Vec<Row>>;

/// The goal of a row that measures something with no goal to meet (its result shows "—").
const NOT_AVAILABLE: &str = "not available";

/// One line of the summary table.
struct Row {
    id: &'static str,
    what: String,
    ours: String,
    peer: String,
    ratio: String,
    goal: &'static str,
    pass: bool,
}

fn main() {
    let mut quick = std::env::var("TANDEM_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
    let mut only: Vec<String> = Vec::new();
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--quick" => quick = true,
            // cargo passes `--bench` to every `harness = false` bench; libtest flags are ignored too.
            "--bench" | "--nocapture" | "--show-output" => {}
            other if other.starts_with('-') => eprintln!("sidecar bench: ignoring unknown flag `{other}`"),
            other => only.push(other.to_ascii_uppercase()),
        }
    }
    let wanted = |id: &str| only.is_empty() || only.iter().any(|o| o == id);
    let plan = Plan::new(quick);
    println!(
        "tandem sidecar benchmarks ({} mode, binary {})",
        if plan.quick { "quick" } else { "full" },
        support::tandem_bin().display()
    );
    let mut rows = Vec::new();
    let mut failed = false;
    r3::machine_load("at the start");
    // P3 first: its round trip of tens of microseconds is the row most sensitive to what the
    // rows before left in this process. Run after P4 (a 50 MB file read and written) or P2
    // (trees of 20,000 files) in the same process, it measured 70–74 µs; run after them in a
    // process of its own, or after a light row, 52–57 µs, with the same `cat` times. Running
    // first does not shield it from the machine: right after a release build it measured 69 µs.
    let benches: [(&str, Bench); 15] = [
        ("P3", p3),
        ("P1", p1),
        ("P2", p2),
        ("P4", p4),
        ("P7", p7::p7),
        ("R1", r1::r1),
        ("P8", p8),
        ("P9", p9),
        ("A1", a1),
        ("A1T", a1t::a1t),
        ("C1", c1::c1),
        ("A2", a2),
        ("A3", r3::a3),
        ("M1", r3::m1),
        ("T1", r3::t1),
    ];
    for (id, bench) in benches {
        if !wanted(id) {
            continue;
        }
        match bench(&plan) {
            Ok(mut more) => rows.append(&mut more),
            Err(err) => {
                // On stdout as well, beside the table, where a CI log excerpt shows it.
                eprintln!("{id} failed: {err}");
                println!("\n{id} FAILED: {err}");
                failed = true;
            }
        }
    }
    r3::machine_load("at the end");
    print_table(&rows);
    if failed {
        println!("\nsome benchmarks failed (see FAILED above)");
        std::process::exit(1);
    }
}

fn print_table(rows: &[Row]) {
    let header = ["bench", "what", "tandem", "peer", "ratio", "goal", "result"];
    let cells: Vec<[String; 7]> = rows
        .iter()
        .map(|r| {
            [
                r.id.to_owned(),
                r.what.clone(),
                r.ours.clone(),
                r.peer.clone(),
                r.ratio.clone(),
                r.goal.to_owned(),
                if r.goal == NOT_AVAILABLE {
                    "—"
                } else if r.pass {
                    "PASS"
                } else {
                    "MISS"
                }
                .to_owned(),
            ]
        })
        .collect();
    let mut widths = header.map(|h| h.chars().count());
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let mut out = String::new();
        for (cell, width) in cells.iter().zip(widths) {
            let pad = width.saturating_sub(cell.chars().count());
            let _ = write!(out, "{cell}{}  ", " ".repeat(pad));
        }
        out.trim_end().to_owned()
    };
    println!();
    println!("{}", line(&header.map(str::to_owned)));
    println!("{}", line(&widths.map(|w| "-".repeat(w))));
    for row in &cells {
        println!("{}", line(row));
    }
}

// ---------------------------------------------------------------------------------------------
// Helpers

fn median(samples: &mut [Duration]) -> Duration {
    samples.sort_unstable();
    match samples.len() {
        0 => Duration::ZERO,
        n if n % 2 == 1 => samples[n / 2],
        n => (samples[n / 2 - 1] + samples[n / 2]) / 2,
    }
}

/// The sample at quantile `q` (0..=1) of sorted samples.
fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let index = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn fmt_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 1e-3 {
        format!("{:.1} µs", secs * 1e6)
    } else if secs < 1.0 {
        format!("{:.2} ms", secs * 1e3)
    } else {
        format!("{secs:.2} s")
    }
}

/// Median with spread, for the detail lines.
fn describe(samples: &mut [Duration]) -> String {
    let med = median(samples);
    format!(
        "median {} (min {}, p90 {}, n={})",
        fmt_duration(med),
        fmt_duration(quantile(samples, 0.0)),
        fmt_duration(quantile(samples, 0.9)),
        samples.len()
    )
}

fn workspace() -> Res<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::Builder::new().prefix("tandem-bench-").tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    Ok((dir, root))
}

fn tool_ok(result: &Value) -> Res<()> {
    match result.get("error").and_then(Value::as_str) {
        None => Ok(()),
        Some(error) => Err(format!("tool failed: {error}")),
    }
}

/// Spawns `program args` with stdout captured and waits for it; returns its stdout.
fn run(program: &str, args: &[&Path]) -> Res<Vec<u8>> {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("spawn {program}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{program} exited with {}", output.status));
    }
    Ok(output.stdout)
}

/// Text of about `bytes` bytes in lines of 80 characters (79 + newline).
fn text_of(bytes: usize, marker_line: Option<(usize, &str)>) -> String {
    const FILLER: &str = "the quick brown fox jumps over the lazy dog, again and again, until the end";
    let lines = bytes.div_ceil(80);
    let mut text = String::with_capacity(lines * 80 + 64);
    for n in 0..lines {
        match marker_line {
            Some((at, marker)) if at == n => {
                let _ = writeln!(text, "{marker:<79}");
            }
            _ => {
                let _ = writeln!(text, "{n:>8} {}", &FILLER[..70]);
            }
        }
    }
    text
}

// ---------------------------------------------------------------------------------------------
// P1, P2: grep and glob over a large tree vs ripgrep

/// The tree P1 and P2 search: cargo's registry sources (`$CARGO_HOME/registry/src`), canonicalized.
fn registry_src() -> Res<PathBuf> {
    let cargo_home = match std::env::var_os("CARGO_HOME") {
        Some(home) => PathBuf::from(home),
        None => PathBuf::from(std::env::var_os("HOME").ok_or("neither CARGO_HOME nor HOME is set")?).join(".cargo"),
    };
    let src = cargo_home.join("registry").join("src");
    src.canonicalize().map_err(|e| format!("{}: {e} (it exists after a cargo build)", src.display()))
}

/// Fails when `rg` cannot be run.
fn require_rg() -> Res<()> {
    match Command::new("rg").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status() {
        Ok(status) if status.success() => Ok(()),
        _ => Err("P1/P2 skipped: rg not installed (apt-get install ripgrep)".into()),
    }
}

/// Runs `rg args` in `dir` and returns the number of lines it printed (files).
///
/// Our walker applies .gitignore outside a git repository and ignores the global gitignore, so rg
/// is told the same (`--no-require-git`, `--no-ignore-global`).
fn rg_files(dir: &Path, args: &[&str]) -> Res<(Duration, usize)> {
    rg_files_with(Path::new("rg"), dir, args)
}

/// [`rg_files`] with the `rg` at `program`.
fn rg_files_with(program: &Path, dir: &Path, args: &[&str]) -> Res<(Duration, usize)> {
    let start = Instant::now();
    let output = Command::new(program)
        .args(["--no-require-git", "--no-ignore-global", "--no-config"])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("spawn rg: {e}"))?;
    let elapsed = start.elapsed();
    // 1: nothing found; 2: an error, such as an unreadable file, with results still printed.
    if !matches!(output.status.code(), Some(0..=2)) {
        return Err(format!("rg {args:?} exited with {}", output.status));
    }
    Ok((elapsed, lines_of(&output.stdout)))
}

/// Times one tool call and returns the number of files it reported (`count_key`, or else the
/// number of output lines).
fn tool_files(sidecar: &mut Sidecar, name: &str, args: &Value, count_key: &str) -> Res<(Duration, usize)> {
    let start = Instant::now();
    let result = sidecar.call(name, args.clone())?;
    let elapsed = start.elapsed();
    tool_ok(&result)?;
    if result.get("truncated").and_then(Value::as_bool) == Some(true) {
        return Err(format!("{name} truncated its results: raise max_results"));
    }
    let count = match result.get(count_key).and_then(Value::as_u64) {
        Some(count) => count as usize,
        None => result["output"].as_str().map_or(0, |o| o.lines().count()),
    };
    Ok((elapsed, count))
}

/// Warm-up then `runs` interleaved runs of both sides; returns (ours, peer, our count, peer count).
fn race(
    plan: &Plan,
    mut ours: impl FnMut() -> Res<(Duration, usize)>,
    mut peer: impl FnMut() -> Res<(Duration, usize)>,
) -> Res<(Duration, Duration, usize, usize)> {
    let (_, mut our_count) = ours()?;
    let (_, mut peer_count) = peer()?;
    let (mut our_times, mut peer_times) = (Vec::new(), Vec::new());
    for _ in 0..plan.p12_runs {
        let (time, count) = ours()?;
        our_times.push(time);
        our_count = count;
        let (time, count) = peer()?;
        peer_times.push(time);
        peer_count = count;
    }
    println!("    tandem: {}", describe(&mut our_times));
    println!("    rg:     {}", describe(&mut peer_times));
    let note = if our_count == peer_count { "" } else { "  (counts differ)" };
    println!("    files: tandem {our_count}, rg {peer_count}{note}");
    Ok((median(&mut our_times), median(&mut peer_times), our_count, peer_count))
}

fn counts(ours: usize, peer: usize, unit: &str) -> String {
    if ours == peer { format!("{ours} {unit}") } else { format!("{ours} vs rg {peer} {unit} (≠)") }
}

/// The trees P1 and P2 search: the generated one (fixed shape) and the cargo registry (real,
/// but it grows as crates are downloaded).
fn trees(plan: &Plan) -> Res<Vec<(String, PathBuf, Option<tempfile::TempDir>)>> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    tree::generate(&root, plan.tree_files, 0x7A4D_E15E_ED5E_ED01)?;
    let mut trees = vec![(format!("generated {}k files", plan.tree_files / 1000), root, Some(dir))];
    match registry_src() {
        Ok(registry) => trees.push(("cargo registry".to_owned(), registry, None)),
        Err(err) => println!("  (the cargo registry is not searched: {err})"),
    }
    Ok(trees)
}

/// The number of lines `rg` printed, or the files tandem reported.
fn lines_of(output: &[u8]) -> usize {
    output.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count()
}

fn p1(plan: &Plan) -> Res<Vec<Row>> {
    require_rg()?;
    let mut rows = Vec::new();
    for (name, root, _keep) in trees(plan)? {
        println!("\nP1: `grep` over {} ({name}) vs `rg` with the same ignore rules", root.display());
        let mut sidecar = Sidecar::spawn(&root, &[])?;
        sidecar.initialize(Value::Null)?;
        // Our grep is smart-case by default, rg case-sensitive: the case is given to both.
        let cases: [(&str, &str, bool, bool); 4] = [
            ("literal", "fn main", false, false),
            ("regex", r"impl\s+\w+\s+for\s+\w+", false, false),
            ("case-insensitive alternation", "deprecated|todo|fixme", true, false),
            ("content mode, regex", r"impl\s+\w+\s+for\s+\w+", false, true),
        ];
        for (what, pattern, ignore_case, content) in cases {
            println!("  {what}: `{pattern}`{}", if ignore_case { " (ignoring case)" } else { "" });
            let mode = if content { "content" } else { "files_with_matches" };
            let args = json!({
                "pattern": pattern,
                "output_mode": mode,
                "max_results": 1_000_000,
                "case_insensitive": ignore_case,
            });
            let case = if ignore_case { "-i" } else { "-s" };
            let rg_args: Vec<&str> = if content {
                vec!["-n", "--no-heading", case, "-e", pattern, "."]
            } else {
                vec!["-l", case, "-e", pattern, "."]
            };
            let key = if content { "matches" } else { "files" };
            let (ours, peer, our_count, peer_count) =
                race(plan, || tool_files(&mut sidecar, "grep", &args, key), || rg_files(&root, &rg_args))?;
            let ratio = ours.as_secs_f64() / peer.as_secs_f64().max(1e-12);
            let unit = if content { "lines" } else { "files" };
            rows.push(Row {
                id: "P1",
                what: format!("grep {what}, {name}, {}", counts(our_count, peer_count, unit)),
                ours: fmt_duration(ours),
                peer: format!("rg {}", fmt_duration(peer)),
                ratio: format!("{ratio:.2}× rg"),
                goal: "≤ 1.1× rg",
                pass: ratio <= 1.1 && our_count == peer_count,
            });
        }
        sidecar.shutdown()?;
        if name.starts_with("generated") {
            rows.extend(grep_memory(&root)?);
        }
    }
    Ok(rows)
}

/// Peak memory of a grep whose pattern matches nearly every line: tandem's growth over its idle
/// size, in files mode and in content mode with the default cap, against rg's whole peak.
fn grep_memory(root: &Path) -> Res<Vec<Row>> {
    let mut rows = Vec::new();
    for (mode, rg_flag) in [("files_with_matches", "-l"), ("content", "-n")] {
        let mut sidecar = Sidecar::spawn(root, &[])?;
        sidecar.initialize(Value::Null)?;
        sidecar.request("tandem/tools/list", json!({}))?;
        let pid = sidecar.child.id();
        let idle = proc_status_kib(pid, "VmRSS")?;
        let result = sidecar.call("grep", json!({ "pattern": "e", "output_mode": mode }))?;
        tool_ok(&result)?;
        let peak = proc_status_kib(pid, "VmHWM")?;
        let after = proc_status_kib(pid, "VmRSS")?;
        sidecar.shutdown()?;
        let rg_peak =
            rg_peak_kib(root, &["--no-require-git", "--no-ignore-global", "--no-config", rg_flag, "-e", "e", "."])?;
        let growth = peak.saturating_sub(idle);
        println!(
            "  grep `e` ({mode}): tandem idle {idle} KiB, peak {peak} KiB, after {after} KiB; rg peak {rg_peak} KiB"
        );
        rows.push(Row {
            id: "P1",
            what: format!("grep peak memory, `e` {mode}, generated tree"),
            ours: format!("+{:.1} MB over idle", growth as f64 / 1024.0),
            peer: format!("rg {:.1} MB", rg_peak as f64 / 1024.0),
            ratio: format!("{:.2}× rg", growth as f64 / (rg_peak as f64).max(1.0)),
            goal: "≤ 1.0× rg",
            pass: growth <= rg_peak,
        });
        rows.push(Row {
            id: "P1",
            what: format!("memory kept after that grep ({mode})"),
            ours: format!("+{:.1} MB over idle", after.saturating_sub(idle) as f64 / 1024.0),
            peer: "-".into(),
            ratio: "-".into(),
            goal: "≤ +8 MB",
            pass: after.saturating_sub(idle) <= 8 * 1024,
        });
    }
    Ok(rows)
}

/// A `Vm…` line of `/proc/PID/status`, in KiB.
pub(crate) fn proc_status_kib(pid: u32, key: &str) -> Res<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .ok_or_else(|| format!("no {key} in /proc/{pid}/status"))
}

/// rg's peak RSS in KiB, from GNU time's `%M`.
fn rg_peak_kib(dir: &Path, args: &[&str]) -> Res<u64> {
    let output = Command::new("/usr/bin/time")
        .args(["-f", "%M", "rg"])
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .map_err(|e| format!("spawn /usr/bin/time rg (apt-get install time): {e}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    stderr.lines().last().and_then(|l| l.trim().parse().ok()).ok_or_else(|| format!("no peak RSS from time: {stderr}"))
}

fn p2(plan: &Plan) -> Res<Vec<Row>> {
    require_rg()?;
    let rg15 = r3::rg15();
    let system = PathBuf::from("rg");
    println!(
        "\nP2 peers: system {}; {}",
        r3::rg_version(&system),
        match &rg15 {
            Ok(path) => format!("{} at {}", r3::rg_version(path), path.display()),
            Err(err) => err.clone(),
        }
    );
    let mut rows = Vec::new();
    let state = tempfile::tempdir().map_err(|e| e.to_string())?;
    for (name, root, _keep) in trees(plan)? {
        println!("\nP2: `glob` `**/*.rs` over {} ({name}) vs `rg --files -g '*.rs'`", root.display());
        let mut sidecar = Sidecar::spawn(&root, &[])?;
        sidecar.initialize(Value::Null)?;
        let args = json!({ "pattern": "**/*.rs", "max_results": 1_000_000 });
        let mut peers: Vec<(String, &Path)> = vec![("system rg".to_owned(), system.as_path())];
        match &rg15 {
            Ok(path) => peers.insert(0, ("rg 15".to_owned(), path.as_path())),
            Err(err) => rows.push(Row {
                id: "P2",
                what: format!("glob **/*.rs, {name}, vs rg 15"),
                ours: "-".into(),
                peer: "rg 15 MISSING".into(),
                ratio: "-".into(),
                goal: "≤ 1.0× rg 15",
                pass: {
                    println!("  {err}");
                    false
                },
            }),
        }
        for (peer_name, program) in &peers {
            println!("  warm server vs {peer_name}:");
            let (ours, peer, our_count, peer_count) = race(
                plan,
                || tool_files(&mut sidecar, "glob", &args, "total"),
                || rg_files_with(program, &root, &["--files", "-g", "*.rs", "."]),
            )?;
            let ratio = ours.as_secs_f64() / peer.as_secs_f64().max(1e-12);
            let is15 = peer_name == "rg 15";
            rows.push(Row {
                id: "P2",
                what: format!("glob **/*.rs warm, {name}, {}", counts(our_count, peer_count, "files")),
                ours: fmt_duration(ours),
                peer: format!("{peer_name} {}", fmt_duration(peer)),
                ratio: format!("{ratio:.2}× {peer_name}"),
                goal: if is15 { "≤ 1.0× rg 15" } else { "≤ 1.2× rg" },
                pass: ratio <= if is15 { 1.0 } else { 1.2 } && our_count == peer_count,
            });
            println!("  a process per call (`tandem tool glob`) vs {peer_name}:");
            let (ours, peer, our_count, peer_count) = race(
                plan,
                || r3::glob_process(&root, state.path()),
                || rg_files_with(program, &root, &["--files", "-g", "*.rs", "."]),
            )?;
            let ratio = ours.as_secs_f64() / peer.as_secs_f64().max(1e-12);
            rows.push(Row {
                id: "P2",
                what: format!("glob **/*.rs per process, {name}, {}", counts(our_count, peer_count, "files")),
                ours: fmt_duration(ours),
                peer: format!("{peer_name} {}", fmt_duration(peer)),
                ratio: format!("{ratio:.2}× {peer_name}"),
                goal: if is15 { "≤ 1.0× rg 15" } else { "≤ 1.2× rg" },
                pass: ratio <= if is15 { 1.0 } else { 1.2 } && our_count == peer_count,
            });
        }
        sidecar.shutdown()?;
    }
    Ok(rows)
}

// ---------------------------------------------------------------------------------------------
// P3: read round trip vs cat spawn

fn p3(plan: &Plan) -> Res<Vec<Row>> {
    println!("\nP3: `read` of a 4 KB file over stdio vs spawning `cat` on it");
    let (_dir, root) = workspace()?;
    let path = root.join("small.txt");
    let text = text_of(4096, None);
    fs::write(&path, &text).map_err(|e| e.to_string())?;

    // Answers read by the thread that asks (see `direct`), as `cat`'s output is.
    let mut sidecar = direct::Direct::start(&root)?;
    let sidecar_pid = sidecar.pid();
    let args = json!({ "file_path": "small.txt" });
    let first = sidecar.call("read", args.clone())?;
    tool_ok(&first)?;
    let lines = first["output"].as_str().map_or(0, |o| o.lines().count());
    if lines != text.lines().count() {
        return Err(format!("read returned {lines} lines, expected {}", text.lines().count()));
    }
    for _ in 0..plan.p3_warmup {
        sidecar.call("read", args.clone())?;
    }
    run("cat", &[&path])?;
    // Strictly interleaved: one `cat` spawn, one read, so that no read follows another (a read
    // right after a read finds everything warm, which a `cat` spawn in between does not).
    let block = 1;
    let mut ours = Vec::with_capacity(plan.p3_spawns);
    let mut peer = Vec::with_capacity(plan.p3_spawns);
    for _ in 0..plan.p3_spawns {
        let start = Instant::now();
        let out = run("cat", &[&path])?;
        peer.push(start.elapsed());
        if out.len() != text.len() {
            return Err(format!("cat printed {} bytes, expected {}", out.len(), text.len()));
        }
        for _ in 0..block {
            let (took, result) = sidecar.timed_call("read", args.clone())?;
            ours.push(took);
            tool_ok(&result)?;
        }
    }
    // Reference: the same round trip for a method the server does not know (transport, framing
    // and this client only, no tool), to tell the tool's share from the protocol's.
    // Measured both back to back (everything warm) and interleaved with `cat` spawns as the
    // reads are (what a spawn costs the next round trip, whatever it asks).
    let mut floor = Vec::with_capacity(plan.p3_calls / 4);
    let mut cold_floor = Vec::with_capacity(plan.p3_spawns);
    for i in 0..plan.p3_calls / 4 + plan.p3_spawns {
        let cold = i >= plan.p3_calls / 4;
        if cold {
            run("cat", &[&path])?;
        }
        let (took, answer) = sidecar.timed_request("tandem/bench/noSuchMethod", json!({}))?;
        if cold { &mut cold_floor } else { &mut floor }.push(took);
        if answer.is_ok() {
            return Err("an unknown method was answered with a result".into());
        }
    }
    // Syscalls per read, counted by strace attached to the sidecar (after the timings: strace
    // slows every syscall down).
    let mut strace_read = || -> Res<()> { tool_ok(&sidecar.call("read", args.clone())?) };
    let pid = sidecar_pid;
    let syscalls = r3::syscalls_per_read(pid, 200, &mut strace_read)?;
    drop(sidecar);

    match &syscalls {
        Some((per, top)) => println!("  syscalls per read (strace -f -c, all threads): {per:.1}: {top}"),
        None => println!("  syscalls per read: strace is not installed (apt-get install strace)"),
    }
    println!("  tandem read: {}", describe(&mut ours));
    println!("  cat spawn:   {}", describe(&mut peer));
    println!("  unknown-method round trip: {} (reference only: transport + client floor)", describe(&mut floor));
    println!("  unknown-method round trip after a `cat` spawn: {} (reference only)", describe(&mut cold_floor));
    let (ours, peer) = (median(&mut ours), median(&mut peer));
    let speedup = peer.as_secs_f64() / ours.as_secs_f64().max(1e-12);
    let calls = syscalls.map_or_else(|| "syscalls: no strace".to_owned(), |(per, _)| format!("{per:.1} syscalls/read"));
    Ok(vec![Row {
        id: "P3",
        what: format!("read 4 KB, round trip, strictly interleaved ({calls})"),
        ours: fmt_duration(ours),
        peer: format!("cat {}", fmt_duration(peer)),
        ratio: format!("{speedup:.1}× faster"),
        goal: "≥ 15× faster",
        pass: speedup >= 15.0,
    }])
}

// ---------------------------------------------------------------------------------------------
// P4: edit near the end of a big file (50 MB in a full run) vs cp

fn marker(n: usize) -> String {
    format!("MARKER-{n:010}|")
}

/// Every path below `root`, relative to it.
fn walk_names(root: &Path) -> Res<Vec<String>> {
    let mut names = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).map_err(|e| e.to_string())? {
            let path = entry.map_err(|e| e.to_string())?.path();
            names.push(path.strip_prefix(root).unwrap_or(&path).display().to_string());
            if path.is_dir() && !path.is_symlink() {
                stack.push(path);
            }
        }
    }
    Ok(names)
}

fn p4(plan: &Plan) -> Res<Vec<Row>> {
    let mb = plan.big_bytes / (1024 * 1024);
    println!("\nP4: `edit` near the end of a {mb} MB file (staged + atomic write) vs spawning `cp` of it");
    let (_dir, root) = workspace()?;
    let path = root.join("big.txt");
    let lines = plan.big_bytes.div_ceil(80);
    let text = text_of(plan.big_bytes, Some((lines - 100, &marker(0))));
    let size = text.len();
    fs::write(&path, text).map_err(|e| e.to_string())?;
    println!("  file: {:.1} MB, {lines} lines, marker on line {}", size as f64 / 1048576.0, lines - 100 + 1);

    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    let mut counter = 0;
    let mut edit = |sidecar: &mut Sidecar| -> Res<Duration> {
        let args = json!({ "file_path": "big.txt", "old_string": marker(counter), "new_string": marker(counter + 1) });
        let start = Instant::now();
        let result = sidecar.call("edit", args)?;
        let elapsed = start.elapsed();
        tool_ok(&result)?;
        counter += 1;
        Ok(elapsed)
    };
    let copy = root.join("copy.txt");
    // `cp` does not fsync; with `durable` the copy is also synced (`sync FILE`), for reference.
    let cp = |durable: bool| -> Res<Duration> {
        let start = Instant::now();
        run("cp", &[&path, &copy])?;
        if durable {
            run("sync", &[&copy])?;
        }
        let elapsed = start.elapsed();
        // Removing the copy right away drops its dirty pages, so no writeback from the peer
        // lingers into tandem's fsync.
        fs::remove_file(&copy).map_err(|e| e.to_string())?;
        Ok(elapsed)
    };

    // A script that does what the edit does, in Python: read, replace once, write, fsync.
    let peer_dir = tempfile::Builder::new().prefix("tandem-bench-peer-").tempdir().map_err(|e| e.to_string())?;
    let script = peer_dir.path().join("edit.py");
    fs::write(
        &script,
        "import os, sys\npath, old, new = sys.argv[1:4]\ntext = open(path, encoding='utf-8').read()\n\
         text = text.replace(old, new, 1)\nwith open(path, 'w', encoding='utf-8') as f:\n    \
         f.write(text)\n    f.flush()\n    os.fsync(f.fileno())\n",
    )
    .map_err(|e| e.to_string())?;
    let python_copy = peer_dir.path().join("big.txt");
    // The interpreter itself, not a version manager's shim (pyenv's runs bash and more first).
    let interpreter = Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .map_err(|e| format!("spawn python3: {e}"))?;
    let interpreter = PathBuf::from(String::from_utf8_lossy(&interpreter.stdout).trim());
    fs::copy(&path, &python_copy).map_err(|e| e.to_string())?;
    let mut python_turn = 0usize;
    let mut python = || -> Res<Duration> {
        let (old, new) = if python_turn.is_multiple_of(2) { (marker(0), marker(1)) } else { (marker(1), marker(0)) };
        python_turn += 1;
        let start = Instant::now();
        let status = Command::new(&interpreter)
            .arg(&script)
            .arg(&python_copy)
            .args([&old, &new])
            .status()
            .map_err(|e| format!("spawn python3: {e}"))?;
        let elapsed = start.elapsed();
        if !status.success() {
            return Err(format!("python3 edit exited with {status}"));
        }
        Ok(elapsed)
    };

    for _ in 0..plan.p4_warmup {
        edit(&mut sidecar)?;
        cp(false)?;
        python()?;
    }
    let (mut ours, mut peer, mut synced, mut scripted) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so that all see the same machine state.
    for _ in 0..plan.p4_iterations {
        peer.push(cp(false)?);
        ours.push(edit(&mut sidecar)?);
        synced.push(cp(true)?);
        scripted.push(python()?);
    }
    drop(sidecar);
    drop(peer_dir);

    let on_disk = fs::read(&path).map_err(|e| e.to_string())?;
    let expected = marker(plan.p4_warmup + plan.p4_iterations);
    if on_disk.len() != size || !on_disk.windows(expected.len()).rev().take(200 * 80).any(|w| w == expected.as_bytes())
    {
        return Err(format!("after the edits the file does not end with {expected} near the end"));
    }
    // Besides the file, only Tandem's state directory (which holds the write-ahead journal)
    // may be there, and no temporary file (`.tandem-<hash>.tmp`) may be left anywhere.
    let leftovers: Vec<String> = walk_names(&root)?
        .into_iter()
        .filter(|name| {
            let state = name == ".tandem" || name.starts_with(".tandem/");
            !(name == "big.txt" || state && !name.ends_with(".tmp"))
        })
        .collect();
    if !leftovers.is_empty() {
        return Err(format!("entries left in the workspace after the edits: {leftovers:?}"));
    }

    println!("  tandem edit:   {}", describe(&mut ours));
    println!("  cp:            {} (reference only: no fsync)", describe(&mut peer));
    println!("  cp + sync:     {}", describe(&mut synced));
    println!("  python + fsync: {}", describe(&mut scripted));
    let (ours, peer, synced, scripted) =
        (median(&mut ours), median(&mut peer), median(&mut synced), median(&mut scripted));
    let ratio = |other: Duration| ours.as_secs_f64() / other.as_secs_f64().max(1e-12);
    Ok(vec![
        Row {
            id: "P4",
            what: format!("edit near end of {mb} MB, vs cp + sync"),
            ours: fmt_duration(ours),
            peer: format!("cp+sync {}", fmt_duration(synced)),
            ratio: format!("{:.2}× cp+sync", ratio(synced)),
            goal: "≤ 2× cp+sync",
            pass: ratio(synced) <= 2.0,
        },
        Row {
            id: "P4",
            what: format!("edit near end of {mb} MB, vs python + fsync"),
            ours: fmt_duration(ours),
            peer: format!("python {}", fmt_duration(scripted)),
            ratio: format!("{:.2}× python", ratio(scripted)),
            goal: "< 1× python",
            pass: ratio(scripted) < 1.0,
        },
        Row {
            id: "P4",
            what: format!("edit near end of {mb} MB, vs cp (no fsync)"),
            ours: fmt_duration(ours),
            peer: format!("cp {}", fmt_duration(peer)),
            ratio: format!("{:.2}× cp", ratio(peer)),
            goal: "reported",
            pass: true,
        },
    ])
}

// ---------------------------------------------------------------------------------------------
// P8: cold start and idle RSS

fn initialize_params(root: &Path) -> Value {
    let uri = format!("file://{}", root.display());
    json!({
        "processId": std::process::id(),
        "rootUri": uri,
        "workspaceFolders": [{ "uri": uri, "name": "ws" }],
        "capabilities": {},
        "initializationOptions": null,
    })
}

/// Resident set size of a process in KiB, from `/proc/<pid>/status`.
pub(crate) fn rss_kib(pid: u32) -> Res<u64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| "no VmRSS in /proc/<pid>/status".to_owned())
}

/// P9: what the read-only sandbox adds to starting a command: `tandem-sandbox --read-only --
/// bash -c true` against `bash -c true`, interleaved.
fn p9(plan: &Plan) -> Res<Vec<Row>> {
    println!(
        "\nP9: sandbox start-up per command (launcher: Landlock and seccomp; workspace-write adds user, mount and network namespaces) vs a plain spawn"
    );
    let launcher = support::tandem_bin().with_file_name("tandem-sandbox");
    let (_dir, root) = workspace()?;
    fs::create_dir_all(root.join(".git")).map_err(|e| e.to_string())?;
    let root_arg = root.display().to_string();
    let sandboxed = |policy: &[&str]| -> Res<Duration> {
        let start = Instant::now();
        let status = Command::new(&launcher)
            .args(policy)
            .args(["--", "bash", "-c", "true"])
            .stdin(Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!(
                "the sandbox {policy:?} did not run the command ({status}); does this kernel have Landlock ABI 4 and unprivileged user namespaces?"
            ));
        }
        Ok(start.elapsed())
    };
    let read_only: &[&str] = &["--read-only"];
    let workspace_write: &[&str] = &["--workspace-write", &root_arg];
    let (mut ours, mut write, mut peer) = (Vec::new(), Vec::new(), Vec::new());
    // Interleaved, so that all see the same machine state; the first round warms up.
    for i in 0..=plan.p8_spawns * 2 {
        let with = sandboxed(read_only)?;
        let start = Instant::now();
        run("bash", &[Path::new("-c"), Path::new("true")])?;
        let without = start.elapsed();
        let writing = sandboxed(workspace_write)?;
        if i > 0 {
            ours.push(with);
            peer.push(without);
            write.push(writing);
        }
    }
    println!("  read-only:       {}", describe(&mut ours));
    println!("  workspace-write: {}", describe(&mut write));
    println!("  plain:           {}", describe(&mut peer));
    let (ours, write, peer) = (median(&mut ours), median(&mut write), median(&mut peer));
    let row = |what: &str, time: Duration| {
        let added = time.saturating_sub(peer);
        Row {
            id: "P9",
            what: what.into(),
            ours: fmt_duration(time),
            peer: format!("bash -c true {}", fmt_duration(peer)),
            ratio: format!("+{}", fmt_duration(added)),
            goal: "≤ +5 ms",
            pass: added <= Duration::from_millis(5),
        }
    };
    Ok(vec![row("sandbox start-up, read-only", ours), row("sandbox start-up, workspace-write", write)])
}

fn p8(plan: &Plan) -> Res<Vec<Row>> {
    println!("\nP8: cold start (spawn → `initialize` response) and idle RSS");
    let (_dir, root) = workspace()?;
    let params = initialize_params(&root);

    let mut starts = Vec::new();
    // One warm-up spawn puts the binary in the page cache.
    for i in 0..=plan.p8_spawns {
        let start = Instant::now();
        let mut sidecar = Sidecar::spawn(&root, &[])?;
        let result = sidecar.request("initialize", params.clone())?;
        let elapsed = start.elapsed();
        if result.get("capabilities").is_none() {
            return Err(format!("initialize answered without capabilities: {result}"));
        }
        if i > 0 {
            starts.push(elapsed);
        }
        sidecar.shutdown()?;
    }

    let mut rss = Vec::new();
    for _ in 0..plan.p8_rss_samples {
        let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
        // A request after `initialized` makes sure the notification was handled.
        sidecar.request("tandem/tools/list", json!({}))?;
        std::thread::sleep(Duration::from_millis(300));
        rss.push(rss_kib(sidecar.child.id())?);
        sidecar.shutdown()?;
    }
    rss.sort_unstable();
    let rss_kib = rss.get(rss.len() / 2).copied().unwrap_or(0);

    let mut peer = Vec::new();
    for i in 0..=plan.p8_spawns {
        let start = Instant::now();
        run("true", &[])?;
        if i > 0 {
            peer.push(start.elapsed());
        }
    }

    println!("  tandem cold start: {}", describe(&mut starts));
    println!("  `true` spawn:      {}", describe(&mut peer));
    println!("  idle RSS samples (KiB): {rss:?}");
    let (ours, peer) = (median(&mut starts), median(&mut peer));
    let rss_mb = rss_kib as f64 / 1024.0;
    Ok(vec![
        Row {
            id: "P8",
            what: "cold start to initialize".into(),
            ours: fmt_duration(ours),
            peer: format!("true {}", fmt_duration(peer)),
            ratio: format!("{:.1}× true", ours.as_secs_f64() / peer.as_secs_f64().max(1e-12)),
            goal: "≤ 30 ms",
            pass: ours <= Duration::from_millis(30),
        },
        Row {
            id: "P8",
            what: "idle RSS after initialize".into(),
            ours: format!("{rss_mb:.1} MB"),
            peer: "-".into(),
            ratio: "-".into(),
            goal: "≤ 25 MB",
            pass: rss_mb <= 25.0,
        },
    ])
}

// ---------------------------------------------------------------------------------------------
// A1: agent loop overhead per tool call

fn a1(plan: &Plan) -> Res<Vec<Row>> {
    use tandem_fake_provider::{FakeProvider, Turn};
    println!("\nA1: agent loop overhead per tool call (`read` of a 4 KB file) vs the direct tool call");
    let (_dir, root) = workspace()?;
    fs::write(root.join("small.txt"), text_of(4096, None)).map_err(|e| e.to_string())?;
    let n = plan.a1_calls;
    // The same scripted turn, once per run: each run is a new session (a fresh history), and
    // the samples of the runs are pooled, so a median does not hang on ten samples.
    let runs = plan.a1_runs;
    let mut script = Vec::new();
    for _ in 0..runs {
        script.extend(
            (0..n).map(|i| Turn::new().tool_call(format!("call_{i}"), "read", json!({ "file_path": "small.txt" }))),
        );
        script.push(Turn::reply("done"));
    }
    let provider = FakeProvider::start_blocking(script);
    let base = provider.base_url();
    fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    // A window the session never fills: the whole history goes with every request, as A1 has
    // always measured (A2 measures a session within a small window).
    let config = format!("[agent]\nmax_turns = {}\n[provider]\ncontext_window = 4000000\n", n + 1);
    fs::write(root.join(".tandem/config.toml"), config).map_err(|e| e.to_string())?;
    let mut sidecar =
        Sidecar::spawn(&root, &[("TANDEM_PROVIDER", "openai"), ("TANDEM_BASE_URL", &base), ("TANDEM_MODEL", "bench")])?;
    sidecar.initialize(Value::Null)?;
    // The direct call, same process, same file.
    let args = json!({ "file_path": "small.txt" });
    for _ in 0..20 {
        sidecar.call("read", args.clone())?;
    }
    let mut direct = Vec::with_capacity(n);
    for _ in 0..n {
        let start = Instant::now();
        let result = sidecar.call("read", args.clone())?;
        direct.push(start.elapsed());
        tool_ok(&result)?;
    }
    let mut total = Duration::ZERO;
    for _ in 0..runs {
        let session = sidecar.request("tandem/session/new", json!({}))?["sessionId"].clone();
        let start = Instant::now();
        let result = sidecar.request(
            "tandem/session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "read it many times" }] }),
        )?;
        total += start.elapsed();
        if result["stopReason"] != "end_turn" {
            return Err(format!("the scripted turn ended with {result}"));
        }
    }
    let requests = provider.requests();
    if requests.len() != runs * (n + 1) {
        return Err(format!("{} model requests, expected {}", requests.len(), runs * (n + 1)));
    }
    let (mut overhead, mut first, mut twenty, mut hundred) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in requests.chunks(n + 1) {
        let gaps: Vec<Duration> = run
            .windows(2)
            .map(|pair| {
                pair[0].answered_at.map_or(Duration::ZERO, |done| pair[1].received_at.saturating_duration_since(done))
            })
            .collect();
        // Calls 1–10, 16–25 and 91–100 (or the last ten): the overhead at turn 1, 20 and 100
        // of one turn whose whole history goes with every request.
        let at = |from: usize| -> Vec<Duration> {
            let from = from.min(gaps.len().saturating_sub(10));
            gaps[from..(from + 10).min(gaps.len())].to_vec()
        };
        first.extend(at(0));
        twenty.extend(at(15));
        hundred.extend(at(90));
        overhead.extend(gaps);
    }
    let history_kb = |i: usize| requests.get(i).map_or(0, |r| r.body.to_string().len() / 1024);
    println!("  loop, tool call → next request ({runs} sessions): {}", describe(&mut overhead));
    println!("    turns 1–10 (history {} KB): {}", history_kb(1), describe(&mut first));
    println!("    turns 16–25 (history {} KB): {}", history_kb(20), describe(&mut twenty));
    println!("    turns 91–100 (history {} KB): {}", history_kb(100.min(n)), describe(&mut hundred));
    println!("  direct tandem/tools/call read:  {}", describe(&mut direct));
    println!("  whole turns: {} for {} model requests", fmt_duration(total), runs * (n + 1));
    // What moving the bytes costs: a bare client POSTing each of those requests' bodies to the
    // same provider (connect, write, until the provider has read it all), interleaved.
    let bodies: Vec<Vec<u8>> = [1, 20, 100.min(n)]
        .iter()
        .map(|&i| requests.get(i).map_or_else(Vec::new, |r| r.body.to_string().into_bytes()))
        .collect();
    drop(requests);
    let mut posts: Vec<Vec<Duration>> = vec![Vec::new(); bodies.len()];
    for _ in 0..plan.a1_posts {
        for (body, samples) in bodies.iter().zip(&mut posts) {
            samples.push(bare_post(&provider, body)?);
        }
    }
    let posts: Vec<Duration> = posts.iter_mut().map(|samples| median(samples)).collect();
    println!(
        "  bare POST of the same bodies: {} / {} / {} (turns 1 / 20 / 100)",
        fmt_duration(posts[0]),
        fmt_duration(posts[1]),
        fmt_duration(posts[2])
    );
    let (first, peer) = (median(&mut first), median(&mut direct));
    let mut rows = vec![Row {
        id: "A1",
        what: "loop overhead per tool call, turn 1".into(),
        ours: fmt_duration(first),
        peer: format!("direct call {}", fmt_duration(peer)),
        ratio: format!("{:.1}×", first.as_secs_f64() / peer.as_secs_f64().max(1e-12)),
        goal: "reported",
        pass: true,
    }];
    // Every client sends the whole history; what Tandem adds must not grow faster than that:
    // turn N against turn 1 plus the extra time the bare client needs for turn N's bigger body.
    for (turn, mut samples, post, body) in [(20, twenty, posts[1], &bodies[1]), (100, hundred, posts[2], &bodies[2])] {
        let later = median(&mut samples);
        let expected = first + post.saturating_sub(posts[0]);
        let ratio = later.as_secs_f64() / expected.as_secs_f64().max(1e-12);
        rows.push(Row {
            id: "A1",
            what: format!("loop overhead per tool call, turn {turn} (request {} KB, no compaction)", body.len() / 1024),
            ours: fmt_duration(later),
            peer: format!("turn 1 + extra bytes {}", fmt_duration(expected)),
            ratio: format!("{ratio:.2}×"),
            goal: "≤ 1.25×",
            pass: ratio <= 1.25,
        });
    }
    Ok(rows)
}

/// POSTs `body` to the scripted provider with a bare HTTP/1.1 client: the time from connecting
/// until the provider has read the whole request.
fn bare_post(provider: &tandem_fake_provider::FakeProvider, body: &[u8]) -> Res<Duration> {
    use std::io::{Read, Write};
    let before = provider.latest_received().map_or(0, |(count, _)| count);
    let start = Instant::now();
    let mut stream = std::net::TcpStream::connect(provider.addr()).map_err(|e| e.to_string())?;
    let head = format!(
        "POST /v1/chat/completions HTTP/1.1\r\nhost: {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        provider.addr(),
        body.len()
    );
    stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body)).map_err(|e| e.to_string())?;
    // The script is over: the provider answers 500 and closes.
    let mut sink = Vec::new();
    stream.read_to_end(&mut sink).map_err(|e| e.to_string())?;
    match provider.latest_received() {
        Some((count, at)) if count == before + 1 => Ok(at.saturating_duration_since(start)),
        _ => Err("the bare POST did not reach the provider".into()),
    }
}

// ---------------------------------------------------------------------------------------------
// A2: a long session within a small window

/// A request of the agent's compaction (a summary), not a turn.
fn is_summary(body: &Value) -> bool {
    body.get("tools").is_none() && body.to_string().contains("<transcript>")
}

/// What one A2 run measured.
struct LongSession {
    /// Bytes of each turn's request, in order.
    bytes: Vec<usize>,
    summaries: usize,
    /// Median loop overhead at turns 1–10 and at the last ten.
    early: Duration,
    late: Duration,
}

fn a2(plan: &Plan) -> Res<Vec<Row>> {
    const WINDOW: u64 = 32_768;
    const MAX_OUTPUT: u64 = 4_096;
    let n = plan.a2_calls;
    println!(
        "\nA2: {n} reads of 8 KB files in one turn, model window {WINDOW} tokens (budget {} tokens)",
        WINDOW - MAX_OUTPUT
    );
    let run = long_session(n, WINDOW, MAX_OUTPUT)?;
    let budget_bytes = ((WINDOW - MAX_OUTPUT) as f64 * A2_BYTES_PER_TOKEN) as usize;
    let largest = run.bytes.iter().copied().max().unwrap_or(0);
    println!(
        "  largest request {:.0} KB, budget {:.0} KB; {} summary requests",
        largest as f64 / 1024.0,
        budget_bytes as f64 / 1024.0,
        run.summaries
    );
    // The same session with a window it never fills: everything is sent again each request, so
    // only the cost of sending a growing history is left.
    const HUGE: u64 = 4_000_000;
    println!("\nA2 without compaction (window {HUGE} tokens): the whole history goes with every request");
    let whole = long_session(n, HUGE, MAX_OUTPUT)?;
    let ratio = |run: &LongSession| run.late.as_secs_f64() / run.early.as_secs_f64().max(1e-12);
    Ok(vec![
        Row {
            id: "A2",
            what: format!("largest request of {n} calls vs budget"),
            ours: format!("{:.0} KB", largest as f64 / 1024.0),
            peer: format!("budget {:.0} KB", budget_bytes as f64 / 1024.0),
            ratio: format!("{:.2}×", largest as f64 / budget_bytes as f64),
            goal: "≤ 1.0×",
            pass: largest <= budget_bytes,
        },
        Row {
            id: "A2",
            what: format!("loop overhead at turn {n} vs turn 1"),
            ours: fmt_duration(run.late),
            peer: format!("turn 1 {}", fmt_duration(run.early)),
            ratio: format!("{:.2}×", ratio(&run)),
            goal: "≤ 1.5×",
            pass: ratio(&run) <= 1.5,
        },
        Row {
            id: "A2",
            what: format!(
                "same, no compaction ({:.0} KB at the end)",
                whole.bytes.last().copied().unwrap_or(0) as f64 / 1024.0
            ),
            ours: fmt_duration(whole.late),
            peer: format!("turn 1 {}", fmt_duration(whole.early)),
            ratio: format!("{:.2}×", ratio(&whole)),
            goal: "reported",
            pass: true,
        },
    ])
}

/// The scripted provider's tokenizer in A2.
const A2_BYTES_PER_TOKEN: f64 = 4.0;

/// Runs `n` reads of 8 KB files in one turn against a model of `window` tokens.
fn long_session(n: usize, window: u64, max_output: u64) -> Res<LongSession> {
    use tandem_fake_provider::{FakeProvider, Turn};
    let (_dir, root) = workspace()?;
    for i in 0..n {
        fs::write(root.join(format!("f{i}.txt")), text_of(8192, None)).map_err(|e| e.to_string())?;
    }
    let mut script: Vec<Turn> = (0..n)
        .map(|i| Turn::new().tool_call(format!("call_{i}"), "read", json!({ "file_path": format!("f{i}.txt") })))
        .collect();
    script.push(Turn::reply("done"));
    let provider = FakeProvider::start_blocking(script);
    provider.count_tokens(A2_BYTES_PER_TOKEN, Some(window));
    provider.answer_when(is_summary, Turn::reply("## Goal\nRead every file.\n## Open\nThe rest."));
    let base = provider.base_url();
    fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    let config = format!(
        "[agent]\nmax_turns = {}\n[provider]\ncontext_window = {window}\nmax_output_tokens = {max_output}\n",
        n + 5
    );
    fs::write(root.join(".tandem/config.toml"), config).map_err(|e| e.to_string())?;
    scripted_turn(&root, &base)?;
    let requests = provider.requests();
    let turns: Vec<&tandem_fake_provider::ReceivedRequest> = requests.iter().filter(|r| !is_summary(&r.body)).collect();
    if turns.len() != n + 1 {
        return Err(format!("{} turn requests, expected {} (a request was refused?)", turns.len(), n + 1));
    }
    let bytes: Vec<usize> = turns.iter().map(|r| r.body.to_string().len()).collect();
    println!("  bytes sent per request (turn: KB):");
    let mut line = String::new();
    for turn in (1..=n + 1).filter(|t| *t <= 5 || t % 10 == 0 || *t == n + 1) {
        let _ = write!(line, " {turn}:{:.0}", bytes[turn - 1] as f64 / 1024.0);
    }
    println!("   {line}");
    // Overhead: a turn request answered → the next turn request, where no summary came between.
    let mut gaps: Vec<(usize, Duration)> = Vec::new();
    for (i, pair) in requests.windows(2).enumerate() {
        if is_summary(&pair[0].body) || is_summary(&pair[1].body) {
            continue;
        }
        let turn = requests[..=i].iter().filter(|r| !is_summary(&r.body)).count();
        let gap =
            pair[0].answered_at.map_or(Duration::ZERO, |done| pair[1].received_at.saturating_duration_since(done));
        gaps.push((turn, gap));
    }
    // Ten calls at each end: one slow sample (the machine is shared) does not move the median.
    let mut early: Vec<Duration> = gaps.iter().filter(|(t, _)| *t <= 10).map(|(_, d)| *d).collect();
    let mut late: Vec<Duration> = gaps.iter().filter(|(t, _)| *t + 10 > n).map(|(_, d)| *d).collect();
    if early.is_empty() || late.is_empty() {
        return Err("no overhead samples".into());
    }
    println!("  loop overhead per call, turns 1–10:   {}", describe(&mut early));
    println!("  loop overhead per call, turns {}–{n}: {}", n.saturating_sub(9), describe(&mut late));
    Ok(LongSession {
        summaries: requests.len() - turns.len(),
        bytes,
        early: median(&mut early),
        late: median(&mut late),
    })
}

/// One "read every file" turn of a sidecar in `root` against the scripted provider at `base`
/// (model `bench`), which must end the turn itself (`end_turn`).
pub(crate) fn scripted_turn(root: &Path, base: &str) -> Res<()> {
    let mut sidecar =
        Sidecar::spawn(root, &[("TANDEM_PROVIDER", "openai"), ("TANDEM_BASE_URL", base), ("TANDEM_MODEL", "bench")])?;
    sidecar.initialize(Value::Null)?;
    let session = sidecar.request("tandem/session/new", json!({}))?["sessionId"].clone();
    let result = sidecar.request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "read every file" }] }),
    )?;
    if result["stopReason"] != "end_turn" {
        return Err(format!("the scripted turn ended with {result}"));
    }
    Ok(())
}
