//! Tandem in scripts: `tandem run --output-format json|stream-json` checked line by line against
//! `docs/run-events.schema.json`, a provider error and a cancelled run, `--max-turns` and
//! `--append-system-prompt`, two `--worktree` runs at the same time, and sessions exported and
//! imported.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, repo_root, tandem_bin};

/// `tandem ARGS` in `dir` against `provider`, with its own state home and configuration beside
/// `dir` (a worktree goes to the state home; trust of one is written to the configuration).
fn tandem(dir: &Path, provider: Option<&FakeProvider>, args: &[&str]) -> Command {
    let beside = |what: &str| format!("{}.{what}", dir.display());
    let mut command = Command::new("setsid");
    command
        .arg(tandem_bin())
        .args(args)
        .current_dir(dir)
        .env("TANDEM_STATE_HOME", beside("state"))
        .env("XDG_CONFIG_HOME", beside("config"))
        .env_remove("TANDEM_MODE")
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_PROFILE", "full")
        .stdin(Stdio::null());
    command.env("TANDEM_BASE_URL", provider.map_or("http://127.0.0.1:9".to_owned(), FakeProvider::base_url));
    command
}

fn run(dir: &Path, provider: Option<&FakeProvider>, args: &[&str]) -> Res<Output> {
    tandem(dir, provider, args).output().map_err(|e| e.to_string())
}

/// Every stdout line, parsed; a line that is not JSON fails.
fn lines(out: &Output) -> Res<Vec<Value>> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).map_err(|e| format!("stdout line is not JSON ({e}): {line}")))
        .collect()
}

/// Checks `value` against the subset of JSON Schema the events' schema uses: `type`, `const`,
/// `enum`, `required`, `properties`, `items`, `oneOf`.
fn check(schema: &Value, value: &Value, at: &str) -> Res<()> {
    if let Some(options) = schema["oneOf"].as_array() {
        let fits = options.iter().filter(|option| check(option, value, at).is_ok()).count();
        return if fits == 1 { Ok(()) } else { Err(format!("{at}: fits {fits} of the schema's events: {value}")) };
    }
    if let Some(expected) = schema.get("const")
        && expected != value
    {
        return Err(format!("{at}: {value} is not {expected}"));
    }
    if let Some(options) = schema["enum"].as_array()
        && !options.contains(value)
    {
        return Err(format!("{at}: {value} is none of {options:?}"));
    }
    if let Some(kind) = schema.get("type") {
        let kinds: Vec<&str> = match kind {
            Value::String(k) => vec![k.as_str()],
            Value::Array(ks) => ks.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let is = |k: &str| match k {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            _ => false,
        };
        if !kinds.iter().any(|k| is(k)) {
            return Err(format!("{at}: {value} is not of type {kind}"));
        }
    }
    for key in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        if value.get(key).is_none() {
            return Err(format!("{at}: `{key}` is missing in {value}"));
        }
    }
    if let Some(properties) = schema["properties"].as_object() {
        for (key, property) in properties {
            if let Some(item) = value.get(key) {
                check(property, item, &format!("{at}.{key}"))?;
            }
        }
        if let Some(object) = value.as_object()
            && let Some(extra) = object.keys().find(|k| !properties.contains_key(*k))
        {
            return Err(format!("{at}: `{extra}` is not in the schema: {value}"));
        }
    }
    if let Some(items) = schema.get("items") {
        for (n, item) in value.as_array().into_iter().flatten().enumerate() {
            check(items, item, &format!("{at}[{n}]"))?;
        }
    }
    Ok(())
}

fn schema() -> Res<Value> {
    let text = std::fs::read_to_string(repo_root().join("docs/run-events.schema.json")).map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

fn check_all(events: &[Value]) -> Res<()> {
    let schema = schema()?;
    for (n, event) in events.iter().enumerate() {
        check(&schema, event, &format!("line {}", n + 1))?;
    }
    Ok(())
}

#[test]
fn stream_json_writes_one_event_per_line_and_the_result_last() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new()
            .text("Reading it.")
            .tool_call("c1", "read", json!({ "file_path": "a.txt" }))
            .tool_call("c2", "bash", json!({ "command": "echo hi; exit 3" }))
            .usage(100, 20),
        Turn::reply("It says one.").usage(130, 5),
    ]);
    let out =
        run(dir.path(), Some(&provider), &["run", "--output-format", "stream-json", "--yes", "what is in a.txt?"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let events = lines(&out)?;
    check_all(&events)?;
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"system"), "{types:?}");
    assert_eq!(types.last(), Some(&"result"), "{types:?}");
    let session = events[0]["session_id"].as_str().unwrap_or_default();
    assert!(!session.is_empty() && events.iter().all(|e| e["session_id"] == session), "{events:#?}");
    assert!(events[0]["tools"].as_array().is_some_and(|t| t.contains(&json!("read"))), "{:#}", events[0]);
    let position = |t: &str| types.iter().position(|x| *x == t).unwrap_or(usize::MAX);
    assert!(
        position("assistant") < position("tool_call") && position("tool_call") < position("tool_result"),
        "{types:?}"
    );
    let call = events.iter().find(|e| e["type"] == "tool_call").cloned().unwrap_or_default();
    assert_eq!((&call["name"], &call["input"]), (&json!("read"), &json!({ "file_path": "a.txt" })), "{call:#}");
    let read = events.iter().find(|e| e["type"] == "tool_result" && e["id"] == call["id"]).cloned().unwrap_or_default();
    assert_eq!(read["status"], "completed", "{read:#}");
    assert!(read["output"].as_str().is_some_and(|o| o.contains("one")), "{read:#}");
    let bash = events.iter().find(|e| e["type"] == "tool_result" && e["name"] == "bash").cloned().unwrap_or_default();
    assert_eq!((&bash["status"], &bash["exit_code"]), (&json!("completed"), &json!(3)), "{bash:#}");
    assert!(bash["output"].as_str().is_some_and(|o| o.contains("hi")), "{bash:#}");
    assert_eq!(types.iter().filter(|t| **t == "usage").count(), 2, "{types:?}");
    let result = events.last().cloned().unwrap_or_default();
    assert_eq!((&result["result"], &result["is_error"]), (&json!("It says one."), &json!(false)), "{result:#}");
    assert_eq!((&result["stop_reason"], &result["num_turns"]), (&json!("end_turn"), &json!(2)), "{result:#}");
    assert_eq!((&result["usage"]["input_tokens"], &result["usage"]["output_tokens"]), (&json!(230), &json!(25)));

    // `json`: the result alone.
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Hello.")]);
    let out = run(dir.path(), Some(&provider), &["run", "--output-format", "json", "say hello"])?;
    let events = lines(&out)?;
    check_all(&events)?;
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!((&events[0]["type"], &events[0]["result"]), (&json!("result"), &json!("Hello.")));
    Ok(())
}

#[test]
fn a_provider_error_exits_1_with_an_error_result_and_an_approval_nobody_gives_is_recorded() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join(".tandem/config.toml"), "[provider]\nmax_retries = 0\n")
        .map_err(|e| e.to_string())?;
    let out = run(dir.path(), None, &["run", "--output-format", "stream-json", "hello"])?;
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    let events = lines(&out)?;
    check_all(&events)?;
    let result = events.last().cloned().unwrap_or_default();
    assert_eq!(
        (&result["type"], &result["is_error"], &result["stop_reason"]),
        (&json!("result"), &json!(true), &json!("error"))
    );
    assert!(result["error"].as_str().is_some_and(|e| !e.is_empty()), "{result:#}");

    // No --yes: the edit is not made, and the run says why.
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("Could not."),
    ]);
    let out = run(dir.path(), Some(&provider), &["run", "--output-format", "stream-json", "change it"])?;
    assert_eq!(out.status.code(), Some(6));
    let events = lines(&out)?;
    check_all(&events)?;
    assert!(events.iter().any(|e| e["type"] == "permission_denied"), "{events:#?}");
    assert_eq!(events.last().map(|e| e["is_error"].clone()), Some(json!(true)));
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).map_err(|e| e.to_string())?, "one\n");
    Ok(())
}

#[test]
fn a_cancelled_run_ends_with_a_cancelled_result() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::hang()]);
    let child = tandem(dir.path(), Some(&provider), &["run", "--output-format", "stream-json", "wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    // Once the request is at the provider, an interrupt.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while provider.requests().is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // `setsid` made the child the leader of its own group: signal the group (tandem inside).
    let pid = i32::try_from(child.id()).map_err(|e| e.to_string())?;
    let group = rustix::process::Pid::from_raw(pid).ok_or("no pid")?;
    rustix::process::kill_process_group(group, rustix::process::Signal::INT).map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let events = lines(&out)?;
    check_all(&events)?;
    let result = events.last().cloned().unwrap_or_default();
    assert_eq!((&result["subtype"], &result["stop_reason"]), (&json!("cancelled"), &json!("cancelled")), "{result:#}");
    Ok(())
}

#[test]
fn max_turns_and_append_system_prompt_reach_the_turn() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "glob", json!({ "pattern": "*" })),
        Turn::new().tool_call("c2", "glob", json!({ "pattern": "*" })),
    ]);
    let args =
        ["run", "--output-format", "json", "--max-turns", "1", "--append-system-prompt", "Answer in French.", "go"];
    let out = run(dir.path(), Some(&provider), &args)?;
    assert_eq!(out.status.code(), Some(3), "{}", String::from_utf8_lossy(&out.stderr));
    let events = lines(&out)?;
    assert_eq!(events[0]["subtype"], "error_max_turns", "{events:#?}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap_or_default().to_owned();
    assert!(system.trim_end().ends_with("Answer in French."), "{system}");
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> Res<()> {
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

#[test]
fn two_worktree_runs_work_side_by_side_without_touching_the_checkout() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let repo = dir.path().join("repo");
    std::fs::create_dir_all(&repo).map_err(|e| e.to_string())?;
    std::fs::write(repo.join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    git(&repo, &["init", "-q"])?;
    git(&repo, &["add", "."])?;
    git(&repo, &["commit", "-qm", "first"])?;
    // A hook the repository ships must not run when a worktree is made.
    std::fs::write(repo.join(".git/hooks/post-checkout"), "#!/bin/sh\ntouch \"$HOME/../hook-ran\"\ntouch hook-ran\n")
        .map_err(|e| e.to_string())?;
    let executable = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(repo.join(".git/hooks/post-checkout"), executable).map_err(|e| e.to_string())?;
    let edit = |to: &str| {
        FakeProvider::start_blocking(vec![
            Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": to })),
            Turn::reply("Done."),
        ])
    };
    let (first, second) = (edit("first"), edit("second"));
    let spawn = |provider: &FakeProvider, name: &str| {
        tandem(&repo, Some(provider), &["run", "--yes", "--output-format", "json", "--worktree", name, "change it"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())
    };
    let (a, b) = (spawn(&first, "alpha")?, spawn(&second, "beta")?);
    let (a, b) = (a.wait_with_output().map_err(|e| e.to_string())?, b.wait_with_output().map_err(|e| e.to_string())?);
    for out in [&a, &b] {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(
        std::fs::read_to_string(repo.join("a.txt")).map_err(|e| e.to_string())?,
        "one\n",
        "the checkout is untouched"
    );
    let where_of = |out: &Output| -> Res<std::path::PathBuf> {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let line = stderr.lines().find(|l| l.starts_with("tandem: working in worktree")).ok_or(stderr.clone())?;
        let path = line.split(" at ").nth(1).and_then(|rest| rest.split(" (branch").next()).ok_or(line.to_owned())?;
        Ok(std::path::PathBuf::from(path))
    };
    let (wa, wb) = (where_of(&a)?, where_of(&b)?);
    assert!(!wa.starts_with(&repo) && !wb.starts_with(&repo) && wa != wb, "{wa:?} {wb:?}");
    assert_eq!(std::fs::read_to_string(wa.join("a.txt")).map_err(|e| e.to_string())?, "first\n");
    assert_eq!(std::fs::read_to_string(wb.join("a.txt")).map_err(|e| e.to_string())?, "second\n");
    assert!(!wa.join("hook-ran").exists() && !repo.join("hook-ran").exists(), "the repository's hook ran");

    let list = run(&repo, None, &["worktrees", "--json"])?;
    let listed: Value = serde_json::from_slice(&list.stdout).map_err(|e| e.to_string())?;
    let names: Vec<&str> = listed.as_array().into_iter().flatten().filter_map(|w| w["name"].as_str()).collect();
    assert_eq!(names, ["alpha", "beta"], "{listed:#}");
    assert!(listed.as_array().into_iter().flatten().all(|w| w["sessions"] == 1), "{listed:#}");
    assert_eq!(listed[0]["branch"], "tandem/alpha");
    // Uncommitted changes: removal is refused unless forced.
    assert_eq!(run(&repo, None, &["worktrees", "remove", "alpha"])?.status.code(), Some(1));
    assert_eq!(run(&repo, None, &["worktrees", "remove", "alpha", "--force"])?.status.code(), Some(0));
    assert!(!wa.exists());
    // Reused: the same folder and branch.
    let again =
        run(&repo, Some(&edit("third")), &["run", "--yes", "--output-format", "json", "--worktree", "beta", "x"])?;
    assert_eq!(where_of(&again)?, wb);
    assert_eq!(run(&repo, None, &["run", "--worktree", "../x", "x"])?.status.code(), Some(2));
    Ok(())
}

#[test]
fn an_exported_session_imports_and_continues() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "a.txt" })),
        Turn::reply("It says one."),
    ]);
    let out = run(dir.path(), Some(&provider), &["run", "--output-format", "json", "read a.txt"])?;
    let session = lines(&out)?[0]["session_id"].as_str().unwrap_or_default().to_owned();

    let listed = run(dir.path(), None, &["sessions", "list", "--json"])?;
    assert!(String::from_utf8_lossy(&listed.stdout).contains(&session));
    let markdown = run(dir.path(), None, &["sessions", "export", "last"])?;
    let markdown = String::from_utf8_lossy(&markdown.stdout).into_owned();
    assert!(markdown.contains("## You\n\nread a.txt") && markdown.contains("### Tool `read`"), "{markdown}");
    assert!(markdown.contains("It says one."), "{markdown}");
    let exported = run(dir.path(), None, &["sessions", "export", &session, "--format", "json"])?;
    assert_eq!(exported.status.code(), Some(0));
    let file = dir.path().join("export.json");
    std::fs::write(&file, &exported.stdout).map_err(|e| e.to_string())?;

    // Into another project: the same session, continued with its history.
    let other = tempfile::tempdir().map_err(|e| e.to_string())?;
    let imported = run(other.path(), None, &["sessions", "import", file.to_str().unwrap_or_default()])?;
    assert_eq!(imported.status.code(), Some(0), "{}", String::from_utf8_lossy(&imported.stderr));
    let id = String::from_utf8_lossy(&imported.stdout).trim().to_owned();
    assert_eq!(id, session);
    let again = run(other.path(), None, &["sessions", "export", &id, "--format", "json"])?;
    let (a, b): (Value, Value) = (
        serde_json::from_slice(&exported.stdout).map_err(|e| e.to_string())?,
        serde_json::from_slice(&again.stdout).map_err(|e| e.to_string())?,
    );
    assert_eq!(a["transcript"], b["transcript"]);
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Still one.")]);
    let out = run(other.path(), Some(&provider), &["run", "--output-format", "json", "--session", &id, "and now?"])?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let sent = provider.requests()[0].body["messages"].to_string();
    assert!(sent.contains("read a.txt") && sent.contains("It says one."), "{sent}");
    // Garbage is refused and stores nothing.
    std::fs::write(&file, "{\"format\": \"tandem-session\", \"records\": [{\"type\": \"nope\"}]}")
        .map_err(|e| e.to_string())?;
    assert_eq!(
        run(other.path(), None, &["sessions", "import", file.to_str().unwrap_or_default()])?.status.code(),
        Some(1)
    );
    Ok(())
}

/// The command line of the CI recipe in `docs/ci.md`, run as written (through `sh`), against
/// the scripted provider: it exits 0 and writes the result object the recipe's next step reads.
#[test]
fn the_ci_recipes_command_line_works_as_written() -> Res<()> {
    let recipe = std::fs::read_to_string(repo_root().join("docs/ci.md")).map_err(|e| e.to_string())?;
    let mut command = String::new();
    let mut lines = recipe.lines().map(str::trim).skip_while(|line| !line.starts_with("tandem run "));
    for line in lines.by_ref() {
        command.push_str(line.trim_end_matches('\\'));
        command.push(' ');
        if !line.ends_with('\\') {
            break;
        }
    }
    assert!(command.contains("--output-format json") && command.contains("> /tmp/result.json"), "{command}");
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let diff = dir.path().join("change.diff");
    let result = dir.path().join("result.json");
    std::fs::write(&diff, "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n").map_err(|e| e.to_string())?;
    let command = command
        .replace("/tmp/change.diff", diff.to_str().unwrap_or_default())
        .replace("/tmp/result.json", result.to_str().unwrap_or_default());
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": diff.to_str().unwrap_or_default() })),
        Turn::reply("Looks fine."),
    ]);
    let bin = tandem_bin();
    let path = format!(
        "{}:{}",
        bin.parent().map(|p| p.display().to_string()).unwrap_or_default(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-c", &command])
        .current_dir(dir.path())
        .env("PATH", path)
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_BASE_URL", provider.base_url())
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    assert_eq!(out.status.code(), Some(0), "{command}\n{}", String::from_utf8_lossy(&out.stderr));
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&result).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    // What the recipe's next step reads.
    assert_eq!((&written["is_error"], &written["result"]), (&json!(false), &json!("Looks fine.")), "{written:#}");
    assert!(written.get("stop_reason").is_some());
    check_all(&[written])
}

#[test]
fn allowed_and_disallowed_tools_are_rules_for_the_run() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    // Allowed: the command runs unasked in a JSON run (which asks nothing).
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "bash", json!({ "command": "touch out.txt" })),
        Turn::reply("Done."),
    ]);
    let args = ["run", "--output-format", "json", "--allowed-tools", "bash(touch:*)", "--", "write it"];
    let out = run(dir.path(), Some(&provider), &args)?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.path().join("out.txt").is_file(), "the allowed command did not run");
    // Disallowed: refused even under --yes, and the model is told.
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "bash", json!({ "command": "touch no.txt" })),
        Turn::reply("Could not."),
    ]);
    let args = ["run", "--output-format", "json", "--yes", "--disallowed-tools", "bash", "--", "write it"];
    let out = run(dir.path(), Some(&provider), &args)?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!dir.path().join("no.txt").exists(), "a disallowed command ran");
    let told = provider.requests()[1].body["messages"].to_string();
    assert!(told.contains("was not run"), "{told}");
    Ok(())
}
