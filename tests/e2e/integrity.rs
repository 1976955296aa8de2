//! Integrity under races, crashes and special files, against the real binary: racing edits of
//! one file never both "succeed" with one lost; a multi-file commit killed at any moment is
//! whole or absent after the next start, with no temporary files left; a named pipe is refused
//! instead of hanging the sidecar; long file names can be written.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::support::{Res, Sidecar, tandem_bin};

/// Lines of the file the racing edits change: large enough that hashing and writing take a
/// while, so the two writers overlap.
const RACE_LINES: usize = 40_000;

fn race_text() -> String {
    (0..RACE_LINES).map(|n| format!("line {n:06} of the file that two edits race on\n")).collect()
}

/// The marker an edit of line `n` in round `round` writes.
fn marker(round: usize, n: usize) -> String {
    format!("line {n:06} edited in round {round}")
}

#[test]
fn racing_edits_of_one_file_never_lose_a_success() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let file = root.join("race.txt");
    fs::write(&file, race_text()).map_err(|e| e.to_string())?;
    let mut sidecar = Sidecar::spawn(&root, &[])?;
    sidecar.initialize(Value::Null)?;
    let (mut both, mut refused) = (0, 0);
    for round in 0..100 {
        let lines = [round * 7 + 1, RACE_LINES - 1 - round * 11];
        let ids = lines
            .iter()
            .map(|&n| {
                let old = format!("line {n:06} of the file");
                let new = marker(round, n);
                sidecar.send_request(
                    "tandem/tools/call",
                    json!({ "name": "edit", "arguments": { "file_path": "race.txt", "old_string": old, "new_string": new } }),
                )
            })
            .collect::<Res<Vec<i64>>>()?;
        let mut succeeded = Vec::new();
        for (outcome, n) in sidecar.wait_responses(&ids)?.into_iter().zip(lines) {
            let result = outcome.map_err(|e| format!("round {round}: {e}"))?;
            match result.get("error").and_then(Value::as_str) {
                None => succeeded.push(n),
                Some(error) => {
                    assert!(error.contains("changed since it was last read"), "round {round}: {error}");
                    refused += 1;
                }
            }
        }
        let text = fs::read_to_string(&file).map_err(|e| e.to_string())?;
        for n in &succeeded {
            assert!(
                text.contains(&marker(round, *n)),
                "round {round}: the edit of line {n} reported success but is lost"
            );
        }
        assert!(!succeeded.is_empty(), "round {round}: both edits failed");
        both += usize::from(succeeded.len() == 2);
    }
    eprintln!("racing edits: both applied in {both} rounds, one refused as stale in {refused}");
    sidecar.shutdown()?;
    Ok(())
}

/// Files changed together by one `multiedit`.
const KILL_FILES: usize = 5;
/// Lines per file (about 300 KB each), so a commit takes long enough to be killed inside.
const KILL_LINES: usize = 5_000;

fn kill_file(root: &Path, file: usize) -> std::path::PathBuf {
    root.join(format!("m{file}.txt"))
}

fn kill_content(version: usize) -> String {
    let mut text = format!("version: v{version}\n");
    for n in 0..KILL_LINES {
        text.push_str(&format!("{n:06} filler so that the file takes a moment to write out\n"));
    }
    text
}

/// The version each file claims.
fn versions(root: &Path) -> Res<Vec<usize>> {
    (0..KILL_FILES)
        .map(|file| {
            let text = fs::read_to_string(kill_file(root, file)).map_err(|e| e.to_string())?;
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("version: v").and_then(|v| v.parse().ok()).ok_or_else(|| format!("m{file}: {first}"))
        })
        .collect()
}

/// Every file name under `dir` (recursively), relative.
fn all_names(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in fs::read_dir(&current).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                names.push(path.strip_prefix(dir).unwrap_or(&path).display().to_string());
            }
        }
    }
    names.sort();
    names
}

fn tandem_tool(root: &Path, name: &str, arguments: &Value) -> Command {
    let mut command = Command::new(tandem_bin());
    command
        .args(["tool", name, &arguments.to_string()])
        .current_dir(root)
        .env_remove("TANDEM_PROFILE")
        .env("TANDEM_LOG", "error")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
}

#[test]
fn killed_multi_file_commits_are_whole_or_absent_after_restart() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    for file in 0..KILL_FILES {
        fs::write(kill_file(&root, file), kill_content(0)).map_err(|e| e.to_string())?;
    }
    // How long one uninterrupted commit takes, to spread the kills over it.
    let started = Instant::now();
    let edit = |from: usize| {
        let edits: Vec<Value> = (0..KILL_FILES)
            .map(|file| {
                json!({ "file_path": format!("m{file}.txt"), "old_string": format!("version: v{from}\n"), "new_string": format!("version: v{}\n", from + 1) })
            })
            .collect();
        json!({ "edits": edits })
    };
    let status = tandem_tool(&root, "multiedit", &edit(0)).status().map_err(|e| e.to_string())?;
    assert!(status.success());
    let span = started.elapsed().as_micros().max(1000) as u64;
    assert_eq!(versions(&root)?, vec![1; KILL_FILES]);
    let mut kill_points = std::collections::BTreeMap::new();
    let mut seed = SystemTime::now().duration_since(UNIX_EPOCH).map_or(7, |d| u64::from(d.subsec_nanos())) | 1;
    let (mut old, mut new) = (0, 0);
    for round in 0..200 {
        let before = versions(&root)?[0];
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let delay = Duration::from_micros(seed % (span + span / 4));
        let mut child = tandem_tool(&root, "multiedit", &edit(before)).spawn().map_err(|e| e.to_string())?;
        if round % 2 == 0 {
            // Anywhere in the process's life.
            std::thread::sleep(delay);
        } else {
            // Inside the commit: once its first temporary file shows, after up to 3 ms.
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline
                && matches!(child.try_wait(), Ok(None))
                && !all_names(&root).iter().any(|n| n.contains(".tandem-"))
            {
                std::hint::spin_loop();
            }
            std::thread::sleep(Duration::from_micros(seed % 3000));
        }
        child.kill().ok();
        child.wait().map_err(|e| e.to_string())?;
        // The next start (any file tool) finishes or undoes what the killed one left.
        let status = tandem_tool(&root, "read", &json!({ "file_path": "m0.txt", "limit": 1 }))
            .status()
            .map_err(|e| e.to_string())?;
        assert!(status.success(), "round {round}: read after the kill failed");
        let now = versions(&root)?;
        assert!(
            now.iter().all(|v| *v == before) || now.iter().all(|v| *v == before + 1),
            "round {round} (killed after {delay:?}): half-applied: {now:?}"
        );
        if now[0] == before {
            old += 1
        } else {
            new += 1
        }
        *kill_points.entry((round % 2 == 1, now[0] == before)).or_insert(0) += 1;
        let names = all_names(&root);
        let expected: Vec<String> = (0..KILL_FILES).map(|f| format!("m{f}.txt")).collect();
        let stray: Vec<&String> =
            names.iter().filter(|n| !expected.contains(n) && !n.starts_with(".tandem/")).collect();
        assert!(stray.is_empty(), "round {round}: files left behind: {stray:?}");
        let journals = tandem_tools::state::state_path(&root, "journal");
        let state: Vec<String> = fs::read_dir(&journals)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert!(state.is_empty(), "round {round}: journal left behind: {state:?}");
    }
    eprintln!(
        "200 kills during multiedit: {old} left the old version, {new} the new one (inside the commit?, old?): {kill_points:?}"
    );
    assert!(old > 0 && new > 0, "the kills should land both before and after the commit: {old} old, {new} new");
    Ok(())
}

#[test]
fn special_files_are_refused_and_the_sidecar_keeps_serving() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let status = Command::new("mkfifo").arg(root.join("pipe")).status().map_err(|e| e.to_string())?;
    assert!(status.success());
    fs::write(root.join("plain.txt"), "plain\n").map_err(|e| e.to_string())?;
    let mut sidecar = Sidecar::spawn(&root, &[])?;
    sidecar.initialize(Value::Null)?;
    let calls = [
        ("read", json!({ "file_path": "pipe" })),
        ("edit", json!({ "file_path": "pipe", "old_string": "a", "new_string": "b" })),
        ("write", json!({ "file_path": "pipe", "content": "x" })),
        ("append", json!({ "file_path": "pipe", "content": "x" })),
        ("read", json!({ "file_path": "/dev/zero" })),
    ];
    // All at once: none of them may hold up the others, or the loop.
    let ids = calls
        .iter()
        .map(|(name, arguments)| {
            sidecar.send_request("tandem/tools/call", json!({ "name": name, "arguments": arguments }))
        })
        .collect::<Res<Vec<i64>>>()?;
    for (result, (name, _)) in sidecar.wait_responses(&ids)?.into_iter().zip(&calls) {
        let error = match &result {
            Ok(result) => result.get("error").and_then(Value::as_str).unwrap_or_default().to_owned(),
            Err(error) => error.to_string(),
        };
        assert!(error.contains("not a regular file") || error.contains("outside the workspace"), "{name}: {result:?}");
    }
    let plain = sidecar.call("read", json!({ "file_path": "plain.txt" }))?;
    assert!(plain["output"].as_str().is_some_and(|o| o.contains("plain")), "{plain}");
    let status = sidecar.shutdown()?;
    assert!(status.success());
    Ok(())
}

#[test]
fn a_file_name_of_250_bytes_can_be_written() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let name = format!("{}.txt", "n".repeat(246));
    assert_eq!(name.len(), 250);
    let status = tandem_tool(&root, "write", &json!({ "file_path": name, "content": "first\n" }))
        .status()
        .map_err(|e| e.to_string())?;
    assert!(status.success());
    let status =
        tandem_tool(&root, "edit", &json!({ "file_path": name, "old_string": "first", "new_string": "second" }))
            .status()
            .map_err(|e| e.to_string())?;
    assert!(status.success());
    assert_eq!(fs::read_to_string(root.join(&name)).map_err(|e| e.to_string())?, "second\n");
    Ok(())
}
