//! What a team and a person tell the agent in files, through the front doors: the LSP door and
//! `tandem run` (the ACP door's test is in `acp.rs`), checked in the requests the scripted
//! provider receives; and `tandem context`.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, Sidecar, tandem_bin};

fn write(root: &Path, rel: &str, text: &str) -> Res<()> {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().ok_or("no parent")?).map_err(|e| e.to_string())?;
    std::fs::write(path, text).map_err(|e| e.to_string())
}

/// A project with nested instruction files, rules, a command and a skill; the person's own
/// configuration in `config/`.
fn project() -> Res<tempfile::TempDir> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("proj");
    std::fs::create_dir_all(root.join(".git")).map_err(|e| e.to_string())?;
    write(&root, "AGENTS.md", "ROOT-INSTRUCTIONS")?;
    write(&root, "svc/AGENTS.md", "SVC-INSTRUCTIONS")?;
    write(&root, "svc/api/CLAUDE.md", "API-INSTRUCTIONS")?;
    write(&root, "svc/api/handler.py", "def handle(): pass\n")?;
    write(&root, ".tandem/rules/python.md", "---\npaths: [\"**/*.py\"]\n---\nPYTHON-RULE: type hints.\n")?;
    write(
        &root,
        ".tandem/commands/explain.md",
        "---\ndescription: Explain a symbol\nargument-hint: <symbol> [depth]\n---\nExplain `$1` at depth $2. (asked: $ARGUMENTS)\n",
    )?;
    write(&dir.path().join("config"), "tandem/AGENTS.md", "PERSON-INSTRUCTIONS")?;
    Ok(dir)
}

fn run_in(dir: &Path, cwd: &Path, provider: &FakeProvider, args: &[&str]) -> Res<Output> {
    Command::new("setsid")
        .arg(tandem_bin())
        .args(args)
        .current_dir(cwd)
        .env_remove("TANDEM_PROFILE")
        .env_remove("TANDEM_MODE")
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_BASE_URL", provider.base_url())
        .env("TANDEM_MODEL", "scripted")
        .output()
        .map_err(|e| e.to_string())
}

fn system_of(body: &serde_json::Value) -> String {
    body["messages"][0]["content"].as_str().unwrap_or_default().to_owned()
}

#[test]
fn run_reads_instructions_from_the_person_and_the_root_down_and_expands_a_command() -> Res<()> {
    let dir = project()?;
    let root = dir.path().join("proj");
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "read", json!({ "file_path": "api/handler.py" })),
        Turn::reply("Explained."),
    ]);
    let out = run_in(dir.path(), &root.join("svc"), &provider, &["run", "/explain handle 2"])?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let requests = provider.requests();
    let system = system_of(&requests[0].body);
    let at = |text: &str| system.find(text).ok_or_else(|| format!("{text} missing from {system}"));
    assert!(at("PERSON-INSTRUCTIONS")? < at("ROOT-INSTRUCTIONS")?, "{system}");
    assert!(at("ROOT-INSTRUCTIONS")? < at("SVC-INSTRUCTIONS")?, "{system}");
    assert!(!system.contains("API-INSTRUCTIONS") && !system.contains("PYTHON-RULE"), "{system}");
    let first = requests[0].body["messages"].to_string();
    assert!(first.contains("Explain `handle` at depth 2. (asked: handle 2)"), "{first}");
    // Reading svc/api/handler.py brings svc/api/CLAUDE.md and the Python rule, named.
    let second = requests[1].body["messages"].to_string();
    assert!(second.contains("<instructions file=\\\"svc/api/CLAUDE.md\\\">\\nAPI-INSTRUCTIONS"), "{second}");
    assert!(second.contains("<rule file=\\\".tandem/rules/python.md\\\">\\nPYTHON-RULE: type hints.\\n</rule>"));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("/explain handle 2"), "the transcript shows the command: {stdout}");
    Ok(())
}

#[test]
fn the_lsp_door_expands_a_command_and_lists_the_commands() -> Res<()> {
    let dir = project()?;
    let root = dir.path().join("proj");
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Explained.")]);
    let base = provider.base_url();
    let config = dir.path().join("config");
    let config = config.to_string_lossy();
    let mut sidecar = Sidecar::spawn(
        &root,
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", &base),
            ("TANDEM_MODEL", "scripted"),
            ("XDG_CONFIG_HOME", &config),
            ("TANDEM_TRUST_WORKSPACE", "1"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    let listed = sidecar.request("tandem/commands/list", json!({}))?;
    let commands = listed["commands"].as_array().cloned().unwrap_or_default();
    let explain = commands.iter().find(|c| c["name"] == "explain").cloned().unwrap_or_default();
    assert_eq!(explain["input"]["hint"], "<symbol> [depth]", "{listed}");
    assert!(commands.iter().any(|c| c["name"] == "context") && commands.iter().any(|c| c["name"] == "init"));
    let session = sidecar.request("tandem/session/new", json!({}))?;
    let session = session["sessionId"].as_str().ok_or("no session")?.to_owned();
    let prompt = json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "/explain Sidecar deep" }] });
    let result = sidecar.request("tandem/session/prompt", prompt)?;
    assert_eq!(result["stopReason"], "end_turn");
    let sent = provider.requests()[0].body["messages"].to_string();
    assert!(sent.contains("Explain `Sidecar` at depth deep. (asked: Sidecar deep)"), "{sent}");
    let cards: Vec<String> = sidecar
        .session_updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .filter_map(|u| u["title"].as_str().map(str::to_owned))
        .collect();
    assert!(cards.contains(&"/explain Sidecar deep (.tandem/commands/explain.md)".to_owned()), "{cards:?}");
    Ok(())
}

#[test]
fn tandem_context_lists_what_is_in_force_and_names_a_malformed_file_and_line() -> Res<()> {
    let dir = project()?;
    let root = dir.path().join("proj");
    let provider = FakeProvider::start_blocking(Vec::new());
    let out = run_in(dir.path(), &root.join("svc"), &provider, &["context"])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for line in
        ["AGENTS.md", "svc/AGENTS.md", ".tandem/rules/python.md", "**/*.py", "/explain <symbol> [depth]", "tokens"]
    {
        assert!(stdout.contains(line), "{line} missing:\n{stdout}");
    }
    write(&root, ".tandem/rules/bad.md", "---\ndescription: broken\npaths: [\"src/**\"\n---\nbody\n")?;
    let out = run_in(dir.path(), &root, &provider, &["context"])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(".tandem/rules/bad.md:3: error: the list of `paths` is not closed with `]`"), "{stdout}");
    Ok(())
}
