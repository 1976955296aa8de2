//! A worktree's change brought over from the editor (`tandem/worktree/list`,
//! `tandem/worktree/review`): new, changed, deleted and renamed files go through one per-hunk
//! review; nothing is written before the answer, exactly the accepted hunks are; a file the
//! person changed in the checkout since the base is merged when the changes are apart, and left
//! as it is when they overlap.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, Sidecar};

pub(crate) fn git(dir: &Path, args: &[&str]) -> Res<()> {
    let status = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if status.success() { Ok(()) } else { Err(format!("git {args:?} failed")) }
}

pub(crate) fn write(path: &Path, text: &str) -> Res<()> {
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// The environment of every `tandem` of a test: its own state home and configuration beside
/// the repository.
pub(crate) fn env_of(repo: &Path) -> Vec<(String, String)> {
    let beside = |what: &str| format!("{}.{what}", repo.display());
    vec![
        ("TANDEM_STATE_HOME".to_owned(), beside("state")),
        ("XDG_CONFIG_HOME".to_owned(), beside("config")),
        ("TANDEM_TRUST_WORKSPACE".to_owned(), "1".to_owned()),
    ]
}

/// A repository at `<dir>/repo` holding `files`, committed.
pub(crate) fn repo_with(dir: &Path, files: &[(&str, &str)]) -> Res<PathBuf> {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).map_err(|e| e.to_string())?;
    for (name, text) in files {
        write(&repo.join(name), text)?;
    }
    git(&repo, &["init", "-q"])?;
    git(&repo, &["add", "."])?;
    git(&repo, &["commit", "-qm", "base"])?;
    Ok(repo)
}

/// The worktree `feat` of the editors' tests, made and changed: keep.txt (20 lines) changed at
/// lines 2 and 19, new.txt created ("new"), gone.txt deleted. The repository.
pub(crate) fn editors_fixture(dir: &Path) -> Res<PathBuf> {
    let repo = repo_with(dir, &[("keep.txt", &numbered(1, 20)), ("gone.txt", "bye\n")])?;
    let tree = make_worktree(&repo, "feat")?;
    write(
        &tree.join("keep.txt"),
        &numbered(1, 20).replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n"),
    )?;
    write(&tree.join("new.txt"), "new\n")?;
    std::fs::remove_file(tree.join("gone.txt")).map_err(|e| e.to_string())?;
    Ok(repo)
}

/// Makes the worktree `name` as a run does (`tandem run --worktree NAME`); its folder.
pub(crate) fn make_worktree(repo: &Path, name: &str) -> Res<PathBuf> {
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Nothing to do.")]);
    let mut command = Command::new("setsid");
    command
        .arg(crate::support::tandem_bin())
        .args(["run", "--yes", "--output-format", "json", "--worktree", name, "look around"])
        .current_dir(repo)
        .env_remove("TANDEM_MODE")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_BASE_URL", provider.base_url())
        .stdin(Stdio::null());
    for (key, value) in env_of(repo) {
        command.env(key, value);
    }
    let out = command.output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("tandem run --worktree failed: {stderr}"));
    }
    let line = stderr.lines().find(|l| l.starts_with("tandem: working in worktree")).ok_or(stderr.clone())?;
    let path = line.split(" at ").nth(1).and_then(|rest| rest.split(" (branch").next()).ok_or(line.to_owned())?;
    Ok(PathBuf::from(path))
}

fn sidecar(repo: &Path) -> Res<Sidecar> {
    let env = env_of(repo);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut sidecar = Sidecar::spawn(repo, &env)?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

/// Sends `tandem/worktree/review` for `name`; when the review arrives, checks the disk with
/// `before_answer`, then answers with the hunks `accept` picks from the request's diffs
/// (file path → its hunk ids). The review's result.
fn review(
    sidecar: &mut Sidecar,
    name: &str,
    before_answer: impl FnOnce() -> Res<()>,
    accept: impl FnOnce(&[(String, Vec<String>)]) -> Vec<String>,
) -> Res<(Value, Value)> {
    let id = sidecar.send_request("tandem/worktree/review", json!({ "name": name }))?;
    let request = loop {
        let message = sidecar.next_message()?;
        if message["method"] == "tandem/session/requestPermission" {
            break message;
        }
        if message.get("method").is_none() && message["id"] == json!(id) {
            return Err(format!("answered without a review: {message}"));
        }
        sidecar.dispatch(message)?;
    };
    before_answer()?;
    let files: Vec<(String, Vec<String>)> = request["params"]["toolCall"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|diff| {
            let path = diff["path"].as_str().unwrap_or_default().to_owned();
            let hunks = diff["hunks"].as_array().into_iter().flatten();
            (path, hunks.filter_map(|h| h["id"].as_str().map(str::to_owned)).collect())
        })
        .collect();
    let accepted = accept(&files);
    sidecar.send(&json!({
        "jsonrpc": "2.0", "id": request["id"],
        "result": { "outcome": { "outcome": "selected", "optionId": "allow_once", "acceptedHunks": accepted } },
    }))?;
    let result = sidecar.wait_response(id)?.map_err(|e| format!("tandem/worktree/review failed: {e}"))?;
    Ok((request["params"].clone(), result))
}

/// The hunk ids of the file whose path ends with `name`.
fn hunks_of<'a>(files: &'a [(String, Vec<String>)], name: &str) -> &'a [String] {
    files.iter().find(|(path, _)| path.ends_with(&format!("/{name}"))).map_or(&[], |(_, hunks)| hunks.as_slice())
}

pub(crate) fn numbered(from: usize, to: usize) -> String {
    (from..=to).map(|n| format!("line {n}\n")).collect()
}

#[test]
fn a_worktree_review_writes_exactly_the_accepted_hunks_of_new_changed_deleted_and_renamed_files() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = repo_with(
        dir.path(),
        &[("keep.txt", &numbered(1, 20)), ("gone.txt", "bye\n"), ("old.txt", "moving along\n"), ("stay.txt", "x\n")],
    )?;
    let tree = make_worktree(&repo, "feat")?;
    // Committed in the worktree: a deletion. Not committed: the rest (as an agent leaves it).
    git(&tree, &["rm", "-q", "gone.txt"])?;
    git(&tree, &["commit", "-qm", "drop gone"])?;
    let keep = numbered(1, 20).replace("line 2\n", "line two\n").replace("line 19\n", "line nineteen\n");
    write(&tree.join("keep.txt"), &keep)?;
    write(&tree.join("new.txt"), "brand new\n")?;
    std::fs::rename(tree.join("old.txt"), tree.join("moved.txt")).map_err(|e| e.to_string())?;

    let mut sidecar = sidecar(&repo)?;
    let list = sidecar.request("tandem/worktree/list", json!({}))?;
    let feat = &list["worktrees"][0];
    assert_eq!((feat["name"].as_str(), feat["branch"].as_str()), (Some("feat"), Some("tandem/feat")), "{list:#}");
    assert_eq!(feat["changes"], 4, "keep, new, gone, old → moved: {list:#}");
    assert_eq!(feat["sessions"], 1, "{list:#}");

    let (asked, result) = review(
        &mut sidecar,
        "feat",
        || {
            // Nothing reaches the disk before the answer.
            assert_eq!(read(&repo.join("keep.txt")), Some(numbered(1, 20)));
            assert!(!repo.join("new.txt").exists() && repo.join("gone.txt").exists() && repo.join("old.txt").exists());
            Ok(())
        },
        |files| {
            let keep = hunks_of(files, "keep.txt");
            assert_eq!(keep.len(), 2, "{files:?}");
            assert_eq!(hunks_of(files, "gone.txt").len(), 1, "{files:?}");
            // The first hunk of keep.txt, the new file and the rename; not the deletion, not
            // keep.txt's second hunk.
            let mut accepted = vec![keep[0].clone()];
            accepted.extend(hunks_of(files, "new.txt").iter().cloned());
            accepted.extend(hunks_of(files, "moved.txt").iter().cloned());
            accepted
        },
    )?;
    assert_eq!(asked["toolCall"]["title"], "Bring over worktree feat", "{asked:#}");
    let kinds: Vec<&str> =
        asked["options"].as_array().into_iter().flatten().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["allow_once", "reject_once"], "{asked:#}");

    assert_eq!(read(&repo.join("keep.txt")), Some(numbered(1, 20).replace("line 2\n", "line two\n")));
    assert_eq!(read(&repo.join("new.txt")).as_deref(), Some("brand new\n"));
    assert_eq!(read(&repo.join("gone.txt")).as_deref(), Some("bye\n"), "the deletion was rejected");
    assert_eq!(read(&repo.join("moved.txt")).as_deref(), Some("moving along\n"));
    assert!(!repo.join("old.txt").exists());
    assert_eq!(read(&repo.join("stay.txt")).as_deref(), Some("x\n"));
    let mut applied: Vec<&str> = result["applied"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    applied.sort_unstable();
    assert_eq!(applied, ["keep.txt", "moved.txt", "new.txt"], "{result:#}");
    assert_eq!(result["left"], json!([{ "path": "gone.txt", "reason": "rejected in the review" }]), "{result:#}");
    // The worktree itself is untouched.
    assert_eq!(read(&tree.join("keep.txt")), Some(keep));
    assert!(tree.join("moved.txt").exists() && !tree.join("gone.txt").exists());
    Ok(())
}

#[test]
fn a_file_changed_in_the_checkout_since_the_base_is_merged_apart_and_left_alone_where_both_changed() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = repo_with(dir.path(), &[("apart.txt", &numbered(1, 30)), ("clash.txt", &numbered(1, 10))])?;
    let tree = make_worktree(&repo, "fix")?;
    write(&tree.join("apart.txt"), &numbered(1, 30).replace("line 3\n", "line three\n"))?;
    write(&tree.join("clash.txt"), &numbered(1, 10).replace("line 5\n", "worktree's five\n"))?;
    git(&tree, &["commit", "-qam", "agent's work"])?;
    // The person's own changes in the checkout since: far from the worktree's in one file, on
    // the same line in the other.
    let mine_apart = numbered(1, 30).replace("line 25\n", "my twenty-five\n");
    let mine_clash = numbered(1, 10).replace("line 5\n", "my five\n");
    write(&repo.join("apart.txt"), &mine_apart)?;
    write(&repo.join("clash.txt"), &mine_clash)?;

    let mut sidecar = sidecar(&repo)?;
    let (asked, result) = review(
        &mut sidecar,
        "fix",
        || Ok(()),
        |files| files.iter().flat_map(|(_, hunks)| hunks.iter().cloned()).collect(),
    )?;
    let paths: Vec<&str> =
        asked["toolCall"]["content"].as_array().into_iter().flatten().filter_map(|d| d["path"].as_str()).collect();
    assert!(paths.len() == 1 && paths[0].ends_with("/apart.txt"), "only the file that merges is offered: {paths:?}");
    assert_eq!(
        read(&repo.join("apart.txt")),
        Some(mine_apart.replace("line 3\n", "line three\n")),
        "the person's change is kept, the worktree's carried onto it"
    );
    assert_eq!(read(&repo.join("clash.txt")), Some(mine_clash), "never overwritten");
    assert_eq!(result["applied"], json!(["apart.txt"]), "{result:#}");
    let left = &result["left"][0];
    assert_eq!(left["path"], "clash.txt", "{result:#}");
    assert!(left["reason"].as_str().is_some_and(|r| r.contains("you changed it since the base")), "{result:#}");
    assert!(result["message"].as_str().is_some_and(|m| m.contains("Merged with your own changes")), "{result:#}");
    Ok(())
}

#[test]
fn an_unknown_worktree_is_an_error_that_names_the_list() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = repo_with(dir.path(), &[("a.txt", "a\n")])?;
    let mut sidecar = sidecar(&repo)?;
    assert_eq!(sidecar.request("tandem/worktree/list", json!({}))?, json!({ "worktrees": [] }));
    let error = sidecar.request_raw("tandem/worktree/review", json!({ "name": "nope" }))?.err().unwrap_or_default();
    assert!(error["message"].as_str().is_some_and(|m| m.contains("no agent worktree named nope")), "{error}");
    Ok(())
}

#[test]
fn a_session_started_in_a_worktree_works_there_says_where_and_leaves_the_checkout_alone() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = repo_with(dir.path(), &[("a.txt", "one\n")])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("Done."),
    ]);
    let mut env = env_of(&repo);
    env.extend([
        ("TANDEM_PROVIDER".to_owned(), "openai".to_owned()),
        ("TANDEM_MODEL".to_owned(), "scripted".to_owned()),
        ("TANDEM_BASE_URL".to_owned(), provider.base_url()),
    ]);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let mut sidecar = Sidecar::spawn(&repo, &env)?;
    sidecar.initialize(json!({}))?;
    let created = sidecar.request("tandem/session/new", json!({ "worktree": "side", "mode": "auto-edit" }))?;
    let place = &created["worktree"];
    assert_eq!((place["name"].as_str(), place["branch"].as_str()), (Some("side"), Some("tandem/side")), "{created:#}");
    assert_eq!(place["created"], true, "{created:#}");
    let path = PathBuf::from(place["path"].as_str().ok_or(format!("{created:#}"))?);
    assert!(path.join(".git").exists() && !path.starts_with(&repo), "{path:?}");
    let session = created["sessionId"].clone();
    let turn = sidecar.request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "change a.txt" }] }),
    )?;
    assert_eq!(turn["stopReason"], "end_turn", "{turn:#}");
    assert_eq!(read(&path.join("a.txt")).as_deref(), Some("two\n"), "the session worked in the worktree");
    assert_eq!(read(&repo.join("a.txt")).as_deref(), Some("one\n"), "the checkout is untouched");
    // Reused by the next session; the list sees its change.
    let again = sidecar.request("tandem/session/new", json!({ "worktree": "side" }))?;
    assert_eq!(again["worktree"]["created"], false, "{again:#}");
    assert_eq!(again["worktree"]["path"], place["path"], "{again:#}");
    let list = sidecar.request("tandem/worktree/list", json!({}))?;
    assert_eq!(list["worktrees"][0]["changes"], 1, "{list:#}");
    let bad = sidecar.request_raw("tandem/session/new", json!({ "worktree": "../up" }))?.err().unwrap_or_default();
    assert!(bad["message"].as_str().is_some_and(|m| m.contains("is not a worktree name")), "{bad}");
    Ok(())
}

#[test]
fn acp_session_new_takes_a_worktree_under_meta_and_answers_where() -> Res<()> {
    use std::io::{BufRead as _, Write as _};
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = repo_with(dir.path(), &[("a.txt", "one\n")])?;
    let mut command = Command::new(crate::support::tandem_bin());
    command.arg("acp").current_dir(&repo).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    command
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_BASE_URL", "http://127.0.0.1:9");
    for (key, value) in env_of(&repo) {
        command.env(key, value);
    }
    let mut child = command.spawn().map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut stdout = std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?);
    let mut ask = |message: Value| -> Res<Value> {
        writeln!(stdin, "{message}").map_err(|e| e.to_string())?;
        loop {
            let mut line = String::new();
            if stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
                return Err("tandem acp closed its output".into());
            }
            let value: Value = serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))?;
            if value["id"] == message["id"] && value.get("method").is_none() {
                return Ok(value);
            }
        }
    };
    ask(json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": { "protocolVersion": 1 } }))?;
    let answer = ask(json!({ "jsonrpc": "2.0", "id": 2, "method": "session/new", "params": {
        "cwd": repo.display().to_string(), "mcpServers": [], "_meta": { "_tandem/worktree": "zed" } } }))?;
    child.kill().ok();
    child.wait().ok();
    let place = &answer["result"]["_meta"]["_tandem/worktree"];
    assert_eq!(place["branch"], "tandem/zed", "{answer:#}");
    let path = PathBuf::from(place["path"].as_str().ok_or(format!("{answer:#}"))?);
    assert!(path.join("a.txt").exists() && !path.starts_with(&repo), "{answer:#}");
    Ok(())
}
