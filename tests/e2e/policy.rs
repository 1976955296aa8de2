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
        assert!(result.contains("was not run: denied"), "{results:#?}");
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
    // The person sees the sub-agent's blocked call.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Hook blocked a sub-agent's `edit`") && stdout.contains("notes are read-only"),
        "{}",
        shown(&out)
    );
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

/// `tandem lsp` with the person's configuration in `setup`.
fn lsp(setup: &Setup, provider: &FakeProvider, trusted: bool) -> Res<crate::support::Sidecar> {
    let base = provider.base_url();
    let home = setup.home.path().display().to_string();
    let state = crate::support::state_home();
    let mut vars = vec![
        ("TANDEM_PROVIDER", "openai"),
        ("TANDEM_BASE_URL", base.as_str()),
        ("TANDEM_MODEL", "scripted"),
        ("TANDEM_PROFILE", "full"),
        ("XDG_CONFIG_HOME", home.as_str()),
        ("TANDEM_STATE_HOME", state.as_str()),
    ];
    vars.push((tandem_tools::trust::TRUST_ENV, if trusted { "1" } else { "0" }));
    let mut sidecar = crate::support::Sidecar::spawn(setup.dir(), &vars)?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn lsp_prompt(sidecar: &mut crate::support::Sidecar, text: &str) -> Res<Value> {
    let session = sidecar.request("tandem/session/new", json!({}))?;
    let id = session["sessionId"].as_str().ok_or("no session id")?.to_owned();
    sidecar.request("tandem/session/prompt", json!({ "sessionId": id, "prompt": [{ "type": "text", "text": text }] }))
}

#[test]
fn lsp_door_allow_runs_unasked_always_saves_each_parts_prefix_and_deny_holds_in_yolo() -> Res<()> {
    let setup =
        Setup::new(&[], "# mine\n[permissions]\nallow = [\"bash(touch:*)\"]\ndeny = [\"bash(mkdir:*)\"]\n", "")?;
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "touch one.txt"),
        bash("c2", "touch two.txt && chmod 600 two.txt && cp two.txt three.txt"),
        bash("c3", "chmod 644 two.txt"),
        bash("c4", "mkdir nope"),
        Turn::reply("done"),
    ]);
    let mut sidecar = lsp(&setup, &provider, true)?;
    sidecar.permission_replies.push_back(crate::support::PermissionReply::select("allow_always"));
    lsp_prompt(&mut sidecar, "go")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 1, "{asks:#?}");
    let options = asks[0]["options"].to_string();
    assert!(
        options.contains("bash(chmod:*)") && options.contains("bash(cp:*)") && !options.contains("bash(touch:*)"),
        "{options}"
    );
    assert!(setup.dir().join("one.txt").exists() && setup.dir().join("three.txt").exists());
    assert!(!setup.dir().join("nope").exists());
    let config = setup.person_file()?;
    assert!(
        config.starts_with("# mine\n") && config.contains("\"bash(chmod:*)\"") && config.contains("\"bash(cp:*)\""),
        "{config}"
    );
    let results = tool_results(&provider, 4);
    assert!(results[3].contains("denied by") && results[3].contains("bash(mkdir:*)"), "{results:#?}");
    sidecar.shutdown()?;

    // A new process reads the saved rules: `chmod` runs unasked, in yolo `mkdir` is still denied.
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "chmod 600 one.txt && touch four.txt"),
        Turn::reply("ok"),
        bash("c2", "mkdir nope"),
        Turn::reply("ok"),
    ]);
    let mut sidecar = lsp(&setup, &provider, true)?;
    lsp_prompt(&mut sidecar, "go")?;
    assert!(setup.dir().join("four.txt").exists(), "a saved rule did not count in a new process");
    let session = sidecar.request("tandem/session/new", json!({ "mode": "yolo" }))?;
    let id = session["sessionId"].as_str().ok_or("no session id")?.to_owned();
    sidecar
        .request("tandem/session/prompt", json!({ "sessionId": id, "prompt": [{ "type": "text", "text": "go" }] }))?;
    assert!(sidecar.requests_of("tandem/session/requestPermission").is_empty());
    assert!(!setup.dir().join("nope").exists());
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn lsp_door_hooks_block_an_edit_and_add_prompt_context() -> Res<()> {
    let setup = Setup::new(&[("a.txt", "one\n")], "", "")?;
    let guard = script(&setup, "guard.sh", "echo 'a.txt is frozen' >&2; exit 2")?;
    io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
    io(std::fs::write(
        setup.home.path().join("tandem/config.toml"),
        format!(
            "[[hooks.PreToolUse]]\nmatcher = \"Edit\"\ncommand = \"{guard}\"\n\n[[hooks.UserPromptSubmit]]\ncommand = \"echo context-from-hook\"\n"
        ),
    ))?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::reply("blocked"),
    ]);
    let mut sidecar = lsp(&setup, &provider, true)?;
    lsp_prompt(&mut sidecar, "edit")?;
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("a.txt")))?, "one\n");
    assert!(tool_results(&provider, 1)[0].contains("a.txt is frozen"));
    assert!(provider.requests()[0].body.to_string().contains("context-from-hook"));
    // The person saw the block on the call's card.
    let shown = sidecar.session_updates().iter().any(|u| u.to_string().contains("a.txt is frozen"));
    assert!(shown, "the block is not in the transcript");
    sidecar.shutdown()?;
    Ok(())
}

/// `tandem acp` driven by the official Python ACP SDK (tests/e2e/acp_client.py) in `setup`.
fn acp(setup: &Setup, provider: &FakeProvider, trusted: bool, permissions: Value, steps: Value) -> Res<Value> {
    let root = io(setup.dir().canonicalize())?;
    crate::acp::run_client(
        &root,
        provider,
        json!({
            "caps": { "fs": false, "terminal": false },
            "env": {
                "XDG_CONFIG_HOME": setup.home.path(),
                "TANDEM_STATE_HOME": crate::support::state_home(),
                "TANDEM_PROFILE": "full",
                "TANDEM_TRUST_WORKSPACE": if trusted { "1" } else { "0" },
            },
            "permissions": permissions,
            "steps": steps,
        }),
    )
}

#[test]
fn acp_door_allow_compound_always_deny_and_a_projects_allow_only_after_trust() -> Res<()> {
    let setup = Setup::new(
        &[],
        "[permissions]\nallow = [\"bash(touch:*)\"]\ndeny = [\"bash(mkdir:*)\"]\n",
        "[permissions]\nallow = [\"bash(cp:*)\"]\ndeny = [\"bash(ln:*)\"]\n",
    )?;
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "touch one.txt"),
        bash("c2", "touch two.txt | chmod 600 one.txt"),
        bash("c3", "chmod 644 one.txt"),
        bash("c4", "mkdir nope"),
        bash("c5", "cp one.txt copy.txt"),
        bash("c6", "ln -s one.txt link.txt"),
        Turn::reply("done"),
    ]);
    let steps = json!([{ "op": "new" }, { "op": "set_mode", "mode": "default" }, { "op": "prompt", "text": "go" }]);
    // The first question is whether to trust the folder (its settings were ignored): no.
    let report = acp(&setup, &provider, false, json!(["reject_once", "allow_always", "reject_once"]), steps)?;
    let asks = crate::acp::events(&report, "permission");
    // The compound command asked (and "always" saved `chmod:*`); `chmod` alone then ran
    // unasked; the untrusted project's `cp` allow did not count: it asked and was rejected.
    assert_eq!(asks.len(), 3, "{asks:#?}");
    assert!(asks[0]["toolCall"].to_string().contains("[permissions] allow"), "{asks:#?}");
    assert!(asks[2]["toolCall"].to_string().contains("cp one.txt copy.txt"), "{asks:#?}");
    assert!(setup.dir().join("one.txt").exists() && setup.dir().join("two.txt").exists());
    assert!(!setup.dir().join("nope").exists() && !setup.dir().join("copy.txt").exists());
    assert!(!setup.dir().join("link.txt").exists(), "an untrusted project's deny did not count");
    assert!(setup.person_file()?.contains("bash(chmod:*)"));
    let results = crate::acp::tool_results(&provider);
    assert!(results[3].contains("bash(mkdir:*)") && results[5].contains("bash(ln:*)"), "{results:#?}");

    // Trusted, the project's allow counts.
    let provider = FakeProvider::start_blocking(vec![bash("c1", "cp one.txt copy.txt"), Turn::reply("done")]);
    let steps = json!([
        { "op": "new" },
        { "op": "prompt", "text": "go" },
        { "op": "prompt", "text": "/permissions" },
        { "op": "prompt", "text": "/permissions check bash(cp a b && touch c)" },
    ]);
    let report = acp(&setup, &provider, true, json!([]), steps)?;
    assert!(crate::acp::events(&report, "permission").is_empty());
    assert!(setup.dir().join("copy.txt").exists());
    // `/permissions` lists the rules with their files, and checks a call.
    let said = report["events"].to_string();
    assert!(said.contains("bash(chmod:*)") && said.contains(".tandem/config.toml"), "{said}");
    assert!(said.contains("allow (by bash(cp:*), bash(touch:*))"), "{said}");
    Ok(())
}

#[test]
fn acp_door_hooks_block_edits_of_sub_agents_see_results_add_context_and_untrusted_ones_never_run() -> Res<()> {
    let setup = Setup::new(&[("a.txt", "one\n"), ("notes.txt", "old\n")], "", "")?;
    let seen = setup.home.path().join("seen.jsonl");
    let guard = script(
        &setup,
        "guard.sh",
        "jq -e '.tool_input.file_path == \"notes.txt\"' >/dev/null && { echo 'notes are frozen' >&2; exit 2; }; exit 0",
    )?;
    let record = script(&setup, "record.sh", &format!("cat >> {s}; echo >> {s}", s = seen.display()))?;
    io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
    io(std::fs::write(
        setup.home.path().join("tandem/config.toml"),
        format!(
            "[[hooks.PreToolUse]]\nmatcher = \"edit|write\"\ncommand = \"{guard}\"\n\n[[hooks.PostToolUse]]\nmatcher = \"Edit\"\ncommand = \"{record}\"\n\n[[hooks.UserPromptSubmit]]\ncommand = \"echo 'Release branch: rel-7'\"\n"
        ),
    ))?;
    let marker = setup.home.path().join("project-hook-ran");
    io(std::fs::create_dir_all(setup.dir().join(".tandem")))?;
    io(std::fs::write(
        setup.dir().join(".tandem/config.toml"),
        format!("[[hooks.PreToolUse]]\ncommand = \"touch {}\"\n", marker.display()),
    ))?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c0", "write", json!({ "file_path": "notes.txt", "content": "mine\n" })),
        Turn::new().tool_call("c1", "edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
        Turn::new().tool_call("c2", "agent", json!({ "prompt": "Replace old with new in notes.txt" })),
        Turn::new().tool_call(
            "x1",
            "edit",
            json!({ "file_path": "notes.txt", "old_string": "old", "new_string": "new" }),
        ),
        Turn::reply("The hook blocked it."),
        Turn::reply("done"),
    ]);
    let steps = json!([{ "op": "new" }, { "op": "set_mode", "mode": "yolo" }, { "op": "prompt", "text": "go" }]);
    let report = acp(&setup, &provider, false, json!([]), steps)?;
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("a.txt")))?, "two\n", "{:#}", report["events"]);
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("notes.txt")))?, "old\n");
    assert!(!marker.exists(), "an untrusted project's hook ran");
    let requests = provider.requests();
    assert!(requests[0].body.to_string().contains("Release branch: rel-7"));
    assert!(requests[1].body.to_string().contains("notes are frozen"), "the model did not see the reason");
    assert!(requests[4].body.to_string().contains("notes are frozen"), "the sub-agent's model did not see the reason");
    let text = io(std::fs::read_to_string(&seen))?;
    let input: Value = serde_json::from_str(text.lines().next().unwrap_or_default()).map_err(|e| e.to_string())?;
    assert_eq!(
        (input["tool_input"]["new_string"].as_str(), input["tool_response"]["success"].as_bool()),
        (Some("two"), Some(true)),
        "{input}"
    );
    let shown = report["events"].to_string();
    assert!(shown.contains("notes are frozen"), "the block is not in the transcript");
    Ok(())
}

/// `tandem mcp --allow-writes` in `setup`, fed `calls` (tool name, arguments) after the MCP
/// handshake; returns each call's result text.
fn mcp_calls(setup: &Setup, calls: &[(&str, Value)]) -> Res<Vec<String>> {
    use std::io::{BufRead, Write};
    let mut child = io(Command::new(tandem_bin())
        .args(["mcp", "--allow-writes"])
        .current_dir(setup.dir())
        .env("XDG_CONFIG_HOME", setup.home.path())
        .env("TANDEM_STATE_HOME", crate::support::state_home())
        .env("TANDEM_PROFILE", "full")
        .env(tandem_tools::trust::TRUST_ENV, "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let mut lines = std::io::BufReader::new(child.stdout.take().ok_or("no stdout")?).lines();
    let mut send = |message: Value| io(writeln!(stdin, "{message}"));
    send(json!({ "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "1" } } }))?;
    let mut texts = Vec::new();
    let mut next = |want: i64| -> Res<Value> {
        for line in lines.by_ref() {
            let message: Value = serde_json::from_str(&io(line)?).map_err(|e| e.to_string())?;
            if message["id"] == json!(want) {
                return Ok(message);
            }
        }
        Err(format!("no answer to request {want}"))
    };
    next(0)?;
    send(json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
    for (i, (name, arguments)) in calls.iter().enumerate() {
        let id = i as i64 + 1;
        send(
            json!({ "jsonrpc": "2.0", "id": id, "method": "tools/call", "params": { "name": name, "arguments": arguments } }),
        )?;
        let answer = next(id)?;
        texts.push(answer["result"]["content"][0]["text"].as_str().map_or_else(|| answer.to_string(), str::to_owned));
    }
    drop(stdin);
    child.wait().ok();
    Ok(texts)
}

#[test]
fn mcp_allow_writes_keeps_deny_rules_ask_rules_and_hooks() -> Res<()> {
    let setup = Setup::new(&[("a.txt", "one\n"), (".env", "KEY=secret\n")], "", "")?;
    let guard = script(&setup, "guard.sh", "echo 'no edits through MCP today' >&2; exit 2")?;
    io(std::fs::create_dir_all(setup.home.path().join("tandem")))?;
    io(std::fs::write(
        setup.home.path().join("tandem/config.toml"),
        format!(
            "[permissions]\ndeny = [\"read(.env)\", \"bash(touch:*)\"]\nask = [\"bash(git push:*)\"]\n\n[[hooks.PreToolUse]]\nmatcher = \"Edit\"\ncommand = \"{guard}\"\n"
        ),
    ))?;
    let results = mcp_calls(
        &setup,
        &[
            ("read", json!({ "file_path": ".env" })),
            ("bash", json!({ "command": "touch made.txt" })),
            ("bash", json!({ "command": "cat .env" })),
            ("bash", json!({ "command": "git push origin main" })),
            ("read", json!({ "file_path": "a.txt" })),
            ("edit", json!({ "file_path": "a.txt", "old_string": "one", "new_string": "two" })),
            ("bash", json!({ "command": "mkdir allowed.d" })),
        ],
    )?;
    assert!(results[0].contains("denied by") && !results[0].contains("KEY=secret"), "{results:#?}");
    assert!(results[1].contains("bash(touch:*)") && !setup.dir().join("made.txt").exists(), "{results:#?}");
    assert!(results[2].contains("denied") && !results[2].contains("KEY=secret"), "{results:#?}");
    assert!(results[3].contains("cannot ask the person"), "{results:#?}");
    assert!(results[5].contains("no edits through MCP today"), "{results:#?}");
    assert_eq!(io(std::fs::read_to_string(setup.dir().join("a.txt")))?, "one\n");
    assert!(setup.dir().join("allowed.d").is_dir(), "--allow-writes no longer allows: {results:#?}");
    Ok(())
}

#[test]
fn lsp_door_rules_from_the_editors_settings_count_like_the_persons() -> Res<()> {
    let setup = Setup::new(&[], "", "")?;
    let provider = FakeProvider::start_blocking(vec![
        bash("c1", "touch allowed.txt"),
        bash("c2", "mkdir denied.d"),
        Turn::reply("done"),
    ]);
    let base = provider.base_url();
    let home = setup.home.path().display().to_string();
    let vars = [
        ("TANDEM_PROVIDER", "openai"),
        ("TANDEM_BASE_URL", base.as_str()),
        ("TANDEM_MODEL", "scripted"),
        ("TANDEM_PROFILE", "full"),
        ("XDG_CONFIG_HOME", home.as_str()),
    ];
    let mut sidecar = crate::support::Sidecar::spawn(setup.dir(), &vars)?;
    sidecar.initialize(
        json!({ "mode": "yolo", "permissions": { "ask": ["bash(touch:*)"], "deny": ["bash(mkdir:*)"] } }),
    )?;
    sidecar.permission_replies.push_back(crate::support::PermissionReply::select("allow_once"));
    lsp_prompt(&mut sidecar, "go")?;
    // In yolo the editor's ask rule still asked, and its deny held.
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 1, "{asks:#?}");
    assert!(asks[0].to_string().contains("the editor's settings"), "{}", asks[0]);
    assert!(setup.dir().join("allowed.txt").exists() && !setup.dir().join("denied.d").exists());
    assert!(tool_results(&provider, 2)[1].contains("bash(mkdir:*)"));
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn the_agent_cannot_widen_the_projects_policy_unasked_even_in_auto_edit() -> Res<()> {
    let setup = Setup::new(&[], "[permissions]\nallow = [\"edit(**)\"]\n", "mode = \"default\"\n")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": ".tandem/config.toml" })),
        Turn::new().tool_call(
            "c2",
            "edit",
            json!({ "file_path": ".tandem/config.toml", "old_string": "mode = \"default\"", "new_string": "[permissions]\nallow = [\"bash\"]" }),
        ),
        Turn::new().tool_call("c3", "write", json!({ "file_path": "notes.md", "content": "fine\n" })),
        Turn::reply("done"),
    ]);
    let out = setup.run(&provider, true, &["--mode", "auto-edit", "loosen it"])?;
    let config = io(std::fs::read_to_string(setup.dir().join(".tandem/config.toml")))?;
    assert_eq!(config, "mode = \"default\"\n", "{}", shown(&out));
    assert!(setup.dir().join("notes.md").exists(), "an ordinary edit asked: {}", shown(&out));
    assert!(tool_results(&provider, 3)[1].contains("no terminal to ask on"), "{}", shown(&out));
    Ok(())
}
