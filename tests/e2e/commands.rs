//! Commands end to end: the classifier's verdicts as a session sees them. A data-destroying
//! command asks with what it destroys, is never covered by an "always" answer, and a command
//! that hides a write behind read-only looks asks.

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{PermissionReply, Res, Sidecar};

fn sidecar(root: &std::path::Path, provider: &FakeProvider) -> Res<Sidecar> {
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        root,
        &[("TANDEM_PROVIDER", "openai"), ("TANDEM_BASE_URL", base.as_str()), ("TANDEM_MODEL", "scripted")],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

#[test]
fn data_loss_asks_every_time_and_hidden_writes_ask() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "b\na\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "bash", json!({"command": "git clean -n"})),
        Turn::new().tool_call("c2", "bash", json!({"command": "rm -r scratch"})),
        Turn::new().tool_call("c3", "bash", json!({"command": "rm -r scratch2"})),
        Turn::new().tool_call("c4", "bash", json!({"command": "sort -o victim.txt a.txt"})),
        Turn::new().tool_call("c5", "bash", json!({"command": "rm -rf $HOME/*"})),
        Turn::reply("done"),
    ]);
    std::fs::create_dir_all(dir.path().join("scratch")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.path().join("scratch2")).map_err(|e| e.to_string())?;
    let mut sidecar = sidecar(dir.path(), &provider)?;
    let session =
        sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    // `git clean -n` only lists: asked as a git command; `rm -r` is data loss: the person picks
    // the most permissive answer offered, and the next `rm -r` asks again.
    for answer in ["allow_once", "allow_always", "allow_once", "reject_once"] {
        sidecar.permission_replies.push_back(PermissionReply::select(answer));
    }
    sidecar.request(
        "tandem/session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "tidy"}]}),
    )?;
    let asked: Vec<Value> = sidecar.requests_of("tandem/session/requestPermission");
    let texts: Vec<String> = asked.iter().map(Value::to_string).collect();
    assert_eq!(asked.len(), 4, "{texts:#?}");
    assert!(texts[1].contains("deletes a directory tree"), "{}", texts[1]);
    let options: Vec<&str> =
        asked[1]["options"].as_array().into_iter().flatten().filter_map(|o| o["optionId"].as_str()).collect();
    assert!(!options.contains(&"allow_always"), "no always for data loss: {options:?}");
    assert!(texts[2].contains("rm -r scratch2"), "asked again: {}", texts[2]);
    assert!(texts[3].contains("writes to a file"), "{}", texts[3]);
    assert!(!dir.path().join("victim.txt").exists());
    // The catastrophic one never reached the person.
    assert!(!texts.iter().any(|t| t.contains("$HOME/*")));
    let results = provider.requests();
    let last = results.last().map(|r| r.body.to_string()).unwrap_or_default();
    assert!(last.contains("this command is refused"), "{last}");
    sidecar.shutdown()?;
    Ok(())
}

fn tandem(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> Res<std::process::Output> {
    let mut command = std::process::Command::new(crate::support::tandem_bin());
    command.args(args).current_dir(dir).env_remove("TANDEM_SANDBOX");
    for (key, value) in env {
        command.env(key, value);
    }
    command.output().map_err(|e| e.to_string())
}

/// The read-only sandbox: reads work; writes inside or outside the workspace fail, also from
/// child processes; a TCP connection to a loopback listener fails.
#[test]
fn the_read_only_sandbox_denies_writes_and_connections() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("a.txt"), "alpha\n").map_err(|e| e.to_string())?;
    let outside = tempfile::tempdir().map_err(|e| e.to_string())?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let script = format!(
        "cat a.txt; echo x > inside.txt; echo inside=$?; echo x > {}/outside.txt; echo outside=$?; bash -c 'touch child.txt'; echo child=$?; echo x > /dev/null; echo null=$?; (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; echo tcp=$?",
        outside.path().display()
    );
    let out = tandem(dir.path(), &["sandbox", "--read-only", "--", "bash", "-c", &script], &[])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("alpha\n"), "{stdout}");
    for denied in ["inside=1", "outside=1", "child=1", "tcp=1"] {
        assert!(stdout.contains(denied), "{denied} in {stdout}");
    }
    assert!(stdout.contains("null=0"), "{stdout}");
    assert!(!dir.path().join("inside.txt").exists() && !dir.path().join("child.txt").exists());
    assert!(!outside.path().join("outside.txt").exists());
    drop(listener);
    Ok(())
}

/// A command the classifier calls read-only runs in the sandbox; one the person approves (or
/// with the sandbox off) runs outside it.
#[test]
fn read_only_commands_run_sandboxed() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let no_new_privs = |env: &[(&str, &str)], command: &str| -> Res<String> {
        let out = tandem(dir.path(), &["tool", "bash", &json!({"command": command}).to_string()], env)?;
        let result: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
        Ok(result["output"].as_str().unwrap_or_default().trim().to_owned())
    };
    // Landlock sets no_new_privs on the process it restricts.
    assert_eq!(no_new_privs(&[], "grep NoNewPrivs /proc/self/status")?, "NoNewPrivs:\t1");
    assert_eq!(no_new_privs(&[], "grep NoNewPrivs /proc/self/status > /dev/stderr; touch made")?.lines().count(), 1);
    assert!(dir.path().join("made").exists(), "a command that is not read-only runs outside the sandbox");
    assert_eq!(no_new_privs(&[("TANDEM_SANDBOX", "off")], "grep NoNewPrivs /proc/self/status")?, "NoNewPrivs:\t0");
    // A read-only shell script runs sandboxed too, with its arguments.
    let script = json!({"script": "grep NoNewPrivs /proc/self/status\necho \"$1\"\n", "args": ["arg one"]});
    let out = tandem(dir.path(), &["tool", "run_shell_script", &script.to_string()], &[])?;
    let result: Value = serde_json::from_slice(&out.stdout).map_err(|e| e.to_string())?;
    assert_eq!(result["output"].as_str().unwrap_or_default().trim(), "NoNewPrivs:\t1\narg one", "{result}");
    Ok(())
}
