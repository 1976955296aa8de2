//! A guard in front of the LSP transport: it re-frames stdin and makes every frame a message
//! tower-lsp-server can decode.
//!
//! Why: the transport's codec (tokio-util `FramedRead`) ends the stream after the first frame it
//! cannot decode, which would end the whole server on one malformed message. Here a body that is
//! not JSON, or not a JSON-RPC 2.0 message, becomes either a request to `$/tandem/invalidMessage`
//! with the original id (so the client gets a MethodNotFound error instead of waiting forever) or,
//! without a usable id, a notification the server ignores; both are logged.

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};

/// Frames larger than this are discarded (logged), not buffered.
const MAX_BODY_BYTES: usize = 512 * 1024 * 1024;
/// A header line longer than this is junk.
const MAX_HEADER_LINE: u64 = 8 * 1024;

/// Copies frames from `input` to `output` until either side closes.
pub async fn run(input: impl AsyncRead + Unpin, mut output: impl AsyncWrite + Unpin) {
    let mut reader = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        let mut length: Option<usize> = None;
        loop {
            line.clear();
            match (&mut reader).take(MAX_HEADER_LINE).read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
            let text = String::from_utf8_lossy(&line);
            let text = text.trim_end_matches(['\r', '\n']);
            if text.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            match text.split_once(':') {
                Some((name, value)) if name.trim().eq_ignore_ascii_case("content-length") => {
                    length = value.trim().parse().ok();
                    if length.is_none() {
                        tracing::error!("invalid Content-Length header: {text:?}");
                    }
                }
                Some(_) => {} // Content-Type and other headers
                None => tracing::error!("ignoring a line that is not an LSP header: {:?}", truncate(text)),
            }
        }
        let Some(length) = length else { continue };
        if length > MAX_BODY_BYTES {
            tracing::error!(length, "discarding a message larger than {MAX_BODY_BYTES} bytes");
            if tokio::io::copy(&mut (&mut reader).take(length as u64), &mut tokio::io::sink()).await.is_err() {
                return;
            }
            continue;
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).await.is_err() {
            return;
        }
        let body = match check(&body) {
            None => body,
            Some(replacement) => replacement.to_string().into_bytes(),
        };
        let header = format!("Content-Length: {}\r\n\r\n", body.len());
        let written = async {
            output.write_all(header.as_bytes()).await?;
            output.write_all(&body).await?;
            output.flush().await
        };
        if written.await.is_err() {
            return;
        }
    }
}

fn truncate(text: &str) -> String {
    text.chars().take(80).collect()
}

fn valid_id(id: &Value) -> bool {
    id.is_i64() || id.is_string() || id.is_null()
}

/// `None` when `body` is a well-formed JSON-RPC 2.0 message; else its replacement.
fn check(body: &[u8]) -> Option<Value> {
    let value: Value = match serde_json::from_slice(body) {
        Ok(value) => value,
        Err(err) => {
            tracing::error!("message body is not JSON ({err}): {:?}", truncate(&String::from_utf8_lossy(body)));
            return Some(replacement(None, &format!("parse error: {err}")));
        }
    };
    let Value::Object(message) = &value else {
        tracing::error!("message is not a JSON object (batches are not part of LSP)");
        return Some(replacement(None, "not a JSON object"));
    };
    let problem = problem(message);
    let problem = problem?;
    tracing::error!("invalid JSON-RPC message ({problem}): {}", truncate(&value.to_string()));
    let id = message.get("id").filter(|id| (id.is_i64() || id.is_string()) && message.contains_key("method")).cloned();
    Some(replacement(id, problem))
}

fn problem(message: &Map<String, Value>) -> Option<&'static str> {
    if message.get("jsonrpc") != Some(&json!("2.0")) {
        return Some("`jsonrpc` must be \"2.0\"");
    }
    if message.get("id").is_some_and(|id| !valid_id(id)) {
        return Some("`id` must be an integer or a string");
    }
    match message.get("method") {
        Some(Value::String(_)) => None,
        Some(_) => Some("`method` must be a string"),
        None => {
            let id_ok = message.contains_key("id");
            let error_ok = message.get("error").is_none_or(|e| {
                e.get("code").is_some_and(Value::is_i64) && e.get("message").is_some_and(Value::is_string)
            });
            let has_outcome = message.contains_key("result") || message.contains_key("error");
            if id_ok && error_ok && has_outcome {
                None
            } else {
                Some("neither a request, a notification nor a response")
            }
        }
    }
}

fn replacement(id: Option<Value>, problem: &str) -> Value {
    let mut message =
        json!({ "jsonrpc": "2.0", "method": "$/tandem/invalidMessage", "params": { "problem": problem } });
    if let Some(id) = id {
        message["id"] = id;
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_formed_messages_pass_and_others_are_replaced() {
        let pass = [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","result":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"x"}}"#,
        ];
        for body in pass {
            assert_eq!(check(body.as_bytes()), None, "{body}");
        }
        let replaced = [
            ("{not json", None),
            ("[1,2]", None),
            (r#"{"jsonrpc":"1.0","id":4,"method":"x"}"#, Some(json!(4))),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#, None),
            (r#"{"jsonrpc":"2.0","id":5,"method":7}"#, Some(json!(5))),
            (r#"{"jsonrpc":"2.0","id":6}"#, None),
        ];
        for (body, id) in replaced {
            let got = check(body.as_bytes());
            assert_eq!(got.as_ref().and_then(|m| m.get("id").cloned()), id, "{body}");
            assert_eq!(got.map(|m| m["method"].clone()), Some(json!("$/tandem/invalidMessage")), "{body}");
        }
    }

    #[tokio::test]
    async fn reframes_and_survives_junk() {
        let input = b"garbage line\r\nContent-Length: 9\r\n\r\n{not json\r\nContent-Length: 40\r\nContent-Type: x\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}".to_vec();
        let mut output = Vec::new();
        run(&input[..], &mut output).await;
        let text = String::from_utf8_lossy(&output);
        assert_eq!(text.matches("Content-Length:").count(), 2, "{text}");
        assert!(text.ends_with("{\"jsonrpc\":\"2.0\",\"method\":\"initialized\"}"), "{text}");
    }
}
