//! The agent loop end to end: the real binary, a scripted provider speaking the real OpenAI and
//! Anthropic streaming wire formats over HTTP, and the test playing the editor (answering
//! permission requests). Asserts the session updates, the provider's requests and the files.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Stop, Turn};

use crate::support::{PermissionReply, Res, Sidecar};

fn workspace(files: &[(&str, &str)]) -> Res<tempfile::TempDir> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    for (path, text) in files {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().ok_or("no parent")?).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// A sidecar whose provider is `provider`, in `kind` format, with extra config lines.
fn sidecar(root: &Path, provider: &FakeProvider, kind: &str, config: &str) -> Res<Sidecar> {
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    let toml = format!("[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 2\nconnect_timeout_secs = 2\n{config}");
    std::fs::write(root.join(".tandem/config.toml"), toml).map_err(|e| e.to_string())?;
    let base = provider.base_url();
    // "Always" answers are saved in the person's config: this test's own, not the machine's.
    let person = root.join(".tandem/person-config").display().to_string();
    let mut sidecar = Sidecar::spawn(
        root,
        &[
            ("TANDEM_PROVIDER", kind),
            ("TANDEM_BASE_URL", &base),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", "default"),
            ("XDG_CONFIG_HOME", &person),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn new_session(sidecar: &mut Sidecar, params: Value) -> Res<String> {
    let result = sidecar.request("tandem/session/new", params)?;
    result["sessionId"].as_str().map(str::to_owned).ok_or_else(|| format!("no sessionId in {result}"))
}

fn prompt(sidecar: &mut Sidecar, session: &str, text: &str) -> Res<Value> {
    sidecar
        .request("tandem/session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] }))
}

/// The updates as short strings: `text:<chunk>`, `tool_call:<title>:<status>`,
/// `update:<status>`, `usage`, `mode:<id>`.
fn trace(updates: &[Value]) -> Vec<String> {
    updates
        .iter()
        .map(|u| match u["sessionUpdate"].as_str().unwrap_or_default() {
            "agent_message_chunk" => format!("text:{}", u["content"]["text"].as_str().unwrap_or_default()),
            "agent_thought_chunk" => format!("thought:{}", u["content"]["text"].as_str().unwrap_or_default()),
            "user_message_chunk" => format!("user:{}", u["content"]["text"].as_str().unwrap_or_default()),
            "tool_call" => format!(
                "tool_call:{}:{}:{}",
                u["toolCallId"].as_str().unwrap_or_default(),
                u["title"].as_str().unwrap_or_default(),
                u["status"].as_str().unwrap_or_default()
            ),
            "tool_call_update" => format!(
                "update:{}:{}",
                u["toolCallId"].as_str().unwrap_or_default(),
                u["status"].as_str().unwrap_or_default()
            ),
            "usage_update" => "usage".to_owned(),
            "current_mode_update" => format!("mode:{}", u["currentModeId"].as_str().unwrap_or_default()),
            other => other.to_owned(),
        })
        .collect()
}

/// The tool results the provider received in the last request (OpenAI format).
fn openai_tool_results(provider: &FakeProvider) -> Vec<String> {
    let requests = provider.requests();
    let Some(last) = requests.last() else { return Vec::new() };
    last.body["messages"]
        .as_array()
        .map(|messages| {
            messages
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

const LIB: &str = "pub fn x() -> i32 {\n    1\n}\n\npub fn y() -> &'static str {\n    \"y\"\n}\n";

#[test]
fn a_turn_reads_edits_with_approval_is_rejected_runs_an_always_allowed_command_and_ends() -> Res<()> {
    let dir = workspace(&[("src/lib.rs", LIB)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().text("Let me read it.").tool_call("call_1", "read", json!({ "file_path": "src/lib.rs" })),
        Turn::new().tool_call(
            "call_2",
            "edit",
            json!({ "file_path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n" }),
        ),
        Turn::new().tool_call(
            "call_3",
            "edit",
            json!({ "file_path": "src/lib.rs", "old_string": "\"y\"", "new_string": "\"z\"" }),
        ),
        Turn::new().tool_call("call_4", "bash", json!({ "command": "touch made.txt" })),
        Turn::new().tool_call("call_5", "bash", json!({ "command": "touch made2.txt" })),
        Turn::reply("Done: x returns 2.").usage(300, 12),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    sidecar.permission_replies.extend([
        PermissionReply::select("allow_once"),
        PermissionReply::Outcome(json!({ "outcome": "selected", "optionId": "reject_once", "message": "keep y" })),
        PermissionReply::select("allow_always"),
    ]);
    let session = new_session(&mut sidecar, json!({}))?;
    let result = prompt(&mut sidecar, &session, "make x return 2")?;
    assert_eq!(result, json!({ "stopReason": "end_turn" }));

    // The files: the accepted edit, not the rejected one; both commands ran.
    let text = std::fs::read_to_string(dir.path().join("src/lib.rs")).map_err(|e| e.to_string())?;
    assert_eq!(text, LIB.replace("    1\n", "    2\n"));
    assert!(dir.path().join("made.txt").exists() && dir.path().join("made2.txt").exists());

    // Three questions: the edit (with its diff and hunk), the rejected edit, the first command.
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 3, "{asks:#?}");
    let diff = &asks[0]["toolCall"]["content"][0];
    assert_eq!(diff["type"], "diff");
    assert_eq!(diff["path"], json!(dir.path().canonicalize().map_err(|e| e.to_string())?.join("src/lib.rs")));
    assert_eq!(diff["oldText"], json!(LIB));
    assert_eq!(diff["hunks"][0]["id"], "h1");
    assert!(diff["hunks"][0]["patch"].as_str().unwrap_or_default().contains("-    1\n+    2\n"), "{diff}");
    assert_eq!(asks[0]["toolCall"]["toolCallId"], "c2");
    // The request says where the change is (clients show its file from the locations).
    let location = &asks[0]["toolCall"]["locations"][0];
    assert_eq!(location["path"], diff["path"], "{:#}", asks[0]);
    assert!(location["line"].as_u64().is_some_and(|line| line > 0), "{location}");
    let options: Vec<&str> =
        asks[0]["options"].as_array().into_iter().flatten().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once", "reject_always"]);
    let command = asks[2]["toolCall"]["content"][0]["content"]["text"].as_str().unwrap_or_default();
    assert!(command.starts_with("$ touch made.txt") && command.contains("needs approval"), "{command}");

    // The exact sequence of updates.
    let expected = [
        "text:Let me read it.",
        "tool_call:c1:Read src/lib.rs:pending",
        "usage",
        "update:c1:in_progress",
        "update:c1:completed",
        "tool_call:c2:Edit src/lib.rs:pending",
        "usage",
        "update:c2:in_progress",
        "update:c2:completed",
        "tool_call:c3:Edit src/lib.rs:pending",
        "usage",
        "update:c3:in_progress",
        "update:c3:failed",
        "tool_call:c4:Run `touch made.txt`:pending",
        "usage",
        "update:c4:in_progress",
        "update:c4:completed",
        "tool_call:c5:Run `touch made2.txt`:pending",
        "usage",
        "update:c5:in_progress",
        "update:c5:completed",
        "text:Done: x returns 2.",
        "usage",
    ];
    let updates = sidecar.session_updates();
    assert_eq!(trace(&updates), expected);
    // The completed edit shows the applied diff.
    let c2 =
        updates.iter().find(|u| u["toolCallId"] == "c2" && u["status"] == "completed").cloned().unwrap_or_default();
    assert_eq!(c2["content"][0]["type"], "diff");
    assert_eq!(c2["content"][0]["newText"], json!(LIB.replace("    1\n", "    2\n")));

    // What the model saw: the file, the rejection with the person's words, the commands.
    let requests = provider.requests();
    assert_eq!(requests.len(), 6);
    assert!(requests.iter().all(|r| r.path == "/v1/chat/completions" && r.body["model"] == "scripted"));
    let results = openai_tool_results(&provider);
    assert_eq!(results.len(), 5, "{results:#?}");
    assert!(results[0].contains("     2\t    1"), "{}", results[0]);
    assert!(results[1].starts_with("Edited"), "{}", results[1]);
    assert!(results[2].contains("rejected") && results[2].contains("keep y"), "{}", results[2]);
    assert!(!results[3].starts_with("Error") && !results[4].starts_with("Error"), "{results:#?}");
    // The tools were offered, with a system prompt.
    let first = &requests[0].body;
    assert_eq!(first["messages"][0]["role"], "system");
    assert!(first["tools"].as_array().is_some_and(|t| t.iter().any(|t| t["function"]["name"] == "edit")));
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn accepting_some_hunks_applies_exactly_those_and_tells_the_model_anthropic() -> Res<()> {
    let old: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    let new = old.replace("line 2\n", "line two\n").replace("line 28\n", "line twenty-eight\n");
    let dir = workspace(&[("notes.txt", &old)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("toolu_0", "read", json!({ "file_path": "notes.txt" })),
        Turn::new().thinking("Two changes, far apart.").tool_call(
            "toolu_1",
            "write",
            json!({ "file_path": "notes.txt", "content": new }),
        ),
        Turn::reply("Applied what you accepted."),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, "anthropic", "")?;
    sidecar.permission_replies.push_back(PermissionReply::hunks(&["h2"]));
    let session = new_session(&mut sidecar, json!({}))?;
    let result = prompt(&mut sidecar, &session, "rename lines 2 and 28")?;
    assert_eq!(result["stopReason"], "end_turn");
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    let hunks = asks[0]["toolCall"]["content"][0]["hunks"].as_array().cloned().unwrap_or_default();
    assert_eq!(hunks.len(), 2, "{hunks:#?}");
    let text = std::fs::read_to_string(dir.path().join("notes.txt")).map_err(|e| e.to_string())?;
    assert_eq!(text, old.replace("line 28\n", "line twenty-eight\n"));
    // The model learns which hunk was rejected (Anthropic tool_result block).
    let requests = provider.requests();
    assert_eq!(requests[2].path, "/v1/messages");
    let messages = requests[2].body["messages"].as_array().cloned().unwrap_or_default();
    let result_block = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .rfind(|b| b["type"] == "tool_result")
        .ok_or("no tool_result sent back")?;
    let content = result_block["content"].to_string();
    assert!(content.contains("rejected h1") && content.contains("line two"), "{content}");
    // The editor's card says the change was applied only in part.
    let finished = sidecar
        .session_updates()
        .into_iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .ok_or("no completed tool call")?;
    assert_eq!(finished["title"], "Wrote notes.txt (1 hunk rejected)");
    // What was applied, not the proposal: the preview and the diff hold only the accepted hunk.
    let output = finished["content"].to_string();
    let applied = output
        .split("Applied (the accepted hunks only):")
        .nth(1)
        .ok_or_else(|| format!("no applied preview: {output}"))?;
    let applied = applied.split("Note:").next().unwrap_or_default();
    assert!(applied.contains("line twenty-eight") && !applied.contains("line two\\n"), "{applied}");
    let metadata = &finished["rawOutput"]["metadata"];
    assert_eq!(metadata["hunks"], 1, "{metadata}");
    assert!(!metadata["diff"].to_string().contains("+line two"), "{metadata}");
    // The thinking was streamed as thought chunks and sent back with its signature.
    assert!(trace(&sidecar.session_updates()).contains(&"thought:Two changes, far apart.".to_owned()));
    let thinking = messages
        .iter()
        .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
        .find(|b| b["type"] == "thinking")
        .ok_or("thinking block not sent back")?;
    assert!(thinking["signature"].is_string());
    Ok(())
}

#[test]
fn cancel_mid_stream_ends_the_turn_promptly() -> Res<()> {
    let dir = workspace(&[])?;
    let slow = (0..50).fold(Turn::new().chunk_delay(Duration::from_millis(200)), |turn, i| turn.text(format!("w{i} ")));
    let provider = FakeProvider::start_blocking(vec![slow, Turn::reply("after cancel")]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut sidecar, json!({}))?;
    let id = sidecar.send_request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "talk" }] }),
    )?;
    sidecar.pump_until(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")?;
    let started = Instant::now();
    sidecar.notify("tandem/session/cancel", json!({ "sessionId": session }))?;
    let result = sidecar.wait_response(id)?.map_err(|e| e.to_string())?;
    assert_eq!(result["stopReason"], "cancelled");
    assert!(started.elapsed() < Duration::from_secs(2), "cancel took {:?}", started.elapsed());
    // The session goes on: the next prompt works.
    let result = prompt(&mut sidecar, &session, "again")?;
    assert_eq!(result["stopReason"], "end_turn");
    Ok(())
}

/// The text of an OpenAI-format message (a string, or text parts).
fn message_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(""),
        _ => String::new(),
    }
}

/// A cancelled prompt (before any answer, and after part of one was streamed) stays a turn of
/// its own in the history, marked as interrupted: the next prompt is sent alone, after it.
#[test]
fn a_cancelled_prompt_is_not_merged_into_the_next_one() -> Res<()> {
    for streamed in [false, true] {
        let dir = workspace(&[])?;
        let first = if streamed {
            (0..50).fold(Turn::new().chunk_delay(Duration::from_millis(200)), |turn, i| turn.text(format!("w{i} ")))
        } else {
            Turn::hang()
        };
        let provider = FakeProvider::start_blocking(vec![first, Turn::reply("hi")]);
        let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
        let session = new_session(&mut sidecar, json!({}))?;
        let id = sidecar.send_request(
            "tandem/session/prompt",
            json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "Think hard about it" }] }),
        )?;
        if streamed {
            sidecar.pump_until(|n| n["params"]["update"]["sessionUpdate"] == "agent_message_chunk")?;
        } else {
            let deadline = Instant::now() + Duration::from_secs(10);
            while provider.requests().is_empty() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        sidecar.notify("tandem/session/cancel", json!({ "sessionId": session }))?;
        let result = sidecar.wait_response(id)?.map_err(|e| e.to_string())?;
        assert_eq!(result["stopReason"], "cancelled");
        let result = prompt(&mut sidecar, &session, "Say hi")?;
        assert_eq!(result["stopReason"], "end_turn");
        let requests = provider.requests();
        let messages = requests.last().and_then(|r| r.body["messages"].as_array().cloned()).unwrap_or_default();
        let texts: Vec<(String, String)> = messages
            .iter()
            .filter(|m| m["role"] != "system")
            .map(|m| (m["role"].as_str().unwrap_or_default().to_owned(), message_text(m)))
            .collect();
        let last = texts.last().cloned().unwrap_or_default();
        assert_eq!(last, ("user".to_owned(), "Say hi".to_owned()), "streamed: {streamed}: {texts:?}");
        assert_eq!(texts[0], ("user".to_owned(), "Think hard about it".to_owned()), "{texts:?}");
        let told = texts[1..texts.len() - 1].iter().any(|(role, text)| role == "user" && text.contains("interrupted"));
        assert!(told, "the model is not told the person interrupted: {texts:?}");
        if streamed {
            let partial = texts.iter().any(|(role, text)| role == "assistant" && text.starts_with("w0 "));
            assert!(partial, "what was streamed before the cancel is lost: {texts:?}");
        }
    }
    Ok(())
}

#[test]
fn cancel_during_an_approval_resolves_it_and_writes_nothing() -> Res<()> {
    let dir = workspace(&[("a.txt", "one\n")])?;
    let provider = FakeProvider::start_blocking(vec![Turn::new().tool_call(
        "call_1",
        "edit",
        json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" }),
    )]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    sidecar.permission_replies.push_back(PermissionReply::CancelSession);
    let session = new_session(&mut sidecar, json!({}))?;
    let result = prompt(&mut sidecar, &session, "edit")?;
    assert_eq!(result["stopReason"], "cancelled");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).map_err(|e| e.to_string())?, "one\n");
    let trace = trace(&sidecar.session_updates());
    assert_eq!(trace.last().map(String::as_str), Some("update:c1:failed"), "{trace:#?}");
    assert_eq!(provider.requests().len(), 1);
    Ok(())
}

#[test]
fn rate_limited_then_success_retries_after_the_servers_delay() -> Res<()> {
    let dir = workspace(&[])?;
    let provider = FakeProvider::start_blocking(vec![Turn::status(429).retry_after(1), Turn::reply("hello")]);
    let mut sidecar = sidecar(dir.path(), &provider, "anthropic", "")?;
    let session = new_session(&mut sidecar, json!({}))?;
    let started = Instant::now();
    let result = prompt(&mut sidecar, &session, "hi")?;
    assert_eq!(result["stopReason"], "end_turn");
    assert!(started.elapsed() >= Duration::from_millis(900), "Retry-After ignored: {:?}", started.elapsed());
    assert_eq!(provider.requests().len(), 2);
    assert_eq!(trace(&sidecar.session_updates()), ["text:hello", "usage"]);
    Ok(())
}

#[test]
fn an_answer_cut_at_the_output_limit_says_so_and_how_to_go_on() -> Res<()> {
    for kind in ["openai", "anthropic"] {
        let dir = workspace(&[])?;
        let provider = FakeProvider::start_blocking(vec![
            Turn::reply("The first half of").stop(Stop::MaxTokens).usage(50, 300),
            Turn::reply("the answer."),
        ]);
        // Both names of the setting.
        let limit = if kind == "openai" { "max_tokens = 300\n" } else { "max_output_tokens = 300\n" };
        let mut sidecar = sidecar(dir.path(), &provider, kind, limit)?;
        let session = new_session(&mut sidecar, json!({}))?;
        let result = prompt(&mut sidecar, &session, "explain")?;
        assert_eq!(result, json!({ "stopReason": "max_tokens" }), "{kind}");
        let texts: Vec<String> =
            trace(&sidecar.session_updates()).into_iter().filter(|t| t.starts_with("text:")).collect();
        assert_eq!(texts.len(), 2, "{kind}: {texts:?}");
        assert!(
            texts[1].contains("cut: it reached the output limit of 300 tokens") && texts[1].contains("\"continue\""),
            "{kind}: {texts:?}"
        );
        // "continue" goes on from the cut answer, which stays in the history.
        let result = prompt(&mut sidecar, &session, "continue")?;
        assert_eq!(result["stopReason"], "end_turn");
        let body = &provider.requests()[1].body;
        assert!(body.to_string().contains("The first half of"), "{kind}: {body}");
        sidecar.shutdown()?;
    }
    Ok(())
}

#[test]
fn compact_on_request_summarises_older_turns_and_the_next_turn_starts_from_the_summary() -> Res<()> {
    let dir = workspace(&[("src/lib.rs", LIB)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "read", json!({ "file_path": "src/lib.rs" })),
        Turn::reply("x returns 1.").usage(900, 10),
        // The compaction's summary request.
        Turn::reply("## Goal\nExplain src/lib.rs.\n## Done\nRead it: x returns 1."),
        Turn::reply("y returns \"y\"."),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut sidecar, json!({}))?;
    assert_eq!(prompt(&mut sidecar, &session, "what does x return?")?["stopReason"], "end_turn");
    let result = sidecar.request("tandem/session/compact", json!({ "sessionId": session }))?;
    assert_eq!(result["summarized"], true, "{result}");
    let (before, after) = (result["tokensBefore"].as_u64(), result["tokensAfter"].as_u64());
    assert!(before.is_some() && after.is_some(), "{result}");
    let summary_request = &provider.requests()[2].body;
    assert!(summary_request.get("tools").is_none(), "{summary_request}");
    assert!(summary_request.to_string().contains("what does x return?"), "the transcript: {summary_request}");
    assert_eq!(prompt(&mut sidecar, &session, "and y?")?["stopReason"], "end_turn");
    let next = provider.requests()[3].body.to_string();
    assert!(next.contains("[Summary of the earlier conversation") && next.contains("x returns 1."), "{next}");
    let shown = trace(&sidecar.session_updates());
    assert!(shown.iter().any(|t| t.contains("Compacted the conversation:completed")), "{shown:?}");
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn a_stalled_stream_ends_the_turn_with_an_error_that_says_so() -> Res<()> {
    let dir = workspace(&[])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().text("partial ").text("more").stall_after(1, Duration::from_secs(20)),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "stall_timeout_secs = 1\n")?;
    let session = new_session(&mut sidecar, json!({}))?;
    let started = Instant::now();
    let result = prompt(&mut sidecar, &session, "hi")?;
    assert_eq!(result["stopReason"], "error", "{result}");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(error.contains("sent nothing for 1s"), "{error}");
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    Ok(())
}

#[test]
fn an_unreachable_provider_is_an_error_that_says_how_to_configure_one() -> Res<()> {
    let dir = workspace(&[])?;
    // A port with nothing listening: bind, read the port, close.
    let port =
        std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map_err(|e| e.to_string())?.port();
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join(".tandem/config.toml"), "[provider]\nmax_retries = 0\n")
        .map_err(|e| e.to_string())?;
    let base = format!("http://127.0.0.1:{port}/v1");
    let mut sidecar = Sidecar::spawn(dir.path(), &[("TANDEM_BASE_URL", &base), ("TANDEM_PROVIDER", "openai")])?;
    sidecar.initialize(json!({}))?;
    let session = new_session(&mut sidecar, json!({}))?;
    let result = prompt(&mut sidecar, &session, "hi")?;
    assert_eq!(result["stopReason"], "error");
    let error = result["error"].as_str().unwrap_or_default();
    assert!(error.contains(&base) && error.contains("TANDEM_BASE_URL"), "{error}");
    Ok(())
}

#[test]
fn plan_mode_blocks_a_write_without_asking() -> Res<()> {
    let dir = workspace(&[])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "write", json!({ "file_path": "plan.txt", "content": "x" })),
        Turn::new().tool_call("call_2", "bash", json!({ "command": "touch x" })),
        Turn::reply("Here is the plan."),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut sidecar, json!({ "mode": "plan" }))?;
    let result = prompt(&mut sidecar, &session, "plan it")?;
    assert_eq!(result["stopReason"], "end_turn");
    assert!(!dir.path().join("plan.txt").exists() && !dir.path().join("x").exists());
    assert!(sidecar.requests_of("tandem/session/requestPermission").is_empty());
    let results = openai_tool_results(&provider);
    assert!(results.iter().all(|r| r.contains("plan mode")), "{results:#?}");
    assert!(provider.requests()[0].body["messages"][0]["content"].as_str().unwrap_or_default().contains("plan mode"));
    // Switching the mode lets the same write through (yolo: without asking).
    sidecar.request("tandem/session/setMode", json!({ "sessionId": session, "modeId": "yolo" }))?;
    provider.push(Turn::new().tool_call("call_3", "write", json!({ "file_path": "plan.txt", "content": "x" })));
    provider.push(Turn::reply("written"));
    prompt(&mut sidecar, &session, "go")?;
    assert!(dir.path().join("plan.txt").exists());
    assert!(trace(&sidecar.session_updates()).contains(&"mode:yolo".to_owned()));
    Ok(())
}

#[test]
fn the_same_failing_call_three_times_is_not_run_a_fourth() -> Res<()> {
    let dir = workspace(&[])?;
    let failing = || Turn::new().tool_call("c", "read", json!({ "file_path": "missing.txt" }));
    let provider =
        FakeProvider::start_blocking(vec![failing(), failing(), failing(), failing(), Turn::reply("giving up")]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut sidecar, json!({}))?;
    prompt(&mut sidecar, &session, "read it")?;
    let requests = provider.requests();
    let last_result = |i: usize| -> String {
        requests[i].body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    assert!(last_result(3).contains("failed 3 times"), "{}", last_result(3));
    assert!(last_result(4).contains("was not run again"), "{}", last_result(4));
    Ok(())
}

#[test]
fn a_session_is_stored_listed_and_resumed_with_its_history() -> Res<()> {
    let dir = workspace(&[])?;
    let provider =
        FakeProvider::start_blocking(vec![Turn::reply("The answer is 42."), Turn::reply("You asked about 42.")]);
    let mut first = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut first, json!({}))?;
    prompt(&mut first, &session, "what is the answer?")?;
    first.shutdown()?;

    let mut second = sidecar(dir.path(), &provider, "openai", "")?;
    let listed = second.request("tandem/session/list", json!({}))?;
    assert_eq!(listed["sessions"][0]["sessionId"], json!(session));
    assert_eq!(listed["sessions"][0]["title"], "what is the answer?");
    let loaded = second.request("tandem/session/load", json!({ "sessionId": session }))?;
    assert_eq!(loaded["modes"]["current"], "default");
    assert_eq!(
        trace(&second.session_updates()),
        ["user:what is the answer?", "text:The answer is 42.", "mode:default"]
    );
    prompt(&mut second, &session, "what did I ask?")?;
    let messages = provider.requests()[1].body["messages"].clone();
    let roles: Vec<&str> = messages.as_array().into_iter().flatten().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(messages[2]["content"], "The answer is 42.");
    // Unknown and malformed ids are clear errors.
    let err = second.request_raw("tandem/session/load", json!({ "sessionId": "../../etc" }))?.err().unwrap_or_default();
    assert!(err["message"].as_str().unwrap_or_default().contains("not a session id"), "{err}");
    let err = second
        .request_raw("tandem/session/prompt", json!({ "sessionId": "nope", "prompt": [] }))?
        .err()
        .unwrap_or_default();
    assert!(err["message"].as_str().unwrap_or_default().contains("no session `nope`"), "{err}");
    Ok(())
}

/// Each tool call of `updates` folded to its final state (what a client shows once the call
/// ended): the announcement with every later update's fields applied, `rawOutput` aside.
fn fold_calls(updates: &[Value]) -> Vec<Value> {
    let mut calls: Vec<Value> = Vec::new();
    for update in updates {
        match update["sessionUpdate"].as_str() {
            Some("tool_call") => {
                let mut call = update.clone();
                call["sessionUpdate"] = json!("tool_call");
                calls.push(call);
            }
            Some("tool_call_update") => {
                if let Some(call) = calls.iter_mut().find(|c| c["toolCallId"] == update["toolCallId"]) {
                    for (key, value) in update.as_object().into_iter().flatten() {
                        if !matches!(key.as_str(), "sessionUpdate" | "rawOutput") && !value.is_null() {
                            call[key] = value.clone();
                        }
                    }
                }
            }
            _ => {}
        }
    }
    calls
}

/// Loading a session replays its tool calls as the person saw them: diffs, outputs and
/// locations included, equal to the live updates folded.
#[test]
fn load_replays_tool_calls_as_they_were_first_sent() -> Res<()> {
    let dir = workspace(&[("src/lib.rs", LIB)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "read", json!({ "file_path": "src/lib.rs" })),
        Turn::new().tool_call(
            "call_2",
            "edit",
            json!({ "file_path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n" }),
        ),
        Turn::new().tool_call("call_3", "bash", json!({ "command": "echo hello from the command" })),
        Turn::new().tool_call("call_4", "read", json!({ "file_path": "missing.rs" })),
        Turn::reply("Done."),
    ]);
    let mut first = sidecar(dir.path(), &provider, "openai", "")?;
    first.permission_replies.extend([PermissionReply::select("allow_once"), PermissionReply::select("allow_once")]);
    let session = new_session(&mut first, json!({}))?;
    prompt(&mut first, &session, "change x")?;
    let live = fold_calls(&first.session_updates());
    assert_eq!(live.len(), 4, "{live:#?}");
    first.shutdown()?;
    let mut second = sidecar(dir.path(), &provider, "openai", "")?;
    second.request("tandem/session/load", json!({ "sessionId": session }))?;
    let replayed = fold_calls(&second.session_updates());
    assert_eq!(replayed, live);
    // What the comparison covers: the diff, the command's output, the locations.
    assert_eq!(replayed[1]["content"][0]["type"], "diff", "{:#}", replayed[1]);
    assert!(replayed[2]["content"].to_string().contains("hello from the command"), "{:#}", replayed[2]);
    assert!(replayed[0]["locations"][0]["path"].as_str().is_some_and(|p| p.ends_with("src/lib.rs")));
    Ok(())
}

#[test]
fn an_accepted_edit_to_an_open_document_goes_through_the_editor() -> Res<()> {
    let dir = workspace(&[("a.txt", "on disk\n")])?;
    let provider = FakeProvider::start_blocking(vec![
        // Two reads in one turn (concurrency-safe: run together, results in order).
        Turn::new().tool_call("r1", "read", json!({ "file_path": "a.txt" })).tool_call(
            "r2",
            "read",
            json!({ "file_path": "b.txt" }),
        ),
        Turn::new().tool_call(
            "e1",
            "edit",
            json!({ "file_path": "a.txt", "old_string": "unsaved", "new_string": "edited" }),
        ),
        Turn::reply("ok"),
    ]);
    std::fs::write(dir.path().join("b.txt"), "bee\n").map_err(|e| e.to_string())?;
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    sidecar.open("a.txt", "unsaved text\n")?;
    sidecar.permission_replies.push_back(PermissionReply::select("allow_once"));
    let session = new_session(&mut sidecar, json!({}))?;
    prompt(&mut sidecar, &session, "edit the open file")?;
    let results = {
        let requests = provider.requests();
        requests[1].body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| {
                (
                    m["tool_call_id"].as_str().unwrap_or_default().to_owned(),
                    m["content"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(results.len(), 2);
    assert_eq!((results[0].0.as_str(), results[1].0.as_str()), ("r1", "r2"));
    assert!(results[0].1.contains("unsaved text") && results[1].1.contains("bee"), "{results:?}");
    // The permission showed the editor's text; the edit went back as applyEdit.
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks[0]["toolCall"]["content"][0]["oldText"], "unsaved text\n");
    assert_eq!(sidecar.requests_of("workspace/applyEdit").len(), 1);
    assert_eq!(sidecar.docs.get(&sidecar.uri("a.txt")).map(|d| d.text.as_str()), Some("edited text\n"));
    Ok(())
}

/// An editor answers `cancelled` to the permission request when the person cancels the turn; its
/// `session/cancel` may come later (or be processed later). The turn must end there, without
/// another model request (found by the Neovim plugin's cancel-during-review test).
#[test]
fn a_cancelled_permission_answer_ends_the_turn_without_asking_the_model_again() -> Res<()> {
    let dir = workspace(&[("src/lib.rs", LIB)])?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "read", json!({ "file_path": "src/lib.rs" })),
        Turn::new().tool_call(
            "call_2",
            "edit",
            json!({ "file_path": "src/lib.rs", "old_string": "    1\n", "new_string": "    2\n" }),
        ),
        Turn::reply("never asked for"),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    sidecar.permission_replies.push_back(PermissionReply::Outcome(json!({ "outcome": "cancelled" })));
    let session = new_session(&mut sidecar, json!({}))?;
    let result = prompt(&mut sidecar, &session, "make x return 2")?;
    assert_eq!(result, json!({ "stopReason": "cancelled" }));
    assert_eq!(provider.remaining(), 1, "the model was asked again after the person cancelled");
    let text = std::fs::read_to_string(dir.path().join("src/lib.rs")).map_err(|e| e.to_string())?;
    assert_eq!(text, LIB);
    Ok(())
}

/// The choices of the config option `id` in a configOptions result.
fn choices(result: &Value, id: &str) -> Vec<String> {
    let options = result["configOptions"].as_array().cloned().unwrap_or_default();
    let option = options.iter().find(|o| o["id"] == id).cloned().unwrap_or(Value::Null);
    option["options"].as_array().into_iter().flatten().filter_map(|c| c["value"].as_str().map(str::to_owned)).collect()
}

#[test]
fn the_model_picker_lists_the_providers_models_and_switching_changes_the_next_request() -> Res<()> {
    let dir = workspace(&[])?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("From the other model.")]);
    provider.list_models(&["gpt-4.1", "gpt-4o-mini"]);
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut sidecar, json!({}))?;
    let options = sidecar.request("tandem/session/configOptions", json!({ "sessionId": session }))?;
    assert_eq!(choices(&options, "model"), ["scripted", "gpt-4.1", "gpt-4o-mini"], "{options:#}");
    assert_eq!(choices(&options, "mode"), ["default", "auto-edit", "plan", "yolo"], "{options:#}");
    assert!(options.get("modelsError").is_none(), "{options:#}");

    let changed = sidecar.request(
        "tandem/session/setConfigOption",
        json!({ "sessionId": session, "configId": "model", "value": "gpt-4o-mini" }),
    )?;
    let model = changed["configOptions"].as_array().and_then(|o| o.iter().find(|o| o["id"] == "model").cloned());
    assert_eq!(model.map(|m| m["currentValue"].clone()), Some(json!("gpt-4o-mini")), "{changed:#}");
    prompt(&mut sidecar, &session, "hello")?;
    let requests = provider.requests();
    assert_eq!(requests.last().map(|r| r.body["model"].clone()), Some(json!("gpt-4o-mini")));

    // Bad input: an unknown option or mode is an error that says what to use, and changes nothing.
    let bad = sidecar.request(
        "tandem/session/setConfigOption",
        json!({ "sessionId": session, "configId": "mode", "value": "reckless" }),
    );
    assert!(bad.as_ref().is_err_and(|e| e.contains("unknown mode `reckless`") && e.contains("auto-edit")), "{bad:?}");
    let bad = sidecar.request(
        "tandem/session/setConfigOption",
        json!({ "sessionId": session, "configId": "temperature", "value": "2" }),
    );
    assert!(bad.as_ref().is_err_and(|e| e.contains("use `mode` or `model`")), "{bad:?}");
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn a_provider_without_a_model_list_still_offers_the_configured_model_and_says_why() -> Res<()> {
    let dir = workspace(&[])?;
    let provider = FakeProvider::start_blocking(Vec::new());
    let mut sidecar = sidecar(dir.path(), &provider, "openai", "")?;
    let session = new_session(&mut sidecar, json!({}))?;
    let options = sidecar.request("tandem/session/configOptions", json!({ "sessionId": session }))?;
    assert_eq!(choices(&options, "model"), ["scripted"], "{options:#}");
    let error = options["modelsError"].as_str().unwrap_or_default();
    assert!(error.contains("/v1/models") && error.contains("404"), "{error}");
    sidecar.shutdown()?;
    Ok(())
}
