//! `tandem run`: one agent turn in a terminal, against the scripted provider.

use std::process::{Command, Output};

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, tandem_bin};

fn tandem_run(dir: &std::path::Path, provider: &FakeProvider, args: &[&str]) -> Res<Output> {
    // `setsid`: no controlling terminal, as under CI or an editor's task runner.
    Command::new("setsid")
        .arg(tandem_bin())
        .arg("run")
        .args(args)
        .current_dir(dir)
        .env_remove("TANDEM_PROFILE")
        .env_remove("TANDEM_MODE")
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_BASE_URL", provider.base_url())
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_PROFILE", "full")
        .output()
        .map_err(|e| e.to_string())
}

#[test]
fn run_with_yes_streams_the_answer_and_applies_the_edit() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().text("Changing it.").tool_call(
            "c1",
            "edit",
            json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" }),
        ),
        Turn::reply("Done."),
    ]);
    let out = tandem_run(dir.path(), &provider, &["--yes", "change one to two"])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).map_err(|e| e.to_string())?, "two\n");
    assert!(stdout.starts_with("Changing it."), "{stdout}");
    assert!(stdout.contains("-one\n+two") && stdout.contains("(--yes: accepted)"), "{stdout}");
    assert!(stdout.contains("✓ Edited a.txt") && stdout.trim_end().ends_with("Done."), "{stdout}");
    // The session was stored and can be continued.
    let sessions: Vec<_> = std::fs::read_dir(dir.path().join(".tandem/sessions")).map_err(|e| e.to_string())?.collect();
    assert_eq!(sessions.len(), 1);
    Ok(())
}

#[test]
fn run_without_a_terminal_rejects_edits_with_a_reason_and_exit_status_follows_the_stop() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("Could not edit."),
    ]);
    let out = tandem_run(dir.path(), &provider, &["change it"])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).map_err(|e| e.to_string())?, "one\n");
    let requests = provider.requests();
    let result = requests[1].body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    assert!(result["content"].as_str().unwrap_or_default().contains("no terminal to ask on"), "{result}");

    // A provider error: exit 1 with the reason on stderr; bad usage: exit 2.
    std::fs::write(dir.path().join(".tandem/config.toml"), "[provider]\nmax_retries = 0\n")
        .map_err(|e| e.to_string())?;
    let out = tandem_run(dir.path(), &provider, &["again"])?;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("script exhausted"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = tandem_run(dir.path(), &provider, &["--mode", "sideways", "x"])?;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("use default, auto-edit, plan or yolo"));
    Ok(())
}

#[test]
fn run_reports_tokens_a_cut_answer_and_compacts_a_stored_session_on_request() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "a.txt" })).usage(1_200, 20).cache_usage(1_000, 0),
        Turn::reply("It says one, and").stop(tandem_fake_provider::Stop::MaxTokens).usage(1_300, 8),
        // `/compact`'s summary request.
        Turn::reply("## Goal\nSay what a.txt holds.\n## Done\nIt says one."),
    ]);
    let out = tandem_run(dir.path(), &provider, &["what is in a.txt?"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "a cut answer: {stderr}");
    assert!(stderr.contains("2.5k tokens in (1.0k cached), 28 out"), "{stderr}");
    assert!(stderr.contains("the answer was cut at the output limit"), "{stderr}");
    // The model the table does not know gets a notice.
    assert!(stderr.contains("model `scripted` is not in Tandem's model table"), "{stderr}");
    let session = stderr
        .split("continue it with --session ")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .ok_or_else(|| format!("no session id in {stderr}"))?
        .to_owned();
    let out = tandem_run(dir.path(), &provider, &["--session", &session, "/compact"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("session {session} compacted")) && stderr.contains("older turns summarised"),
        "{stderr}"
    );
    assert!(provider.requests()[2].body.get("tools").is_none(), "the third request is the summary");
    Ok(())
}
