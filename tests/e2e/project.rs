//! Every front door opens the same workbench: the project is the nearest ancestor of the
//! current directory with `.git` (or `.tandem`), paths are relative to the current directory,
//! the project's `.tandem/config.toml` applies, and language servers start on demand — here
//! through `tandem tool`, from a subdirectory of a git project.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::lsp_proxy::{copy_dir, require, server_path};
use crate::support::{Res, repo_root, tandem_bin};

/// A git project (`proj/`) holding a copy of the Python fixture, with a `.tandem/config.toml`;
/// the temporary directory and `proj/shop`, the subdirectory the commands run in.
pub(crate) fn project(config: &str) -> Res<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("proj");
    copy_dir(&repo_root().join("tests/fixtures/python"), &root)?;
    let git = Command::new("git").args(["init", "-q"]).current_dir(&root).status().map_err(|e| e.to_string())?;
    if !git.success() {
        return Err("git init failed".to_owned());
    }
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".tandem/config.toml"), config).map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("outside.txt"), "outside\n").map_err(|e| e.to_string())?;
    let sub = root.join("shop").canonicalize().map_err(|e| e.to_string())?;
    Ok((dir, sub))
}

/// `tandem tool <name> <arguments> --json` in `dir`, with the language servers on PATH and an
/// empty home; exit status, the result and stderr.
fn tool(dir: &Path, name: &str, arguments: &str) -> Res<(i32, Value, String)> {
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = Command::new(tandem_bin())
        .args(["tool", name, arguments, "--json"])
        .current_dir(dir)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env("PATH", server_path())
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env_remove("TANDEM_PROFILE")
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let result = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    Ok((out.status.code().unwrap_or(-1), result, String::from_utf8_lossy(&out.stderr).into_owned()))
}

const LSP_CONFIG: &str = "[lsp]\ndiagnostics_wait_ms = 60000\nrequest_timeout_ms = 60000\n";

#[test]
fn a_subdirectory_of_a_git_project_opens_the_whole_project() -> Res<()> {
    let (_dir, sub) = project("")?;
    // `..` from `proj/shop` is the project's root: inside.
    let (code, result, stderr) = tool(&sub, "read", r#"{"file_path":"../pyproject.toml"}"#)?;
    assert_eq!(code, 0, "{result} {stderr}");
    assert!(result["output"].as_str().is_some_and(|o| o.contains("[project]")), "{result}");
    // Paths stay relative to the current directory.
    let (code, result, stderr) = tool(&sub, "read", r#"{"file_path":"counter.py"}"#)?;
    assert_eq!(code, 0, "{result} {stderr}");
    assert!(result["output"].as_str().is_some_and(|o| o.contains("class Counter")), "{result}");
    // Above the project is outside.
    let (code, result, _) = tool(&sub, "read", r#"{"file_path":"../../outside.txt"}"#)?;
    assert_eq!(code, 1, "{result}");
    assert!(result["error"].as_str().is_some_and(|e| e.contains("outside the workspace")), "{result}");
    Ok(())
}

#[test]
fn the_projects_config_applies_in_a_subdirectory() -> Res<()> {
    let (_dir, sub) = project("[tools]\ndisabled = [\"glob\"]\n")?;
    let (code, result, stderr) = tool(&sub, "glob", r#"{"pattern":"*.py"}"#)?;
    assert_eq!(code, 1, "{result} {stderr}");
    assert!(result["error"].as_str().is_some_and(|e| e.contains("disabled")), "{result}");
    Ok(())
}

#[test]
fn tool_lsp_asks_a_real_language_server() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, sub) = project(LSP_CONFIG)?;
    let (code, result, stderr) =
        tool(&sub, "lsp", r#"{"operation":"definition","file_path":"main.py","line":8,"symbol":"increment"}"#)?;
    assert_eq!(code, 0, "{result} {stderr}");
    let output = result["output"].as_str().unwrap_or_default();
    assert!(output.contains("def increment(self) -> int:"), "{result}");
    Ok(())
}

#[test]
fn tool_edit_of_a_python_file_reports_its_new_error() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, sub) = project(LSP_CONFIG)?;
    let edit = r#"{"file_path":"main.py","old_string":"    return total\n","new_string":"    return \"total\"\n"}"#;
    let (code, result, stderr) = tool(&sub, "edit", edit)?;
    assert_eq!(code, 0, "{result} {stderr}");
    let diagnostics = result["metadata"]["diagnostics"].as_object().ok_or(format!("no diagnostics: {result}"))?;
    let report = diagnostics.values().next().ok_or(format!("no file in the diagnostics: {result}"))?;
    assert_eq!(report["status"], "fresh", "{result}");
    assert!(report["errorCount"].as_u64().is_some_and(|n| n >= 1), "{result}");
    Ok(())
}

/// `tandem run` from a subdirectory: the project's `AGENTS.md` reaches the model, the session
/// works in the subdirectory and is stored as the project's, in the state directory.
#[test]
fn run_in_a_subdirectory_follows_the_projects_agents_md() -> Res<()> {
    use tandem_fake_provider::{FakeProvider, Turn};
    let (dir, sub) = project("")?;
    let root = dir.path().join("proj");
    std::fs::write(root.join("AGENTS.md"), "Always run `make gauntlet` before answering.\n")
        .map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("Done.")]);
    let home = tempfile::tempdir().map_err(|e| e.to_string())?;
    let out = Command::new("setsid")
        .arg(tandem_bin())
        .args(["run", "hello"])
        .current_dir(&sub)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .env_remove("XDG_STATE_HOME")
        .env_remove("TANDEM_STATE_HOME")
        .env_remove("TANDEM_PROFILE")
        .env_remove("TANDEM_MODE")
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_BASE_URL", provider.base_url())
        .env("TANDEM_MODEL", "scripted")
        .output()
        .map_err(|e| e.to_string())?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let requests = provider.requests();
    let system = requests[0].body["messages"][0]["content"].to_string();
    assert!(system.contains("make gauntlet"), "{system}");
    let sessions = home.path().join(".local/state/tandem/projects").join(tandem_tools::state::project_key(&root));
    assert!(sessions.join("sessions").is_dir(), "sessions are the project's");
    assert!(!root.join(".tandem/sessions").exists() && !sub.join(".tandem").exists(), "and not in the workspace");
    Ok(())
}
