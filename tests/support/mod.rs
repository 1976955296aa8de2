//! Test support: a small but real LSP client that spawns the `tandem` binary over stdio and
//! plays the editor: it keeps its own copy of open documents, answers `workspace/applyEdit` by
//! applying the edit and sending `didChange` (as VS Code does), and answers
//! `tandem/document/save` as configured.

#![allow(dead_code, reason = "each test binary uses a different part of the support code")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Result type of the support code.
pub type Res<T> = Result<T, String>;

/// How long the server may stay silent before the test fails: a hang detector, not a timing
/// check. Generous, because real language servers indexing on a loaded 2-core machine (the
/// whole suite runs in parallel) can take tens of seconds for one answer.
const TIMEOUT: Duration = Duration::from_secs(120);

/// What the fake editor answers to `tandem/document/save`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SaveAnswer {
    /// Writes its buffer to disk and says `saved: true`.
    Save,
    /// Says `saved: false`.
    Refuse,
    /// Answers MethodNotFound, as an editor without the extension method would.
    Unsupported,
}

/// How the fake editor answers the next `tandem/session/requestPermission`.
#[derive(Clone, Debug)]
pub enum PermissionReply {
    /// Replies with this `outcome` object.
    Outcome(Value),
    /// Does not reply; sends `tandem/session/cancel` for the session instead (the person
    /// pressed Stop while the review was open).
    CancelSession,
}

impl PermissionReply {
    /// Selects `option_id` (all hunks).
    pub fn select(option_id: &str) -> Self {
        Self::Outcome(json!({ "outcome": "selected", "optionId": option_id }))
    }

    /// Accepts only these hunks.
    pub fn hunks(ids: &[&str]) -> Self {
        Self::Outcome(json!({ "outcome": "selected", "optionId": "allow_once", "acceptedHunks": ids }))
    }
}

/// An open document as the fake editor holds it.
#[derive(Clone, Debug)]
pub struct Doc {
    pub version: i32,
    pub text: String,
}

/// The path of the `tandem` binary under test.
pub fn tandem_bin() -> PathBuf {
    if let Some(path) = option_env!("CARGO_BIN_EXE_tandem") {
        return PathBuf::from(path);
    }
    // Benches and other targets: next to the current executable's `deps/` directory.
    let exe = std::env::current_exe().unwrap_or_default();
    exe.parent().and_then(Path::parent).map(|dir| dir.join("tandem")).unwrap_or_default()
}

/// The repository's root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Where a `tandem` started with this process's environment keeps the state of the workspace
/// at `root` (`sub`: `sessions`, `mcp`, ...): outside the workspace.
#[allow(dead_code)]
pub fn state_of(root: &Path, sub: &str) -> PathBuf {
    tandem_tools::state::state_path(root, sub)
}

/// This process's state home, for a child whose `HOME` a test changes (as `TANDEM_STATE_HOME`,
/// so that [`state_of`] still finds its state).
#[allow(dead_code)]
pub fn state_home() -> String {
    tandem_tools::state::state_home().map(|p| p.display().to_string()).unwrap_or_default()
}

/// A missing editor (or a tool an editor test needs): an error under `TANDEM_REQUIRE_EDITORS=1`
/// (CI sets it), else a loud skip message and `Ok`. `what` says what is missing and how to get it.
pub fn editor_missing(what: &str) -> Res<()> {
    if std::env::var("TANDEM_REQUIRE_EDITORS").is_ok_and(|v| v == "1") {
        return Err(format!("{what} is missing and TANDEM_REQUIRE_EDITORS=1"));
    }
    eprintln!("!!!!! SKIPPED: {what} is missing; set TANDEM_REQUIRE_EDITORS=1 to make this an error");
    Ok(())
}

/// A running `tandem lsp` with the editor side in the test.
pub struct Sidecar {
    pub child: Child,
    stdin: ChildStdin,
    rx: Receiver<Value>,
    next_id: i64,
    pub docs: HashMap<String, Doc>,
    pub save_answer: SaveAnswer,
    /// Notifications received from the server, in order.
    pub notifications: Vec<Value>,
    /// Server→client requests received, in order.
    pub server_requests: Vec<Value>,
    pub root: PathBuf,
    /// Answers to permission requests, used in order.
    pub permission_replies: std::collections::VecDeque<PermissionReply>,
    /// Results for `tandem/session/askUser`, used in order (none left: MethodNotFound).
    pub ask_replies: std::collections::VecDeque<Value>,
    /// Whether to apply each `workspace/applyEdit`, used in order (`false`: refused unapplied;
    /// none left: applied).
    pub apply_answers: std::collections::VecDeque<bool>,
}

/// `tandem <args> lsp` in `root`, with piped stdin and stdout, as the tests start it.
pub fn lsp_command(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(tandem_bin());
    command
        .args(args)
        .arg("lsp")
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .env_remove("TANDEM_PROFILE")
        // The fixtures' own `.tandem/config.toml` is the test's: trusted, unless a test says
        // otherwise (`TANDEM_TRUST_WORKSPACE=0`).
        .env("TANDEM_TRUST_WORKSPACE", "1")
        .env("TANDEM_LOG", std::env::var("TANDEM_LOG").unwrap_or_else(|_| "warn".into()));
    command
}

/// One LSP-framed message from `reader` (`None` at the end of input or on a bad frame).
pub fn read_message(reader: &mut impl BufRead) -> Option<Value> {
    serde_json::from_slice(&read_frame(reader)?).ok()
}

/// One framed message's body, unparsed (`None` at the end of the stream).
pub fn read_frame(reader: &mut impl BufRead) -> Option<Vec<u8>> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length:") {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

/// UTF-16 position to byte offset in `text` (LSP's default encoding).
pub fn offset_of(text: &str, line: u64, character: u64) -> usize {
    let mut offset = 0;
    for _ in 0..line {
        match text[offset..].find('\n') {
            Some(i) => offset += i + 1,
            None => return text.len(),
        }
    }
    let mut units = 0;
    for (i, c) in text[offset..].char_indices() {
        if units >= character as usize || c == '\n' || c == '\r' {
            return offset + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

impl Sidecar {
    /// Spawns `tandem lsp` in `root` with extra environment variables.
    pub fn spawn(root: &Path, env: &[(&str, &str)]) -> Res<Self> {
        Self::spawn_with(root, env, &[])
    }

    /// Spawns `tandem <args> lsp` in `root` with extra environment variables.
    pub fn spawn_with(root: &Path, env: &[(&str, &str)], args: &[&str]) -> Res<Self> {
        let mut command = lsp_command(root, args);
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().map_err(|e| format!("spawn {}: {e}", tandem_bin().display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(message) = read_message(&mut reader) {
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        Ok(Self {
            child,
            stdin,
            rx,
            next_id: 1,
            docs: HashMap::new(),
            save_answer: SaveAnswer::Unsupported,
            notifications: Vec::new(),
            server_requests: Vec::new(),
            root: root.to_path_buf(),
            permission_replies: Default::default(),
            ask_replies: Default::default(),
            apply_answers: Default::default(),
        })
    }

    /// Spawns and initializes with the given client capabilities and initializationOptions.
    pub fn start(root: &Path, init_options: Value) -> Res<(Self, Value)> {
        let mut sidecar = Self::spawn(root, &[])?;
        let result = sidecar.initialize(init_options)?;
        Ok((sidecar, result))
    }

    /// `initialize` + `initialized`.
    pub fn initialize(&mut self, init_options: Value) -> Res<Value> {
        let uri = format!("file://{}", self.root.display());
        let result = self.request(
            "initialize",
            json!({
                "processId": std::process::id(),
                "rootUri": uri,
                "workspaceFolders": [{ "uri": uri, "name": "ws" }],
                "capabilities": { "workspace": { "applyEdit": true, "workspaceEdit": { "documentChanges": true } } },
                "initializationOptions": init_options,
            }),
        )?;
        self.notify("initialized", json!({}))?;
        Ok(result)
    }

    /// Writes one framed message.
    pub fn send(&mut self, message: &Value) -> Res<()> {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) -> Res<()> {
        self.send(&json!({ "jsonrpc": "2.0", "method": method, "params": params }))
    }

    /// Sends a request without waiting; returns its id (see [`Sidecar::wait_response`]).
    pub fn send_request(&mut self, method: &str, params: Value) -> Res<i64> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        Ok(id)
    }

    /// Handles incoming messages until a notification matching `pred` arrives (returned).
    pub fn pump_until(&mut self, pred: impl Fn(&Value) -> bool) -> Res<Value> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self.recv(deadline)?;
            let hit = message.get("id").is_none() && pred(&message);
            self.dispatch(message.clone())?;
            if hit {
                return Ok(message);
            }
        }
    }

    /// The `tandem/session/update` payloads received so far (`update` objects), in order.
    pub fn session_updates(&self) -> Vec<Value> {
        self.notifications
            .iter()
            .filter(|n| n["method"] == "tandem/session/update")
            .map(|n| n["params"]["update"].clone())
            .collect()
    }

    /// The requests of `method` the server sent, in order (their params).
    pub fn requests_of(&self, method: &str) -> Vec<Value> {
        self.server_requests.iter().filter(|r| r["method"] == method).map(|r| r["params"].clone()).collect()
    }

    /// Sends a request and waits for its response (`Ok(result)` or `Err(error object)`),
    /// answering server requests meanwhile.
    pub fn request_raw(&mut self, method: &str, params: Value) -> Res<Result<Value, Value>> {
        let id = self.send_request(method, params)?;
        self.wait_response(id)
    }

    /// Waits for the response to request `id`, answering server requests meanwhile.
    pub fn wait_response(&mut self, id: i64) -> Res<Result<Value, Value>> {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            let message = self.recv(deadline)?;
            if message.get("method").is_none() && message.get("id") == Some(&json!(id)) {
                return Ok(match message.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                });
            }
            self.dispatch(message)?;
        }
    }

    /// Waits for the responses to all of `ids`, in whatever order they come, answering server
    /// requests meanwhile; returned in the order of `ids`.
    pub fn wait_responses(&mut self, ids: &[i64]) -> Res<Vec<Result<Value, Value>>> {
        let deadline = Instant::now() + TIMEOUT;
        let mut got: HashMap<i64, Result<Value, Value>> = HashMap::new();
        while got.len() < ids.len() {
            let message = self.recv(deadline)?;
            let id = message.get("id").and_then(Value::as_i64);
            match id {
                Some(id) if message.get("method").is_none() && ids.contains(&id) => {
                    let outcome = match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    got.insert(id, outcome);
                }
                _ => self.dispatch(message)?,
            }
        }
        Ok(ids.iter().filter_map(|id| got.remove(id)).collect())
    }

    /// Sends a request; a JSON-RPC error fails the test.
    pub fn request(&mut self, method: &str, params: Value) -> Res<Value> {
        self.request_raw(method, params)?.map_err(|e| format!("{method} failed: {e}"))
    }

    /// The next message from the server, whatever it is (not dispatched).
    pub fn next_message(&mut self) -> Res<Value> {
        self.recv(Instant::now() + TIMEOUT)
    }

    fn recv(&mut self, deadline: Instant) -> Res<Value> {
        let left = deadline.saturating_duration_since(Instant::now());
        match self.rx.recv_timeout(left) {
            Ok(message) => Ok(message),
            Err(RecvTimeoutError::Timeout) => Err("timed out waiting for the server".into()),
            Err(RecvTimeoutError::Disconnected) => Err("the server closed stdout (crashed?)".into()),
        }
    }

    /// Handles one message taken with [`Sidecar::next_message`] as the waits do: a notification
    /// is kept, a server request is answered (permission requests from `permission_replies`).
    pub fn dispatch(&mut self, message: Value) -> Res<()> {
        let Some(method) = message.get("method").and_then(Value::as_str).map(str::to_owned) else {
            return Ok(());
        };
        let Some(id) = message.get("id").cloned() else {
            self.notifications.push(message);
            return Ok(());
        };
        self.server_requests.push(message.clone());
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let reply = match method.as_str() {
            "tandem/session/requestPermission" => match self.permission_replies.pop_front() {
                Some(PermissionReply::Outcome(outcome)) => {
                    json!({ "jsonrpc": "2.0", "id": id, "result": { "outcome": outcome } })
                }
                Some(PermissionReply::CancelSession) => {
                    let session = params["sessionId"].clone();
                    return self.notify("tandem/session/cancel", json!({ "sessionId": session }));
                }
                None => {
                    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32603, "message": "the test scripted no answer" } })
                }
            },
            "tandem/session/askUser" => match self.ask_replies.pop_front() {
                Some(result) => json!({ "jsonrpc": "2.0", "id": id, "result": result }),
                None => {
                    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "method not found" } })
                }
            },
            "workspace/applyEdit" => {
                let applied = self.apply_answers.pop_front().unwrap_or(true) && self.apply_workspace_edit(&params)?;
                json!({ "jsonrpc": "2.0", "id": id, "result": { "applied": applied } })
            }
            "tandem/document/save" => match self.save_answer {
                SaveAnswer::Unsupported => {
                    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": -32601, "message": "method not found" } })
                }
                SaveAnswer::Refuse => json!({ "jsonrpc": "2.0", "id": id, "result": { "saved": false } }),
                SaveAnswer::Save => {
                    let uri = params["uri"].as_str().unwrap_or_default().to_owned();
                    let text = self.docs.get(&uri).map(|d| d.text.clone()).ok_or("save of a closed doc")?;
                    std::fs::write(uri.trim_start_matches("file://"), text).map_err(|e| e.to_string())?;
                    self.notify("textDocument/didSave", json!({ "textDocument": { "uri": uri } }))?;
                    json!({ "jsonrpc": "2.0", "id": id, "result": { "saved": true } })
                }
            },
            _ => json!({ "jsonrpc": "2.0", "id": id, "result": null }),
        };
        self.send(&reply)
    }

    fn apply_workspace_edit(&mut self, params: &Value) -> Res<bool> {
        let changes = params["edit"]["documentChanges"].as_array().cloned().unwrap_or_default();
        for change in changes {
            let uri = change["textDocument"]["uri"].as_str().unwrap_or_default().to_owned();
            let version = change["textDocument"]["version"].as_i64();
            let Some(doc) = self.docs.get(&uri).cloned() else { return Ok(false) };
            if version.is_some_and(|v| v != i64::from(doc.version)) {
                return Ok(false);
            }
            let mut text = doc.text.clone();
            let mut content_changes = Vec::new();
            for edit in change["edits"].as_array().cloned().unwrap_or_default() {
                let range = &edit["range"];
                let pos = |p: &Value| (p["line"].as_u64().unwrap_or(0), p["character"].as_u64().unwrap_or(0));
                let (sl, sc) = pos(&range["start"]);
                let (el, ec) = pos(&range["end"]);
                let (start, end) = (offset_of(&text, sl, sc), offset_of(&text, el, ec));
                let new_text = edit["newText"].as_str().unwrap_or_default();
                text.replace_range(start..end, new_text);
                content_changes.push(json!({ "range": range, "text": new_text }));
            }
            let version = doc.version + 1;
            self.docs.insert(uri.clone(), Doc { version, text });
            self.notify(
                "textDocument/didChange",
                json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": content_changes }),
            )?;
        }
        Ok(true)
    }

    /// The `file://` URI of a path under the root.
    pub fn uri(&self, relative: &str) -> String {
        format!("file://{}", self.root.join(relative).display())
    }

    /// Opens a document with the given (possibly unsaved) text.
    pub fn open(&mut self, relative: &str, text: &str) -> Res<()> {
        let uri = self.uri(relative);
        self.docs.insert(uri.clone(), Doc { version: 1, text: text.to_owned() });
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "plaintext", "version": 1, "text": text } }),
        )
    }

    /// Types: replaces a range (UTF-16 positions) in an open document, as an editor would.
    pub fn type_change(&mut self, relative: &str, start: (u64, u64), end: (u64, u64), new_text: &str) -> Res<()> {
        let uri = self.uri(relative);
        let doc = self.docs.get_mut(&uri).ok_or("not open")?;
        let (s, e) = (offset_of(&doc.text, start.0, start.1), offset_of(&doc.text, end.0, end.1));
        doc.text.replace_range(s..e, new_text);
        doc.version += 1;
        let version = doc.version;
        self.notify(
            "textDocument/didChange",
            json!({ "textDocument": { "uri": uri, "version": version }, "contentChanges": [{
                "range": { "start": { "line": start.0, "character": start.1 }, "end": { "line": end.0, "character": end.1 } },
                "text": new_text }] }),
        )
    }

    /// `tandem/tools/call`.
    pub fn call(&mut self, name: &str, arguments: Value) -> Res<Value> {
        self.request("tandem/tools/call", json!({ "name": name, "arguments": arguments }))
    }

    /// `tandem/tools/call` on behalf of an agent session.
    pub fn call_in(&mut self, session: &str, name: &str, arguments: Value) -> Res<Value> {
        self.request("tandem/tools/call", json!({ "name": name, "arguments": arguments, "sessionId": session }))
    }

    /// `shutdown` + `exit`, then waits for the process.
    pub fn shutdown(mut self) -> Res<std::process::ExitStatus> {
        self.request("shutdown", Value::Null)?;
        self.notify("exit", Value::Null)?;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().map_err(|e| e.to_string())? {
                return Ok(status);
            }
            if Instant::now() > deadline {
                self.child.kill().ok();
                return Err("the server did not exit after `exit`".into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Sidecar {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.child.kill().ok();
            self.child.wait().ok();
        }
    }
}

impl Sidecar {
    /// Writes raw bytes (for malformed-input tests).
    pub fn send_raw(&mut self, bytes: &[u8]) -> Res<()> {
        self.stdin.write_all(bytes).map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())
    }
}

/// `tandem <args>` (`mcp`, `mcp --allow-writes`) in `root` as an MCP client over stdio sees it:
/// one JSON-RPC message a line, initialized on start.
#[allow(dead_code)]
pub struct McpStdio {
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

#[allow(dead_code)]
impl McpStdio {
    /// Starts it and goes through `initialize` and `notifications/initialized`.
    pub fn start(root: &Path, args: &[&str]) -> Res<Self> {
        let mut child = Command::new(tandem_bin())
            .args(args)
            .current_dir(root)
            .env_remove("TANDEM_PROFILE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdin = child.stdin.take().ok_or("stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("stdout")?);
        let mut mcp = Self { child, stdin, stdout };
        mcp.send(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}))?;
        mcp.read()?;
        mcp.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(mcp)
    }

    pub fn send(&mut self, message: Value) -> Res<()> {
        writeln!(self.stdin, "{message}").and_then(|()| self.stdin.flush()).map_err(|e| e.to_string())
    }

    pub fn read(&mut self) -> Res<Value> {
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| e.to_string())?;
        serde_json::from_str(&line).map_err(|e| format!("{e}: {line}"))
    }

    /// The answer to request `id` (messages before it are passed over).
    pub fn answer(&mut self, id: i64) -> Res<Value> {
        loop {
            let message = self.read()?;
            if message["id"] == json!(id) {
                return Ok(message);
            }
        }
    }

    /// Closes its stdin and waits for it to end.
    pub fn close(self) -> Res<()> {
        let Self { mut child, stdin, .. } = self;
        drop(stdin);
        child.wait().map_err(|e| e.to_string())?;
        Ok(())
    }
}
