//! Review with foresight, end to end: the real binary with real pyright on a copy of
//! `tests/fixtures/python`, a scripted provider, and the test playing the editor. A staged
//! change is previewed by the language server before the person is asked: the permission
//! request carries what it would break; a rejected change leaves no trace in the server; an
//! accepted one's problems reach the model.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};

use crate::lsp_proxy::{copy_dir, require, server_path};
use crate::support::{PermissionReply, Res, Sidecar, repo_root};

/// A copy of the Python fixture with `config` appended to the test's settings (also the
/// editors' preview tests' workspace).
pub(crate) fn project(config: &str) -> Res<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("ws");
    copy_dir(&repo_root().join("tests/fixtures/python"), &root)?;
    std::fs::write(root.join("notes.txt"), "first\nsecond\n").map_err(|e| e.to_string())?;
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    let toml = format!(
        "[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 2\nconnect_timeout_secs = 2\n[lsp]\ndiagnostics_wait_ms = 60000\nrequest_timeout_ms = 60000\n{config}"
    );
    std::fs::write(root.join(".tandem/config.toml"), toml).map_err(|e| e.to_string())?;
    let root = root.canonicalize().map_err(|e| e.to_string())?;
    Ok((dir, root))
}

/// Generous: the servers of a loaded CI machine are slow, and this is not a timing test.
pub(crate) const PREVIEW: &str = "[review]\npreview_timeout_ms = 60000\n";

fn sidecar(root: &Path, provider: &FakeProvider) -> Res<Sidecar> {
    let base = provider.base_url();
    let path = server_path();
    let mut sidecar = Sidecar::spawn(
        root,
        &[
            ("PATH", path.as_str()),
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", &base),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", "default"),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

fn session(sidecar: &mut Sidecar) -> Res<String> {
    let result = sidecar.request("tandem/session/new", json!({}))?;
    result["sessionId"].as_str().map(str::to_owned).ok_or_else(|| format!("no sessionId in {result}"))
}

fn prompt(sidecar: &mut Sidecar, session: &str, text: &str) -> Res<Value> {
    sidecar
        .request("tandem/session/prompt", json!({ "sessionId": session, "prompt": [{ "type": "text", "text": text }] }))
}

/// The tool results the provider received in its last request.
fn tool_results(provider: &FakeProvider) -> Vec<String> {
    let requests = provider.requests();
    let Some(last) = requests.last() else { return Vec::new() };
    let messages = last.body["messages"].as_array().cloned().unwrap_or_default();
    messages
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// The file's diagnostics through the `lsp` tool, as the person would ask.
fn diagnostics(sidecar: &mut Sidecar, file: &str) -> Res<String> {
    let result = sidecar.call("lsp", json!({ "operation": "diagnostics", "file_path": file }))?;
    match result["error"].as_str() {
        Some(error) => Err(format!("lsp diagnostics of {file} failed: {error}")),
        None => Ok(result["output"].as_str().unwrap_or_default().to_owned()),
    }
}

const RETURN_OLD: &str = "    return total\n";
const RETURN_BAD: &str = "    return \"total\"\n";

#[test]
fn a_type_error_is_shown_before_approval_a_rejection_leaves_no_trace_and_an_acceptance_tells_the_model() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(PREVIEW)?;
    let edit = json!({ "file_path": "shop/main.py", "old_string": RETURN_OLD, "new_string": RETURN_BAD });
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "edit", edit.clone()),
        Turn::reply("Left it."),
        Turn::new().tool_call("call_2", "edit", edit),
        Turn::reply("Done."),
    ]);
    let mut sidecar = sidecar(&root, &provider)?;
    sidecar.permission_replies.extend([PermissionReply::select("reject_once"), PermissionReply::select("allow_once")]);
    let session = session(&mut sidecar)?;
    let original = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;

    prompt(&mut sidecar, &session, "return a string")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    let preview = &asks[0]["diagnostics"];
    assert_eq!(preview["status"], "ready", "{:#}", asks[0]);
    let file = &preview["files"][0];
    assert_eq!(file["path"], json!(root.join("shop/main.py")), "{preview:#}");
    assert_eq!((file["changed"].as_bool(), file["server"].as_str()), (Some(true), Some("pyright")), "{preview:#}");
    let new_error = &file["introduced"][0];
    assert_eq!((new_error["severity"].as_str(), new_error["line"].as_u64()), (Some("error"), Some(9)), "{preview:#}");
    assert_eq!(new_error["hunk"], "h1", "the error lies in the change's only hunk: {preview:#}");
    let summary = preview["summary"].as_str().unwrap_or_default();
    assert!(summary.starts_with("introduces 1 error: shop/main.py:9: "), "{summary}");

    // Rejected: the file is as it was, and the server sees it so.
    assert_eq!(std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?, original);
    let after_reject = diagnostics(&mut sidecar, "shop/main.py")?;
    assert!(after_reject.contains("no errors"), "{after_reject}");

    // Accepted anyway: the model is told what the person saw and what holds now.
    prompt(&mut sidecar, &session, "do it anyway")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 2, "{asks:#?}");
    assert_eq!(asks[1]["diagnostics"]["status"], "ready", "{:#}", asks[1]);
    let results = tool_results(&provider);
    let accepted = results.last().cloned().unwrap_or_default();
    assert!(accepted.contains("its preview showed that it introduces 1 problem: shop/main.py:9:"), "{accepted}");
    assert!(accepted.contains("Diagnostics after this change") && accepted.contains("1 error(s)"), "{accepted}");
    assert!(std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?.contains(RETURN_BAD));
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn a_rename_that_breaks_a_caller_shows_the_callers_error_and_a_rejection_leaves_no_trace() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(PREVIEW)?;
    let rename =
        json!({ "file_path": "shop/counter.py", "old_string": "def increment(self)", "new_string": "def bump(self)" });
    let provider =
        FakeProvider::start_blocking(vec![Turn::new().tool_call("call_1", "edit", rename), Turn::reply("Left it.")]);
    let mut sidecar = sidecar(&root, &provider)?;
    // The server knows the caller (as after an earlier question about it).
    let before = diagnostics(&mut sidecar, "shop/main.py")?;
    assert!(before.contains("no errors"), "{before}");
    sidecar.permission_replies.push_back(PermissionReply::select("reject_once"));
    let session = session(&mut sidecar)?;
    prompt(&mut sidecar, &session, "rename increment to bump")?;

    let asks = sidecar.requests_of("tandem/session/requestPermission");
    let preview = &asks[0]["diagnostics"];
    let files = preview["files"].as_array().cloned().unwrap_or_default();
    let caller = files
        .iter()
        .find(|f| f["path"] == json!(root.join("shop/main.py")))
        .ok_or_else(|| format!("the caller is not in the preview: {preview:#}"))?;
    assert_eq!(caller["changed"], false, "{preview:#}");
    let broken = caller["introduced"].as_array().cloned().unwrap_or_default();
    assert!(broken.iter().any(|d| d["message"].as_str().is_some_and(|m| m.contains("increment"))), "{preview:#}");
    assert!(preview["summary"].as_str().is_some_and(|s| s.contains("shop/main.py:")), "{preview:#}");

    // Rejected: were the server still holding the renamed method, the caller would be broken.
    assert!(std::fs::read_to_string(root.join("shop/counter.py")).map_err(|e| e.to_string())?.contains("increment"));
    let deadline = Instant::now() + Duration::from_secs(30);
    let after = loop {
        let after = diagnostics(&mut sidecar, "shop/main.py")?;
        if after.contains("no errors") || Instant::now() > deadline {
            break after;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(after.contains("no errors"), "the rejected rename left a trace: {after}");
    sidecar.shutdown()?;
    Ok(())
}

/// The rename of `Counter.increment`, previewed with `config` and nothing open in the servers:
/// the preview, and whether `shop/main.py` (which calls it) has no errors after the rejection.
fn rename_with_the_caller_closed(config: &str) -> Res<(Value, PathBuf, String)> {
    let (dir, root) = project(config)?;
    let rename =
        json!({ "file_path": "shop/counter.py", "old_string": "def increment(self)", "new_string": "def bump(self)" });
    let provider =
        FakeProvider::start_blocking(vec![Turn::new().tool_call("call_1", "edit", rename), Turn::reply("Left it.")]);
    let mut sidecar = sidecar(&root, &provider)?;
    sidecar.permission_replies.push_back(PermissionReply::select("reject_once"));
    let session = session(&mut sidecar)?;
    prompt(&mut sidecar, &session, "rename increment to bump")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    let preview = asks.first().map(|ask| ask["diagnostics"].clone()).ok_or("no permission request")?;
    let after = diagnostics(&mut sidecar, "shop/main.py")?;
    sidecar.shutdown()?;
    drop(dir);
    Ok((preview, root, after))
}

#[test]
fn a_rename_that_breaks_a_caller_nobody_has_open_shows_the_callers_error() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (preview, root, after) = rename_with_the_caller_closed(PREVIEW)?;
    let files = preview["files"].as_array().cloned().unwrap_or_default();
    let caller = files
        .iter()
        .find(|f| f["path"] == json!(root.join("shop/main.py")))
        .ok_or_else(|| format!("the closed caller is not in the preview: {preview:#}"))?;
    assert_eq!(caller["changed"], false, "{preview:#}");
    let broken = caller["introduced"].as_array().cloned().unwrap_or_default();
    assert!(broken.iter().any(|d| d["message"].as_str().is_some_and(|m| m.contains("increment"))), "{preview:#}");
    assert!(preview["summary"].as_str().is_some_and(|s| s.contains("shop/main.py:")), "{preview:#}");
    // The preview closed what it opened, and the rejected rename left no trace in the server.
    assert!(after.contains("no errors"), "{after}");
    Ok(())
}

#[test]
fn with_no_preview_files_only_the_changed_file_is_previewed() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (preview, root, _) = rename_with_the_caller_closed(&format!("{PREVIEW}preview_files = 0\n"))?;
    let files = preview["files"].as_array().cloned().unwrap_or_default();
    assert!(files.iter().all(|f| f["path"] != json!(root.join("shop/main.py"))), "{preview:#}");
    assert!(files.iter().any(|f| f["path"] == json!(root.join("shop/counter.py"))), "{preview:#}");
    Ok(())
}

#[test]
fn a_file_no_server_serves_is_asked_about_at_once_without_a_preview() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(PREVIEW)?;
    let edit = json!({ "file_path": "notes.txt", "old_string": "second\n", "new_string": "2nd\n" });
    let provider =
        FakeProvider::start_blocking(vec![Turn::new().tool_call("call_1", "edit", edit), Turn::reply("Ok.")]);
    let mut sidecar = sidecar(&root, &provider)?;
    sidecar.permission_replies.push_back(PermissionReply::select("allow_once"));
    let session = session(&mut sidecar)?;
    let started = Instant::now();
    prompt(&mut sidecar, &session, "edit the notes")?;
    // With a 60 s preview deadline, any wait for a server would show here.
    assert!(started.elapsed() < Duration::from_secs(20), "took {:?}", started.elapsed());
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 1);
    assert!(asks[0].get("diagnostics").is_none(), "{:#}", asks[0]);
    assert_eq!(std::fs::read_to_string(root.join("notes.txt")).map_err(|e| e.to_string())?, "first\n2nd\n");
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn a_server_that_cannot_answer_in_time_is_not_ready_never_no_problems() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    // One millisecond: pyright cannot even start.
    let (_dir, root) = project("[review]\npreview_timeout_ms = 1\n")?;
    let edit = json!({ "file_path": "shop/main.py", "old_string": RETURN_OLD, "new_string": RETURN_BAD });
    let provider =
        FakeProvider::start_blocking(vec![Turn::new().tool_call("call_1", "edit", edit), Turn::reply("Ok.")]);
    let mut sidecar = sidecar(&root, &provider)?;
    sidecar.permission_replies.push_back(PermissionReply::select("reject_once"));
    let session = session(&mut sidecar)?;
    prompt(&mut sidecar, &session, "return a string")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    let preview = &asks[0]["diagnostics"];
    assert_eq!(preview["status"], "notReady", "{preview:#}");
    assert_eq!(preview["files"][0]["status"], "notReady", "{preview:#}");
    let summary = preview["summary"].as_str().unwrap_or_default();
    assert!(summary.starts_with("diagnostics not ready, so nothing is known about errors"), "{summary}");
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn the_preview_starts_from_the_editors_unsaved_text() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(PREVIEW)?;
    let edit = json!({ "file_path": "shop/main.py", "old_string": RETURN_OLD, "new_string": RETURN_BAD });
    let provider =
        FakeProvider::start_blocking(vec![Turn::new().tool_call("call_1", "edit", edit), Turn::reply("Ok.")]);
    let mut sidecar = sidecar(&root, &provider)?;
    // The person typed a line at the top and did not save: every line moves down by one.
    let on_disk = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;
    sidecar.open("shop/main.py", &format!("# unsaved\n{on_disk}"))?;
    sidecar.permission_replies.push_back(PermissionReply::select("allow_once"));
    let session = session(&mut sidecar)?;
    prompt(&mut sidecar, &session, "return a string")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    let preview = &asks[0]["diagnostics"];
    let new_error = &preview["files"][0]["introduced"][0];
    assert_eq!((new_error["line"].as_u64(), new_error["hunk"].as_str()), (Some(10), Some("h1")), "{preview:#}");
    // Accepted through the editor: its buffer has both, and the model hears of the error.
    let uri = sidecar.uri("shop/main.py");
    let buffer = sidecar.docs.get(&uri).map(|d| d.text.clone()).unwrap_or_default();
    assert!(buffer.starts_with("# unsaved\n") && buffer.contains(RETURN_BAD), "{buffer}");
    let result = tool_results(&provider).last().cloned().unwrap_or_default();
    assert!(result.contains("shop/main.py:10:") && result.contains("1 error(s)"), "{result}");
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn fix_first_sends_a_change_with_errors_back_to_the_model_once_before_the_person_sees_it() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(&format!("{PREVIEW}precheck = \"fix-first\"\n"))?;
    let edit = json!({ "file_path": "shop/main.py", "old_string": RETURN_OLD, "new_string": RETURN_BAD });
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "edit", edit.clone()),
        // The model insists: this time the person decides.
        Turn::new().tool_call("call_2", "edit", edit),
        Turn::reply("Left it."),
    ]);
    let mut sidecar = sidecar(&root, &provider)?;
    sidecar.permission_replies.push_back(PermissionReply::select("reject_once"));
    let session = session(&mut sidecar)?;
    let original = std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?;
    prompt(&mut sidecar, &session, "return a string")?;

    // Asked once, for the second proposal only, with the preview.
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 1, "{asks:#?}");
    assert_eq!(asks[0]["diagnostics"]["status"], "ready", "{:#}", asks[0]);
    let results = tool_results(&provider);
    assert!(
        results[0].contains("not shown to the person yet") && results[0].contains("introduces 1 error: shop/main.py:9"),
        "the first proposal went back to the model with the errors: {results:?}"
    );
    assert!(results[1].contains("rejected"), "{results:?}");
    assert_eq!(std::fs::read_to_string(root.join("shop/main.py")).map_err(|e| e.to_string())?, original);
    Ok(())
}

/// The lines of the problems a preview says the change to `file` introduces.
fn introduced_lines(ask: &Value, root: &Path, file: &str) -> Res<Vec<u64>> {
    let files = ask["diagnostics"]["files"].as_array().cloned().unwrap_or_default();
    let entry = files
        .iter()
        .find(|f| f["path"] == json!(root.join(file)))
        .ok_or_else(|| format!("{file} is not in the preview: {ask:#}"))?;
    Ok(entry["introduced"].as_array().into_iter().flatten().filter_map(|d| d["line"].as_u64()).collect())
}

#[test]
fn a_preview_after_another_file_changed_does_not_reuse_what_the_server_said_before() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(PREVIEW)?;
    let edit = json!({ "file_path": "shop/main.py", "old_string": RETURN_OLD, "new_string": RETURN_BAD });
    let rename =
        json!({ "file_path": "shop/counter.py", "old_string": "def increment(self)", "new_string": "def bump(self)" });
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "edit", edit.clone()),
        Turn::reply("Left it."),
        Turn::new().tool_call("call_2", "edit", rename),
        Turn::reply("Renamed."),
        Turn::new().tool_call("call_3", "edit", edit),
        Turn::reply("Left it."),
    ]);
    let mut sidecar = sidecar(&root, &provider)?;
    let before = diagnostics(&mut sidecar, "shop/main.py")?;
    assert!(before.contains("no errors"), "{before}");
    sidecar.permission_replies.extend([
        PermissionReply::select("reject_once"),
        PermissionReply::select("allow_once"),
        PermissionReply::select("reject_once"),
    ]);
    let session = session(&mut sidecar)?;
    prompt(&mut sidecar, &session, "return a string")?;
    prompt(&mut sidecar, &session, "rename increment to bump")?;
    // main.py's text is what it was at the first preview, but the rename broke its call on
    // line 8: that error is there before the change, so the change introduces only its own.
    prompt(&mut sidecar, &session, "return a string after all")?;
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 3, "{asks:#?}");
    assert_eq!(introduced_lines(&asks[0], &root, "shop/main.py")?, [9], "{:#}", asks[0]);
    assert_eq!(asks[2]["diagnostics"]["status"], "ready", "{:#}", asks[2]);
    assert_eq!(introduced_lines(&asks[2], &root, "shop/main.py")?, [9], "{:#}", asks[2]);
    sidecar.shutdown()?;
    Ok(())
}

#[test]
fn a_preview_after_a_rejection_says_what_the_first_said() -> Res<()> {
    require("pyright-langserver", "npm install (package.json devDependencies)")?;
    let (_dir, root) = project(PREVIEW)?;
    let edit = json!({ "file_path": "shop/main.py", "old_string": RETURN_OLD, "new_string": RETURN_BAD });
    let mut turns = Vec::new();
    for i in 0..4 {
        turns.push(Turn::new().tool_call(format!("call_{i}"), "edit", edit.clone()));
        turns.push(Turn::reply("Left it."));
    }
    let provider = FakeProvider::start_blocking(turns);
    let mut sidecar = sidecar(&root, &provider)?;
    sidecar.permission_replies.extend((0..4).map(|_| PermissionReply::select("reject_once")));
    // A session each: a session stops repeating a call the person keeps rejecting.
    for _ in 0..4 {
        let session = session(&mut sidecar)?;
        prompt(&mut sidecar, &session, "return a string")?;
    }
    let asks = sidecar.requests_of("tandem/session/requestPermission");
    assert_eq!(asks.len(), 4, "{asks:#?}");
    for ask in &asks {
        assert_eq!(ask["diagnostics"]["summary"], asks[0]["diagnostics"]["summary"], "{ask:#}");
        assert_eq!(introduced_lines(ask, &root, "shop/main.py")?, [9], "{ask:#}");
    }
    sidecar.shutdown()?;
    Ok(())
}
