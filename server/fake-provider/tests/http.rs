//! The fake provider's HTTP over a raw socket: what a client that is not reqwest sees.

use std::time::Duration;

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn exchange(provider: &FakeProvider, request: &str) -> String {
    let mut stream = match TcpStream::connect(provider.addr()).await {
        Ok(stream) => stream,
        Err(error) => panic!("{error}"),
    };
    if let Err(error) = stream.write_all(request.as_bytes()).await {
        panic!("{error}");
    }
    let mut response = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
    assert!(matches!(read, Ok(Ok(_))), "{read:?}");
    String::from_utf8_lossy(&response).into_owned()
}

fn post(path: &str, body: &str) -> String {
    format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

#[tokio::test]
async fn openai_stream_is_chunked_sse_and_requests_are_recorded() {
    let provider = FakeProvider::start(vec![Turn::reply("hi").usage(3, 1)]).await;
    let response = exchange(&provider, &post("/v1/chat/completions", r#"{"model":"m","stream":true}"#)).await;
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("content-type: text/event-stream"), "{response}");
    assert!(response.contains("transfer-encoding: chunked"), "{response}");
    assert!(response.contains(r#""delta":{"content":"hi"}"#), "{response}");
    assert!(response.contains(r#""finish_reason":"stop""#), "{response}");
    assert!(response.contains(r#""prompt_tokens":3"#), "{response}");
    assert!(response.ends_with("data: [DONE]\n\n\r\n0\r\n\r\n"), "{response}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/v1/chat/completions");
    assert_eq!(requests[0].body, json!({"model": "m", "stream": true}));
    assert_eq!(requests[0].header("Content-Type"), Some("application/json"));
}

#[tokio::test]
async fn anthropic_stream_has_the_documented_events() {
    let provider =
        FakeProvider::start(vec![Turn::new().thinking("t").text("a").tool_call("c1", "read", json!({"p": 1}))]).await;
    let response = exchange(&provider, &post("/v1/messages", r#"{"model":"claude"}"#)).await;
    let events: Vec<&str> = response.lines().filter_map(|line| line.strip_prefix("event: ")).collect();
    assert_eq!(
        events,
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    assert!(response.contains(r#""stop_reason":"tool_use""#), "{response}");
    assert!(response.contains(r#""signature":"fake-signature""#), "{response}");
}

#[tokio::test]
async fn chunked_request_bodies_are_read() {
    let provider = FakeProvider::start(vec![Turn::status(429).retry_after(7)]).await;
    let request = "POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n\
                   5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\n\r\n";
    let response = exchange(&provider, request).await;
    assert!(response.starts_with("HTTP/1.1 429 Too Many Requests\r\n"), "{response}");
    assert!(response.contains("retry-after: 7\r\n"), "{response}");
    assert!(response.contains(r#""type":"rate_limit_error""#), "{response}");
    assert_eq!(provider.requests()[0].body, json!({"a": 1}));
}

#[tokio::test]
async fn unknown_paths_and_an_exhausted_script() {
    let provider = FakeProvider::start(vec![]).await;
    let response = exchange(&provider, &post("/v1/embeddings", "{}")).await;
    assert!(response.starts_with("HTTP/1.1 404"), "{response}");
    let response = exchange(&provider, &post("/v1/chat/completions", "not json")).await;
    assert!(response.starts_with("HTTP/1.1 500"), "{response}");
    assert!(response.contains("script exhausted"), "{response}");
    assert_eq!(provider.requests()[1].body, json!("not json"));
}

#[test]
fn works_without_an_async_runtime() {
    let provider = FakeProvider::start_blocking(vec![Turn::reply("x")]);
    provider.push(Turn::reply("y"));
    assert_eq!(provider.remaining(), 2);
    assert!(provider.base_url().starts_with("http://127.0.0.1:"));
    assert!(provider.base_url().ends_with("/v1"));
}
