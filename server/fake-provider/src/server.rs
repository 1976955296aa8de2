//! A minimal HTTP/1.1 server: one request per connection, responses closed after sending
//! (`connection: close`), event streams in chunked transfer encoding so a cut-off stream is
//! visible to the client as such.

use std::sync::{Arc, PoisonError};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::sleep;
use tokio_util::sync::CancellationToken;

use crate::turn::{Action, Format, Turn, context_error, error_body, frames};
use crate::{ReceivedRequest, Shared};

/// Largest request head and body accepted.
const HEAD_LIMIT: usize = 64 * 1024;
const BODY_LIMIT: usize = 64 * 1024 * 1024;

/// Runs the server on this thread until `shutdown`.
pub(crate) fn run(listener: std::net::TcpListener, shared: Arc<Shared>, shutdown: CancellationToken) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("fake provider: no runtime: {error}");
            return;
        }
    };
    runtime.block_on(async move {
        let listener = match TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(error) => {
                eprintln!("fake provider: listener: {error}");
                return;
            }
        };
        let mut serial = 0;
        loop {
            let stream = tokio::select! {
                () = shutdown.cancelled() => return,
                accepted = listener.accept() => match accepted {
                    Ok((stream, _)) => stream,
                    Err(_) => continue,
                },
            };
            serial += 1;
            let (shared, shutdown) = (Arc::clone(&shared), shutdown.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = shutdown.cancelled() => {}
                    () = serve(stream, &shared, serial) => {}
                }
            });
        }
    });
}

/// `GET …/models`: the listed models, or 404 when none were set.
async fn serve_models(stream: &mut TcpStream, shared: &Shared) {
    let models = shared.models.lock().unwrap_or_else(PoisonError::into_inner).clone();
    let Some(models) = models else {
        write_plain(stream, 404, &[], "fake provider: no model list (FakeProvider::list_models)").await;
        return;
    };
    let data: Vec<Value> = models
        .iter()
        .map(|id| serde_json::json!({ "id": id, "object": "model", "created": 0, "owned_by": "fake" }))
        .collect();
    let body = serde_json::json!({ "object": "list", "data": data }).to_string();
    write_response(stream, 200, "application/json", &[], body.as_bytes()).await;
}

/// A parsed request.
struct Incoming {
    path: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

async fn serve(mut stream: TcpStream, shared: &Shared, serial: usize) {
    let Some(request) = read_request(&mut stream).await else { return };
    // The moment the whole request is in: what follows is the fake provider's own work.
    let received_at = std::time::Instant::now();
    if request.path.ends_with("/models") {
        serve_models(&mut stream, shared).await;
        return;
    }
    let body = serde_json::from_slice::<Value>(&request.body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&request.body).into_owned()));
    let model = body.get("model").and_then(Value::as_str).unwrap_or("fake-model").to_owned();
    let window = *shared.window.lock().unwrap_or_else(PoisonError::into_inner);
    let tokens = window.map(|w| (request.body.len() as f64 / w.bytes_per_token).ceil() as u64);
    let index = {
        let mut requests = shared.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.push(ReceivedRequest {
            path: request.path.clone(),
            headers: request.headers,
            body,
            received_at,
            answered_at: None,
        });
        requests.len() - 1
    };
    let format = if request.path.ends_with("/chat/completions") {
        Format::OpenAi
    } else if request.path.ends_with("/messages") {
        Format::Anthropic
    } else {
        let message = format!("fake provider: no endpoint {}; use …/chat/completions or …/messages", request.path);
        write_plain(&mut stream, 404, &[], &message).await;
        return;
    };
    // A malformed image is refused as the provider refuses it.
    let body = shared.requests.lock().unwrap_or_else(PoisonError::into_inner).get(index).map(|r| r.body.clone());
    if let Some(Err(problem)) = body.map(|body| crate::images::check(format, &body)) {
        let body =
            serde_json::json!({"type": "error", "error": {"type": "invalid_request_error", "message": problem.0}});
        write_response(&mut stream, 400, "application/json", &[], body.to_string().as_bytes()).await;
        return;
    }
    if let (Some(tokens), Some(limit)) = (tokens, window.and_then(|w| w.tokens))
        && tokens > limit
    {
        let body = context_error(format, tokens, limit);
        write_response(&mut stream, 400, "application/json", &[], body.as_bytes()).await;
        return;
    }
    let standing = {
        let body = shared.requests.lock().unwrap_or_else(PoisonError::into_inner).get(index).map(|r| r.body.clone());
        let rules = shared.rules.lock().unwrap_or_else(PoisonError::into_inner);
        body.and_then(|body| rules.iter().find(|(rule, _)| (rule.0)(&body)).map(|(_, turn)| turn.clone()))
    };
    let turn = standing.or_else(|| shared.script.lock().unwrap_or_else(PoisonError::into_inner).pop_front());
    let Some(mut turn) = turn else {
        let message = format!(
            "fake provider: script exhausted (request {} to {} has no scripted turn left)",
            serial, request.path
        );
        write_plain(&mut stream, 500, &[], &message).await;
        return;
    };
    if let Some(tokens) = tokens
        && turn.usage.is_none()
    {
        turn = turn.usage(tokens, 10);
    }
    if !turn.headers_delay.is_zero() {
        sleep(turn.headers_delay).await;
    }
    match &turn.action {
        Action::Hang => {
            // Read until the client leaves; the response never comes.
            let mut sink = [0u8; 1024];
            while matches!(stream.read(&mut sink).await, Ok(n) if n > 0) {}
        }
        Action::Status { code, retry_after, body } => {
            let body = body.clone().unwrap_or_else(|| error_body(format, *code));
            let headers: Vec<(&str, &str)> = retry_after.iter().map(|value| ("retry-after", value.as_str())).collect();
            write_response(&mut stream, *code, "application/json", &headers, body.as_bytes()).await;
        }
        Action::Raw(body) => write_stream(&mut stream, &turn, vec![(body.clone(), false)]).await,
        Action::Stream => {
            let frames = frames(&turn, format, &model, serial).into_iter().map(|f| (f.text, f.content)).collect();
            write_stream(&mut stream, &turn, frames).await;
        }
    }
    if let Some(request) = shared.requests.lock().unwrap_or_else(PoisonError::into_inner).get_mut(index) {
        request.answered_at = Some(std::time::Instant::now());
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Incoming> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        if buffer.len() > HEAD_LIMIT {
            return None;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut rest = buffer.split_off(head_end + 4);
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let header = |name: &str| headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let chunked = header("transfer-encoding").is_some_and(|value| value.eq_ignore_ascii_case("chunked"));
    let body = if chunked {
        read_chunked(stream, rest).await?
    } else {
        let length: usize = header("content-length").and_then(|value| value.parse().ok()).unwrap_or(0);
        if length > BODY_LIMIT {
            return None;
        }
        rest.reserve(length.saturating_sub(rest.len()));
        while rest.len() < length {
            if stream.read_buf(&mut rest).await.ok()? == 0 {
                return None;
            }
        }
        rest.truncate(length);
        rest
    };
    Some(Incoming { path, headers, body })
}

/// Decodes a chunked request body whose first bytes are `buffer`.
async fn read_chunked(stream: &mut TcpStream, mut buffer: Vec<u8>) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        // Make sure a size line is buffered.
        let line_end = loop {
            if let Some(end) = buffer.windows(2).position(|window| window == b"\r\n") {
                break end;
            }
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 || buffer.len() > HEAD_LIMIT {
                return None;
            }
            buffer.extend_from_slice(&chunk[..n]);
        };
        let size_text = String::from_utf8_lossy(&buffer[..line_end]).into_owned();
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        if body.len() + size > BODY_LIMIT {
            return None;
        }
        let needed = line_end + 2 + size + 2;
        while buffer.len() < needed {
            let n = stream.read(&mut chunk).await.ok()?;
            if n == 0 {
                return None;
            }
            buffer.extend_from_slice(&chunk[..n]);
        }
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(&buffer[line_end + 2..line_end + 2 + size]);
        buffer.drain(..needed);
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn write_plain(stream: &mut TcpStream, code: u16, headers: &[(&str, &str)], body: &str) {
    write_response(stream, code, "text/plain; charset=utf-8", headers, body.as_bytes()).await;
}

async fn write_response(stream: &mut TcpStream, code: u16, content_type: &str, headers: &[(&str, &str)], body: &[u8]) {
    let mut head = format!(
        "HTTP/1.1 {code} {}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n",
        reason(code),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    // A client that already left is not an error for a test server.
    if stream.write_all(&bytes).await.is_ok() && stream.flush().await.is_ok() {
        stream.shutdown().await.ok();
    }
}

/// Writes a 200 event stream of `frames` (text, is-content-chunk), applying the turn's delays,
/// stall and cut-off.
async fn write_stream(stream: &mut TcpStream, turn: &Turn, frames: Vec<(String, bool)>) {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n\
                transfer-encoding: chunked\r\nconnection: close\r\n\r\n";
    if stream.write_all(head.as_bytes()).await.is_err() || stream.flush().await.is_err() {
        return;
    }
    let mut sent_content = 0;
    if interrupt(turn, sent_content).await == Some(Interrupt::Close) {
        return;
    }
    for (position, (text, is_content)) in frames.into_iter().enumerate() {
        if position > 0 && !turn.chunk_delay.is_zero() {
            sleep(turn.chunk_delay).await;
        }
        if text.is_empty() {
            continue;
        }
        let chunk = format!("{:x}\r\n{text}\r\n", text.len());
        if stream.write_all(chunk.as_bytes()).await.is_err() || stream.flush().await.is_err() {
            return;
        }
        if is_content {
            sent_content += 1;
            if interrupt(turn, sent_content).await == Some(Interrupt::Close) {
                return;
            }
        }
    }
    if stream.write_all(b"0\r\n\r\n").await.is_ok() && stream.flush().await.is_ok() {
        stream.shutdown().await.ok();
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Interrupt {
    Stalled,
    Close,
}

/// Applies the turn's stall or cut-off when `sent` content chunks have gone out.
async fn interrupt(turn: &Turn, sent: usize) -> Option<Interrupt> {
    if turn.close_after == Some(sent) {
        return Some(Interrupt::Close);
    }
    match turn.stall {
        Some((after, silence)) if after == sent => {
            sleep(silence).await;
            Some(Interrupt::Stalled)
        }
        _ => None,
    }
}
