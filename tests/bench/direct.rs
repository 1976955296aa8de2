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

use crate::support::{Res, lsp_command, read_message, tandem_bin};

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

    fn send(&mut self, message: &Value) -> Res<()> {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).map_err(|e| e.to_string())?;
        self.stdin.flush().map_err(|e| e.to_string())
    }

    /// Sends a request and reads until its answer: `Ok(result)` or `Err(error)`. Notifications
    /// are skipped; a request from the server is answered with a null result.
    pub(crate) fn request(&mut self, method: &str, params: Value) -> Res<Result<Value, Value>> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }))?;
        loop {
            let message = read_message(&mut self.stdout).ok_or("the server closed stdout")?;
            match (message.get("method"), message.get("id")) {
                (None, Some(got)) if got == &json!(id) => {
                    return Ok(match message.get("error") {
                        Some(error) => Err(error.clone()),
                        None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                    });
                }
                (Some(_), Some(asked)) => {
                    let answer = json!({ "jsonrpc": "2.0", "id": asked, "result": null });
                    self.send(&answer)?;
                }
                _ => {}
            }
        }
    }

    /// `tandem/tools/call`: the tool's result.
    pub(crate) fn call(&mut self, name: &str, arguments: Value) -> Res<Value> {
        self.request("tandem/tools/call", json!({ "name": name, "arguments": arguments }))?
            .map_err(|e| format!("{name}: {e}"))
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}
