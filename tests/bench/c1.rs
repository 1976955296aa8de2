//! C1: a checkpoint snapshot of a 10,000-file repository (warm: one file changed since the
//! last snapshot) against the same work done by hand in an ordinary git repository of the same
//! tree (`git add -A` then `git write-tree`), interleaved.

use std::fs;
use std::process::Command;
use std::time::{Duration, Instant};

use tandem_checkpoint::{Kind, Label, Store};

use crate::support::Res;
use crate::{Plan, Row, describe, fmt_duration, median, workspace};

pub(super) fn c1(plan: &Plan) -> Res<Vec<Row>> {
    // The generated tree: 100 directories of small source files (10,000 in a full run).
    let files = plan.c1_files;
    println!(
        "\nC1: checkpoint snapshot of a {files}-file tree (warm, one file changed) vs `git add -A && git write-tree`"
    );
    let (_ours_dir, ours) = workspace()?;
    let (_peer_dir, peer) = workspace()?;
    for root in [&ours, &peer] {
        for i in 0..files {
            let dir = root.join(format!("src/m{:02}", i % 100));
            fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            let text = format!("// file {i}\npub fn f{i}(x: u64) -> u64 {{\n    x.wrapping_mul({i}) ^ 0x5eed\n}}\n");
            fs::write(dir.join(format!("f{i}.rs")), text).map_err(|e| e.to_string())?;
        }
    }
    let git = |args: &[&str]| -> Res<()> {
        let status = Command::new("git")
            .args(args)
            .current_dir(&peer)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| e.to_string())?;
        if status.success() { Ok(()) } else { Err(format!("git {args:?} failed")) }
    };
    git(&["init", "-q"])?;
    let state = ours.join(".tandem/checkpoints");
    fs::create_dir_all(&state).map_err(|e| e.to_string())?;
    let store = Store::open(&ours, &state).map_err(|e| e.to_string())?;
    let label = |turn| Label::new(Kind::BeforeTool, turn);
    let cold = Instant::now();
    let first = store.snapshot("bench", label(0), &[]).map_err(|e| e.to_string())?;
    let cold = cold.elapsed();
    git(&["add", "-A"])?;
    git(&["write-tree"])?;
    let rounds = if plan.quick { 3 } else { 15 };
    let (mut mine, mut theirs) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let file = round * 37 % files;
        let touch = format!("src/m{:02}/f{file}.rs", file % 100);
        fs::write(ours.join(&touch), format!("// changed {round}\n")).map_err(|e| e.to_string())?;
        let start = Instant::now();
        let checkpoint = store.snapshot("bench", label(round as u64 + 1), &[]).map_err(|e| e.to_string())?;
        mine.push(start.elapsed());
        if checkpoint.tree == first.tree {
            return Err("the snapshot missed the changed file".into());
        }
        fs::write(peer.join(&touch), format!("// changed {round}\n")).map_err(|e| e.to_string())?;
        let start = Instant::now();
        git(&["add", "-A"])?;
        git(&["write-tree"])?;
        theirs.push(start.elapsed());
    }
    println!("  first snapshot (cold index): {}", fmt_duration(cold));
    println!("  tandem snapshot: {}", describe(&mut mine));
    println!("  git add + write-tree: {}", describe(&mut theirs));
    let (mine, theirs) = (median(&mut mine), median(&mut theirs));
    Ok(vec![Row {
        id: "C1",
        what: format!("checkpoint snapshot, {files} files, warm"),
        ours: fmt_duration(mine),
        peer: format!("git add+write-tree {}", fmt_duration(theirs)),
        ratio: format!("{:.2}× git", mine.as_secs_f64() / theirs.as_secs_f64().max(1e-9)),
        goal: "≤ 200 ms",
        pass: mine <= Duration::from_millis(200),
    }])
}
