//! The person's policy through `tandem run`: permission rules (allow, ask, deny; compound
//! commands; trust) and hooks (PreToolUse, PostToolUse, UserPromptSubmit, sub-agents, trust),
//! against the scripted provider. The person's configuration lives in a temporary
//! `XDG_CONFIG_HOME`; no terminal is attached (`setsid`), so anything that asks fails with
//! "no terminal to ask on" unless `--yes` answers it.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, tandem_bin};

fn io<T>(result: std::io::Result<T>) -> Res<T> {
    result.map_err(|e| e.to_string())
}

/// A project and a person: `project` is the project's `.tandem/config.toml` (if any), `person`
/// the person's `config.toml`.
struct Setup {
    project: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl Setup {
    fn new(files: &[(&str, &str)], person: &str, project: &str) -> Res<Self> {
        let setup = Self { project: io(tempfile::tempdir())?, home: io(tempfile::tempdir())? };
        std::fs::create_dir_all(setup.project.path().join(".git")).map_err(|e| e.to_string())?;
        for (name, text) in files {
            io(std::fs::write(setup.project.path().join(name), text))?;
        }
        if !person.is_empty() {
            io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
            io(std::fs::write(setup.home.path().join("tandem/config.toml"), person))?;
        }
        if !project.is_empty() {
            io(std::fs::create_dir_all(setup.project.path().join(".tandem")))?;
            io(std::fs::write(setup.project.path().join(".tandem/config.toml"), project))?;
        }
        Ok(setup)
    }

    fn dir(&self) -> &Path {
        self.project.path()
    }

    fn person_file(&self) -> Res<String> {
        io(std::fs::read_to_string(self.home.path().join("tandem/config.toml")))
    }

    /// `tandem run ARGS`, trusted or not, without a terminal.
    fn run(&self, provider: &FakeProvider, trusted: bool, args: &[&str]) -> Res<Output> {
        let mut command = Command::new("setsid");
        command
            .arg(tandem_bin())
            .arg("run")
            .args(args)
            .current_dir(self.dir())
            .env_remove("TANDEM_MODE")
            .env_remove(tandem_tools::trust::TRUST_ENV)
            .env("XDG_CONFIG_HOME", self.home.path())
            .env("TANDEM_STATE_HOME", crate::support::state_home())
            .env("TANDEM_PROVIDER", "openai")
            .env("TANDEM_BASE_URL", provider.base_url())
            .env("TANDEM_MODEL", "scripted")
            .env("TANDEM_PROFILE", "full");
        if trusted {
            command.env(tandem_tools::trust::TRUST_ENV, "1");
        }
        io(command.output())
    }
}

/// The tool results the model got in request `i`, in order.
fn tool_results(provider: &FakeProvider, i: usize) -> Vec<String> {
    let requests = provider.requests();
    let Some(request) = requests.get(i) else { return Vec::new() };
    request.body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn bash(id: &str, command: &str) -> Turn {
    Turn::new().tool_call(id, "bash", json!({ "command": command }))
}

fn shown(out: &Output) -> String {
    format!("stdout:\n{}\nstderr:\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

#[test]
fn an_allow_rule_runs_a_matching_command_unasked_and_a_compound_or_other_command_still_asks() -> Res<()> {
    let setup = Setup::new(&[], "[permissions]\nallow = [\"bash(touch:*)\", \"Bash(mkdir -p:*)\"]\n", "")?;
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "touch made.txt && mkdir -p made.d"),
        bash("c2", "touch second.txt && chmod 600 made.txt"),
        bash("c3", "mkdir plain.d"),
        Turn::reply("done"),
    ]);
    let out = setup.run(&provider, true, &["make files"])?;
    assert!(setup.dir().join("made.txt").exists() && setup.dir().join("made.d").is_dir(), "{}", shown(&out));
    assert!(!setup.dir().join("second.txt").exists(), "the compound command ran unasked");
    assert!(!setup.dir().join("plain.d").exists(), "`mkdir` without -p ran unasked");
    let results = tool_results(&provider, 3);
    assert!(
        results[1].contains("no terminal to ask on") && results[2].contains("no terminal to ask on"),
        "{results:#?}"
    );
    assert_eq!(out.status.code(), Some(6), "{}", shown(&out));
    Ok(())
}

#[test]
fn tandem_permissions_lists_the_rules_with_their_files_and_checks_a_call() -> Res<()> {
    let setup = Setup::new(&[], "[permissions]\nallow = [\"bash(npm test:*)\"]\ndeny = [\"read(.env)\"]\n", "")?;
    let out = io(Command::new(tandem_bin())
        .args(["permissions", "check", "bash(npm test -- -x)"])
        .current_dir(setup.dir())
        .env("XDG_CONFIG_HOME", setup.home.path())
        .output())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("allow") && stdout.contains("bash(npm test:*)"), "{}", shown(&out));
    let out = io(Command::new(tandem_bin())
        .args(["permissions", "check", "bash(npm test && curl x)"])
        .current_dir(setup.dir())
        .env("XDG_CONFIG_HOME", setup.home.path())
        .output())?;
    assert!(String::from_utf8_lossy(&out.stdout).contains("no rule decides"), "{}", shown(&out));
    let out = io(Command::new(tandem_bin())
        .args(["permissions", "check", "read(sub/.env)"])
        .current_dir(setup.dir())
        .env("XDG_CONFIG_HOME", setup.home.path())
        .output())?;
    assert!(String::from_utf8_lossy(&out.stdout).contains("deny"), "{}", shown(&out));
    let out = io(Command::new(tandem_bin())
        .args(["permissions"])
        .current_dir(setup.dir())
        .env("XDG_CONFIG_HOME", setup.home.path())
        .output())?;
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("bash(npm test:*)") && listed.contains("tandem/config.toml"), "{}", shown(&out));
    assert!(setup.person_file()?.contains("npm test:*"));
    Ok(())
}

#[test]
fn a_deny_rule_holds_under_yes_and_in_yolo() -> Res<()> {
    let setup = Setup::new(
        &[(".env", "KEY=secret\n")],
        "[permissions]\ndeny = [\"bash(touch:*)\", \"read(.env)\", \"webfetch(domain:example.com)\"]\n",
        "",
    )?;
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "touch denied.txt"),
        bash("c2", "cat .env"),
        Turn::new().tool_call("c3", "read", json!({ "file_path": ".env" })),
        bash("c4", "ls && /usr/bin/touch denied2.txt"),
        Turn::new().tool_call("c5", "webfetch", json!({ "url": "https://www.example.com/x" })),
        Turn::reply("done"),
    ]);
    let out = setup.run(&provider, true, &["--yes", "--mode", "yolo", "try"])?;
    assert!(!setup.dir().join("denied.txt").exists() && !setup.dir().join("denied2.txt").exists(), "{}", shown(&out));
    let results = tool_results(&provider, 5);
    assert_eq!(results.len(), 5, "{results:#?}");
    for result in &results {
        assert!(result.contains("denied by") || result.contains("covers"), "{results:#?}");
        assert!(!result.contains("KEY=secret"), "{results:#?}");
    }
    assert!(results[0].contains("bash(touch:*)") && results[0].contains("tandem/config.toml"), "{results:#?}");
    Ok(())
}

#[test]
fn a_projects_allow_counts_only_after_trust_and_its_deny_always() -> Res<()> {
    let project = "[permissions]\nallow = [\"bash(touch:*)\"]\ndeny = [\"bash(mkdir:*)\"]\n";
    let setup = Setup::new(&[], "", project)?;
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "touch untrusted.txt"),
        bash("c2", "mkdir d1"),
        Turn::reply("ok"),
    ]);
    let out = setup.run(&provider, false, &["go"])?;
    assert!(!setup.dir().join("untrusted.txt").exists(), "an untrusted project's allow counted: {}", shown(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[permissions] allow"), "{}", shown(&out));
    let results = tool_results(&provider, 2);
    assert!(results[0].contains("no terminal to ask on"), "{results:#?}");
    assert!(results[1].contains("denied by") && results[1].contains("bash(mkdir:*)"), "{results:#?}");

    let provider =
        FakeProvider::start_blocking(vec![bash("c1", "touch trusted.txt"), bash("c2", "mkdir d2"), Turn::reply("ok")]);
    let out = setup.run(&provider, true, &["--yes", "go"])?;
    assert!(setup.dir().join("trusted.txt").exists(), "{}", shown(&out));
    assert!(!setup.dir().join("d2").exists(), "{}", shown(&out));
    Ok(())
}

/// A hook script in the person's config directory; returns its path.
fn script(setup: &Setup, name: &str, body: &str) -> Res<String> {
    let path = setup.home.path().join(name);
    io(std::fs::write(&path, format!("#!/bin/bash\n{body}\n")))?;
    io(std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)))?;
    Ok(path.display().to_string())
}

#[test]
fn pre_tool_use_exit_2_blocks_an_edit_with_the_reason_shown_to_the_model() -> Res<()> {
    let setup = Setup::new(&[("a.txt", "one\n")], "", "")?;
    let guard = script(
        &setup,
        "guard.sh",
        "echo \"edits to $(jq -r .tool_input.file_path 2>/dev/null || echo a.txt) are frozen\" >&2\nexit 2",
    )?;
    io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
    io(std::fs::write(
        setup.home.path().join("tandem/config.toml"),
        format!("[[hooks.PreToolUse]]\nmatcher = \"Edit|Write\"\ncommand = \"{guard}\"\ntimeout_ms = 10000\n"),
    ))?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("blocked"),
    ]);
    let out = setup.run(&provider, true, &["--yes", "edit it"])?;
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("a.txt")))?, "one\n", "{}", shown(&out));
    let results = tool_results(&provider, 1);
    assert!(results[0].contains("are frozen") && results[0].contains("PreToolUse"), "{results:#?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("are frozen"),
        "the person does not see the block: {}",
        shown(&out)
    );
    Ok(())
}

#[test]
fn post_tool_use_sees_tool_input_and_tool_response_and_user_prompt_submit_adds_context() -> Res<()> {
    let setup = Setup::new(&[("a.txt", "one\n")], "", "")?;
    let seen = setup.home.path().join("seen.jsonl");
    let record = script(&setup, "record.sh", &format!("cat >> {}\necho >> {}", seen.display(), seen.display()))?;
    let context = script(&setup, "context.sh", "echo 'The ticket is T-42.'")?;
    io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
    io(std::fs::write(
        setup.home.path().join("tandem/config.toml"),
        format!(
            "[[hooks.PostToolUse]]\nmatcher = \"edit\"\ncommand = \"{record}\"\n\n[[hooks.UserPromptSubmit]]\ncommand = \"{context}\"\n"
        ),
    ))?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("done"),
    ]);
    let out = setup.run(&provider, true, &["--yes", "edit it"])?;
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("a.txt")))?, "two\n", "{}", shown(&out));
    let text = io(std::fs::read_to_string(&seen))?;
    let input: Value = serde_json::from_str(text.trim()).map_err(|e| format!("{e}: {text}"))?;
    assert_eq!(input["hook_event_name"], "PostToolUse");
    assert_eq!(input["tool_name"], "Edit");
    assert_eq!(input["tool_input"]["file_path"], "a.txt");
    assert_eq!(input["tool_response"]["success"], true, "{input}");
    assert!(input["session_id"].as_str().is_some_and(|s| !s.is_empty()) && input["cwd"].is_string(), "{input}");
    let first = provider.requests()[0].body.to_string();
    assert!(first.contains("The ticket is T-42."), "{first}");
    Ok(())
}

#[test]
fn a_sub_agents_edit_passes_through_the_same_hooks() -> Res<()> {
    let setup = Setup::new(&[("notes.txt", "old\n")], "", "")?;
    let guard = script(&setup, "guard.sh", "echo 'notes are read-only' >&2; exit 2")?;
    io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
    io(std::fs::write(
        setup.home.path().join("tandem/config.toml"),
        format!("[[hooks.PreToolUse]]\nmatcher = \"edit\"\ncommand = \"{guard}\"\n"),
    ))?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("a1", "agent", json!({ "prompt": "Replace old with new in notes.txt" })),
        Turn::new().tool_call(
            "x1",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "old", "new_string": "new" }),
        ),
        Turn::reply("The hook blocked it."),
        Turn::reply("The sub-agent could not."),
    ]);
    let out = setup.run(&provider, true, &["--yes", "update the notes"])?;
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("notes.txt")))?, "old\n", "{}", shown(&out));
    let results = tool_results(&provider, 2);
    assert!(results.last().is_some_and(|r| r.contains("notes are read-only")), "{results:#?}");
    Ok(())
}

#[test]
fn an_untrusted_projects_hooks_never_run() -> Res<()> {
    let setup = Setup::new(&[("a.txt", "one\n")], "", "")?;
    let marker = setup.home.path().join("ran");
    let project = format!(
        "[[hooks.UserPromptSubmit]]\ncommand = \"touch {m}\"\n\n[[hooks.PreToolUse]]\ncommand = \"touch {m}\"\n\n[verify]\ncommands = [\"touch {m}\"]\n",
        m = marker.display()
    );
    io(std::fs::create_dir_all(setup.dir().join(".tandem")))?;
    io(std::fs::write(setup.dir().join(".tandem/config.toml"), &project))?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "a.txt" })),
        Turn::reply("done"),
    ]);
    let out = setup.run(&provider, false, &["--yes", "read it"])?;
    assert!(!marker.exists(), "an untrusted project's hook ran: {}", shown(&out));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[[hooks.PreToolUse]]"), "{}", shown(&out));
    // Trusted, they run.
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "a.txt" })),
        Turn::reply("done"),
    ]);
    let out = setup.run(&provider, true, &["--yes", "read it"])?;
    assert!(marker.exists(), "a trusted project's hook did not run: {}", shown(&out));
    Ok(())
}

#[test]
fn the_verify_loop_sends_failures_back_until_they_pass() -> Res<()> {
    let setup =
        Setup::new(&[("a.txt", "one\n")], "[verify]\ncommands = [\"grep -q three a.txt\"]\nmax_rounds = 2\n", "")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("Changed it."),
        Turn::new().tool_call(
            "c2",
            "edit",
            json!({ "file_path": "a.txt", "old_string": "two", "new_string": "three" }),
        ),
        Turn::reply("Fixed it."),
    ]);
    let out = setup.run(&provider, true, &["--yes", "change it"])?;
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("a.txt")))?, "three\n", "{}", shown(&out));
    let requests = provider.requests();
    assert_eq!(requests.len(), 4, "{}", shown(&out));
    assert!(requests[2].body.to_string().contains("verify commands failed"), "{}", requests[2].body);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Verify: grep -q three a.txt (round 1 of 2)"), "{}", shown(&out));
    Ok(())
}
