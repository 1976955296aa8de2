//! `tandem run`: one agent turn in a terminal, against the scripted provider.

use std::process::{Command, Output};

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, editor_missing, tandem_bin};
use crate::tmux::Tmux;

fn tandem_run(dir: &std::path::Path, provider: &FakeProvider, args: &[&str]) -> Res<Output> {
    tandem_run_with(dir, provider, args, &[])
}

fn tandem_run_with(
    dir: &std::path::Path,
    provider: &FakeProvider,
    args: &[&str],
    env: &[(&str, &std::path::Path)],
) -> Res<Output> {
    // `setsid`: no controlling terminal, as under CI or an editor's task runner.
    Command::new("setsid")
        .envs(env.iter().copied())
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
    let sessions: Vec<_> =
        std::fs::read_dir(crate::support::state_of(dir.path(), "sessions")).map_err(|e| e.to_string())?.collect();
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
    let stderr = String::from_utf8_lossy(&out.stderr);
    // The turn ended, but an approval was needed that nobody could give: not a success.
    assert_eq!(out.status.code(), Some(6), "{stdout}\n{stderr}");
    assert!(stderr.contains("needed an approval (or an answer) nobody could give here"), "{stderr}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).map_err(|e| e.to_string())?, "one\n");
    let requests = provider.requests();
    let result = requests[1].body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
    assert!(result["content"].as_str().unwrap_or_default().contains("no terminal to ask on"), "{result}");

    // A provider error: exit 1 with the reason on stderr; bad usage: exit 2.
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
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
    // A state home of its own: the unknown-model notice is said once per person.
    let state = tempfile::tempdir().map_err(|e| e.to_string())?;
    let state_env = [("TANDEM_STATE_HOME", state.path())];
    let out = tandem_run_with(dir.path(), &provider, &["what is in a.txt?"], &state_env)?;
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
    let out = tandem_run_with(dir.path(), &provider, &["--session", &session, "/compact"], &state_env)?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("model table"), "the notice is said once: {stderr}");
    assert!(
        stderr.contains(&format!("session {session} compacted")) && stderr.contains("older turns summarised"),
        "{stderr}"
    );
    assert!(provider.requests()[2].body.get("tools").is_none(), "the third request is the summary");
    Ok(())
}

#[test]
fn run_with_no_provider_listening_fails_at_once_says_so_once_and_keeps_no_session() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    // A port of this machine that nothing listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let out = Command::new("setsid")
        .arg(tandem_bin())
        .args(["run", "hello"])
        .current_dir(dir.path())
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_BASE_URL", format!("http://127.0.0.1:{port}/v1"))
        .env("TANDEM_MODEL", "scripted")
        .env_remove("TANDEM_LOG")
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.matches("no model provider answered").count(), 1, "one message: {stderr}");
    assert!(!stderr.contains("retrying") && !stderr.contains("retries"), "nothing listens, nothing to retry: {stderr}");
    assert!(!stderr.contains('\x1b'), "no colour codes when stderr is not a terminal: {stderr:?}");
    assert!(!stderr.contains("--session"), "nothing to continue: {stderr}");
    let sessions = std::fs::read_dir(crate::support::state_of(dir.path(), "sessions")).map(|d| d.count()).unwrap_or(0);
    assert_eq!(sessions, 0, "a turn that never reached a model leaves no session");
    Ok(())
}

#[test]
fn run_session_last_continues_the_latest_session() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("The first answer."), Turn::reply("Again.")]);
    let out = tandem_run(dir.path(), &provider, &["remember the word heliotrope"])?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = tandem_run(dir.path(), &provider, &["--session", "last", "what was the word?"])?;
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // Piped, the output is the new answer alone: the stored transcript is not shown again.
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Again.");
    let second = provider.requests()[1].body.to_string();
    assert!(second.contains("heliotrope") && second.contains("The first answer."), "{second}");
    let sessions =
        std::fs::read_dir(crate::support::state_of(dir.path(), "sessions")).map_err(|e| e.to_string())?.count();
    assert_eq!(sessions, 1, "the same session went on");
    // With nothing stored, `last` says so.
    let empty = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = tandem_run(empty.path(), &provider, &["--session", "last", "x"])?;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("there is no stored session yet"));
    Ok(())
}

/// The interactive session, as a person at a terminal uses it: a prompt typed, the edit
/// approved with one key (no Enter), a failed command's card with its output, slash commands.
#[test]
fn run_without_a_prompt_is_an_interactive_session_with_single_key_approvals() -> Res<()> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return editor_missing("tmux");
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "one\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::new().tool_call("c2", "bash", json!({ "command": "ls no-such-file" })),
        Turn::reply("Changed it; the listing failed."),
    ]);
    let tmux = Tmux { socket: format!("tandem-run-{}", std::process::id()) };
    let state = dir.path().join("state");
    let command = format!("'{}' run; echo EXITED $?; sleep 60", tandem_bin().display());
    let status = tmux
        .command()
        .args(["new-session", "-d", "-x", "150", "-y", "40", "-s", "review", "sh", "-c", &command])
        .current_dir(dir.path())
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_BASE_URL", provider.base_url())
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_PROFILE", "full")
        .env("XDG_STATE_HOME", &state)
        .env_remove("TANDEM_MODE")
        .status()
        .map_err(|e| format!("tmux: {e}"))?;
    assert!(status.success(), "tmux new-session: {status}");
    tmux.wait_for("the banner", |s| s.contains("/help lists the commands"))?;
    tmux.keys("change one to two")?;
    tmux.keys("Enter")?;
    tmux.wait_for("the approval", |s| s.contains("[y]es / [n]o"))?;
    // One key, no Enter.
    tmux.keys("y")?;
    let screen = tmux.wait_for("the end of the turn", |s| s.contains("Changed it; the listing failed."))?;
    eprintln!("--- tandem run in tmux:\n{screen}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).map_err(|e| e.to_string())?, "two\n");
    assert!(screen.contains("✓ Edited a.txt"), "{screen}");
    assert!(screen.contains("✗ Exit 2: ls no-such-file"), "a failed command gets a cross: {screen}");
    assert!(screen.contains("│ ls: cannot access"), "with the tail of its output: {screen}");
    tmux.keys("/mode plan")?;
    tmux.keys("Enter")?;
    tmux.keys("/mode")?;
    tmux.keys("Enter")?;
    tmux.wait_for("the mode", |s| s.contains("tandem: mode plan"))?;
    tmux.keys("/exit")?;
    tmux.keys("Enter")?;
    let screen = tmux.wait_for("the exit", |s| s.contains("EXITED"))?;
    assert!(screen.contains("EXITED 0") && screen.contains("continue it with --session"), "{screen}");
    let history = std::fs::read_to_string(state.join("tandem/history")).map_err(|e| e.to_string())?;
    assert!(history.contains("change one to two") && history.contains("/mode plan"), "{history}");
    Ok(())
}

/// The last non-empty line of a screen.
fn last_line(screen: &str) -> &str {
    screen.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().trim()
}

/// In a folder whose own settings are ignored, the REPL asks to trust it with the question's
/// own answers (`t` trusts, `n` does not), and trusting applies the folder's provider to that
/// very turn. The prompt comes back after every command, with nothing left spinning.
#[test]
fn the_repl_asks_to_trust_with_its_own_keys_and_trust_applies_at_once() -> Res<()> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return editor_missing("tmux");
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (root, config_home, state) = (dir.path().join("repo"), dir.path().join("config"), dir.path().join("state"));
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(config_home.join("tandem")).map_err(|e| e.to_string())?;
    let persons = FakeProvider::start_blocking(vec![Turn::reply("from the person's provider")]);
    let projects =
        FakeProvider::start_blocking(vec![Turn::reply("from the project's provider"), Turn::reply("Summary.")]);
    let provider = |url: &str| format!("[provider]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"scripted\"\n");
    std::fs::write(config_home.join("tandem/config.toml"), provider(&persons.base_url())).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".tandem/config.toml"), provider(&projects.base_url())).map_err(|e| e.to_string())?;
    let tmux = Tmux { socket: format!("tandem-trust-{}", std::process::id()) };
    let command = format!("'{}' run; echo EXITED $?; sleep 60", tandem_bin().display());
    let status = tmux
        .command()
        .args(["new-session", "-d", "-x", "150", "-y", "40", "-s", "review", "sh", "-c", &command])
        .current_dir(&root)
        .env("TANDEM_TRUST_WORKSPACE", "0")
        .env("XDG_CONFIG_HOME", &config_home)
        .env("XDG_STATE_HOME", &state)
        .env_remove("TANDEM_PROVIDER")
        .env_remove("TANDEM_BASE_URL")
        .env_remove("TANDEM_MODEL")
        .env_remove("TANDEM_MODE")
        .status()
        .map_err(|e| format!("tmux: {e}"))?;
    assert!(status.success(), "tmux new-session: {status}");
    tmux.wait_for("the banner", |s| s.contains("/help lists the commands"))?;
    tmux.keys("hello")?;
    tmux.keys("Enter")?;
    let screen = tmux.wait_for("the trust question", |s| s.contains("[t]rust this folder / [n]ot now?"))?;
    assert!(!screen.contains("[y]es"), "the trust question has its own answers: {screen}");
    tmux.keys("t")?;
    let screen = tmux.wait_for("the answer", |s| s.contains("from the project's provider"))?;
    assert!(screen.contains("apply from this request on"), "{screen}");
    assert!(persons.requests().is_empty(), "the turn that trusted the folder went to the old provider");
    tmux.wait_for("the prompt back after the turn", |s| last_line(s) == "›")?;
    tmux.keys("/compact")?;
    tmux.keys("Enter")?;
    tmux.wait_for("the compaction", |s| s.contains("compacted"))?;
    tmux.wait_for("the prompt back after /compact", |s| last_line(s) == "›")?;
    tmux.keys("/exit")?;
    tmux.keys("Enter")?;
    let screen = tmux.wait_for("the exit", |s| s.contains("EXITED"))?;
    assert!(screen.contains("EXITED 0"), "{screen}");
    let list = std::fs::read_to_string(config_home.join("tandem/trusted-folders")).map_err(|e| e.to_string())?;
    assert!(list.contains(&root.canonicalize().map_err(|e| e.to_string())?.display().to_string()), "{list}");
    Ok(())
}
