//! The LSP front door itself: lifecycle, capabilities, custom methods, bad input, stdout hygiene.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Res, Sidecar, tandem_bin};

#[test]
fn initialize_announces_sync_and_tandem_capabilities() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (sidecar, result) = Sidecar::start(dir.path(), json!({ "profile": "standard", "mode": "plan" }))?;
    let caps = &result["capabilities"];
    assert_eq!(caps["textDocumentSync"]["change"], json!(2), "incremental sync: {caps}");
    assert_eq!(caps["textDocumentSync"]["openClose"], json!(true));
    assert_eq!(caps["positionEncoding"], json!("utf-16"));
    let tandem = &caps["experimental"]["tandem"];
    assert_eq!(tandem["version"], json!("0"));
    assert_eq!(tandem["modes"], json!(["default", "auto-edit", "plan", "yolo"]));
    let tools: Vec<&str> = tandem["tools"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    assert_eq!(
        tools,
        [
            "read",
            "write",
            "edit",
            "multiedit",
            "apply_patch",
            "append",
            "delete",
            "list",
            "generate_readme",
            "glob",
            "grep",
            "lsp",
            "repo_map",
            "todowrite",
            "todoread",
            "question",
            "ask_user",
            "plan_enter",
            "plan_status",
            "plan_exit",
            "tool_search",
            "memory_read",
            "memory_write",
            "memory_delete",
            "skill"
        ]
    );
    assert_eq!(result["serverInfo"]["name"], json!("tandem"));
    assert!(sidecar.shutdown()?.success());
    Ok(())
}

#[test]
fn tools_list_and_unknown_tool() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (mut sidecar, _) = Sidecar::start(dir.path(), Value::Null)?;
    let list = sidecar.request("tandem/tools/list", json!({}))?;
    assert_eq!(list["profile"], json!("full"));
    let read =
        list["tools"].as_array().into_iter().flatten().find(|t| t["name"] == "read").cloned().unwrap_or_default();
    assert_eq!(read["group"], json!("fs"));
    assert_eq!(read["canWrite"], json!(false));
    assert!(read["aliases"].as_array().is_some_and(|a| a.contains(&json!("read_file"))));
    assert_eq!(read["parameters"]["required"], json!(["file_path"]));

    let err = sidecar.request_raw("tandem/tools/call", json!({ "name": "raed", "arguments": {} }))?;
    let err = err.err().unwrap_or_default();
    assert_eq!(err["code"], json!(-32602));
    assert!(err["message"].as_str().is_some_and(|m| m.contains("did you mean `read`")), "{err}");

    // Invalid arguments are a result the model can act on, not a protocol error.
    let result = sidecar.call("read", json!({ "file_path": 7 }))?;
    assert_eq!(result["error"], json!("invalid arguments for `read`: `file_path`: expected string, got integer 7"));
    Ok(())
}

#[test]
fn profile_from_environment_hides_write_tools() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut sidecar = Sidecar::spawn(dir.path(), &[("TANDEM_PROFILE", "minimal")])?;
    sidecar.initialize(Value::Null)?;
    let list = sidecar.request("tandem/tools/list", json!({}))?;
    let names: Vec<&str> = list["tools"].as_array().into_iter().flatten().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names, ["read", "list", "glob", "grep", "repo_map", "tool_search", "skill"]);
    let result = sidecar.call("write_file", json!({ "file_path": "x.txt", "content": "x" }))?;
    assert!(result["error"].as_str().is_some_and(|e| e.contains("not part of the `minimal` profile")), "{result}");
    assert!(!dir.path().join("x.txt").exists());
    Ok(())
}

#[test]
fn survives_malformed_input() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut sidecar = Sidecar::spawn(dir.path(), &[])?;
    // A call before initialize is refused, not fatal.
    let early = sidecar.request_raw("tandem/tools/call", json!({ "name": "read", "arguments": {} }))?;
    assert!(early.is_err());
    sidecar.initialize(Value::Null)?;
    // A frame whose body is not JSON, then params of the wrong shape, then a bad didChange.
    sidecar.send_raw(b"Content-Length: 9\r\n\r\n{not json")?;
    let bad_params = sidecar.request_raw("tandem/tools/call", json!({ "arguments": {} }))?;
    assert_eq!(bad_params.err().map(|e| e["code"].clone()), Some(json!(-32602)));
    sidecar.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": "file:///nowhere", "version": 2 }, "contentChanges": [] }),
    )?;
    sidecar.open("a.txt", "abc")?;
    sidecar.type_change("a.txt", (40, 0), (41, 0), "out of range")?;
    // Still serving.
    std::fs::write(dir.path().join("a.txt"), "on disk\n").map_err(|e| e.to_string())?;
    let read = sidecar.call("read", json!({ "file_path": "a.txt" }))?;
    assert_eq!(read["error"], Value::Null, "{read}");
    // The out-of-range change made the cache drop the buffer rather than guess: disk wins.
    assert_eq!(read["metadata"]["source"], json!("disk"));
    assert!(sidecar.shutdown()?.success());
    Ok(())
}

/// Parses `bytes` strictly as a sequence of LSP frames; anything else fails.
fn strict_frames(mut bytes: &[u8]) -> Res<Vec<Value>> {
    let mut frames = Vec::new();
    while !bytes.is_empty() {
        let header_end = bytes.windows(4).position(|w| w == b"\r\n\r\n").ok_or("stray bytes on stdout")?;
        let header = std::str::from_utf8(&bytes[..header_end]).map_err(|e| e.to_string())?;
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|l| l.parse().ok())
            .ok_or_else(|| format!("not an LSP header on stdout: {header:?}"))?;
        let body = bytes.get(header_end + 4..header_end + 4 + length).ok_or("incomplete frame")?;
        frames.push(serde_json::from_slice(body).map_err(|e| e.to_string())?);
        bytes = &bytes[header_end + 4 + length..];
    }
    Ok(frames)
}

#[test]
fn stdout_carries_only_protocol_even_with_trace_logging() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("f.txt"), "x\n").map_err(|e| e.to_string())?;
    let mut child = Command::new(tandem_bin())
        .arg("lsp")
        .current_dir(dir.path())
        .env("TANDEM_LOG", "trace")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let messages = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"rootUri":format!("file://{}", dir.path().display())}}),
        json!({"jsonrpc":"2.0","method":"initialized","params":{}}),
        json!({"jsonrpc":"2.0","id":2,"method":"tandem/tools/call","params":{"name":"read","arguments":{"file_path":"f.txt"}}}),
        json!({"jsonrpc":"2.0","id":3,"method":"shutdown"}),
        json!({"jsonrpc":"2.0","method":"exit"}),
    ];
    let mut stdin = child.stdin.take().ok_or("stdin")?;
    let mut child_stdout = child.stdout.take().ok_or("stdout")?;
    let mut stdout = Vec::new();
    for message in messages {
        let body = message.to_string();
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).map_err(|e| e.to_string())?;
        stdin.flush().map_err(|e| e.to_string())?;
        let Some(id) = message.get("id").cloned() else { continue };
        // Like a real client, wait for each response before the next request.
        let mut chunk = [0u8; 4096];
        while !strict_frames(&stdout).is_ok_and(|frames| frames.iter().any(|f| f["id"] == id)) {
            let n = child_stdout.read(&mut chunk).map_err(|e| e.to_string())?;
            if n == 0 {
                return Err(format!("stdout closed before the response to {id}"));
            }
            stdout.extend_from_slice(&chunk[..n]);
        }
    }
    drop(stdin);
    child_stdout.read_to_end(&mut stdout).map_err(|e| e.to_string())?;
    let mut stderr = String::new();
    child.stderr.take().ok_or("stderr")?.read_to_string(&mut stderr).map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    assert!(status.success());
    let frames = strict_frames(&stdout)?;
    let ids: Vec<Value> = frames.iter().map(|f| f["id"].clone()).collect();
    assert_eq!(ids, [json!(1), json!(2), json!(3)]);
    assert!(frames[1]["result"]["output"].as_str().is_some_and(|o| o.contains("1\tx")), "{}", frames[1]);
    assert!(stderr.contains("initialize"), "trace logging goes to stderr: {stderr}");
    Ok(())
}

/// libuv (VS Code, Neovim) gives a child Unix socket pairs as stdin/stdout, not pipes.
#[test]
fn serves_over_unix_sockets_as_libuv_editors_connect() -> Res<()> {
    use std::io::BufReader;
    use std::os::unix::net::UnixStream;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    std::fs::write(dir.path().join("s.txt"), "over a socket\n").map_err(|e| e.to_string())?;
    let (ours_in, theirs_in) = UnixStream::pair().map_err(|e| e.to_string())?;
    let (ours_out, theirs_out) = UnixStream::pair().map_err(|e| e.to_string())?;
    let mut child = Command::new(tandem_bin())
        .arg("lsp")
        .current_dir(dir.path())
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs_in)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut writer = ours_in;
    let mut reader = BufReader::new(ours_out);
    let mut exchange = |message: Value| -> Res<Value> {
        let body = message.to_string();
        write!(writer, "Content-Length: {}\r\n\r\n{body}", body.len()).map_err(|e| e.to_string())?;
        let mut header = String::new();
        let mut length = 0;
        loop {
            header.clear();
            std::io::BufRead::read_line(&mut reader, &mut header).map_err(|e| e.to_string())?;
            if header.trim().is_empty() {
                break;
            }
            length = header.trim().trim_start_matches("Content-Length: ").parse().unwrap_or(0);
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).map_err(|e| e.to_string())?;
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    };
    let root = format!("file://{}", dir.path().display());
    exchange(json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{},"rootUri":root}}))?;
    let read = exchange(
        json!({"jsonrpc":"2.0","id":2,"method":"tandem/tools/call","params":{"name":"read","arguments":{"file_path":"s.txt"}}}),
    )?;
    assert_eq!(read["result"]["output"], json!("     1\tover a socket\n"));
    exchange(json!({"jsonrpc":"2.0","id":3,"method":"shutdown"}))?;
    let body = json!({"jsonrpc":"2.0","method":"exit"}).to_string();
    write!(writer, "Content-Length: {}\r\n\r\n{body}", body.len()).map_err(|e| e.to_string())?;
    assert!(child.wait().map_err(|e| e.to_string())?.success());
    Ok(())
}

/// The error code of the response to `id`, skipping anything else.
fn error_code(sidecar: &mut Sidecar, id: Value) -> Res<Value> {
    loop {
        let message = sidecar.next_message()?;
        if message.get("method").is_none() && message["id"] == id {
            return Ok(message["error"]["code"].clone());
        }
    }
}

#[test]
fn lifecycle_errors_follow_lsp() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut sidecar = Sidecar::spawn(dir.path(), &[])?;
    let early = sidecar.request_raw("tandem/tools/list", json!({}))?;
    assert_eq!(early.err().map(|e| e["code"].clone()), Some(json!(-32002)), "before initialize");
    sidecar.initialize(Value::Null)?;
    let again = sidecar.request_raw("initialize", json!({ "capabilities": {} }))?;
    assert_eq!(again.err().map(|e| e["code"].clone()), Some(json!(-32600)), "a second initialize");
    let unknown = sidecar.request_raw("tandem/noSuchMethod", json!({}))?;
    assert_eq!(unknown.err().map(|e| e["code"].clone()), Some(json!(-32601)));
    sidecar.request("shutdown", Value::Null)?;
    let late = sidecar.request_raw("tandem/tools/list", json!({}))?;
    assert_eq!(late.err().map(|e| e["code"].clone()), Some(json!(-32600)), "after shutdown");
    sidecar.notify("exit", Value::Null)?;
    assert_eq!(sidecar.child.wait().map_err(|e| e.to_string())?.code(), Some(0));
    Ok(())
}

#[test]
fn exit_without_shutdown_is_status_1() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (mut sidecar, _) = Sidecar::start(dir.path(), Value::Null)?;
    sidecar.notify("exit", Value::Null)?;
    assert_eq!(sidecar.child.wait().map_err(|e| e.to_string())?.code(), Some(1));
    Ok(())
}

#[test]
fn malformed_messages_get_json_rpc_errors_and_corrupt_headers_cost_one_message() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (mut sidecar, _) = Sidecar::start(dir.path(), Value::Null)?;
    sidecar.send(&json!({ "jsonrpc": "1.0", "id": 40, "method": "tandem/tools/list" }))?;
    assert_eq!(error_code(&mut sidecar, json!(40))?, json!(-32600));
    sidecar.send(&json!({ "jsonrpc": "2.0", "id": 41, "method": 7 }))?;
    assert_eq!(error_code(&mut sidecar, json!(41))?, json!(-32600));
    sidecar.send_raw(b"Content-Length: 9\r\n\r\n{not json")?;
    assert_eq!(error_code(&mut sidecar, Value::Null)?, json!(-32700));
    // Ignored silently: `$/` notifications, and a response to nothing we asked.
    sidecar.notify("$/tandem/noSuchNotification", json!({}))?;
    sidecar.send(&json!({ "jsonrpc": "2.0", "id": 999, "result": null }))?;
    // A header that lost its line end, glued to the next message: that next message is served.
    let body = json!({ "jsonrpc": "2.0", "id": 42, "method": "tandem/tools/list" }).to_string();
    sidecar.send_raw(format!("Content-Length: 12Content-Length: {}\r\n\r\n{body}", body.len()).as_bytes())?;
    // Then nothing but that message's answer: the ignored messages and the corrupt header got
    // none.
    let mut responses = Vec::new();
    while !responses.iter().any(|r: &Value| r["id"] == 42) {
        let message = sidecar.next_message()?;
        if message.get("method").is_none() {
            responses.push(message);
        }
    }
    assert_eq!(responses.len(), 1, "{responses:?}");
    assert!(responses[0]["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{responses:?}");
    Ok(())
}

#[test]
fn cancel_request_stops_a_running_command() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (mut sidecar, _) = Sidecar::start(dir.path(), Value::Null)?;
    let marker = dir.path().join("marker");
    let command = format!("sleep 2; touch {}", marker.display());
    let id =
        sidecar.send_request("tandem/tools/call", json!({ "name": "bash", "arguments": { "command": command } }))?;
    std::thread::sleep(std::time::Duration::from_millis(300));
    sidecar.notify("$/cancelRequest", json!({ "id": id }))?;
    let answer = sidecar.wait_response(id)?;
    assert_eq!(answer.err().map(|e| e["code"].clone()), Some(json!(-32800)));
    // Still serving, and the command never finished.
    assert!(sidecar.call("list", json!({}))?["error"].is_null());
    std::thread::sleep(std::time::Duration::from_millis(2500));
    assert!(!marker.exists(), "the cancelled command ran on");
    assert!(sidecar.shutdown()?.success());
    Ok(())
}
