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

/// A directory outside the workspace that is not below a temporary directory (the
/// workspace-write sandbox lets commands write to those): the build's own scratch directory,
/// unless the checkout itself lives in one (a clone in /tmp), then the home directory.
fn outside_of_temp() -> Res<tempfile::TempDir> {
    let temp: Vec<std::path::PathBuf> = ["/tmp", "/var/tmp", "/dev/shm"]
        .iter()
        .map(std::path::PathBuf::from)
        .chain(std::env::var_os("TMPDIR").map(std::path::PathBuf::from))
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from).ok_or("no HOME")?;
    let candidates = [std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")), home];
    let base = candidates
        .into_iter()
        .filter_map(|p| p.canonicalize().ok())
        .find(|p| !temp.iter().any(|t| p.starts_with(t)))
        .ok_or("no directory outside the temporary ones to test writes outside the workspace")?;
    tempfile::Builder::new().prefix(".tandem-sandbox-test-").tempdir_in(base).map_err(|e| e.to_string())
}

/// The workspace-write sandbox: writes inside the workspace's directories work (owned by the
/// person), a new name directly in the root does not, writes outside fail, also from children
/// and through a symlink; `.git` and `.tandem` stay read-only (no planted hook, no raised
/// settings, not even by renaming them away); no TCP unless `--network`.
#[test]
fn the_workspace_write_sandbox_confines_writes() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join(".git/hooks")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join("src")).map_err(|e| e.to_string())?;
    let outside = outside_of_temp()?;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    let out_dir = outside.path().display();
    let script = format!(
        "echo x > src/inside.txt; echo inside=$?; mkdir -p src/a/b && echo x > src/a/b/deep.txt; echo deep=$?; \
         echo x > new.txt 2>/dev/null; echo rootnew=$?; \
         echo x > {out_dir}/outside.txt 2>/dev/null; echo outside=$?; \
         bash -c 'echo x > {out_dir}/child.txt' 2>/dev/null; echo child=$?; \
         ln -s {out_dir} src/link; echo x > src/link/through.txt 2>/dev/null; echo link=$?; \
         echo x > .git/hooks/pre-commit 2>/dev/null; echo hook=$?; \
         echo x > .tandem/config.toml 2>/dev/null; echo settings=$?; \
         mv .git moved 2>/dev/null; echo rename=$?; \
         (exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; echo tcp=$?"
    );
    let root_arg = root.display().to_string();
    let out = tandem(&root, &["sandbox", "--workspace-write", &root_arg, "--", "bash", "-c", &script], &[])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "inside=0",
        "deep=0",
        "rootnew=1",
        "outside=1",
        "child=1",
        "link=1",
        "hook=1",
        "settings=1",
        "rename=1",
        "tcp=1",
    ] {
        assert!(stdout.contains(expected), "{expected} in {stdout} ({})", String::from_utf8_lossy(&out.stderr));
    }
    assert!(root.join("src/a/b/deep.txt").exists() && !root.join("new.txt").exists());
    assert!(std::fs::read_dir(outside.path()).map_err(|e| e.to_string())?.next().is_none(), "nothing outside");
    assert!(!root.join(".git/hooks/pre-commit").exists() && !root.join(".tandem/config.toml").exists());
    assert!(root.join(".git").is_dir());
    // Files keep the person's ownership (the user namespace maps the same ids).
    use std::os::unix::fs::MetadataExt;
    let owner = std::fs::metadata(root.join("src/inside.txt")).map_err(|e| e.to_string())?.uid();
    let me = std::fs::metadata(&root).map_err(|e| e.to_string())?.uid();
    assert_eq!(owner, me);
    // With the network allowed, the connection goes through.
    let script = format!("(exec 3<>/dev/tcp/127.0.0.1/{port}) 2>/dev/null; echo tcp=$?");
    let out =
        tandem(&root, &["sandbox", "--workspace-write", &root_arg, "--network", "--", "bash", "-c", &script], &[])?;
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "tcp=0");
    drop(listener);
    Ok(())
}

/// In auto-edit mode a command that would ask runs without asking, in the workspace-write
/// sandbox: its write inside lands, its write outside fails and the model is told why and how
/// to leave the sandbox; leaving it (`"sandbox": false`) asks; data loss still asks; in default
/// mode the same command asks and, approved, runs unsandboxed.
#[test]
fn auto_edit_runs_asking_commands_in_the_workspace_write_sandbox() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir.path().join("scratch")).map_err(|e| e.to_string())?;
    let outside = outside_of_temp()?;
    let escape = format!("touch scratch/made.txt && touch {}/escaped.txt", outside.path().display());
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("c1", "bash", json!({"command": escape})),
        Turn::new().tool_call("c2", "bash", json!({"command": "touch approved.txt", "sandbox": false})),
        Turn::new().tool_call("c3", "bash", json!({"command": "rm -r scratch"})),
        Turn::reply("done"),
    ]);
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        dir.path(),
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", base.as_str()),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", "auto-edit"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    let session =
        sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    for answer in ["allow_once", "reject_once"] {
        sidecar.permission_replies.push_back(PermissionReply::select(answer));
    }
    sidecar
        .request("tandem/session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "go"}]}))?;
    let asked: Vec<String> =
        sidecar.requests_of("tandem/session/requestPermission").iter().map(Value::to_string).collect();
    assert_eq!(asked.len(), 2, "only the unsandboxed and the data-destroying commands ask: {asked:#?}");
    assert!(asked[0].contains("touch approved.txt") && asked[0].contains("outside the sandbox"), "{}", asked[0]);
    assert!(asked[1].contains("rm -r scratch"), "{}", asked[1]);
    assert!(dir.path().join("scratch/made.txt").exists(), "the write inside the workspace landed");
    assert!(!outside.path().join("escaped.txt").exists(), "the write outside did not");
    assert!(dir.path().join("approved.txt").exists() && dir.path().join("scratch").exists());
    let requests = provider.requests();
    let second = requests.get(1).map(|r| r.body.to_string()).unwrap_or_default();
    assert!(second.contains("workspace-write sandbox") && second.contains("\\\"sandbox\\\": false"), "{second}");
    sidecar.shutdown()?;
    Ok(())
}

/// A unix socket listening outside the workspace and the temporary directories (on a real
/// machine: docker.sock, the D-Bus session bus, an ssh agent): a sandboxed command cannot
/// connect to it, under either policy. Nothing reaches the listener.
#[test]
fn a_sandboxed_command_cannot_reach_a_unix_socket_outside() -> Res<()> {
    use std::io::Read;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let outside = outside_of_temp()?;
    let socket = outside.path().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket).map_err(|e| e.to_string())?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let client = format!(
        "import socket\ntry:\n    s = socket.socket(socket.AF_UNIX)\n    s.connect({:?})\n    s.sendall(b'escaped')\n    print('connected')\nexcept OSError as e:\n    print('refused', e.errno)\n",
        socket.display().to_string()
    );
    let root_arg = root.display().to_string();
    let policies: [&[&str]; 3] = [
        &["sandbox", "--read-only", "--"],
        &["sandbox", "--workspace-write", &root_arg, "--"],
        &["sandbox", "--workspace-write", &root_arg, "--network", "--"],
    ];
    for policy in policies {
        let mut args = policy.to_vec();
        args.extend(["python3", "-c", &client]);
        let out = tandem(&root, &args, &[])?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.starts_with("refused"), "{policy:?}: {stdout} {}", String::from_utf8_lossy(&out.stderr));
        // And nothing was accepted on the other side.
        match listener.accept() {
            Ok((mut stream, _)) => {
                let mut got = String::new();
                stream.read_to_string(&mut got).map_err(|e| e.to_string())?;
                return Err(format!("{policy:?}: the listener got a connection ({got:?})"));
            }
            Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(err) => return Err(err.to_string()),
        }
    }
    Ok(())
}

/// Files that other programs run later, outside the sandbox, cannot be planted by a sandboxed
/// command: in a folder without `.git`, `git init . && git config core.fsmonitor …` fails and
/// the person's next `git status` runs nothing; `.mcp.json`, `.vscode/tasks.json`, `.envrc`,
/// `.idea/`, `.devcontainer/` and `.tandem/` cannot be created, and where they exist they stay
/// read-only. Writes elsewhere in the workspace still land, and so do temporary files (this
/// workspace is in a temporary directory, which is then not writable: `TMPDIR` names another).
#[test]
fn a_sandboxed_command_cannot_plant_what_runs_later() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join("src")).map_err(|e| e.to_string())?;
    let root_arg = root.display().to_string();
    let marker = root.join("src/fsmonitor-ran");
    let monitor = root.join("src/monitor.sh");
    std::fs::write(&monitor, format!("#!/bin/sh\ntouch {}\n", marker.display())).map_err(|e| e.to_string())?;
    let script = format!(
        "git init -q . 2>/dev/null; git config core.fsmonitor {monitor} 2>/dev/null; echo git=$?; \
         echo '{{\"mcpServers\":{{\"x\":{{\"command\":\"./x.sh\"}}}}}}' > .mcp.json 2>/dev/null; echo mcp=$?; \
         mkdir -p .vscode 2>/dev/null && echo '{{}}' > .vscode/tasks.json 2>/dev/null; echo vscode=$?; \
         echo 'touch pwned' > .envrc 2>/dev/null; echo envrc=$?; \
         mkdir .idea 2>/dev/null; echo idea=$?; \
         mkdir .devcontainer 2>/dev/null; echo devcontainer=$?; \
         mkdir .tandem 2>/dev/null; echo tandem=$?; \
         ln -s src .vscode 2>/dev/null; echo link=$?; \
         mkdir src/x && mv src/x .git 2>/dev/null; echo moved=$?; \
         echo x > src/ok.txt; echo src=$?; \
         t=$(mktemp) && echo x > \"$t\" && rm \"$t\"; echo mktemp=$?",
        monitor = monitor.display()
    );
    let out = tandem(&root, &["sandbox", "--workspace-write", &root_arg, "--", "bash", "-c", &script], &[])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    for expected in [
        "git=1",
        "mcp=1",
        "vscode=1",
        "envrc=1",
        "idea=1",
        "devcontainer=1",
        "tandem=1",
        "link=1",
        "moved=1",
        "src=0",
        "mktemp=0",
    ] {
        assert!(stdout.contains(expected), "{expected} in {stdout} ({})", String::from_utf8_lossy(&out.stderr));
    }
    for planted in [".git", ".mcp.json", ".vscode", ".envrc", ".idea", ".devcontainer", ".tandem"] {
        assert!(root.join(planted).symlink_metadata().is_err(), "{planted} was planted");
    }
    assert!(root.join("src/ok.txt").exists());
    // The person's next `git status` runs no planted monitor.
    let status = std::process::Command::new("git").arg("status").current_dir(&root).output();
    drop(status);
    assert!(!marker.exists(), "the planted fsmonitor ran");

    // Where they exist, they stay as they are.
    std::fs::create_dir_all(root.join(".vscode")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".mcp.json"), "{}").map_err(|e| e.to_string())?;
    std::fs::write(root.join(".envrc"), "").map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join(".claude")).map_err(|e| e.to_string())?;
    let script = "echo x > .vscode/tasks.json 2>/dev/null; echo tasks=$?; \
                  echo x > .mcp.json 2>/dev/null; echo mcp=$?; \
                  echo x > src/new.json && mv src/new.json .mcp.json 2>/dev/null; echo replaced=$?; \
                  rm -f .envrc 2>/dev/null; echo removed=$?; \
                  echo '{}' > .claude/settings.json 2>/dev/null; echo claude=$?";
    let out = tandem(&root, &["sandbox", "--workspace-write", &root_arg, "--", "bash", "-c", script], &[])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    for expected in ["tasks=1", "mcp=1", "replaced=1", "removed=1", "claude=1"] {
        assert!(stdout.contains(expected), "{expected} in {stdout} ({})", String::from_utf8_lossy(&out.stderr));
    }
    assert_eq!(std::fs::read_to_string(root.join(".mcp.json")).map_err(|e| e.to_string())?, "{}");
    assert!(!root.join(".vscode/tasks.json").exists() && root.join(".envrc").exists());

    // The hooks directory the repository's configuration names (husky's) stays as it is too.
    std::fs::create_dir_all(root.join(".git")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".git/config"), "[core]\n\thooksPath = src/hooks\n").map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join("src/hooks")).map_err(|e| e.to_string())?;
    let script =
        "echo 'touch pwned' > src/hooks/pre-commit 2>/dev/null; echo hook=$?; echo x > src/fine.txt; echo src=$?";
    let out = tandem(&root, &["sandbox", "--workspace-write", &root_arg, "--", "bash", "-c", script], &[])?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("hook=1") && stdout.contains("src=0"),
        "{stdout} ({})",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!root.join("src/hooks/pre-commit").exists());
    Ok(())
}
