//! `tandem tool` and `tandem tools`: one call from the shell (exit status 0 / 1 / 2, JSON or
//! text), the tools a workspace offers (its MCP servers' included), and a tool's arguments.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{Res, tandem_bin};

/// Runs `tandem` in `dir` with stdout piped; exit status, stdout and stderr. The person's own
/// configuration (a user config.toml or mcp.json would change the tools listed) is left out: the
/// home directory is an empty one.
fn run_raw(dir: &std::path::Path, args: &[&str]) -> Res<(i32, String, String)> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = Command::new(tandem_bin())
        .args(args)
        .current_dir(dir)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env_remove("TANDEM_PROFILE")
        // The MCP test's workspace names its servers in `.tandem/mcp.json`.
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .output()
        .map_err(|e| e.to_string())?;
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    Ok((out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr)))
}

fn run(dir: &std::path::Path, args: &[&str]) -> Res<(i32, Value, String)> {
    let (code, stdout, stderr) = run_raw(dir, args)?;
    Ok((code, serde_json::from_str(&stdout).unwrap_or(Value::Null), stderr))
}

#[test]
fn tool_command_exit_codes() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "alpha\n").map_err(|e| e.to_string())?;

    let (code, json, _) = run(dir.path(), &["tool", "read", r#"{"file_path":"a.txt"}"#])?;
    assert_eq!((code, json["output"].as_str()), (0, Some("     1\talpha\n")));

    let (code, json, _) =
        run(dir.path(), &["tool", "edit", r#"{"file_path":"a.txt","old_string":"alpha","new_string":"beta"}"#])?;
    assert_eq!(code, 0, "{json}");
    assert_eq!(std::fs::read_to_string(dir.path().join("a.txt")).unwrap_or_default(), "beta\n");

    let (code, json, _) = run(dir.path(), &["tool", "read", r#"{"file_path":"../x"}"#])?;
    assert_eq!(code, 1);
    assert!(json["error"].as_str().is_some_and(|e| e.contains("outside the workspace")));

    for bad in [&["tool", "nope"][..], &["tool", "read", "{oops"], &["tool", "read", "[1]"], &["frobnicate"]] {
        let (code, _, stderr) = run(dir.path(), bad)?;
        assert_eq!(code, 2, "{bad:?}: {stderr}");
        assert!(!stderr.is_empty());
    }
    Ok(())
}

/// `--text` prints what a person reads: the output alone, the error on stderr; `--json` (and a
/// pipe, without either) keeps the whole result for scripts. Exit statuses do not change.
#[test]
fn tool_command_prints_text_or_json() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "alpha\n").map_err(|e| e.to_string())?;
    let read = r#"{"file_path":"a.txt"}"#;

    assert_eq!(run_raw(dir.path(), &["tool", "read", read, "--text"])?, (0, "     1\talpha\n".into(), String::new()));

    let (code, stdout, stderr) = run_raw(dir.path(), &["tool", "read", r#"{"file_path":"nope.txt"}"#, "--text"])?;
    assert_eq!((code, stdout.as_str()), (1, ""), "{stderr}");
    assert!(stderr.contains("`nope.txt` does not exist"), "{stderr}");

    for args in [&["tool", "read", read][..], &["tool", "read", read, "--json"]] {
        let (code, json, _) = run(dir.path(), args)?;
        assert_eq!((code, json["output"].as_str()), (0, Some("     1\talpha\n")), "{args:?}");
    }
    let (code, _, stderr) = run_raw(dir.path(), &["tool", "read", read, "--text", "--json"])?;
    assert_eq!(code, 2, "{stderr}");
    Ok(())
}

/// `tandem tools` is a table whose columns line up and whose descriptions end at a sentence's
/// end; `--json` lists exactly the registry's tools with their schemas and MCP annotations.
#[test]
fn tools_lists_a_table_and_json_that_match_the_registry() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let registry = tandem_tools::builtin(tandem_tools::ToolConfig::default()).at_door(tandem_tools::Door::SHELL);

    let (code, json, stderr) = run(dir.path(), &["tools", "--json"])?;
    assert_eq!(code, 0, "{stderr}");
    let listed = json.as_array().ok_or(format!("not an array: {json}"))?;
    let expected: Vec<_> = registry.enabled().collect();
    assert_eq!(listed.len(), expected.len(), "{json}");
    for (tool, entry) in expected.iter().zip(listed) {
        let spec = tool.spec();
        assert_eq!(entry["name"], spec.name);
        assert_eq!(entry["description"], spec.description);
        assert_eq!(entry["inputSchema"], *spec.parameters, "{}", spec.name);
        assert_eq!(entry["group"], spec.group.as_str(), "{}", spec.name);
        assert_eq!(entry["canWrite"], spec.can_write, "{}", spec.name);
        assert_eq!(entry["annotations"]["readOnlyHint"], spec.effect.is_read_only(), "{}", spec.name);
        assert!(entry["effect"].is_string(), "{entry}");
    }

    let (code, table, stderr) = run_raw(dir.path(), &["tools"])?;
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].starts_with("NAME") && lines[0].contains("DESCRIPTION"), "{table}");
    let column = lines[0].find("DESCRIPTION").ok_or("no DESCRIPTION header")?;
    for tool in &expected {
        let spec = tool.spec();
        let line = lines.iter().find(|l| l.split_whitespace().next() == Some(spec.name)).ok_or(spec.name)?;
        assert!(line.contains(&format!(" {} ", spec.group.as_str())), "{line}");
        let description = line.get(column..).unwrap_or_default();
        assert!(description.chars().next().is_some_and(char::is_uppercase), "not aligned: {line}");
    }
    // The glob description's first sentence goes on past its "e.g.".
    let glob = lines.iter().find(|l| l.starts_with("glob ")).ok_or("no glob")?;
    assert!(glob.contains("e.g. `**/*.rs`"), "{glob}");
    let edit = lines.iter().find(|l| l.starts_with("edit ")).ok_or("no edit")?;
    assert!(edit.contains("files") && edit.contains("asks") && edit.contains("Replace text in a file ("), "{edit}");
    Ok(())
}

/// `tandem tool <name> --help` explains the tool and lists its arguments for a person (not a
/// JSON schema); a name that is no tool is bad usage.
#[test]
fn tool_help_lists_the_arguments() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (code, help, stderr) = run_raw(dir.path(), &["tool", "edit", "--help"])?;
    assert_eq!(code, 0, "{stderr}");
    assert!(help.starts_with("edit [fs] (aliases: edit_file"), "{help}");
    assert!(help.contains("Replace text in a file."), "{help}");
    for line in
        ["  file_path (string, required)", "  old_string (string, required)", "  replace_all (boolean, optional)"]
    {
        assert!(help.lines().any(|l| l == line), "no `{line}` in\n{help}");
    }
    assert!(!help.contains("\"properties\""), "raw schema in\n{help}");
    // Required arguments come first, and nested ones are named by their path.
    let (_, help, _) = run_raw(dir.path(), &["tool", "multiedit", "-h"])?;
    assert!(help.contains("  edits (array of object, required)\n"), "{help}");
    assert!(help.contains("    edits[].old_string (string, required)\n"), "{help}");
    let (_, help, _) = run_raw(dir.path(), &["tool", "read", "--help"])?;
    assert!(help.lines().any(|l| l.starts_with("  limit (integer, optional")), "{help}");

    let (code, _, stderr) = run_raw(dir.path(), &["tool", "nope", "--help"])?;
    assert_eq!(code, 2);
    assert!(stderr.contains("unknown tool `nope`"), "{stderr}");
    let (code, help, _) = run_raw(dir.path(), &["tool", "--help"])?;
    assert!(code == 0 && help.contains("Usage: tandem tool"), "{help}");
    Ok(())
}

/// The workspace's MCP servers' tools are listed beside the built-in ones, with their
/// arguments, and run from the command line. The server is Tandem itself (`tandem mcp`).
#[test]
fn tools_include_the_workspace_mcp_servers() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.path().join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "alpha\n").map_err(|e| e.to_string())?;
    let config = serde_json::json!({"mcpServers": {"me": {"command": tandem_bin(), "args": ["mcp"]}}});
    std::fs::write(dir.path().join(".tandem/mcp.json"), config.to_string()).map_err(|e| e.to_string())?;

    let (code, json, stderr) = run(dir.path(), &["tools", "--json"])?;
    assert_eq!(code, 0, "{stderr}");
    let tools = json.as_array().ok_or(format!("not an array: {json}"))?;
    let read = tools.iter().find(|t| t["name"] == "mcp__me__read").ok_or(format!("no mcp__me__read: {json}"))?;
    assert_eq!((&read["group"], &read["annotations"]["readOnlyHint"]), (&Value::from("mcp"), &Value::from(true)));
    assert!(read["inputSchema"]["properties"]["file_path"].is_object(), "{read}");
    let (_, table, _) = run_raw(dir.path(), &["tools"])?;
    assert!(table.lines().any(|l| l.starts_with("mcp__me__read ") && l.contains(" mcp ")), "{table}");

    let (code, help, stderr) = run_raw(dir.path(), &["tool", "mcp__me__read", "--help"])?;
    assert_eq!(code, 0, "{stderr}");
    assert!(help.contains("  file_path (string, required)"), "{help}");
    let (code, output, stderr) = run_raw(dir.path(), &["tool", "mcp__me__read", r#"{"file_path":"a.txt"}"#, "--text"])?;
    assert_eq!(code, 0, "{stderr}");
    assert!(output.contains("alpha"), "{output}");
    Ok(())
}

/// The shell has no agent session: `tandem tools` does not list the session tools, and a call of
/// one exits 1 with what it needs and where it works; `tool_search`, which needs only the
/// registry, works from the shell.
#[test]
fn the_shell_offers_no_session_tools_and_says_where_they_work() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (code, json, stderr) = run(dir.path(), &["tools", "--json"])?;
    assert_eq!(code, 0, "{stderr}");
    let names: Vec<&str> = json.as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    for session_tool in ["todowrite", "question", "plan_enter", "agent"] {
        assert!(!names.contains(&session_tool), "`tandem tools` lists {session_tool}: {names:?}");
    }
    assert!(names.contains(&"tool_search"), "{names:?}");
    let (code, json, _) = run(dir.path(), &["tool", "todowrite", r#"{"todos": []}"#])?;
    assert_eq!(code, 1, "{json}");
    let error = json["error"].as_str().unwrap_or_default();
    assert!(error.contains("needs an agent session") && error.contains("`tandem tool` does not provide"), "{error}");
    assert!(error.contains("it works inside an agent session"), "{error}");
    let (code, json, _) = run(dir.path(), &["tool", "tool_search", r#"{"query": "read a file"}"#])?;
    assert_eq!((code, &json["error"]), (0, &Value::Null), "{json}");
    Ok(())
}

/// The repository stands on its own: no tracked file points at design notes outside it.
#[test]
fn the_repository_refers_to_nothing_outside_it() -> Res<()> {
    let root = crate::support::repo_root();
    let out = Command::new("git").arg("ls-files").current_dir(&root).output().map_err(|e| e.to_string())?;
    let files = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(files.lines().count() > 50, "git ls-files listed too little: {files}");
    // Spelled in pieces so this file does not match itself.
    let outside = [
        format!("../{}/", "shared"),
        format!("{}/design", "shared"),
        format!("PROTOCOL{}", ".md"),
        format!("FACTS{}", ".md"),
        format!("STYLE{}", ".md"),
        format!("EDITORS{}", ".md"),
        format!("FACTS{}", " trap"),
        format!("(FACTS{}", ":"),
    ];
    let mut found = Vec::new();
    for file in files.lines() {
        let Ok(text) = std::fs::read_to_string(root.join(file)) else { continue };
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                found.push(format!("{file}:{}: {line}", n + 1));
            }
        }
    }
    assert!(found.is_empty(), "references outside the repository:\n{}", found.join("\n"));
    Ok(())
}

/// rustup's launcher for a missing component is on every Rust machine: `tandem doctor` tells it
/// apart from an installed rust-analyzer and says how to fix it.
#[test]
fn doctor_reports_a_launcher_only_rust_analyzer() -> Res<()> {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().map_err(|e| e.to_string())?;
    let rustup = bin.path().join("rustup");
    std::fs::write(
        &rustup,
        "#!/bin/sh\necho \"error: Unknown binary 'rust-analyzer' in official toolchain 'stable'\" >&2\nexit 1\n",
    )
    .map_err(|e| e.to_string())?;
    std::fs::set_permissions(&rustup, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    std::os::unix::fs::symlink(&rustup, bin.path().join("rust-analyzer")).map_err(|e| e.to_string())?;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = format!("{}:{}", bin.path().display(), std::env::var("PATH").unwrap_or_default());
    let out = Command::new(tandem_bin())
        .arg("doctor")
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.trim_start().starts_with("rust-analyzer")).unwrap_or_default();
    assert!(line.contains("broken") && line.contains("launcher only"), "{text}");
    assert!(line.contains("Unknown binary") && line.contains("rustup component add rust-analyzer"), "{line}");
    Ok(())
}

#[test]
fn bash_in_text_shows_a_failed_commands_exit_status_and_exits_with_it() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (code, stdout, stderr) =
        run_raw(dir.path(), &["tool", "bash", r#"{"command": "echo out; exit 3"}"#, "--text"])?;
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    assert_eq!(stdout, "out\n");
    assert!(stderr.contains("exit status 3"), "{stderr}");
    let (code, stdout, _) = run_raw(dir.path(), &["tool", "bash", r#"{"command": "echo fine"}"#, "--text"])?;
    assert_eq!((code, stdout.as_str()), (0, "fine\n"));
    // In JSON the status is `exitCode`, and the call itself succeeded.
    let (code, value, _) = run(dir.path(), &["tool", "bash", r#"{"command": "exit 4"}"#, "--json"])?;
    assert_eq!((code, &value["metadata"]["exitCode"]), (0, &json!(4)));
    Ok(())
}

#[test]
fn trust_in_a_subdirectory_trusts_the_project_run_uses_and_takes_root() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let project = dir.path().join("project");
    std::fs::create_dir_all(project.join(".git")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(project.join("src/deep")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.path().join("other")).map_err(|e| e.to_string())?;
    let config = tempfile::tempdir().map_err(|e| e.to_string())?;
    let trust = |cwd: &std::path::Path, args: &[&str]| -> Res<String> {
        let out = Command::new(tandem_bin())
            .args(args)
            .current_dir(cwd)
            .env("XDG_CONFIG_HOME", config.path())
            .env_remove("TANDEM_TRUST_WORKSPACE")
            .output()
            .map_err(|e| e.to_string())?;
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        std::fs::read_to_string(config.path().join("tandem/trusted-folders")).map_err(|e| e.to_string())
    };
    let listed = trust(&project.join("src/deep"), &["trust"])?;
    let canonical = project.canonicalize().map_err(|e| e.to_string())?;
    assert_eq!(listed.trim(), canonical.display().to_string(), "{listed}");
    let other = dir.path().join("other").canonicalize().map_err(|e| e.to_string())?;
    let listed = trust(&project, &["--root", other.to_str().unwrap_or_default(), "trust"])?;
    assert!(listed.lines().any(|l| l.trim() == other.display().to_string()), "--root was ignored: {listed}");
    Ok(())
}
