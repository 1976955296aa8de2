//! `websearch`: each backend's response parsed from its documented JSON shape, one backend end to
//! end against a local server, and the error when nothing is configured.

use std::sync::Arc;

use serde_json::json;
use tandem_text::BufferCache;
use tandem_tool_api::{Workspace, typed};

use super::*;
use crate::test_server::{Reply, TestServer};

fn ctx() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let workspace = Workspace::new(dir.path(), &[]).unwrap_or_else(|e| panic!("{e}"));
    (dir, ToolContext::new(Arc::new(workspace), Arc::new(BufferCache::new())))
}

fn key(value: &str) -> String {
    value.to_owned()
}

/// Brave Search API `GET /res/v1/web/search` (abridged from its documented response).
const BRAVE: &str = r#"{
  "type": "search",
  "query": { "original": "tokio select", "more_results_available": true },
  "mixed": { "type": "mixed", "main": [{ "type": "web", "index": 0, "all": false }] },
  "web": {
    "type": "search",
    "results": [
      { "type": "search_result", "title": "select in <strong>tokio</strong> - Rust", "url": "https://docs.rs/tokio/latest/tokio/macro.select.html",
        "is_source_local": false, "description": "Waits on multiple concurrent branches, returning when the <strong>first</strong> branch completes &amp; cancelling the rest.",
        "profile": { "name": "Docs.rs" }, "language": "en", "family_friendly": true },
      { "type": "search_result", "title": "Select | Tokio", "url": "https://tokio.rs/tokio/tutorial/select",
        "description": "So far, when we wanted to add concurrency to the system, we spawned a new task.", "age": "March 3, 2024" }
    ],
    "family_friendly": true
  }
}"#;

/// Tavily `POST /search`.
const TAVILY: &str = r#"{
  "query": "tokio select",
  "follow_up_questions": null,
  "answer": null,
  "images": [],
  "results": [
    { "title": "Select | Tokio - An asynchronous Rust runtime", "url": "https://tokio.rs/tokio/tutorial/select",
      "content": "The tokio::select! macro allows waiting on multiple async computations.", "score": 0.92, "raw_content": null }
  ],
  "response_time": 1.09
}"#;

/// SerpAPI `GET /search.json?engine=google`.
const SERPAPI: &str = r#"{
  "search_metadata": { "id": "65f1", "status": "Success", "json_endpoint": "https://serpapi.com/searches/x.json" },
  "search_parameters": { "engine": "google", "q": "tokio select" },
  "search_information": { "total_results": 123000, "time_taken_displayed": 0.31 },
  "organic_results": [
    { "position": 1, "title": "select in tokio - Rust", "link": "https://docs.rs/tokio/latest/tokio/macro.select.html",
      "displayed_link": "https://docs.rs › tokio › macro.select", "snippet": "Waits on multiple concurrent branches.", "source": "Docs.rs" },
    { "position": 2, "title": "Select | Tokio", "link": "https://tokio.rs/tokio/tutorial/select", "snippet": "" }
  ]
}"#;

/// SearXNG `GET /search?format=json`.
const SEARXNG: &str = r#"{
  "query": "tokio select",
  "number_of_results": 0,
  "results": [
    { "url": "https://tokio.rs/tokio/tutorial/select", "title": "Select | Tokio", "content": "Concurrency with select!",
      "engine": "duckduckgo", "parsed_url": ["https", "tokio.rs", "/tokio/tutorial/select", "", "", ""], "engines": ["duckduckgo", "brave"], "positions": [1, 2], "score": 4.0, "category": "general" }
  ],
  "answers": [], "corrections": [], "infoboxes": [], "suggestions": ["tokio select loop"], "unresponsive_engines": []
}"#;

fn parsed(backend: Backend, body: &str) -> Vec<(String, String, String)> {
    let body: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}"));
    parse(&backend, &body)
        .unwrap_or_else(|e| panic!("{}", e.message))
        .into_iter()
        .map(|h| (h.title, h.url, h.snippet))
        .collect()
}

#[test]
fn each_backend_response_is_parsed() {
    let brave = parsed(Backend::Brave { key: key("k"), endpoint: String::new() }, BRAVE);
    assert_eq!(brave.len(), 2);
    assert_eq!(brave[0].0, "select in tokio - Rust");
    assert_eq!(
        brave[0].2,
        "Waits on multiple concurrent branches, returning when the first branch completes & cancelling the rest."
    );
    let tavily = parsed(Backend::Tavily { key: key("k"), endpoint: String::new() }, TAVILY);
    assert_eq!(
        tavily,
        [(
            "Select | Tokio - An asynchronous Rust runtime".to_owned(),
            "https://tokio.rs/tokio/tutorial/select".to_owned(),
            "The tokio::select! macro allows waiting on multiple async computations.".to_owned()
        )]
    );
    let serp = parsed(Backend::SerpApi { key: key("k"), endpoint: String::new() }, SERPAPI);
    assert_eq!(serp[0].1, "https://docs.rs/tokio/latest/tokio/macro.select.html");
    assert_eq!(serp[1].2, "");
    let searx = parsed(Backend::Searxng { base: String::new() }, SEARXNG);
    assert_eq!(searx[0].2, "Concurrency with select!");
    let error: Value =
        json!({ "error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key" });
    let message = parse(&Backend::SerpApi { key: key("k"), endpoint: String::new() }, &error).err().map(|e| e.message);
    assert_eq!(
        message.as_deref(),
        Some(
            "SerpAPI reported an error: Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"
        )
    );
}

#[test]
fn backends_are_chosen_in_order() {
    let pick = |vars: &[(&str, &str)]| WebSearch::from_vars(vars).backend().map(|b| b.name());
    assert_eq!(pick(&[]), None);
    assert_eq!(pick(&[("TANDEM_SEARXNG_URL", "http://127.0.0.1:8888"), ("SERPAPI_API_KEY", "s")]), Some("SerpAPI"));
    assert_eq!(pick(&[("TAVILY_API_KEY", "t"), ("BRAVE_SEARCH_API_KEY", "b")]), Some("Brave Search"));
    assert_eq!(pick(&[("BRAVE_API_KEY", "  "), ("TAVILY_API_KEY", "t")]), Some("Tavily"));
    assert_eq!(pick(&[("TANDEM_SEARXNG_URL", "http://127.0.0.1:8888")]), Some("SearXNG"));
    let brave = WebSearch::from_vars(&[("BRAVE_API_KEY", "b"), ("TANDEM_BRAVE_URL", "http://127.0.0.1:1/x")]).backend();
    assert_eq!(brave, Some(Backend::Brave { key: key("b"), endpoint: "http://127.0.0.1:1/x".into() }));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn none_configured_names_the_variables() {
    let (_dir, ctx) = ctx();
    let error = typed(WebSearch::from_vars(&[])).call(json!({ "query": "rust" }), ctx).await.err().map(|e| e.message);
    let error = error.unwrap_or_default();
    for variable in ["BRAVE_API_KEY", "BRAVE_SEARCH_API_KEY", "TAVILY_API_KEY", "SERPAPI_API_KEY", "TANDEM_SEARXNG_URL"]
    {
        assert!(error.contains(variable), "{variable} missing from: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn brave_against_a_local_server() {
    let server = TestServer::start(vec![
        ("/res/v1/web/search", Reply::new(200, "application/json", BRAVE)),
        (
            "/denied",
            Reply::new(
                401,
                "application/json",
                r#"{"type":"ErrorResponse","error":{"code":"SUBSCRIPTION_TOKEN_INVALID"}}"#,
            ),
        ),
    ]);
    let tool =
        typed_from_vars(&[("BRAVE_API_KEY", "secret-token"), ("TANDEM_BRAVE_URL", &server.url("/res/v1/web/search"))]);
    let (_dir, ctx) = ctx();
    let out = tool.call(json!({ "query": "tokio select", "num_results": 1 }), ctx.clone()).await;
    let out = out.unwrap_or_else(|e| panic!("{}", e.message));
    expect_test::expect![[r#"
        Results for "tokio select" (Brave Search):

        1. select in tokio - Rust
           https://docs.rs/tokio/latest/tokio/macro.select.html
           Waits on multiple concurrent branches, returning when the first branch completes & cancelling the rest.

        Read a result with `webfetch` before relying on it."#]]
    .assert_eq(&out.output);
    let seen = server.seen();
    assert_eq!(seen[0].target, "/res/v1/web/search?q=tokio+select&count=1");
    assert_eq!(seen[0].headers.get("x-subscription-token").map(String::as_str), Some("secret-token"));

    let denied = typed_from_vars(&[("BRAVE_API_KEY", "bad"), ("TANDEM_BRAVE_URL", &server.url("/denied"))]);
    let error = denied.call(json!({ "query": "x" }), ctx).await.err().map(|e| e.message).unwrap_or_default();
    assert!(error.starts_with("searching with Brave Search failed with HTTP 401 Unauthorized: the API key was refused: the person should check BRAVE_API_KEY."), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tavily_sends_a_json_body_with_a_bearer_key() {
    let server = TestServer::start(vec![("/search", Reply::new(200, "application/json", TAVILY))]);
    let tool = typed_from_vars(&[("TAVILY_API_KEY", "tvly-1"), ("TANDEM_TAVILY_URL", &server.url("/search"))]);
    let (_dir, ctx) = ctx();
    let out = tool.call(json!({ "query": "tokio select", "num_results": 50 }), ctx).await;
    assert_eq!(out.map(|o| o.metadata.get("count").cloned()).ok().flatten(), Some(json!(1)));
    let seen = server.seen();
    assert_eq!(seen[0].method, "POST");
    assert_eq!(seen[0].headers.get("authorization").map(String::as_str), Some("Bearer tvly-1"));
    let body: Value = serde_json::from_str(&seen[0].body).unwrap_or_default();
    assert_eq!(body, json!({ "query": "tokio select", "max_results": 20, "search_depth": "basic" }));
}

/// The tool as the registry holds it, with backends from `vars` only.
fn typed_from_vars(vars: &[(&str, &str)]) -> Arc<dyn tandem_tool_api::Tool> {
    typed(WebSearch::from_vars(vars))
}
