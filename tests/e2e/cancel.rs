//! Cancellation means stopped: a command running when its call is cancelled — over MCP
//! (`notifications/cancelled`), or by Ctrl-C in `tandem run` — is gone with everything it
//! started (checked in `/proc`), even when it ignores SIGTERM, and its side effects never happen.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, tandem_bin};

/// A command that records its shell's and its child's pids, ignores SIGTERM in the shell, and
/// would touch `marker` after a while if it were left running.
fn stubborn_command(dir: &Path) -> String {
    let pids = dir.join("pids");
    format!(
        "trap '' TERM; echo $$ > {0}; (sleep 3; touch {1}) & echo $! >> {0}; sleep 60",
        pids.display(),
        dir.join("marker").display()
    )
}

/// The two pids once the command has written them.
fn wait_pids(dir: &Path) -> Res<Vec<String>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = std::fs::read_to_string(dir.join("pids")).unwrap_or_default();
        let pids: Vec<String> = text.lines().map(str::to_owned).collect();
        if pids.len() == 2 {
            return Ok(pids);
        }
        if Instant::now() > deadline {
            return Err("the command did not start".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether `pid` runs nothing any more (gone, or a zombie).
fn gone(pid: &str) -> bool {
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    state.is_empty() || state.contains(") Z")
}

/// Every pid is gone within the grace period and a margin, and the marker never appears.
fn assert_stopped(dir: &Path, pids: &[String]) {
    let deadline = Instant::now() + Duration::from_secs(6);
    while !pids.iter().all(|p| gone(p)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    for pid in pids {
        assert!(
            gone(pid),
            "process {pid} outlived the cancel: {}",
            std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default()
        );
    }
    // The child would have touched the marker 3 s after it started.
    std::thread::sleep(Duration::from_millis(3500));
    assert!(!dir.join("marker").exists(), "the cancelled command's side effect happened");
}

#[test]
fn mcp_cancelled_notification_stops_the_command_and_its_children() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let mut mcp = crate::support::McpStdio::start(&root, &["mcp", "--allow-writes"])?;
    mcp.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash", "arguments": {"command": stubborn_command(&root)}}}))?;
    let pids = wait_pids(&root)?;
    mcp.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2, "reason": "test"}}),
    )?;
    assert_stopped(&root, &pids);
    // The server keeps serving.
    mcp.send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}))?;
    let listed = mcp.answer(3)?;
    assert!(listed["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{listed}");
    mcp.close()
}

#[test]
fn ctrl_c_in_run_stops_the_running_command() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "bash", json!({ "command": stubborn_command(&root) })),
        Turn::reply("unused"),
    ]);
    let mut child = Command::new(tandem_bin())
        .args(["run", "--yes", "run the command"])
        .current_dir(&root)
        .env_remove("TANDEM_MODE")
        .env("TANDEM_PROVIDER", "openai")
        .env("TANDEM_BASE_URL", provider.base_url())
        .env("TANDEM_MODEL", "scripted")
        .env("TANDEM_PROFILE", "full")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| e.to_string())?;
    let pids = wait_pids(&root)?;
    let status = Command::new("kill").args(["-INT", &child.id().to_string()]).status().map_err(|e| e.to_string())?;
    assert!(status.success());
    let exit = child.wait().map_err(|e| e.to_string())?;
    assert_eq!(exit.code(), Some(130));
    // Right after tandem exits, not only eventually.
    for pid in &pids {
        assert!(gone(pid), "process {pid} outlived `tandem run`");
    }
    assert_stopped(&root, &pids);
    Ok(())
}

/// An MCP server that ignores the end of its input and SIGTERM (and has a child that does
/// too) is gone when `tandem` exits: the MCP stdio shutdown ends in SIGKILL, and the server's
/// process group goes with it.
#[test]
fn a_stubborn_mcp_server_is_gone_after_tandem_exits() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let script = crate::support::repo_root().join("tests/fixtures/mcp/stubborn.py");
    let config = json!({ "mcpServers": { "stubborn": { "command": "python3", "args": [script] } } });
    std::fs::write(root.join(".mcp.json"), config.to_string()).map_err(|e| e.to_string())?;
    let output = Command::new(tandem_bin())
        .args(["tool", "mcp_discover", "{}"])
        .current_dir(&root)
        .env_remove("TANDEM_PROFILE")
        .env("TANDEM_PROFILE", "full")
        // The workspace's own MCP servers run only in a trusted workspace.
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| e.to_string())?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("noop"), "the server was not reached: {stdout}");
    let pids: Vec<String> = std::fs::read_to_string(root.join("stubborn.pids"))
        .map_err(|e| e.to_string())?
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(pids.len(), 2);
    // Right when tandem has exited.
    for pid in &pids {
        assert!(gone(pid), "MCP server process {pid} outlived tandem");
    }
    Ok(())
}
