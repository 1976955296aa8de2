//! A client that reads each answer on the thread that asked, as an editor's event loop does.
//! The test harness's [`crate::support::Sidecar`] reads on a thread of its own and hands each
//! message over a channel (it must answer the server's requests while a test waits), which adds
//! a thread wake-up to every round trip: fine for tests, but not part of what an editor sees. P3
//! times the round trip with this client, so that it is compared with `cat` on equal terms
//! (`cat`'s output is also read by the thread that spawned it).

use std::io::{BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};

use serde_json::{Value, json};

use crate::support::{Res, lsp_command, read_frame, tandem_bin};

pub(crate) struct Direct {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i64,
}

impl Direct {
    /// Spawns `tandem lsp` in `root` and initializes it.
    pub(crate) fn start(root: &Path) -> Res<Self> {
        let mut child = lsp_command(root, &[]).spawn().map_err(|e| format!("spawn {}: {e}", tandem_bin().display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut direct = Self { child, stdin, stdout, next_id: 1 };
        let uri = format!("file://{}", root.display());
        let params = json!({ "processId": std::process::id(), "rootUri": uri,
            "workspaceFolders": [{ "uri": uri, "name": "ws" }], "capabilities": {} });
        direct.request("initialize", params)?.map_err(|e| format!("initialize: {e}"))?;
        direct.send(&json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }))?;
        Ok(direct)
    }

    /// The sidecar's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// One message, in one write (as editors send a frame): a `write!` straight to the pipe
    /// would send the header's pieces and the body as separate writes, each waking the server.
    fn send(&mut self, message: &Value) -> Res<()> {
        let body = message.to_string();
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.stdin.write_all(frame.as_bytes()).map_err(|e| e.to_string())
    }

    /// Sends a request and reads until its answer: `Ok(result)` or `Err(error)`. Notifications
    /// are skipped; a request from the server is answered with a null result.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Res<Result<Value, Value>> {
        Ok(self.timed_request(method, params)?.1)
    }

    /// [`Self::request`], with the round trip's time: from just before the request is written to
    /// the last byte of its answer read, as a spawned `cat` is timed from the spawn to the last
    /// byte of its output. Parsing the messages is the client's work after the trip, left out
    /// (so is parsing a notification that came first).
    pub(crate) fn timed_request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Res<(std::time::Duration, Result<Value, Value>)> {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        let start = std::time::Instant::now();
        let mut parsing = std::time::Duration::ZERO;
        self.send(&request)?;
        loop {
            let frame = read_frame(&mut self.stdout).ok_or("the server closed stdout")?;
            let read_at = std::time::Instant::now();
            let message: Value = serde_json::from_slice(&frame).map_err(|e| format!("bad frame: {e}"))?;
            match (message.get("method"), message.get("id")) {
                (None, Some(got)) if got == &json!(id) => {
                    let outcome = match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    };
                    return Ok(((read_at - start).saturating_sub(parsing), outcome));
                }
                (Some(_), Some(asked)) => {
                    let answer = json!({ "jsonrpc": "2.0", "id": asked, "result": null });
                    self.send(&answer)?;
                }
                _ => {}
            }
            parsing += read_at.elapsed();
        }
    }

    /// `tandem/tools/call`: the tool's result.
    pub(crate) fn call(&mut self, name: &str, arguments: Value) -> Res<Value> {
        Ok(self.timed_call(name, arguments)?.1)
    }

    /// [`Self::call`], timed as [`Self::timed_request`] times it.
    pub(crate) fn timed_call(&mut self, name: &str, arguments: Value) -> Res<(std::time::Duration, Value)> {
        let (took, outcome) =
            self.timed_request("tandem/tools/call", json!({ "name": name, "arguments": arguments }))?;
        Ok((took, outcome.map_err(|e| format!("{name}: {e}"))?))
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
