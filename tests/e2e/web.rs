//! `webfetch` end to end: a scripted session calls it on a local HTTP server serving a real page
//! (tests/fixtures/web), and the provider receives the page as Markdown in the tool result.
//! Loopback is allowed for the sidecar with TANDEM_WEBFETCH_ALLOW_PRIVATE=1; without it the same
//! call is refused.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;

use serde_json::json;
use tandem_fake_provider::{FakeProvider, Turn};

use crate::support::{Res, Sidecar};

/// Serves `body` as `text/html` to the next `count` connections on 127.0.0.1, then stops.
fn serve_page(body: String, count: usize) -> Res<String> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let url = format!("http://{}/docs/what-is-rustdoc.html", listener.local_addr().map_err(|e| e.to_string())?);
    std::thread::spawn(move || {
        for stream in listener.incoming().take(count).flatten() {
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
                line.clear();
            }
            let head = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let mut stream = &stream;
            stream.write_all(head.as_bytes()).ok();
            stream.write_all(body.as_bytes()).ok();
        }
    });
    Ok(url)
}

fn sidecar(root: &Path, provider: &FakeProvider, allow_private: &str) -> Res<Sidecar> {
    std::fs::create_dir_all(root.join(".tandem")).map_err(|e| e.to_string())?;
    std::fs::write(root.join(".tandem/config.toml"), "[tools]\nprofile = \"full\"\n[provider]\nmax_retries = 0\n")
        .map_err(|e| e.to_string())?;
    let base = provider.base_url();
    let mut sidecar = Sidecar::spawn(
        root,
        &[
            ("TANDEM_PROVIDER", "openai"),
            ("TANDEM_BASE_URL", &base),
            ("TANDEM_MODEL", "scripted"),
            ("TANDEM_MODE", "default"),
            ("TANDEM_WEBFETCH_ALLOW_PRIVATE", allow_private),
        ],
    )?;
    sidecar.initialize(json!({}))?;
    Ok(sidecar)
}

/// Runs one prompt whose model calls webfetch on `url`; returns the tool result the provider got.
fn fetch_through_session(allow_private: &str, url: &str) -> Res<String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let provider = FakeProvider::start_blocking(vec![
        Turn::new().tool_call("call_1", "webfetch", json!({ "url": url, "prompt": "How is rustdoc run?" })),
        Turn::reply("Read it."),
    ]);
    let mut sidecar = sidecar(dir.path(), &provider, allow_private)?;
    let session = sidecar.request("tandem/session/new", json!({}))?;
    let session = session["sessionId"].as_str().ok_or("no sessionId")?.to_owned();
    let result = sidecar.request(
        "tandem/session/prompt",
        json!({ "sessionId": session, "prompt": [{ "type": "text", "text": "read the rustdoc intro" }] }),
    )?;
    if result["stopReason"] != "end_turn" {
        return Err(format!("turn ended with {result}"));
    }
    let requests = provider.requests();
    let last = requests.last().ok_or("no provider request")?;
    let tool = last.body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().find(|m| m["role"] == "tool"))
        .and_then(|m| m["content"].as_str())
        .ok_or_else(|| format!("no tool result in {}", last.body))?;
    sidecar.shutdown()?;
    Ok(tool.to_owned())
}

#[test]
fn a_session_fetches_a_local_page_as_markdown_when_loopback_is_allowed() -> Res<()> {
    let page =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/web/what-is-rustdoc.html"))
            .map_err(|e| e.to_string())?;
    let url = serve_page(page, 1)?;
    let result = fetch_through_session("1", &url)?;
    assert!(result.contains(&format!("URL: {url}\nTitle: What is rustdoc? - The rustdoc book\n")), "{result}");
    assert!(result.contains("Prompt: How is rustdoc run?"), "{result}");
    assert!(result.contains("# [What is rustdoc?](#what-is-rustdoc)"), "{result}");
    assert!(result.contains("```bash\n$ cargo new docs --lib\n$ cd docs\n```"), "{result}");
    assert!(!result.contains("<script") && !result.contains("<div"), "{result}");

    // The same call without the switch is refused before any connection is made.
    let refused = fetch_through_session("0", &url)?;
    assert!(
        refused.contains("is a loopback address") && refused.contains("TANDEM_WEBFETCH_ALLOW_PRIVATE=1"),
        "{refused}"
    );
    Ok(())
}
