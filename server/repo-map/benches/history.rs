//! The repository map on real history: for commits that change one to three source files, the
//! map of the commit's parent is asked with only the commit's subject line, and the changed
//! files' recall at 1 and at 5 is set beside the map's without the git history and a plain
//! BM25 over the files' contents, computed in the same run on the same files.
//!
//! `cargo bench -p tandem-repo-map --bench history [-- [--max N] [--skip N] [--verbose]
//! [--dump FILE] [REPO]...]` (default: this repository, the 150 most recent qualifying commits;
//! `--skip` leaves out the N most recent, to check a change on commits it was not tuned on;
//! `--verbose` prints each case; `--dump` writes every case's signals per file as JSON, which
//! `benches/ceiling.py` reads to ask what a ranker learned from them would reach). Each
//! repository's commits are checked out, detached, in one temporary worktree (`git worktree
//! add`, removed afterwards), so the map sees the parent's history and nothing newer; the map's
//! cache goes to a temporary state directory.

#![allow(clippy::print_stdout, clippy::print_stderr, reason = "a benchmark reports on stdout")]

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Each case's signals per file, for `--dump`: `{repo, parent, subject, changed, map: [path],
/// files: [[path, [signal; FEATURES]]], bm25: [[path, score]]}` per case, `map` in the map's
/// order, the signals in the order of `tandem_repo_map::rank::Weights`' fields
/// (`benches/ceiling.py` reads it).
type Dump = std::cell::RefCell<Vec<serde_json::Value>>;

fn git(repo: &Path, args: &[&str]) -> Res<String> {
    let out = Command::new("git").arg("-C").arg(repo).args(args).output()?;
    if !out.status.success() {
        return Err(format!("git {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A commit of the benchmark.
struct Case {
    parent: String,
    subject: String,
    changed: Vec<String>,
}

/// Commits (newest first) with one parent that modify 1–3 source files the map outlines, all
/// present in the parent; the `skip` newest left out, at most `max`.
fn cases(repo: &Path, skip: usize, max: usize) -> Res<Vec<Case>> {
    let log = git(repo, &["log", "--no-merges", "--format=@@%H%x09%P%x09%s", "--name-status", "-n", "5000"])?;
    let mut skipped = 0;
    let mut out = Vec::new();
    for chunk in log.split("@@").filter(|c| !c.trim().is_empty()) {
        let mut lines = chunk.lines();
        let Some(head) = lines.next() else { continue };
        let parts: Vec<&str> = head.splitn(3, '\t').collect();
        let [_, parents, subject] = parts[..] else { continue };
        if parents.split(' ').count() != 1 || parents.is_empty() {
            continue;
        }
        let mut changed = Vec::new();
        let mut other_source = false;
        for line in lines.filter(|l| !l.trim().is_empty()) {
            let mut fields = line.split('\t');
            let status = fields.next().unwrap_or_default();
            let path = fields.next_back().unwrap_or_default();
            if tandem_repo_map::Lang::of(path).is_none() {
                continue;
            }
            if status == "M" {
                changed.push(path.to_owned());
            } else {
                other_source = true;
            }
        }
        if other_source || changed.is_empty() || changed.len() > 3 {
            continue;
        }
        if skipped < skip {
            skipped += 1;
            continue;
        }
        out.push(Case { parent: parents.to_owned(), subject: subject.to_owned(), changed });
        if out.len() == max {
            break;
        }
    }
    Ok(out)
}

fn recall(ranked: &[String], changed: &[String], k: usize) -> f64 {
    let top: HashSet<&String> = ranked.iter().take(k).collect();
    changed.iter().filter(|c| top.contains(c)).count() as f64 / changed.len() as f64
}

#[derive(Default)]
struct Totals {
    n: usize,
    map1: f64,
    map5: f64,
    plain1: f64,
    plain5: f64,
    bm1: f64,
    bm5: f64,
}

impl Totals {
    fn print(&self, name: &str) {
        let n = self.n.max(1) as f64;
        println!(
            "{name:<30} {:>5} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            self.n,
            self.map1 / n,
            self.map5 / n,
            self.plain1 / n,
            self.plain5 / n,
            self.bm1 / n,
            self.bm5 / n
        );
    }
}

fn run(repo: &Path, (skip, max): (usize, usize), verbose: bool, dump: Option<&Dump>, totals: &mut Totals) -> Res<()> {
    let cases = cases(repo, skip, max)?;
    let temp = tempfile::tempdir()?;
    let tree = temp.path().join("tree");
    let Some(first) = cases.first() else { return Ok(()) };
    // A real checkout with its history: HEAD is the parent, and only what it reaches is seen.
    git(repo, &["worktree", "add", "--detach", "-q", &tree.to_string_lossy(), &first.parent])?;
    let checkout = |commit: &str| -> Res<()> {
        git(&tree, &["checkout", "--detach", "-q", "-f", commit])?;
        Ok(())
    };
    let result = (|| -> Res<Totals> {
        let mut t = Totals::default();
        for case in &cases {
            checkout(&case.parent)?;
            let request = tandem_repo_map::Request {
                query: case.subject.clone(),
                cache: Some(temp.path().join("cache")),
                ..Default::default()
            };
            let map = tandem_repo_map::map(&tree, &request)?;
            let plain = tandem_repo_map::map(&tree, &tandem_repo_map::Request { history: false, ..request.clone() })?;
            let plain: Vec<String> = plain.ranked.iter().map(|r| r.path.clone()).collect();
            let ranked: Vec<String> = map.ranked.iter().map(|r| r.path.clone()).collect();
            if let Some(dump) = dump {
                let signals = tandem_repo_map::explain(&tree, &request)?;
                let line = serde_json::json!({
                    "repo": repo, "parent": case.parent, "subject": case.subject, "changed": case.changed,
                    "map": ranked, "files": signals,
                });
                dump.borrow_mut().push(line);
            }
            // BM25 over the same files' contents.
            let contents: Vec<String> =
                ranked.iter().map(|p| std::fs::read_to_string(tree.join(p)).unwrap_or_default()).collect();
            let scores = tandem_rank::scores(&contents, &case.subject);
            let mut order: Vec<usize> = (0..ranked.len()).collect();
            order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(ranked[a].cmp(&ranked[b])));
            let bm25: Vec<String> = order.iter().map(|&i| ranked[i].clone()).collect();
            if let Some(dump) = dump
                && let Some(last) = dump.borrow_mut().last_mut()
            {
                last["bm25"] = serde_json::json!(ranked.iter().zip(&scores).collect::<Vec<_>>());
            }
            let (m1, m5) = (recall(&ranked, &case.changed, 1), recall(&ranked, &case.changed, 5));
            let (b1, b5) = (recall(&bm25, &case.changed, 1), recall(&bm25, &case.changed, 5));
            let (p1, p5) = (recall(&plain, &case.changed, 1), recall(&plain, &case.changed, 5));
            if verbose {
                println!(
                    "{m1:.2} {m5:.2} | {p1:.2} {p5:.2} | {b1:.2} {b5:.2} | {} | {} | map top: {}",
                    case.subject.chars().take(70).collect::<String>(),
                    case.changed.join(" "),
                    ranked.iter().take(3).cloned().collect::<Vec<_>>().join(" ")
                );
            }
            t.n += 1;
            t.map1 += m1;
            t.map5 += m5;
            t.plain1 += p1;
            t.plain5 += p5;
            t.bm1 += b1;
            t.bm5 += b5;
        }
        Ok(t)
    })();
    let removed = git(repo, &["worktree", "remove", "--force", &tree.to_string_lossy()]);
    let t = result?;
    removed?;
    let name = repo.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    t.print(&name);
    totals.n += t.n;
    totals.map1 += t.map1;
    totals.map5 += t.map5;
    totals.plain1 += t.plain1;
    totals.plain5 += t.plain5;
    totals.bm1 += t.bm1;
    totals.bm5 += t.bm5;
    Ok(())
}

fn main() -> Res<()> {
    let mut max = 150;
    let mut skip = 0;
    let mut verbose = false;
    let mut dump_to: Option<PathBuf> = None;
    let mut repos: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--max" => max = args.next().and_then(|n| n.parse().ok()).ok_or("--max takes a number")?,
            "--skip" => skip = args.next().and_then(|n| n.parse().ok()).ok_or("--skip takes a number")?,
            "--verbose" | "-v" => verbose = true,
            "--dump" => dump_to = args.next().map(PathBuf::from),
            "--bench" => {}
            other => repos.push(PathBuf::from(other)),
        }
    }
    if repos.is_empty() {
        repos.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize()?);
    }
    println!(
        "{:<30} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "repository", "cases", "map@1", "map@5", "nohist@1", "nohist@5", "bm25@1", "bm25@5"
    );
    let mut totals = Totals::default();
    let dump = Dump::default();
    for repo in &repos {
        if let Err(err) = run(repo, (skip, max), verbose, dump_to.as_ref().map(|_| &dump), &mut totals) {
            eprintln!("{}: {err}", repo.display());
        }
    }
    totals.print("all");
    if let Some(path) = dump_to {
        std::fs::write(path, serde_json::to_string(&dump.into_inner())?)?;
    }
    Ok(())
}
