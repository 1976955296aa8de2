//! `tandem acp` end to end: the real binary driven by the official Python ACP SDK
//! (`agent-client-protocol`, pinned in scripts/test) playing Zed's part (tests/e2e/acp_client.py:
//! permissions, unsaved buffers over `fs/*`, commands in its terminals over `terminal/*`,
//! elicitation), with the scripted provider as the model. Every message tandem sends is
//! validated against the SDK's models. Plus a protocol transcript of one turn, exact to the
//! byte once volatile fields are normalised, and bad input answered with JSON-RPC errors.
//!
//! Needs `.tools/venv` with `agent-client-protocol` (what `scripts/test` installs); missing, the
//! tests fail with the command to run.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, tandem_bin};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn python() -> Res<PathBuf> {
    let python = repo().join(".tools/venv/bin/python");
    let ok = Command::new(&python)
        .args(["-c", "import importlib.metadata as m, sys; sys.exit(m.version('agent-client-protocol') != '0.12.1')"])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(python)
    } else {
        Err("the Python ACP SDK is missing: run `python3 -m venv .tools/venv && .tools/venv/bin/pip install agent-client-protocol==0.12.1` at the repository root (or scripts/test)".into())
    }
}

/// A workspace with `files` and a configuration for the scripted provider.
fn workspace(files: &[(&str, &str)]) -> Res<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    for (path, text) in files {
        std::fs::write(root.join(path), text).map_err(|e| e.to_string())?;
    }
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    let toml = "[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 2\nconnect_timeout_secs = 2\n";
    std::fs::write(root.join(".tandem/config.toml"), toml).map_err(|e| e.to_string())?;
    Ok((dir, root))
}

fn env(provider: &FakeProvider) -> Value {
    json!({
        "TANDEM_PROVIDER": "openai",
        "TANDEM_BASE_URL": provider.base_url(),
        "TANDEM_MODEL": "scripted",
        "TANDEM_MODE": "default",
        "TANDEM_LOG": "warn",
        "TANDEM_TRUST_WORKSPACE": "1",
    })
}

/// Runs the Python client through `scenario` (tandem, cwd and env filled in) and returns its
/// report; fails when tandem sent anything the SDK's models reject.
pub(crate) fn run_client(root: &Path, provider: &FakeProvider, mut scenario: Value) -> Res<Value> {
    let python = python()?;
    scenario["tandem"] = json!(tandem_bin());
    scenario["cwd"] = json!(root);
    // The scenario's own variables (`PATH` for language servers) join the usual ones.
    let own = scenario["env"].take();
    scenario["env"] = env(provider);
    if let (Some(all), Some(own)) = (scenario["env"].as_object_mut(), own.as_object()) {
        all.extend(own.clone());
    }
    if let Ok(filter) = std::env::var("TANDEM_LOG") {
        // `TANDEM_LOG=tandem::acp::wire=trace cargo test ... -- --nocapture` shows the wire.
        scenario["env"]["TANDEM_LOG"] = json!(filter);
    }
    let file = tempfile::NamedTempFile::new().map_err(|e| e.to_string())?;
    std::fs::write(file.path(), scenario.to_string()).map_err(|e| e.to_string())?;
    let mut child = Command::new(python)
        .arg(repo().join("tests/e2e/acp_client.py"))
        .arg(file.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let deadline = Instant::now() + Duration::from_secs(90);
    while child.try_wait().map_err(|e| e.to_string())?.is_none() {
        if Instant::now() > deadline {
            child.kill().ok();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    let report: Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("the ACP client failed ({e}); stderr:\n{stderr}"))?;
    if report["invalid"].as_array().is_none_or(|a| !a.is_empty()) {
        return Err(format!("tandem sent messages the ACP SDK rejects: {:#}\nstderr:\n{stderr}", report["invalid"]));
    }
    if std::env::var_os("TANDEM_LOG").is_some() {
        eprintln!("{stderr}");
    }
    Ok(report)
}

pub(crate) fn events<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["events"].as_array().into_iter().flatten().filter(|e| e["kind"] == kind).collect()
}

fn updates<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    events(report, "update").into_iter().map(|e| &e["update"]).filter(|u| u["sessionUpdate"] == kind).collect()
}

/// The tool results in the provider's last request.
pub(crate) fn tool_results(provider: &FakeProvider) -> Vec<String> {
    let requests = provider.requests();
    let Some(last) = requests.last() else { return Vec::new() };
    last.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn read(path: &Path) -> Res<String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

const NOTES: &str = "alpha\nbeta\n";

#[test]
fn acp_edits_go_through_the_clients_buffers_and_review_and_commands_through_its_terminal() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let notes = root.join("notes.txt");
    // The editor holds unsaved changes: the model must see them, and the edit must keep them.
    let unsaved = "alpha\nbeta\ngamma (unsaved)\n";
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "read", json!({ "file_path": "notes.txt" })),
        Turn::new().tool_call(
            "call_2",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA" }),
        ),
        Turn::new().tool_call(
            "call_3",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "beta", "new_string": "BETA" }),
        ),
        Turn::new().tool_call("call_4", "bash", json!({ "command": "echo from-the-terminal" })),
        Turn::reply("Done.").usage(120, 8),
    ]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true },
            "buffers": { notes.display().to_string(): unsaved },
            "permissions": ["allow_once", "reject_once"],
            "steps": [{ "op": "new" }, { "op": "prompt", "text": "capitalise alpha and beta, then echo" }],
        }),
    )?;
    let init = &report["init"];
    assert_eq!(init["protocolVersion"], 1);
    assert_eq!(init["agentCapabilities"]["loadSession"], true);
    assert_eq!(init["agentCapabilities"]["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(report["results"][1]["ok"]["stopReason"], "end_turn", "{:#}", report["results"]);

    // The read went through the client and the model saw the unsaved line.
    assert!(events(&report, "read").iter().any(|e| e["path"] == json!(notes)), "{:#}", report["events"]);
    let results = tool_results(&provider);
    assert!(results[0].contains("gamma (unsaved)"), "{results:#?}");

    // One accepted edit, written by the client (its review records it), unsaved text kept;
    // the rejected one never reached it.
    let writes = events(&report, "write");
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0]["path"], json!(notes));
    assert_eq!(writes[0]["content"], "ALPHA\nbeta\ngamma (unsaved)\n");
    assert_eq!(read(&notes)?, "ALPHA\nbeta\ngamma (unsaved)\n");
    assert!(results[2].contains("rejected"), "{results:#?}");

    // The permission requests carry the diff against the buffer, hunk ids and four choices.
    let asks = events(&report, "permission");
    assert_eq!(asks.len(), 2, "{asks:#?}");
    let diff = &asks[0]["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], json!(notes));
    assert_eq!(diff["oldText"], unsaved);
    assert_eq!(diff["newText"], "ALPHA\nbeta\ngamma (unsaved)\n");
    assert_eq!(diff["_meta"]["_tandem/hunks"][0]["id"], "h1");
    assert_eq!(asks[0]["toolCall"]["kind"], "edit");
    let kinds: Vec<&str> =
        asks[0]["options"].as_array().into_iter().flatten().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(kinds, ["allow_once", "allow_always", "reject_once", "reject_always"]);

    // The command ran in the client's terminal, shown in the tool call, then released. It did
    // not ask, so it ran there under the read-only sandbox's launcher.
    let terminals = events(&report, "terminal");
    assert_eq!(terminals.len(), 1, "{:#}", report["events"]);
    let launcher = terminals[0]["command"].as_str().unwrap_or_default();
    assert!(launcher.ends_with("/tandem-sandbox") || launcher.ends_with("/tandem"), "{launcher}");
    let args: Vec<&str> = terminals[0]["args"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert!(args.ends_with(&["--read-only", "--", "bash", "-c", "echo from-the-terminal"]), "{args:?}");
    assert_eq!(terminals[0]["cwd"], json!(root));
    assert_eq!(events(&report, "terminal_release").len(), 1);
    assert!(results[3].contains("from-the-terminal"), "{results:#?}");
    let shown = updates(&report, "tool_call_update");
    assert!(
        shown.iter().any(|u| u["content"][0] == json!({ "type": "terminal", "terminalId": "term-1" })),
        "{shown:#?}"
    );

    // The turn's stream: tool calls with kinds and a usage update in ACP's shape.
    let calls = updates(&report, "tool_call");
    let kinds: Vec<&str> = calls.iter().filter_map(|c| c["kind"].as_str()).collect();
    assert_eq!(kinds, ["read", "edit", "edit", "execute"]);
    let usage = updates(&report, "usage_update");
    assert!(usage.iter().any(|u| u["used"] == 128), "{usage:#?}");
    assert_eq!(updates(&report, "available_commands_update").len(), 1);
    let texts: Vec<&str> =
        updates(&report, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(texts, ["Done."]);
    Ok(())
}

#[test]
fn acp_without_client_fs_and_terminal_tandem_writes_and_runs_itself_and_modes_and_model_switch() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let notes = root.join("notes.txt");
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "call_1",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA" }),
        ),
        Turn::new().tool_call("call_2", "bash", json!({ "command": "echo from-our-runner" })),
        Turn::reply("First done."),
        // auto-edit: no question.
        Turn::new().tool_call(
            "call_3",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "beta", "new_string": "BETA" }),
        ),
        Turn::reply("Second done."),
        Turn::reply("Third done."),
    ]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": false, "terminal": false },
            "permissions": ["allow_once"],
            "steps": [
                { "op": "new" },
                { "op": "prompt", "text": "one" },
                { "op": "set_mode", "mode": "auto-edit" },
                { "op": "prompt", "text": "two" },
                { "op": "set_config", "id": "model", "value": "other-model" },
                { "op": "set_config", "id": "mode", "value": "yolo" },
                { "op": "prompt", "text": "three" },
                { "op": "set_config", "id": "colour", "value": "blue" },
                { "op": "set_mode", "mode": "reckless" },
            ],
        }),
    )?;
    let results = &report["results"];
    for i in [1, 3, 6] {
        assert_eq!(results[i]["ok"]["stopReason"], "end_turn", "{results:#}");
    }
    // Nothing went through the client: tandem wrote the file and ran the command itself.
    for kind in ["read", "write", "terminal"] {
        assert!(events(&report, kind).is_empty(), "{kind}: {:#}", report["events"]);
    }
    assert_eq!(read(&notes)?, "ALPHA\nBETA\n");
    assert_eq!(events(&report, "permission").len(), 1, "auto-edit applied the second edit without asking");
    let requests = provider.requests();
    assert_eq!(requests.len(), 6);
    let second_turn = requests[2].body["messages"].to_string();
    assert!(second_turn.contains("from-our-runner"), "{second_turn}");
    let bash_done = updates(&report, "tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == "c2" && u["status"] == "completed")
        .cloned()
        .unwrap_or_default();
    assert_eq!(bash_done["content"][0]["type"], "content", "{bash_done:#}");

    // Modes and the model as config options.
    let modes: Vec<&str> =
        updates(&report, "current_mode_update").iter().filter_map(|u| u["currentModeId"].as_str()).collect();
    assert_eq!(modes, ["auto-edit", "yolo"]);
    let options = &results[5]["ok"]["configOptions"];
    assert_eq!(options[0]["id"], "mode");
    assert_eq!(options[0]["currentValue"], "yolo");
    assert_eq!((options[1]["id"].as_str(), options[1]["category"].as_str()), (Some("model"), Some("model")));
    assert_eq!(options[1]["currentValue"], "other-model");
    assert!(requests[..5].iter().all(|r| r.body["model"] == "scripted"));
    assert_eq!(requests[5].body["model"], "other-model");
    // Bad values: clear errors, and the session goes on.
    assert_eq!(results[7]["error"]["code"], -32602, "{results:#}");
    assert!(results[7]["error"]["message"].as_str().unwrap_or_default().contains("unknown config option `colour`"));
    assert_eq!(results[8]["error"]["code"], -32602, "{results:#}");
    assert!(results[8]["error"]["message"].as_str().unwrap_or_default().contains("auto-edit"));
    Ok(())
}

#[test]
fn acp_compact_is_a_slash_command_that_summarises_older_turns() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "read", json!({ "file_path": "notes.txt" })),
        Turn::reply("It lists alpha and beta."),
        // The summary request of `/compact`.
        Turn::reply("## Goal\nSay what notes.txt holds.\n## Done\nalpha and beta."),
    ]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": false, "terminal": false },
            "permissions": [],
            "steps": [
                { "op": "new" },
                { "op": "prompt", "text": "what is in notes.txt?" },
                { "op": "prompt", "text": "/compact" },
            ],
        }),
    )?;
    let results = &report["results"];
    assert_eq!(results[2]["ok"]["stopReason"], "end_turn", "{results:#}");
    let commands = updates(&report, "available_commands_update");
    assert!(commands[0].to_string().contains("\"compact\""), "{commands:?}");
    let said: String =
        updates(&report, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert!(said.contains("Compacted: about") && said.contains("older turns summarised"), "{said}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[2].body.get("tools").is_none(), "the summary request offers no tools");
    assert!(requests[2].body.to_string().contains("what is in notes.txt?"), "{}", requests[2].body);
    Ok(())
}

#[test]
fn acp_cancel_then_list_load_and_resume_in_new_processes() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let notes = root.join("notes.txt");
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "call_1",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "alpha", "new_string": "ALPHA" }),
        ),
        Turn::reply("Hi there."),
        Turn::reply("Loaded and answering."),
        Turn::reply("Resumed and answering."),
    ]);
    let first = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true },
            "permissions": ["cancel"],
            "steps": [
                { "op": "new" },
                { "op": "prompt", "text": "capitalise alpha" },
                { "op": "prompt", "text": "hello" },
                { "op": "raw", "method": "session/prompt", "params": { "sessionId": "nope", "prompt": [{ "type": "text", "text": "x" }] } },
                { "op": "raw", "method": "session/prompt", "params": { "sessionId": "nope", "prompt": [{ "type": "audio", "data": "", "mimeType": "audio/wav" }] } },
                { "op": "raw", "method": "session/new", "params": { "cwd": "relative/dir", "mcpServers": [] } },
            ],
        }),
    )?;
    let results = &first["results"];
    let session = results[0]["ok"]["sessionId"].as_str().ok_or("no session id")?.to_owned();
    assert_eq!(results[1]["ok"]["stopReason"], "cancelled", "{results:#}");
    assert_eq!(read(&notes)?, NOTES, "a cancelled edit writes nothing");
    assert!(events(&first, "write").is_empty());
    assert_eq!(results[2]["ok"]["stopReason"], "end_turn", "{results:#}");
    for (i, needle, code) in [(3, "no session `nope`", -32002), (4, "audio", -32602), (5, "absolute", -32602)] {
        assert_eq!(results[i]["error"]["code"], code, "{results:#}");
        assert!(results[i]["error"]["message"].as_str().unwrap_or_default().contains(needle), "{results:#}");
    }

    // A new process: the session is listed, and loading it replays the conversation.
    let second = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true },
            "steps": [{ "op": "list" }, { "op": "load", "session": session }, { "op": "prompt", "text": "still there?" }],
        }),
    )?;
    let results = &second["results"];
    let listed = results[0]["ok"]["sessions"].as_array().cloned().unwrap_or_default();
    assert!(listed.iter().any(|s| s["sessionId"] == session.as_str() && s["cwd"] == json!(root)), "{listed:#?}");
    assert_eq!(results[1]["ok"]["modes"]["currentModeId"], "default", "{results:#}");
    let users: Vec<&str> =
        updates(&second, "user_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert!(users.contains(&"hello"), "{users:?}");
    let agents: Vec<&str> =
        updates(&second, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(agents, ["Hi there.", "Loaded and answering."]);
    assert_eq!(results[2]["ok"]["stopReason"], "end_turn", "{results:#}");
    let history = provider.requests()[2].body["messages"].to_string();
    assert!(history.contains("hello") && history.contains("Hi there."), "{history}");

    // Resume: no replay, the conversation goes on.
    let third = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true },
            "steps": [{ "op": "resume", "session": session }, { "op": "prompt", "text": "and now?" }],
        }),
    )?;
    assert_eq!(third["results"][1]["ok"]["stopReason"], "end_turn", "{:#}", third["results"]);
    assert!(updates(&third, "user_message_chunk").is_empty(), "{:#}", third["events"]);
    let agents: Vec<&str> =
        updates(&third, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(agents, ["Resumed and answering."]);
    let history = provider.requests()[3].body["messages"].to_string();
    assert!(history.contains("still there?") && history.contains("Loaded and answering."), "{history}");

    // A slash command is replayed as the person typed it; unknown sessions are -32002 (ACP's
    // "resource not found") on every session method.
    let fourth = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true },
            "steps": [
                { "op": "resume", "session": session },
                { "op": "prompt", "text": "/undo" },
                { "op": "raw", "method": "session/load", "params": { "sessionId": "nope", "cwd": root, "mcpServers": [] } },
                { "op": "raw", "method": "session/resume", "params": { "sessionId": "nope", "cwd": root, "mcpServers": [] } },
                { "op": "raw", "method": "session/set_mode", "params": { "sessionId": "nope", "modeId": "plan" } },
                { "op": "raw", "method": "session/cancel", "params": { "sessionId": "nope" } },
            ],
        }),
    )?;
    let results = &fourth["results"];
    assert_eq!(results[1]["ok"]["stopReason"], "end_turn", "{results:#}");
    for i in 2..6 {
        assert_eq!(results[i]["error"]["code"], -32002, "{results:#}");
    }
    let fifth = run_client(
        &root,
        &provider,
        json!({ "caps": { "fs": true, "terminal": true }, "steps": [{ "op": "load", "session": session }] }),
    )?;
    let users: Vec<&str> =
        updates(&fifth, "user_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert_eq!(users.last(), Some(&"/undo"), "{users:?}");
    assert!(users.iter().all(|t| !t.starts_with('[')), "Tandem's notes are not the person's words: {users:?}");
    Ok(())
}

/// `tandem acp` with raw pipes, for the transcript test.
struct Raw {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Raw {
    fn spawn(root: &Path, provider: &FakeProvider) -> Res<Self> {
        let mut command = Command::new(tandem_bin());
        command.arg("acp").current_dir(root).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        for (key, value) in env(provider).as_object().into_iter().flatten() {
            command.env(key, value.as_str().unwrap_or_default());
        }
        let mut child = command.spawn().map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Ok(Self { child, stdin, lines })
    }

    fn send(&mut self, line: &str) -> Res<()> {
        writeln!(self.stdin, "{line}").map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())
    }

    /// Lines until one is the response with `id` (included).
    fn until_response(&mut self, id: i64) -> Res<Vec<String>> {
        let mut seen = Vec::new();
        loop {
            let line =
                self.lines.recv_timeout(Duration::from_secs(20)).map_err(|_| format!("no response {id}: {seen:#?}"))?;
            let value: Value = serde_json::from_str(&line).map_err(|e| format!("not JSON ({e}): {line}"))?;
            seen.push(line);
            if value["id"] == id && value.get("method").is_none() {
                return Ok(seen);
            }
        }
    }
}

#[test]
fn acp_transcript_of_one_turn_and_bad_input() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().thinking("The file is short.").text("It has ").text("two lines.").tool_call(
            "call_1",
            "read",
            json!({ "file_path": "notes.txt", "limit": 1 }),
        ),
        Turn::reply("alpha comes first.").usage(50, 4),
    ]);
    let mut raw = Raw::spawn(&root, &provider)?;
    // Killed if the test fails before the end.
    let _kill = KillOnDrop(raw.child.id());
    let mut transcript = Vec::new();
    // Bad input first: each gets an error and the connection goes on.
    raw.send("this is not json")?;
    transcript.push(raw.lines.recv_timeout(Duration::from_secs(20)).map_err(|_| "no answer to garbage")?);
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/"}}"#)?;
    transcript.extend(raw.until_response(1)?);
    raw.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":7,"clientCapabilities":{}}}"#,
    )?;
    transcript.extend(raw.until_response(2)?);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"session/fly","params":{}}"#)?;
    transcript.extend(raw.until_response(3)?);
    let new = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"session/new","params":{{"cwd":"{}","mcpServers":[]}}}}"#,
        root.display()
    );
    raw.send(&new)?;
    let lines = raw.until_response(4)?;
    let session = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["result"]["sessionId"].as_str().map(str::to_owned))
        .ok_or("no session")?;
    transcript.extend(lines);
    let prompt = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"What is first?"}},{{"type":"resource_link","uri":"file://{}/notes.txt","name":"notes.txt"}}]}}}}"#,
        root.display()
    );
    raw.send(&prompt)?;
    transcript.extend(raw.until_response(5)?);
    // The end of input ends the server, cleanly.
    let Raw { mut child, stdin, .. } = raw;
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            return Err("tandem acp did not exit at the end of its input".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let root_text = root.display().to_string();
    let normalised: Vec<String> = transcript
        .iter()
        .map(|l| {
            l.replace(&session, "<session>")
                .replace(&root_text, "<root>")
                .replace(env!("CARGO_PKG_VERSION"), "<version>")
                .replace(&provider.base_url(), "<provider>")
        })
        .map(|l| {
            // Timings vary: durationMs.
            regex_lite_duration(&l)
        })
        .collect();
    expect_test::expect_file!["acp_transcript.jsonl"].assert_eq(&(normalised.join("\n") + "\n"));
    // The resource link reached the model as a pointer it can read.
    let first = provider.requests().first().map(|r| r.body["messages"].to_string()).unwrap_or_default();
    assert!(first.contains(&format!("[attached: notes.txt (file://{root_text}/notes.txt)")), "{first}");
    Ok(())
}

/// Kills a process by id when dropped (a test that fails midway leaves nothing running).
struct KillOnDrop(u32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // The process may have exited already; then there is nothing to kill.
        Command::new("kill").arg(self.0.to_string()).stderr(Stdio::null()).status().ok();
    }
}

/// `"durationMs":123` → `"durationMs":0`.
fn regex_lite_duration(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("\"durationMs\":") {
        let (before, after) = rest.split_at(at + "\"durationMs\":".len());
        out.push_str(before);
        out.push('0');
        rest = after.trim_start_matches(|c: char| c.is_ascii_digit());
    }
    out.push_str(rest);
    out
}

#[test]
fn acp_hunk_subsets_always_rules_plans_and_questions_through_elicitation() -> Res<()> {
    let lines: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    let (_dir, root) = workspace(&[("big.txt", &lines)])?;
    let big = root.join("big.txt");
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "call_1",
            "multiedit",
            json!({ "file_path": "big.txt", "edits": [
                { "old_string": "line 2\n", "new_string": "LINE 2\n" },
                { "old_string": "line 18\n", "new_string": "LINE 18\n" },
            ] }),
        ),
        Turn::new().tool_call(
            "call_2",
            "edit",
            json!({ "file_path": "big.txt", "old_string": "line 5\n", "new_string": "LINE 5\n" }),
        ),
        // Allowed always: this one does not ask.
        Turn::new().tool_call(
            "call_3",
            "edit",
            json!({ "file_path": "big.txt", "old_string": "line 9\n", "new_string": "LINE 9\n" }),
        ),
        Turn::new().tool_call(
            "call_4",
            "todowrite",
            json!({ "todos": [
                { "content": "Capitalise lines", "status": "completed" },
                { "content": "Ask about colour", "status": "in_progress", "activeForm": "Asking" },
            ] }),
        ),
        Turn::new().tool_call("call_5", "ask_user", json!({ "question": "Which colour?", "options": ["Red", "Blue"] })),
        Turn::reply("Blue it is."),
    ]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true, "elicitation": true },
            "permissions": [
                { "optionId": "allow_once", "_meta": { "_tandem/acceptedHunks": ["h2"] } },
                "allow_always",
            ],
            "answers": [{ "action": "accept", "content": { "q1": "Blue" } }],
            "steps": [{ "op": "new" }, { "op": "prompt", "text": "go" }],
        }),
    )?;
    assert_eq!(report["results"][1]["ok"]["stopReason"], "end_turn", "{:#}", report["results"]);
    // Only the accepted hunk (line 18) of the first change; then lines 5 and 9.
    let expected =
        lines.replace("line 18\n", "LINE 18\n").replace("line 5\n", "LINE 5\n").replace("line 9\n", "LINE 9\n");
    assert_eq!(read(&big)?, expected);
    let asks = events(&report, "permission");
    assert_eq!(asks.len(), 2, "the always rule covers the third edit: {asks:#?}");
    let hunks = &asks[0]["toolCall"]["content"][0]["_meta"]["_tandem/hunks"];
    assert_eq!((hunks[0]["id"].as_str(), hunks[1]["id"].as_str()), (Some("h1"), Some("h2")), "{hunks:#}");
    let results = tool_results(&provider);
    assert!(results[0].contains("rejected h1"), "{results:#?}");

    // todowrite became a plan.
    let plans = updates(&report, "plan");
    let entries = &plans.last().ok_or("no plan update")?["entries"];
    assert_eq!(entries[0]["content"], "Capitalise lines");
    assert_eq!(entries[0]["status"], "completed");
    assert_eq!(entries[1]["status"], "in_progress");

    // ask_user became a form with the options; the answer reached the model.
    let asked = events(&report, "elicitation");
    assert_eq!(asked.len(), 1, "{:#}", report["events"]);
    assert_eq!(asked[0]["message"], "Which colour?");
    let field = &asked[0]["mode"]["requestedSchema"]["properties"]["q1"];
    let labels: Vec<&str> =
        field["oneOf"].as_array().into_iter().flatten().filter_map(|o| o["const"].as_str()).collect();
    assert_eq!(labels, ["Red", "Blue"], "{field:#}");
    assert!(results[4].contains("A: Blue"), "{results:#?}");
    Ok(())
}

#[test]
fn acp_provider_failures_are_json_rpc_errors_the_person_can_act_on_and_the_session_goes_on() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let provider = FakeProvider::start_blocking(vec![Turn::status(401), Turn::reply("Working again.")]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "steps": [{ "op": "new" }, { "op": "prompt", "text": "one" }, { "op": "prompt", "text": "two" }],
        }),
    )?;
    let results = &report["results"];
    assert_eq!(results[1]["error"]["code"], -32603, "{results:#}");
    let message = results[1]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("401") || message.to_lowercase().contains("key"), "{message}");
    assert_eq!(results[2]["ok"]["stopReason"], "end_turn", "{results:#}");
    Ok(())
}

#[test]
fn acp_terminal_commands_are_killed_at_their_timeout_and_on_cancel() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "bash", json!({ "command": "echo started; sleep 30", "timeout": 1 })),
        Turn::new().tool_call("call_2", "bash", json!({ "command": "sleep 30" })),
    ]);
    let started = Instant::now();
    let report = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": true, "terminal": true },
            "cancel_on_terminal": ["term-2"],
            "steps": [{ "op": "new" }, { "op": "set_mode", "mode": "yolo" }, { "op": "prompt", "text": "wait" }],
        }),
    )?;
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "nothing waited for the sleeps: {:?}\n{report:#}",
        started.elapsed()
    );
    assert_eq!(report["results"][2]["ok"]["stopReason"], "cancelled", "{:#}", report["results"]);
    let kills: Vec<&str> = events(&report, "terminal_kill").iter().filter_map(|e| e["terminalId"].as_str()).collect();
    assert_eq!(kills, ["term-1", "term-2"], "{:#}", report["events"]);
    let released: Vec<&str> =
        events(&report, "terminal_release").iter().filter_map(|e| e["terminalId"].as_str()).collect();
    assert_eq!(released, ["term-1", "term-2"], "{:#}", report["events"]);
    let results = tool_results(&provider);
    assert!(results[0].contains("Timed out after 1s") || results[0].contains("killed after 1s"), "{results:#?}");
    assert!(results[0].contains("started"), "{results:#?}");
    Ok(())
}

#[test]
fn acp_the_end_of_input_mid_turn_cancels_the_turn_and_exits() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let provider = FakeProvider::start_blocking(vec![Turn::hang()]);
    let mut raw = Raw::spawn(&root, &provider)?;
    let _kill = KillOnDrop(raw.child.id());
    raw.send(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#)?;
    raw.until_response(1)?;
    raw.send(&format!(r#"{{"jsonrpc":"2.0","id":2,"method":"session/new","params":{{"cwd":"{}"}}}}"#, root.display()))?;
    let lines = raw.until_response(2)?;
    let session = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["result"]["sessionId"].as_str().map(str::to_owned))
        .ok_or("no session")?;
    raw.send(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{{"sessionId":"{session}","prompt":[{{"type":"text","text":"hang"}}]}}}}"#
    ))?;
    // The provider holds the request: the turn is running.
    let deadline = Instant::now() + Duration::from_secs(10);
    while provider.requests().is_empty() {
        if Instant::now() > deadline {
            return Err("the turn never reached the provider".into());
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let Raw { mut child, stdin, .. } = raw;
    let closed = Instant::now();
    drop(stdin);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if closed.elapsed() > Duration::from_secs(10) {
            return Err("tandem acp kept running after its client left mid-turn".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    assert!(closed.elapsed() < Duration::from_secs(5), "{:?}", closed.elapsed());
    Ok(())
}

#[test]
fn acp_mcp_servers_of_session_new_are_the_sessions_tools() -> Res<()> {
    let everything = repo().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    if !everything.exists() {
        return Err(format!("{} is missing: run `npm install` at the repository root", everything.display()));
    }
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    // A model with a large window: every tool is offered up front (small windows get them
    // through `tool_search`).
    let toml = "[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 2\ncontext_window = 131072\n";
    std::fs::write(root.join(".tandem/config.toml"), toml).map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "mcp__everything__echo", json!({ "message": "through ACP" })),
        Turn::reply("Echoed."),
    ]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "permissions": ["allow_once"],
            "steps": [
                { "op": "new", "mcpServers": [{ "name": "everything", "command": "node", "args": [everything, "stdio"] }] },
                { "op": "prompt", "text": "echo it" },
            ],
        }),
    )?;
    assert_eq!(report["results"][1]["ok"]["stopReason"], "end_turn", "{:#}", report["results"]);
    let offered = provider.requests()[0].body["tools"].to_string();
    assert!(offered.contains("mcp__everything__echo"), "{offered}");
    let results = tool_results(&provider);
    assert!(results[0].contains("through ACP"), "{results:#?}");
    Ok(())
}

#[test]
fn acp_without_elicitation_a_single_choice_question_is_asked_as_a_permission() -> Res<()> {
    let (_dir, root) = workspace(&[("notes.txt", NOTES)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "ask_user", json!({ "question": "Which colour?", "options": ["Red", "Blue"] })),
        Turn::new().tool_call("call_2", "ask_user", json!({ "question": "Name it?" })),
        Turn::reply("Blue, unnamed."),
    ]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "permissions": ["answer-1"],
            "steps": [{ "op": "new" }, { "op": "prompt", "text": "ask me" }],
        }),
    )?;
    assert_eq!(report["results"][1]["ok"]["stopReason"], "end_turn", "{:#}", report["results"]);
    let asks = events(&report, "permission");
    assert_eq!(asks.len(), 1, "the free question cannot be asked this way: {asks:#?}");
    assert_eq!(asks[0]["toolCall"]["toolCallId"], "c1");
    assert_eq!(asks[0]["toolCall"]["title"], "Which colour?");
    let names: Vec<&str> =
        asks[0]["options"].as_array().into_iter().flatten().filter_map(|o| o["name"].as_str()).collect();
    assert_eq!(names, ["Red", "Blue", "Dismiss"]);
    let results = tool_results(&provider);
    assert!(results[0].contains("A: Blue"), "{results:#?}");
    assert!(results[1].contains("nobody can be asked"), "{results:#?}");
    Ok(())
}

/// Review with foresight on the ACP door: the preview travels under the request's `_meta` and
/// as text at the end of the tool call's content, and the SDK's models accept both.
#[test]
fn acp_a_staged_type_error_is_in_the_permission_requests_meta_and_text() -> Res<()> {
    crate::lsp_proxy::require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = workspace(&[])?;
    crate::lsp_proxy::copy_dir(&repo().join("tests/fixtures/python"), &root)?;
    let toml = "[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 2\nconnect_timeout_secs = 2\n[lsp]\ndiagnostics_wait_ms = 60000\nrequest_timeout_ms = 60000\n[review]\npreview_timeout_ms = 60000\n";
    std::fs::write(root.join(".tandem/config.toml"), toml).map_err(|e| e.to_string())?;
    let main = root.join("shop/main.py");
    let original = read(&main)?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call(
            "call_1",
            "edit",
            json!({ "file_path": "shop/main.py", "old_string": "    return total\n", "new_string": "    return \"total\"\n" }),
        ),
        Turn::reply("Left it."),
    ]);
    let scenario = json!({
        "caps": { "fs": false, "terminal": false },
        "permissions": ["reject_once"],
        "steps": [{ "op": "new" }, { "op": "prompt", "text": "return a string" }],
        "env": { "PATH": crate::lsp_proxy::server_path() },
    });
    let report = run_client(&root, &provider, scenario)?;
    let asked = events(&report, "permission");
    assert_eq!(asked.len(), 1, "{:#}", report["events"]);
    let preview = &asked[0]["meta"]["_tandem/diagnostics"];
    assert_eq!(preview["status"], "ready", "{:#}", asked[0]);
    assert_eq!(preview["files"][0]["introduced"][0]["hunk"], "h1", "{preview:#}");
    let content = asked[0]["toolCall"]["content"].as_array().cloned().unwrap_or_default();
    let text = content.last().map(|c| c["content"]["text"].as_str().unwrap_or_default().to_owned()).unwrap_or_default();
    assert!(text.starts_with("Diagnostics: introduces 1 error: shop/main.py:9: "), "{content:#?}");
    assert!(text.contains("new error: ") && text.ends_with("[h1]"), "{text}");
    assert_eq!(read(&main)?, original);
    Ok(())
}

#[test]
fn acp_custom_commands_are_advertised_with_their_hint_and_expand_their_arguments() -> Res<()> {
    let (_dir, root) = workspace(&[("a.py", "def a(): pass\n")])?;
    std::fs::create_dir_all(root.join(".tandem/commands")).map_err(|e| e.to_string())?;
    std::fs::write(
        root.join(".tandem/commands/review.md"),
        "---\ndescription: Review a file for one concern\nargument-hint: <file> <concern>\n---\nReview $1 for $2 only.\nAsked: $ARGUMENTS\n",
    )
    .map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Reviewed.")]);
    let report = run_client(
        &root,
        &provider,
        json!({
            "caps": { "fs": false, "terminal": false },
            "permissions": [],
            "steps": [
                { "op": "new" },
                { "op": "prompt", "text": "/review a.py naming" },
                { "op": "prompt", "text": "/context" },
            ],
        }),
    )?;
    let results = &report["results"];
    assert_eq!(results[1]["ok"]["stopReason"], "end_turn", "{results:#}");
    let commands = updates(&report, "available_commands_update");
    let listed = commands[0]["availableCommands"].as_array().cloned().unwrap_or_default();
    let review = listed.iter().find(|c| c["name"] == "review").cloned().unwrap_or_default();
    assert_eq!(review["description"], "Review a file for one concern", "{listed:?}");
    assert_eq!(review["input"]["hint"], "<file> <concern>");
    assert!(listed.iter().any(|c| c["name"] == "context") && listed.iter().any(|c| c["name"] == "init"));
    let requests = provider.requests();
    assert_eq!(requests.len(), 1, "/context does not ask the model");
    let sent = requests[0].body["messages"].to_string();
    assert!(sent.contains("Review a.py for naming only.\\nAsked: a.py naming"), "{sent}");
    let said: String =
        updates(&report, "agent_message_chunk").iter().filter_map(|u| u["content"]["text"].as_str()).collect();
    assert!(said.contains("/review <file> <concern>") && said.contains(".tandem/commands/review.md"), "{said}");
    Ok(())
}
