//! Checkpoints end to end through the LSP door: a turn edits a file on disk and a document open
//! with unsaved changes, and a command creates a file; restoring the turn gives back the exact
//! state before it (the unsaved text included, through the editor), leaves alone a file the
//! person changed since and says so, tells the model; redo brings the turn back; and it all
//! works again after the sidecar restarts.

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, Sidecar};

fn spawn(root: &std::path::Path, provider: &FakeProvider) -> Res<Sidecar> {
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        root,
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", base.as_str()),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", "yolo"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn read(root: &std::path::Path, name: &str) -> Option<String> {
    std::fs::read_to_string(root.join(name)).ok()
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

#[test]
fn a_turn_is_restored_exactly_the_persons_edit_is_kept_redo_works_and_survives_a_restart() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    std::fs::write(root.join("a.txt"), "a0\n").map_err(|e| e.to_string())?;
    std::fs::write(root.join("b.txt"), "b0\n").map_err(|e| e.to_string())?;
    std::fs::write(root.join("c.txt"), "c0\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("e1", "edit", json!({"file_path": "a.txt", "old_string": "a0", "new_string": "a1"})),
        Turn::new().tool_call(
            "e2",
            "edit",
            json!({"file_path": "b.txt", "old_string": "b0 unsaved", "new_string": "b1"}),
        ),
        Turn::new().tool_call("e3", "edit", json!({"file_path": "c.txt", "old_string": "c0", "new_string": "c1"})),
        Turn::new().tool_call("x1", "bash", json!({"command": "echo made > made.txt"})),
        Turn::reply("done"),
        Turn::reply("ok"),
        Turn::reply("ok again"),
    ]);
    let mut sidecar = spawn(&root, &provider)?;
    // b.txt is open with text the person has not saved.
    sidecar.open("b.txt", "b0 unsaved\n")?;
    let session =
        sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    let prompt = |text: &str| json!({"sessionId": session, "prompt": [{"type": "text", "text": text}]});
    sidecar.request("tandem/session/prompt", prompt("change things"))?;
    let b_uri = sidecar.uri("b.txt");
    let buffer = |sidecar: &Sidecar| sidecar.docs.get(&b_uri).map(|d| d.text.clone()).unwrap_or_default();
    assert_eq!((read(&root, "a.txt"), buffer(&sidecar)), (Some("a1\n".into()), "b1\n".into()));
    assert_eq!(read(&root, "made.txt").as_deref(), Some("made\n"));

    // The checkpoints: the turn's start, one before and one after each changing call, its end.
    let listed = sidecar.request("tandem/session/checkpoints", json!({"sessionId": session}))?;
    let kinds: Vec<&str> =
        listed["checkpoints"].as_array().into_iter().flatten().filter_map(|c| c["kind"].as_str()).collect();
    let call = ["beforeTool", "afterTool"];
    assert_eq!(kinds, [&["beforeTurn"][..], &call, &call, &call, &call, &["afterTurn"]].concat());

    // The person edits c.txt by hand after the turn.
    std::fs::write(root.join("c.txt"), "c1 and mine\n").map_err(|e| e.to_string())?;
    let preview =
        sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1, "dryRun": true}))?;
    assert_eq!(strings(&preview["restored"]), ["a.txt", "b.txt", "made.txt"], "{preview:#}");
    assert_eq!(strings(&preview["conflicts"]), ["c.txt"]);
    assert!(preview["diff"].as_str().unwrap_or_default().contains("-a1\n+a0"), "{preview:#}");
    assert_eq!(read(&root, "a.txt").as_deref(), Some("a1\n"), "a dry run changes nothing");

    let restored = sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1}))?;
    assert_eq!(strings(&restored["conflicts"]), ["c.txt"], "{restored:#}");
    assert_eq!(read(&root, "a.txt").as_deref(), Some("a0\n"));
    assert_eq!(buffer(&sidecar), "b0 unsaved\n", "the editor's buffer is back as the person had it");
    assert_eq!(read(&root, "made.txt"), None, "the command's file is gone");
    assert_eq!(read(&root, "c.txt").as_deref(), Some("c1 and mine\n"), "the person's edit is kept");

    // The model learns what was undone.
    sidecar.request("tandem/session/prompt", prompt("and now?"))?;
    let last = provider.requests().last().map(|r| r.body.to_string()).unwrap_or_default();
    assert!(
        last.contains("The person restored the workspace to the start of turn 1") && last.contains("c.txt"),
        "{last}"
    );

    // Redo brings the turn back (the person's c.txt still untouched).
    let redo = restored["redoCheckpointId"].as_u64().ok_or("no redo id")?;
    sidecar.request("tandem/session/restore", json!({"sessionId": session, "checkpointId": redo}))?;
    assert_eq!((read(&root, "a.txt"), buffer(&sidecar)), (Some("a1\n".into()), "b1\n".into()));
    assert_eq!(read(&root, "made.txt").as_deref(), Some("made\n"));
    assert_eq!(read(&root, "c.txt").as_deref(), Some("c1 and mine\n"));
    sidecar.shutdown()?;

    // After a restart: load the session, undo turn 1 again.
    let mut sidecar = spawn(&root, &provider)?;
    sidecar.request("tandem/session/load", json!({"sessionId": session}))?;
    // The replay shows what the person typed, never Tandem's note to the model as theirs.
    let users: Vec<String> = sidecar
        .session_updates()
        .iter()
        .filter(|u| u["sessionUpdate"] == "user_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect();
    assert!(users.iter().any(|t| t == "and now?"), "{users:?}");
    assert!(users.iter().all(|t| !t.contains("The person restored")), "a note replayed as the person's: {users:?}");
    let again = sidecar.request("tandem/session/restore", json!({"sessionId": session, "turn": 1}))?;
    assert!(strings(&again["restored"]).contains(&"a.txt"), "{again:#}");
    assert_eq!((read(&root, "a.txt"), read(&root, "made.txt")), (Some("a0\n".into()), None));
    // An unknown checkpoint is a clear error.
    let bad = sidecar.request_raw("tandem/session/restore", json!({"sessionId": session, "checkpointId": 999}))?;
    let message = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("no checkpoint 999"), "{message}");
    sidecar.shutdown()?;
    Ok(())
}

/// With checkpoints switched off nothing is snapshotted, and asking for them says so.
#[test]
fn checkpoints_can_be_switched_off() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![Turn::reply("hi")]);
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        dir.path(),
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", base.as_str()),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_CHECKPOINTS", "off"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    let session =
        sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    sidecar
        .request("tandem/session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "hi"}]}))?;
    let listed = sidecar.request_raw("tandem/session/checkpoints", json!({"sessionId": session}))?;
    let message = listed.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("checkpoints are unavailable"), "{message}");
    assert!(!crate::support::state_of(dir.path(), "checkpoints").exists());
    sidecar.shutdown()?;
    Ok(())
}

/// What an editor shows of a checkpoint: the files changed after it (until the next one), and a
/// file's text at it, to compare with the file now.
#[test]
fn a_checkpoint_lists_the_files_changed_after_it_and_gives_a_file_s_text_at_it() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().canonicalize().map_err(|e| e.to_string())?;
    std::fs::write(root.join("a.txt"), "a0\n").map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("e1", "edit", json!({"file_path": "a.txt", "old_string": "a0", "new_string": "a1"})),
        Turn::new().tool_call("w1", "write", json!({"file_path": "new.txt", "content": "n1\n"})),
        Turn::reply("done"),
    ]);
    let mut sidecar = spawn(&root, &provider)?;
    let session =
        sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    sidecar.request(
        "tandem/session/prompt",
        json!({"sessionId": session, "prompt": [{"type": "text", "text": "change things"}]}),
    )?;
    let listed = sidecar.request("tandem/session/checkpoints", json!({"sessionId": session}))?;
    let list = listed["checkpoints"].as_array().cloned().unwrap_or_default();
    let summary: Vec<(String, Vec<&str>)> =
        list.iter().map(|c| (c["kind"].as_str().unwrap_or_default().to_owned(), strings(&c["files"]))).collect();
    let expected = [
        ("beforeTurn", vec![]),
        ("beforeTool", vec!["a.txt"]),
        ("afterTool", vec![]),
        ("beforeTool", vec!["new.txt"]),
        ("afterTool", vec![]),
        ("afterTurn", vec![]),
    ];
    let expected: Vec<(String, Vec<&str>)> = expected.into_iter().map(|(k, f)| (k.to_owned(), f)).collect();
    assert_eq!(summary, expected, "{listed:#}");

    let file = |sidecar: &mut Sidecar, id: &Value, path: &str| {
        sidecar.request_raw(
            "tandem/session/checkpointFile",
            json!({"sessionId": session, "checkpointId": id, "path": path}),
        )
    };
    let (first, last) = (&list[0]["id"], &list[5]["id"]);
    assert_eq!(file(&mut sidecar, first, "a.txt")?.map_err(|e| e.to_string())?, json!({"content": "a0\n"}));
    assert_eq!(file(&mut sidecar, last, "a.txt")?.map_err(|e| e.to_string())?, json!({"content": "a1\n"}));
    // An absolute path inside the workspace works too; a file the checkpoint does not hold has no content.
    let absolute = root.join("new.txt").display().to_string();
    assert_eq!(file(&mut sidecar, first, &absolute)?.map_err(|e| e.to_string())?, json!({}));
    assert_eq!(file(&mut sidecar, last, &absolute)?.map_err(|e| e.to_string())?, json!({"content": "n1\n"}));
    // Nothing outside the workspace, and no unknown checkpoint.
    let outside = file(&mut sidecar, first, "../etc/passwd")?.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(outside.contains("inside the workspace"), "{outside}");
    let unknown = file(&mut sidecar, &json!(999), "a.txt")?.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(unknown.contains("no checkpoint 999"), "{unknown}");
    sidecar.shutdown()?;
    Ok(())
}
