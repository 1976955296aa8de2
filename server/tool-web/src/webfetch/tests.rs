//! `webfetch` against a local HTTP server serving real pages (mdBook output of the Rust
//! documentation, in `tests/fixtures/web/`), and its conversion and truncation on their own.

use std::sync::Arc;

use expect_test::expect;
use serde_json::{Value, json};
use tandem_text::BufferCache;
use tandem_tool_api::Workspace;

use super::*;
use crate::test_server::{Reply, TestServer};

fn fixture(name: &str) -> String {
    let path = format!("{}/../../tests/fixtures/web/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let workspace = Workspace::new(dir.path(), &[]).unwrap_or_else(|e| panic!("{e}"));
    (dir, ToolContext::new(Arc::new(workspace), Arc::new(BufferCache::new())))
}

/// A webfetch that may reach `server` (and only it) on the loopback interface.
fn allowed(server: &TestServer) -> WebFetch {
    let addr = server.url("").trim_start_matches("http://").parse().unwrap_or_else(|e| panic!("{e}"));
    WebFetch::new(Access { allow_private: false, exceptions: vec![addr] })
}

async fn call(tool: &WebFetch, args: Value) -> Result<ToolOutput, String> {
    let (_dir, ctx) = ctx();
    let args = tandem_tool_api::parse_args(args).map_err(|e| e.message)?;
    tool.run(args, ctx).await.map_err(|e| e.message)
}

fn server() -> TestServer {
    TestServer::start(vec![
        ("/rustdoc", Reply::new(200, "text/html; charset=utf-8", fixture("what-is-rustdoc.html"))),
        ("/book", Reply::new(200, "text/html", fixture("book-installation.html"))),
        ("/data.json", Reply::new(200, "application/json", r#"{"name":"tandem","ok":true}"#)),
        ("/plain", Reply::new(200, "", "just text\nwithout a declared type\n")),
        ("/logo.png", Reply::new(200, "image/png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec())),
        ("/big.txt", Reply::new(200, "text/plain", "0123456789\n".repeat(30_000))),
        ("/gone", Reply::new(404, "text/html", "<html><body><h1>Not Found</h1><p>No such page.</p></body></html>")),
        ("/moved", Reply::redirect(301, "/rustdoc")),
        ("/to-metadata", Reply::redirect(302, "http://169.254.169.254/latest/meta-data/")),
        ("/to-localhost", Reply::redirect(307, "http://localhost:1/admin")),
        ("/to-file", Reply::redirect(302, "file:///etc/passwd")),
        ("/loop", Reply::redirect(302, "/loop")),
    ])
}

#[test]
fn real_page_converts_to_markdown() {
    let markdown = html_to_markdown(&fixture("what-is-rustdoc.html")).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(!markdown.contains("<script") && !markdown.contains("<style"), "{markdown}");
    assert!(!markdown.contains("window.playground"), "scripts leak into the text");
    let head: String = markdown.lines().take(14).collect::<Vec<_>>().join("\n");
    expect![[r#"
        # [What is rustdoc?](#what-is-rustdoc)

        The standard Rust distribution ships with a tool called `rustdoc`. Its job is to generate documentation for Rust projects. On a fundamental level, Rustdoc takes as an argument either a crate root or a Markdown file, and produces HTML, CSS, and JavaScript.

        ## [Basic usage](#basic-usage)

        Let’s give it a try! Create a new project with Cargo:

        ```bash
        $ cargo new docs --lib
        $ cd docs
        ```

        In `src/lib.rs`, Cargo has generated some sample code. Delete it and replace it with this:"#]]
    .assert_eq(&head);
    assert_eq!(html_title(&fixture("what-is-rustdoc.html")).as_deref(), Some("What is rustdoc? - The rustdoc book"));
}

#[test]
fn long_content_is_truncated_with_a_note() {
    let body = "line of text that repeats\n".repeat(8_000).into_bytes();
    let fetched = Fetched {
        url: Url::parse("https://example.com/long.txt").unwrap_or_else(|e| panic!("{e}")),
        redirects: Vec::new(),
        status: 200,
        content_type: "text/plain".into(),
        body,
        cut_at_max: false,
    };
    let out = render(fetched, Some("find the end"), DEFAULT_MAX_BYTES).unwrap_or_else(|e| panic!("{}", e.message));
    assert!(out.output.len() < MAX_OUTPUT_BYTES + 2048, "{}", out.output.len());
    assert!(
        out.output.contains("[Truncated: showing the first 100.0 KB of 203.1 KB of content."),
        "{}",
        &out.output[out.output.len() - 400..]
    );
    assert!(out.output.contains("Prompt: find the end"));
    assert_eq!(out.metadata.get("truncated"), Some(&json!(true)));
    assert_eq!(out.title, "https://example.com/long.txt");
}

#[test]
fn kinds_from_headers_and_bytes() {
    assert_eq!(kind_of("text/html; charset=utf-8"), Kind::Html);
    assert_eq!(kind_of("application/vnd.api+json"), Kind::Text);
    assert_eq!(kind_of("application/pdf"), Kind::Binary);
    assert_eq!(kind_of(""), Kind::Unknown);
    assert_eq!(sniff(b"<!DOCTYPE html><html></html>"), Kind::Html);
    assert_eq!(sniff(b"plain words"), Kind::Text);
    assert_eq!(sniff(b"\x89PNG\r\n\x1a\n\0\0"), Kind::Binary);
    assert_eq!(sniff("caf\u{e9}".as_bytes()[..4].as_ref()), Kind::Text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetches_a_real_page_from_a_local_server_when_allowed() {
    let server = server();
    let tool = allowed(&server);
    let out = call(&tool, json!({ "url": server.url("/rustdoc"), "prompt": "What does rustdoc generate?" }))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.title, "What is rustdoc? - The rustdoc book");
    let text = &out.output;
    assert!(
        text.starts_with(&format!("URL: {}\nTitle: What is rustdoc? - The rustdoc book\n", server.url("/rustdoc"))),
        "{text}"
    );
    assert!(text.contains("Prompt: What does rustdoc generate?\n(Answer it from the content below.)"), "{text}");
    assert!(text.contains("\n# [What is rustdoc?](#what-is-rustdoc)\n"), "{text}");
    assert!(text.contains("```"), "code blocks are kept: {text}");
    assert!(!text.contains("<div"), "{text}");

    let moved = call(&tool, json!({ "url": server.url("/moved") })).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(moved.output.contains(&format!("Redirected from: {}", server.url("/moved"))), "{}", moved.output);
    assert_eq!(moved.metadata.get("redirects"), Some(&json!(1)));

    let data = call(&tool, json!({ "url": server.url("/data.json") })).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(data.output.ends_with("---\n\n{\"name\":\"tandem\",\"ok\":true}\n"), "{}", data.output);
    let plain = call(&tool, json!({ "url": server.url("/plain") })).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(plain.output.contains("Content: undeclared type, 34 bytes, as served"), "{}", plain.output);

    let cut = call(&tool, json!({ "url": server.url("/big.txt"), "max_bytes": 1000 }))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(cut.output.contains("[The download stopped at max_bytes (1000 bytes)"), "{}", cut.output);

    let book = call(&tool, json!({ "url": server.url("/book") })).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(book.output.contains("rustup"), "{}", book.output);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_say_what_to_do() {
    let server = server();
    let tool = allowed(&server);
    let error = |path: &'static str| {
        let tool = &tool;
        let url = server.url(path);
        async move { call(tool, json!({ "url": url })).await.err().unwrap_or_default() }
    };
    let png = error("/logo.png").await;
    assert!(png.contains("is binary content (image/png, 16 bytes); webfetch returns text and HTML only"), "{png}");
    let gone = error("/gone").await;
    assert!(
        gone.contains("answered HTTP 404 Not Found: the page does not exist") && gone.contains("No such page."),
        "{gone}"
    );
    let metadata = error("/to-metadata").await;
    assert!(metadata.contains("`169.254.169.254` is a cloud metadata service address"), "{metadata}");
    let localhost = error("/to-localhost").await;
    assert!(localhost.contains("`localhost` resolves to 127.0.0.1, a loopback address"), "{localhost}");
    let file = error("/to-file").await;
    assert!(file.contains("redirected to file:///etc/passwd, which was not followed"), "{file}");
    let looped = error("/loop").await;
    assert!(looped.contains("redirected more than 5 times"), "{looped}");
    // Six requests: the first and five redirects.
    assert_eq!(server.seen().iter().filter(|s| s.target == "/loop").count(), 6);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn loopback_is_refused_by_default_and_allowed_by_the_switch() {
    let server = server();
    let url = server.url("/rustdoc");
    let refused = call(&WebFetch::new(Access::default()), json!({ "url": url })).await.err().unwrap_or_default();
    assert!(refused.contains("is a loopback address"), "{refused}");
    assert!(refused.contains("TANDEM_WEBFETCH_ALLOW_PRIVATE=1"), "{refused}");
    assert!(server.seen().is_empty(), "nothing may reach the server");
    let open = WebFetch::new(Access { allow_private: true, exceptions: Vec::new() });
    assert!(call(&open, json!({ "url": url })).await.is_ok());
}
