//! Round 3's rows: the machine's load, ripgrep 15 as P2's peer and glob per process, P3's
//! syscalls per read, A3 (summaries per 100 turns), M1 (memory of a 1,000-call session with
//! 10 MiB edits) and T1 (tokens of the tool definitions in a first request).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Res, Sidecar, tandem_bin};
use crate::{A2_BYTES_PER_TOKEN, Plan, Row, is_summary, text_of, tool_ok, workspace};

/// The machine's load and CPU pressure, for the record beside the numbers.
pub(crate) fn machine_load(when: &str) {
    let read = |path: &str| fs::read_to_string(path).map_or_else(|e| format!("({e})"), |t| t.trim().to_owned());
    println!(
        "machine load {when}: loadavg {}; cpu pressure: {}",
        read("/proc/loadavg"),
        read("/proc/pressure/cpu").replace('\n', "; ")
    );
}

/// ripgrep 15: `$TANDEM_BENCH_RG15`, else `.tools/rg15/bin/rg` in the repository (installed with
/// `cargo install ripgrep --version '^15' --root .tools/rg15`). `Err` says why it is missing.
pub(crate) fn rg15() -> Res<PathBuf> {
    let path = std::env::var_os("TANDEM_BENCH_RG15")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::support::repo_root().join(".tools/rg15/bin/rg"));
    let version = Command::new(&path).arg("--version").output().map_err(|e| {
        format!(
            "ripgrep 15 is MISSING ({}: {e}); install it with `cargo install ripgrep --version '^15' --root .tools/rg15`",
            path.display()
        )
    })?;
    let version = String::from_utf8_lossy(&version.stdout);
    if !version.starts_with("ripgrep 15") {
        return Err(format!("{} is not ripgrep 15 but {}", path.display(), version.lines().next().unwrap_or("?")));
    }
    Ok(path)
}

/// The version line of the system's `rg`.
pub(crate) fn rg_version(program: &Path) -> String {
    Command::new(program)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).lines().next().unwrap_or("?").to_owned())
        .unwrap_or_else(|e| format!("({e})"))
}

/// `tandem tool glob` in a fresh process, as a script calls it: the time and the files it printed.
pub(crate) fn glob_process(root: &Path, state: &Path) -> Res<(Duration, usize)> {
    let start = Instant::now();
    let output = Command::new(tandem_bin())
        .args(["tool", "glob", r#"{"pattern":"**/*.rs","max_results":1000000}"#, "--text"])
        .current_dir(root)
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("XDG_STATE_HOME", state)
        .env("XDG_CONFIG_HOME", state)
        .env("TANDEM_LOG", "error")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("spawn tandem tool glob: {e}"))?;
    let elapsed = start.elapsed();
    if !output.status.success() {
        return Err(format!("tandem tool glob exited with {}", output.status));
    }
    Ok((elapsed, output.stdout.split(|b| *b == b'\n').filter(|l| !l.is_empty()).count()))
}

/// Syscalls per `read` call of the sidecar `pid`: strace counts them (all threads) over `calls`
/// reads made by `read_once`. `None` when strace is not installed (`apt-get install strace`).
pub(crate) fn syscalls_per_read(
    pid: u32,
    calls: usize,
    mut read_once: impl FnMut() -> Res<()>,
) -> Res<Option<(f64, String)>> {
    if Command::new("strace").arg("-V").stdout(Stdio::null()).status().is_err() {
        return Ok(None);
    }
    let out = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    let mut strace = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(out.path())
        .args(["-p", &pid.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // strace says when it has attached to each thread; the first line is enough to start.
    {
        use std::io::BufRead as _;
        let mut stderr = std::io::BufReader::new(strace.stderr.take().ok_or("no strace stderr")?);
        let mut line = String::new();
        stderr.read_line(&mut line).map_err(|e| e.to_string())?;
        std::thread::spawn(move || for _ in stderr.lines() {});
    }
    // Warm: the attach itself is not counted against the reads below.
    read_once()?;
    for _ in 0..calls {
        read_once()?;
    }
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(strace.id() as i32).ok_or("bad pid")?,
        rustix::process::Signal::INT,
    )
    .map_err(|e| e.to_string())?;
    strace.wait().map_err(|e| e.to_string())?;
    let report = fs::read_to_string(out.path()).map_err(|e| e.to_string())?;
    // The totals line: "100.00    0.001234    1    1234    12 total".
    let mut by_call: Vec<(u64, String)> = report
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let name = fields.last()?;
            let calls: u64 = fields.get(3)?.parse().ok()?;
            (*name != "total").then(|| (calls, (*name).to_owned()))
        })
        .collect();
    by_call.sort_unstable_by(|a, b| b.cmp(a));
    let total: u64 = by_call.iter().map(|(n, _)| n).sum();
    let per = total as f64 / (calls + 1) as f64;
    let top = by_call
        .iter()
        .take(10)
        .map(|(n, name)| format!("{name} {:.1}", *n as f64 / (calls + 1) as f64))
        .collect::<Vec<_>>()
        .join(", ");
    Ok(Some((per, top)))
}

// ---------------------------------------------------------------------------------------------
// A3: summaries per 100 turns

/// A3: 100 reads of 4 KB, 50 KB and 200 KB files in 8k, 32k and 128k windows (the scripted
/// provider counts 4 bytes a token and refuses requests over the window): the summary requests
/// of each session, and its largest request against the budget (window − max_tokens).
pub(crate) fn a3(plan: &Plan) -> Res<Vec<Row>> {
    let turns = if plan.quick { 30 } else { 100 };
    println!("\nA3: summary requests per {turns} turns of reads (scripted provider, 4 bytes a token)");
    let mut rows = Vec::new();
    for window in [8_192u64, 32_768, 131_072] {
        for bytes in [4_096usize, 50_000, 200_000] {
            let (summaries, largest, budget) = read_session(turns, bytes, window)?;
            let per_100 = summaries as f64 * 100.0 / turns as f64;
            println!(
                "  {} KB outputs, {}k window: {summaries} summaries, largest request {largest} of {budget} tokens",
                bytes / 1000,
                window / 1024
            );
            rows.push(Row {
                id: "A3",
                what: format!("summaries per 100 turns, {} KB reads, {}k window", bytes / 1000, window / 1024),
                ours: format!("{per_100:.0}"),
                peer: format!("largest {largest} / budget {budget} tok"),
                ratio: format!("{:.2}× budget", largest as f64 / budget as f64),
                goal: "≤ 10, ≤ 1.0× budget",
                pass: per_100 <= 10.0 && largest <= budget,
            });
        }
    }
    Ok(rows)
}

/// One scripted session of `turns` reads of `bytes`-byte files in a `window`-token model with
/// the default `max_tokens`: (summary requests, largest request in tokens, budget in tokens).
fn read_session(turns: usize, bytes: usize, window: u64) -> Res<(usize, u64, u64)> {
    use tandem_fake_provider::{FakeProvider, Turn};
    let (_dir, root) = workspace()?;
    for i in 0..turns {
        fs::write(root.join(format!("f{i}.txt")), text_of(bytes, None)).map_err(|e| e.to_string())?;
    }
    let mut script: Vec<Turn> = (0..turns)
        .map(|i| Turn::new().tool_call(format!("call_{i}"), "read", json!({ "file_path": format!("f{i}.txt") })))
        .collect();
    script.push(Turn::reply("done"));
    let provider = FakeProvider::start_blocking(script);
    provider.count_tokens(A2_BYTES_PER_TOKEN, Some(window));
    provider.answer_when(is_summary, Turn::reply("## Goal\nRead every file.\n## Open\nThe rest."));
    let base = provider.base_url();
    fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    let config = format!("[agent]\nmax_turns = {}\n[provider]\ncontext_window = {window}\n", turns + 5);
    fs::write(root.join(".tandem/config.toml"), config).map_err(|e| e.to_string())?;
    crate::scripted_turn(&root, &base)?;
    let requests = provider.requests();
    let summaries = requests.iter().filter(|r| is_summary(&r.body)).count();
    if requests.len() - summaries != turns + 1 {
        return Err(format!("{} turn requests, expected {} (one was refused?)", requests.len() - summaries, turns + 1));
    }
    let largest = requests
        .iter()
        .map(|r| (r.body.to_string().len() as f64 / A2_BYTES_PER_TOKEN).ceil() as u64)
        .max()
        .unwrap_or(0);
    // The budget a request must keep to: the window less the answer's tokens, whatever the
    // agent's own margin.
    let max_tokens = u64::from(tandem_llm::profile::default_max_tokens("bench", &base, Some(window as u32)));
    Ok((summaries, largest, window - max_tokens))
}

// ---------------------------------------------------------------------------------------------
// M1: memory of a 1,000-call session

/// M1: 1,000 tool calls on one sidecar: every tenth an edit of a 10 MiB file, the others reads,
/// greps and globs of a small tree; the resident set after every call (and its peak).
pub(crate) fn m1(plan: &Plan) -> Res<Vec<Row>> {
    let calls = if plan.quick { 200 } else { 1_000 };
    println!("\nM1: resident memory over a {calls}-call session (every tenth call an edit of a 10 MiB file)");
    let (_dir, root) = workspace()?;
    let marker = |n: usize| format!("MARKER-{n:010}|");
    let big = 10 * 1024 * 1024;
    fs::write(root.join("big.txt"), text_of(big, Some((big / 80 - 50, &marker(0))))).map_err(|e| e.to_string())?;
    fs::create_dir_all(root.join("src")).map_err(|e| e.to_string())?;
    for i in 0..50 {
        fs::write(root.join(format!("src/m{i}.rs")), text_of(4096, None)).map_err(|e| e.to_string())?;
    }
    let (mut sidecar, _) = Sidecar::start(&root, Value::Null)?;
    let pid = sidecar.child.id();
    let mut samples = Vec::with_capacity(calls);
    let mut edits = 0;
    for i in 0..calls {
        let result = match i % 10 {
            0 => {
                let args =
                    json!({ "file_path": "big.txt", "old_string": marker(edits), "new_string": marker(edits + 1) });
                edits += 1;
                sidecar.call("edit", args)?
            }
            1..=5 => sidecar.call("read", json!({ "file_path": format!("src/m{}.rs", i % 50) }))?,
            6 | 7 => sidecar.call("grep", json!({ "pattern": "fox", "output_mode": "files_with_matches" }))?,
            _ => sidecar.call("glob", json!({ "pattern": "**/*.rs" }))?,
        };
        tool_ok(&result)?;
        samples.push(crate::rss_kib(pid)?);
    }
    let hwm = crate::proc_status_kib(pid, "VmHWM")?;
    sidecar.shutdown()?;
    let max = samples.iter().copied().max().unwrap_or(0);
    let last = samples.last().copied().unwrap_or(0);
    let first = samples.first().copied().unwrap_or(0);
    println!(
        "  RSS after each call: first {:.1} MiB, max {:.1} MiB, last {:.1} MiB; peak (VmHWM) {:.1} MiB",
        first as f64 / 1024.0,
        max as f64 / 1024.0,
        last as f64 / 1024.0,
        hwm as f64 / 1024.0
    );
    Ok(vec![Row {
        id: "M1",
        what: format!("RSS at every sample of {calls} calls, 10 MiB edits"),
        ours: format!("max {:.1} MiB", max as f64 / 1024.0),
        peer: format!("VmHWM {:.1} MiB", hwm as f64 / 1024.0),
        ratio: "-".into(),
        goal: "≤ 60 MiB",
        pass: max <= 60 * 1024,
    }])
}

// ---------------------------------------------------------------------------------------------
// T1: tool definitions in the first request

/// T1: the tool definitions a first request carries, with the full profile and a model with a
/// large window, in tokens at 4 bytes a token (the scripted provider's count).
pub(crate) fn t1(_plan: &Plan) -> Res<Vec<Row>> {
    use tandem_fake_provider::{FakeProvider, Turn};
    println!("\nT1: tool definitions in the first request (full profile, 200k window)");
    let (_dir, root) = workspace()?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("hi")]);
    let base = provider.base_url();
    fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    fs::write(root.join(".tandem/config.toml"), "[tools]\nprofile = \"full\"\n[provider]\ncontext_window = 200000\n")
        .map_err(|e| e.to_string())?;
    let mut sidecar =
        Sidecar::spawn(&root, &[("TANDEM_PROVIDER", "openai"), ("TANDEM_BASE_URL", &base), ("TANDEM_MODEL", "bench")])?;
    sidecar.initialize(Value::Null)?;
    let enabled = sidecar.request("tandem/tools/list", json!({}))?["tools"].as_array().map_or(0, Vec::len);
    let session = sidecar.request("tandem/session/new", json!({}))?["sessionId"].clone();
    sidecar.request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "hi" }] }),
    )?;
    let requests = provider.requests();
    let first = requests.first().ok_or("no request")?;
    let tools = first.body["tools"].as_array().cloned().unwrap_or_default();
    let bytes = first.body["tools"].to_string().len();
    let whole = first.body.to_string().len();
    let tokens = bytes as f64 / A2_BYTES_PER_TOKEN;
    let names: Vec<&str> = tools.iter().filter_map(|t| t["function"]["name"].as_str()).collect();
    println!("  {} of {enabled} tools offered: {}", names.len(), names.join(", "));
    println!("  {bytes} bytes of definitions, {:.0}% of the request", bytes as f64 * 100.0 / whole as f64);
    sidecar.shutdown()?;
    Ok(vec![Row {
        id: "T1",
        what: format!("tool definitions in a first request ({} of {enabled} tools)", names.len()),
        ours: format!("{tokens:.0} tokens"),
        peer: format!("{bytes} B"),
        ratio: format!("{:.0}% of request", bytes as f64 * 100.0 / whole as f64),
        goal: "≤ 2,500 tokens",
        pass: tokens <= 2_500.0,
    }])
}
