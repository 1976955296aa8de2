//! R1 crash safety: a sidecar killed with SIGKILL in the middle of many large writes leaves
//! every file with exactly one complete version of its content (the old one or one that was
//! sent), never a partial or mixed one.

use std::collections::HashSet;
use std::fs;
use std::process::Command;
use std::sync::mpsc::channel;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::support::{Res, Sidecar};

/// Rounds of the whole scenario, each with a fresh workspace and sidecar.
const ROUNDS: usize = 10;
/// Files written concurrently.
const FILES: usize = 8;
/// Lines per file; with the 16-byte prefix each line is 80 bytes, so a file is about 2 MB.
const LINES: usize = 26_000;
/// Upper bound of writes sent in one round, so memory and time stay bounded.
const MAX_SENDS: usize = 400;
/// How long the sender may stay blocked after the kill deadline before the watchdog steps in.
const WATCHDOG: Duration = Duration::from_secs(10);

/// The part of each line that does not depend on file or version: a line number and filler.
fn body_lines() -> Vec<String> {
    (0..LINES).map(|n| format!("{n:06} the quick brown fox jumps over the lazy dog, again and again.\n")).collect()
}

/// The 16-byte prefix of every line of version `version` of file `file` in round `round`.
fn prefix(round: usize, file: usize, version: usize) -> String {
    format!("r{round}f{file:02}v{version:06}:    ")[..16].to_owned()
}

/// The full content of a version (0 is the content before the sidecar started).
fn content(body: &[String], round: usize, file: usize, version: usize) -> String {
    let prefix = prefix(round, file, version);
    let mut text = String::with_capacity(LINES * 80);
    for line in body {
        text.push_str(&prefix);
        text.push_str(line);
    }
    text
}

fn file_name(file: usize) -> String {
    format!("data-{file}.txt")
}

/// The version a file's first line claims to be, if it looks like one of this round's.
fn claimed_version(bytes: &[u8], round: usize, file: usize) -> Option<usize> {
    let head = format!("r{round}f{file:02}v");
    let rest = bytes.strip_prefix(head.as_bytes())?;
    let digits = rest.get(..6)?;
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// A seed that differs from run to run (the delays are "random-ish", not secret).
fn seed() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    u64::from(nanos) ^ u64::from(std::process::id()).rotate_left(32)
}

/// What one round observed.
#[derive(Debug, Default)]
struct Round {
    sends: usize,
    landed: usize,
    temp_files: usize,
}

fn run_round(round: usize, delay: Duration, body: &[String]) -> Res<Round> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    for file in 0..FILES {
        fs::write(root.join(file_name(file)), content(body, round, file, 0)).map_err(|e| e.to_string())?;
    }
    let mut sidecar = Sidecar::spawn(&root, &[])?;
    sidecar.initialize(Value::Null)?;
    let pid = sidecar.child.id();

    // Every version ever sent, per file (sent before it is known whether it arrives in full).
    let mut sent: Vec<HashSet<usize>> = vec![HashSet::from([0]); FILES];
    let deadline = Instant::now() + delay;
    let (done_tx, done_rx) = channel();
    let sends = std::thread::scope(|scope| {
        let sender = scope.spawn(|| {
            let mut sends = 0;
            let mut result = Ok(());
            while sends < MAX_SENDS && Instant::now() < deadline {
                let (file, version) = (sends % FILES, sends / FILES + 1);
                sent[file].insert(version);
                let request = json!({
                    "jsonrpc": "2.0",
                    "id": 1_000_000 + sends,
                    "method": "tandem/tools/call",
                    "params": { "name": "write", "arguments": {
                        "file_path": file_name(file),
                        "content": content(body, round, file, version),
                    } },
                });
                if let Err(err) = sidecar.send(&request) {
                    result = Err(format!("send failed before the kill (the server died?): {err}"));
                    break;
                }
                sends += 1;
            }
            // Wait out the deadline if the sends finished early, then SIGKILL.
            std::thread::sleep(deadline.saturating_duration_since(Instant::now()));
            let killed = sidecar.child.kill().map_err(|e| format!("kill: {e}"));
            let waited = sidecar.child.wait().map_err(|e| format!("wait: {e}"));
            done_tx.send(()).ok();
            result.and(killed).and(waited.map(|_| ())).map(|()| sends)
        });
        // Watchdog: a sender blocked on a full pipe forever would hang the test. The child is not
        // reaped before the sender finishes, so its pid cannot have been reused.
        if done_rx.recv_timeout(delay + WATCHDOG).is_err() {
            Command::new("kill").args(["-KILL", &pid.to_string()]).status().ok();
        }
        sender.join().map_err(|_| "the sender thread panicked".to_owned())?
    })?;

    let mut observed = Round { sends, ..Round::default() };
    for entry in fs::read_dir(&root).map_err(|e| e.to_string())? {
        let name = entry.map_err(|e| e.to_string())?.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tandem-") && name.ends_with(".tmp") {
            observed.temp_files += 1;
        } else if name == ".tandem" {
            // Tandem's state directory (the commit journal lives there).
        } else if !(0..FILES).any(|file| file_name(file) == name) {
            return Err(format!("round {round}: unexpected file `{name}` in the workspace"));
        }
    }
    for (file, versions) in sent.iter().enumerate() {
        let bytes = fs::read(root.join(file_name(file))).map_err(|e| e.to_string())?;
        let Some(version) = claimed_version(&bytes, round, file) else {
            return Err(format!("round {round}: `{}` starts with no known version header", file_name(file)));
        };
        if !versions.contains(&version) {
            return Err(format!("round {round}: `{}` has version {version}, which was never sent", file_name(file)));
        }
        if bytes != content(body, round, file, version).as_bytes() {
            return Err(format!(
                "round {round}: `{}` is not exactly version {version} ({} bytes): partial or mixed content",
                file_name(file),
                bytes.len()
            ));
        }
        if version != 0 {
            observed.landed += 1;
        }
    }
    Ok(observed)
}

#[test]
fn sigkill_during_large_writes_leaves_only_complete_versions() -> Res<()> {
    let body = body_lines();
    let seed = seed();
    let mut state = seed;
    // Spread the kill times over 50–300 ms, with jitter, so different phases get hit.
    let mut delays: Vec<u64> = (0..ROUNDS)
        .map(|round| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            let base = 50 + round as u64 * 210 / (ROUNDS as u64 - 1).max(1);
            (base + (state >> 33) % 40).min(300)
        })
        .collect();
    // On a heavily loaded machine even 300 ms may not be enough for one write to land; then a
    // few longer rounds make sure the check was not vacuous.
    let extra = [1000, 3000];
    let mut totals = Round::default();
    let mut report = Vec::new();
    let mut round = 0;
    while round < delays.len() {
        let delay = Duration::from_millis(delays[round]);
        let observed = run_round(round, delay, &body).map_err(|e| format!("{e} (seed {seed})"))?;
        report.push(format!(
            "round {round}: kill after {} ms, {} writes sent, {} of {FILES} files changed, {} temporary files left",
            delay.as_millis(),
            observed.sends,
            observed.landed,
            observed.temp_files
        ));
        totals.sends += observed.sends;
        totals.landed += observed.landed;
        totals.temp_files += observed.temp_files;
        round += 1;
        if round == delays.len() && totals.landed == 0 && round < ROUNDS + extra.len() {
            delays.push(extra[round - ROUNDS]);
        }
    }
    let report = report.join("\n");
    eprintln!("{report}");
    assert!(totals.sends > 0, "no writes were sent (seed {seed}):\n{report}");
    assert!(totals.landed > 0, "no write landed in any round, the test proved nothing (seed {seed}):\n{report}");
    Ok(())
}
