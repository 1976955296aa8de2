//! A restore never loses the person's work, through the LSP door with a scripted provider:
//! what the person changes while a turn runs (a save, an unsaved edit in the editor, a write by
//! another program, an edit while a command waits for approval) is a conflict, never undone as
//! the agent's; a change to a file checkpoints leave out (over the size cap, ignored) is named
//! in its approval and in the restore's result; and a restore never reads, shows or writes
//! through a file that became a symbolic link out of the workspace.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{PermissionReply, Res, Sidecar};

fn spawn(root: &Path, provider: &FakeProvider, mode: &str) -> Res<Sidecar> {
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        root,
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", base.as_str()),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", mode),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn write(root: &Path, name: &str, text: &str) -> Res<()> {
    let path = root.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| e.to_string())?;
    }
    std::fs::write(path, text).map_err(|e| e.to_string())
}

fn read(root: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(root.join(name)).ok()
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

fn new_session(sidecar: &mut Sidecar) -> Res<String> {
    Ok(sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned())
}

fn prompt(session: &str, text: &str) -> Value {
    json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]})
}

/// Waits until the provider has received `count` requests: the agent finished the tool calls
/// before and waits for the model (whose answer the script delays).
fn wait_for_model_request(provider: &FakeProvider, count: usize) -> Res<()> {
    let deadline = Instant::now() + Duration::from_secs(60);
    while provider.requests().len() < count {
        if Instant::now() > deadline {
            return Err(format!("the agent never sent model request {count}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

/// Auto-edit mode: the model edits `a.txt`, then, while the model is still thinking, the person
/// saves `b.txt`, types in the open `c.txt` (unsaved) and another program writes `e.txt`; a
/// command that asks removes a directory, and while its approval waits the person edits `d.txt`.
/// Undoing the turn brings back only the agent's work and names the person's edits as conflicts.
#[test]
fn what_the_person_changes_while_a_turn_runs_is_a_conflict_not_undone() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    for name in ["a", "b", "c", "d", "e"] {
        write(&root, &format!("{name}.txt"), &format!("{name}0\n"))?;
    }
    write(&root, "gone/g.txt", "g0\n")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("e1", "edit", json!({"file_path": "a.txt", "old_string": "a0", "new_string": "a1"})),
        // The model thinks for a while: the person works meanwhile.
        Turn::new()
            .tool_call("x1", "bash", json!({"command": "rm -r gone"}))
            .headers_delay(Duration::from_millis(2500)),
        Turn::reply("done"),
    ]);
    let mut sidecar = spawn(&root, &provider, "auto-edit")?;
    sidecar.open("c.txt", "c0\n")?;
    let session = new_session(&mut sidecar)?;
    let id = sidecar.send_request("tandem/session/prompt", prompt(&session, "change a, remove gone"))?;
    wait_for_model_request(&provider, 2)?;
    write(&root, "b.txt", "b0 saved by the person\n")?;
    sidecar.type_change("c.txt", (0, 2), (0, 2), " typed")?;
    write(&root, "e.txt", "e0 from another program\n")?;
    // The command asks (it deletes a directory tree); the person edits d.txt before answering.
    loop {
        let message = sidecar.next_message()?;
        if message["method"] == "tandem/session/requestPermission" {
            write(&root, "d.txt", "d0 while asked\n")?;
            sidecar.permission_replies.push_back(PermissionReply::select("allow_once"));
            sidecar.dispatch(message)?;
            break;
        }
        if message.get("method").is_none() && message["id"] == json!(id) {
            return Err(format!("the command never asked: {message}"));
        }
        sidecar.dispatch(message)?;
    }
    sidecar.wait_response(id)?.map_err(|e| e.to_string())?;
    assert_eq!(read(&root, "a.txt").as_deref(), Some("a1\n"));
    assert_eq!(read(&root, "gone/g.txt"), None);

    let preview =
        sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1, "dryRun": true}))?;
    assert_eq!(strings(&preview["restored"]), ["a.txt", "gone/g.txt"], "{preview:#}");
    assert_eq!(strings(&preview["conflicts"]), ["b.txt", "c.txt", "d.txt", "e.txt"], "{preview:#}");
    let restored = sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1}))?;
    assert_eq!(strings(&restored["conflicts"]), ["b.txt", "c.txt", "d.txt", "e.txt"], "{restored:#}");
    assert_eq!(read(&root, "a.txt").as_deref(), Some("a0\n"));
    assert_eq!(read(&root, "gone/g.txt").as_deref(), Some("g0\n"));
    assert_eq!(read(&root, "b.txt").as_deref(), Some("b0 saved by the person\n"));
    assert_eq!(read(&root, "d.txt").as_deref(), Some("d0 while asked\n"));
    assert_eq!(read(&root, "e.txt").as_deref(), Some("e0 from another program\n"));
    let c_uri = sidecar.uri("c.txt");
    assert_eq!(sidecar.docs.get(&c_uri).map(|d| d.text.as_str()), Some("c0 typed\n"), "the unsaved edit is kept");
    sidecar.shutdown()?;
    Ok(())
}

/// A change that deletes or overwrites a file checkpoints leave out asks even in auto-edit mode
/// and says "not covered by undo"; the restore (and its dry run) names every such file the turn
/// changed, instead of "Nothing to restore."
#[test]
fn a_change_to_a_file_undo_cannot_bring_back_says_so_before_and_after() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let big = format!("{}\n", "x".repeat(11 * 1024 * 1024));
    write(&root, "big.log", &big)?;
    write(&root, "big2.log", &big)?;
    write(&root, ".gitignore", "secret.env\n")?;
    write(&root, "secret.env", "KEY=mine\n")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("d1", "delete", json!({"file_path": "big.log"})),
        Turn::new().tool_call(
            "e1",
            "edit",
            json!({"file_path": "secret.env", "old_string": "KEY=mine", "new_string": "KEY=agent"}),
        ),
        Turn::new().tool_call("x1", "bash", json!({"command": "rm -r big2.log"})),
        Turn::reply("done"),
    ]);
    let mut sidecar = spawn(&root, &provider, "auto-edit")?;
    for _ in 0..3 {
        sidecar.permission_replies.push_back(PermissionReply::select("allow_once"));
    }
    let session = new_session(&mut sidecar)?;
    sidecar.request("tandem/session/prompt", prompt(&session, "clean up"))?;
    assert!(!root.join("big.log").exists() && !root.join("big2.log").exists());
    assert_eq!(read(&root, "secret.env").as_deref(), Some("KEY=agent\n"));

    let asked = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asked.len(), 3, "every change undo cannot bring back asks: {asked:#?}");
    for (request, name) in asked.iter().zip(["big.log", "secret.env", "big2.log"]) {
        let text = request.to_string();
        assert!(text.contains("not covered by undo") && text.contains(name), "{name}: {request:#}");
    }

    let preview =
        sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1, "dryRun": true}))?;
    assert_eq!(strings(&preview["notCovered"]), ["big.log", "big2.log", "secret.env"], "{preview:#}");
    let restored = sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1}))?;
    assert_eq!(strings(&restored["notCovered"]), ["big.log", "big2.log", "secret.env"], "{restored:#}");
    let message = restored["message"].as_str().unwrap_or_default().to_lowercase();
    assert!(message.contains("not covered by undo") && message.contains("big.log"), "{restored:#}");
    sidecar.shutdown()?;
    Ok(())
}

/// A file the turn changed that is now a symbolic link out of the workspace (the file itself, or
/// a directory above it): the restore's dry run shows nothing of the outside file, and the
/// restore writes nothing through the link.
#[test]
fn a_restore_never_reads_or_writes_through_a_link_out_of_the_workspace() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let base = dir.path().canonicalize().map_err(|e| e.to_string())?;
    let (root, outside) = (base.join("ws"), base.join("outside"));
    write(&root, "b.txt", "b0\n")?;
    write(&root, "sub/c.txt", "c0\n")?;
    write(&outside, "secret.txt", "OUTSIDE SECRET\n")?;
    write(&outside, "c.txt", "OUTSIDE C\n")?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("e1", "edit", json!({"file_path": "b.txt", "old_string": "b0", "new_string": "b1"})),
        Turn::new().tool_call("e2", "edit", json!({"file_path": "sub/c.txt", "old_string": "c0", "new_string": "c1"})),
        // The agent's own command swaps the files for links out of the workspace.
        Turn::new().tool_call(
            "x1",
            "bash",
            json!({"command": "rm b.txt && ln -s ../outside/secret.txt b.txt && rm -r sub && ln -s ../outside sub"}),
        ),
        Turn::reply("done"),
    ]);
    let mut sidecar = spawn(&root, &provider, "yolo")?;
    let session = new_session(&mut sidecar)?;
    sidecar.request("tandem/session/prompt", prompt(&session, "change things"))?;
    assert!(root.join("b.txt").is_symlink() && root.join("sub").is_symlink());

    for include_conflicts in [false, true] {
        let params = json!({"sessionId": session, "turn": 1, "dryRun": true, "includeConflicts": include_conflicts});
        let preview = sidecar.request("tandem/session/restore", params)?;
        let shown = preview.to_string();
        assert!(!shown.contains("OUTSIDE"), "the outside files' content is never shown: {preview:#}");
        assert!(strings(&preview["skipped"]).contains(&"b.txt"), "{preview:#}");
        assert!(strings(&preview["skipped"]).contains(&"sub/c.txt"), "{preview:#}");
    }
    let params = json!({"sessionId": session, "turn": 1, "includeConflicts": true});
    let restored = sidecar.request("tandem/session/restore", params)?;
    assert!(!restored.to_string().contains("OUTSIDE"), "{restored:#}");
    assert_eq!(read(&outside, "secret.txt").as_deref(), Some("OUTSIDE SECRET\n"));
    assert_eq!(read(&outside, "c.txt").as_deref(), Some("OUTSIDE C\n"));
    assert!(root.join("b.txt").is_symlink() && root.join("sub").is_symlink());
    let asked = sidecar.requests_of("tandem/session/requestPermission");
    assert!(!Value::Array(asked.clone()).to_string().contains("OUTSIDE"), "{asked:#?}");
    sidecar.shutdown()?;
    Ok(())
}
