//! Bad input on the newline-delimited front doors (`tandem acp`, `tandem mcp`): every
//! malformed request that carries an id gets a JSON-RPC error, a line that is not JSON gets
//! -32700, a huge line is refused without being held in memory, and the server keeps serving.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Res, tandem_bin};

struct Door {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Door {
    fn start(args: &[&str]) -> Res<Self> {
        let dir = std::env::temp_dir();
        let mut child = Command::new(tandem_bin())
            .args(args)
            .current_dir(dir)
            .env_remove("TANDEM_PROFILE")
            .env("TANDEM_LOG", "error")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        Ok(Self { child, stdin, stdout })
    }

    fn send_raw(&mut self, bytes: &[u8]) -> Res<()> {
        let stdin = self.stdin.as_mut().ok_or("closed")?;
        stdin.write_all(bytes).and_then(|()| stdin.flush()).map_err(|e| e.to_string())
    }

    fn send(&mut self, message: &Value) -> Res<()> {
        self.send_raw(format!("{message}\n").as_bytes())
    }

    fn read(&mut self) -> Res<Value> {
        let mut line = String::new();
        if self.stdout.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("the server closed its output".into());
        }
        serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))
    }

    /// The next message that is a response (skipping notifications).
    fn response(&mut self) -> Res<Value> {
        loop {
            let message = self.read()?;
            if message.get("method").is_none() {
                return Ok(message);
            }
        }
    }
}

impl Drop for Door {
    fn drop(&mut self) {
        drop(self.stdin.take());
        self.child.wait().ok();
    }
}

#[test]
fn acp_answers_every_malformed_request_and_caps_lines() -> Res<()> {
    let mut acp = Door::start(&["acp"])?;
    acp.send(&json!({ "jsonrpc": "1.0", "id": 7, "method": "initialize", "params": {} }))?;
    let answer = acp.response()?;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(7), json!(-32600)), "{answer}");
    acp.send_raw(b"{ not json\n")?;
    assert_eq!(acp.response()?["error"]["code"], -32700);
    // A line over the limit (64 MB): refused with a clear error, not read into memory.
    let mut huge = Vec::with_capacity(65 << 20);
    huge.extend_from_slice(br#"{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"pad":""#);
    huge.resize(65 << 20, b'x');
    huge.extend_from_slice(b"\"}}\n");
    acp.send_raw(&huge)?;
    let answer = acp.response()?;
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["error"]["message"].as_str().is_some_and(|m| m.contains("64 MB")), "{answer}");
    // Still serving.
    acp.send(&json!({ "jsonrpc": "2.0", "id": 9, "method": "initialize", "params": { "protocolVersion": 1 } }))?;
    let answer = acp.response()?;
    assert_eq!(answer["id"], 9);
    assert!(answer["result"]["protocolVersion"].is_number(), "{answer}");
    // An unknown session is "resource not found".
    acp.send(&json!({ "jsonrpc": "2.0", "id": 10, "method": "session/prompt",
        "params": { "sessionId": "nope", "prompt": [{ "type": "text", "text": "x" }] } }))?;
    let answer = acp.response()?;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(10), json!(-32002)), "{answer}");
    acp.send(&json!({ "jsonrpc": "2.0", "id": 11, "method": "session/set_mode",
        "params": { "sessionId": "nope", "modeId": "plan" } }))?;
    assert_eq!(acp.response()?["error"]["code"], -32002);
    Ok(())
}

#[test]
fn mcp_answers_a_line_that_is_not_json_and_an_invalid_request() -> Res<()> {
    let mut mcp = Door::start(&["mcp"])?;
    mcp.send_raw(b"this is not json\n")?;
    let answer = mcp.response()?;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (Value::Null, json!(-32700)), "{answer}");
    mcp.send(&json!({ "jsonrpc": "1.0", "id": 4, "method": "initialize", "params": {} }))?;
    let answer = mcp.response()?;
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(4), json!(-32600)), "{answer}");
    // Still serving: the handshake and a call work.
    mcp.send(&json!({ "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": { "name": "test", "version": "0" } } }))?;
    let answer = mcp.response()?;
    assert_eq!(answer["id"], 1);
    assert!(answer["result"]["serverInfo"]["name"] == "tandem", "{answer}");
    mcp.send(&json!({ "jsonrpc": "2.0", "method": "notifications/initialized" }))?;
    mcp.send_raw(b"[1, 2\n")?;
    assert_eq!(mcp.response()?["error"]["code"], -32700);
    mcp.send(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" }))?;
    let answer = mcp.response()?;
    assert_eq!(answer["id"], 2);
    assert!(answer["result"]["tools"].as_array().is_some_and(|t| !t.is_empty()), "{answer}");
    Ok(())
}
