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
    let session = sidecar.request("tandem/session/new", json!({}))?["sessionId"].as_str().unwrap_or_default().to_owned();
    // `git clean -n` only lists: asked as a git command; `rm -r` is data loss: the person picks
    // the most permissive answer offered, and the next `rm -r` asks again.
    for answer in ["allow_once", "allow_always", "allow_once", "reject_once"] {
        sidecar.permission_replies.push_back(PermissionReply::select(answer));
    }
    sidecar.request("tandem/session/prompt", json!({"sessionId": session, "prompt": [{"type": "text", "text": "tidy"}]}))?;
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
