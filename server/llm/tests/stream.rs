//! The client against the scripted provider over real HTTP: both wire formats, request shapes,
//! retries, timeouts, cancellation and broken streams.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Stop, Turn};
use tandem_llm::{
    Client, ErrorKind, Event, LlmError, Message, Part, ProviderKind, ProviderSettings, ReasoningField, Request,
    Response, RetryPolicy, Role, StopReason, ToolDef, Usage,
};
use tokio_util::sync::CancellationToken;

mod support;

const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

/// A client of `kind` at `base_url` that retries twice.
fn settings(kind: ProviderKind, base_url: &str) -> ProviderSettings {
    ProviderSettings {
        retry: RetryPolicy { max_retries: 2, base_delay: Duration::from_millis(10), max_delay: Duration::from_secs(2) },
        ..support::settings(kind, base_url, "test-model")
    }
}

fn hello() -> Request {
    Request {
        system: "Be brief.".into(),
        messages: vec![Message { role: Role::User, content: vec![Part::Text { text: "Hi".into() }] }.into()],
        ..Request::default()
    }
}

async fn run(settings: ProviderSettings, request: &Request) -> (Result<Response, LlmError>, Vec<Event>) {
    let client = match Client::new(settings) {
        Ok(client) => client,
        Err(error) => return (Err(error), Vec::new()),
    };
    let mut events = Vec::new();
    let result = client.stream(request, &CancellationToken::new(), &mut |event| events.push(event)).await;
    (result, events)
}

fn text(text: &str) -> Part {
    Part::Text { text: text.into() }
}

fn call(id: &str, name: &str, arguments: Value) -> Part {
    Part::ToolCall { id: id.into(), name: name.into(), arguments, extra: None }
}

fn without_usage(events: &[Event]) -> Vec<Event> {
    events.iter().filter(|event| !matches!(event, Event::Usage(_))).cloned().collect()
}

fn kind_of(result: &Result<Response, LlmError>) -> Option<ErrorKind> {
    result.as_ref().err().map(|error| error.kind.clone())
}

#[tokio::test]
async fn text_thinking_and_usage_in_both_formats() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![
            Turn::new().thinking("Let me").thinking(" think.").text("Hel").text("lo").usage(12, 5).signature("sig-1"),
        ])
        .await;
        let (result, events) = run(settings(kind, &provider.base_url()), &hello()).await;
        let Ok(response) = result else { panic!("{kind:?}: {result:?}") };
        let (signature, field) = match kind {
            ProviderKind::OpenAi => (None, Some(ReasoningField::ReasoningContent)),
            ProviderKind::Anthropic => (Some("sig-1".to_owned()), None),
        };
        assert_eq!(
            response.message,
            Message {
                role: Role::Assistant,
                content: vec![Part::Thinking { text: "Let me think.".into(), signature, field }, text("Hello")],
            },
            "{kind:?}"
        );
        assert_eq!(response.stop, StopReason::EndTurn);
        assert_eq!(response.usage, Usage { input_tokens: 12, output_tokens: 5, ..Usage::default() });
        let deltas: Vec<&Event> = events.iter().filter(|event| !matches!(event, Event::Usage(_))).collect();
        assert_eq!(
            deltas,
            [
                &Event::ThinkingDelta("Let me".into()),
                &Event::ThinkingDelta(" think.".into()),
                &Event::TextDelta("Hel".into()),
                &Event::TextDelta("lo".into()),
            ],
            "{kind:?}"
        );
        assert!(matches!(events.last(), Some(Event::Usage(Usage { output_tokens: 5, .. }))), "{kind:?}: {events:?}");
    }
}

#[tokio::test]
async fn parallel_tool_calls_with_fragmented_arguments() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![
            Turn::new()
                .text("Reading both.")
                .tool_call_fragments("call_1", "read", ["{\"pa", "th\": \"a.r", "s\"}"])
                .tool_call_fragments("call_2", "grep", ["{\"pattern\":", " \"fn\", \"n\": 3}"])
                .tool_call_fragments("call_3", "list", Vec::<String>::new())
                .tool_call_fragments("call_4", "edit", ["{\"path\": \"a.rs\", "]),
        ])
        .await;
        let (result, events) = run(settings(kind, &provider.base_url()), &hello()).await;
        let Ok(response) = result else { panic!("{kind:?}: {result:?}") };
        assert_eq!(response.stop, StopReason::ToolUse, "{kind:?}");
        assert_eq!(
            response.message.content,
            vec![
                text("Reading both."),
                call("call_1", "read", json!({"path": "a.rs"})),
                call("call_2", "grep", json!({"pattern": "fn", "n": 3})),
                call("call_3", "list", json!({})),
                call("call_4", "edit", json!({"_raw": "{\"path\": \"a.rs\", "})),
            ],
            "{kind:?}"
        );
        let calls: Vec<String> = events
            .iter()
            .filter_map(|event| match event {
                Event::ToolCallStarted { id, .. } => Some(format!("start {id}")),
                Event::ToolCallReady { id, .. } => Some(format!("ready {id}")),
                _ => None,
            })
            .collect();
        // Anthropic closes each block before the next starts; OpenAI reports readiness at the
        // finish reason. Each call starts before it is ready, and each is ready once.
        for id in ["call_1", "call_2", "call_3", "call_4"] {
            let start = calls.iter().position(|entry| *entry == format!("start {id}"));
            let ready = calls.iter().position(|entry| *entry == format!("ready {id}"));
            assert!(start.is_some() && ready.is_some() && start < ready, "{kind:?}: {calls:?}");
        }
        assert_eq!(calls.len(), 8, "{kind:?}: {calls:?}");
    }
}

#[tokio::test]
async fn stop_reasons_map_in_both_formats() {
    let cases = [
        (Stop::EndTurn, StopReason::EndTurn),
        (Stop::MaxTokens, StopReason::MaxTokens),
        (Stop::Refusal, StopReason::Refusal),
        (Stop::Other("weird".into()), StopReason::Other("weird".into())),
    ];
    for kind in KINDS {
        let turns = cases.iter().map(|(stop, _)| Turn::reply("x").stop(stop.clone())).collect();
        let provider = FakeProvider::start(turns).await;
        for (_, expected) in &cases {
            let (result, _) = run(settings(kind, &provider.base_url()), &hello()).await;
            assert_eq!(result.map(|response| response.stop), Ok(expected.clone()), "{kind:?}");
        }
    }
    // Anthropic's stop_sequence is an ordinary end of turn.
    let provider = FakeProvider::start(vec![Turn::reply("x").stop(Stop::Other("stop_sequence".into()))]).await;
    let (result, _) = run(settings(ProviderKind::Anthropic, &provider.base_url()), &hello()).await;
    assert_eq!(result.map(|response| response.stop), Ok(StopReason::EndTurn));
}

/// A conversation with every kind of part, for the request-shape tests.
fn conversation() -> Request {
    Request {
        system: "You are Tandem.".into(),
        messages: vec![
            Message { role: Role::User, content: vec![text("Fix a.rs")] },
            Message {
                role: Role::Assistant,
                content: vec![
                    Part::Thinking { text: "Read it first.".into(), signature: Some("sig-9".into()), field: None },
                    text("Reading."),
                    call("call_1", "read", json!({"path": "a.rs"})),
                    call("call_2", "grep", json!({"_raw": "{bad"})),
                ],
            },
            Message {
                role: Role::User,
                content: vec![
                    Part::ToolResult { call_id: "call_1".into(), content: "fn main() {}".into(), is_error: false },
                    Part::ToolResult { call_id: "call_2".into(), content: "invalid arguments".into(), is_error: true },
                    text("Also keep it short."),
                ],
            },
        ]
        .into_iter()
        .map(Into::into)
        .collect(),
        tools: vec![ToolDef {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        }]
        .into(),
        model: Some("other-model".into()),
        temperature: Some(0.5),
    }
}

#[tokio::test]
async fn openai_request_shape() {
    let provider = FakeProvider::start(vec![Turn::reply("ok")]).await;
    let (result, _) = run(settings(ProviderKind::OpenAi, &provider.base_url()), &conversation()).await;
    assert!(result.is_ok(), "{result:?}");
    let requests = provider.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body,
        json!({
            "model": "other-model",
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": 1000,
            "temperature": 0.5,
            "messages": [
                {"role": "system", "content": "You are Tandem."},
                {"role": "user", "content": "Fix a.rs"},
                {"role": "assistant", "content": "Reading.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a.rs\"}"}},
                    {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": "{bad"}},
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "fn main() {}"},
                {"role": "tool", "tool_call_id": "call_2", "content": "invalid arguments"},
                {"role": "user", "content": "Also keep it short."},
            ],
            "tools": [{"type": "function", "function": {
                "name": "read", "description": "Read a file",
                "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
            }}],
        })
    );
}

#[tokio::test]
async fn anthropic_request_shape() {
    let provider = FakeProvider::start(vec![Turn::reply("ok")]).await;
    let mut request = conversation();
    request.temperature = None;
    request.model = None;
    let (result, _) = run(settings(ProviderKind::Anthropic, &provider.base_url()), &request).await;
    assert!(result.is_ok(), "{result:?}");
    let requests = provider.requests();
    let request = &requests[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-test"));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("authorization"), None);
    assert_eq!(
        request.body,
        json!({
            "model": "test-model",
            "max_tokens": 1000,
            "stream": true,
            "system": [{"type": "text", "text": "You are Tandem.", "cache_control": {"type": "ephemeral"}}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Fix a.rs"}]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "Read it first.", "signature": "sig-9"},
                    {"type": "text", "text": "Reading."},
                    {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.rs"}},
                    {"type": "tool_use", "id": "call_2", "name": "grep", "input": {"_raw": "{bad"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "fn main() {}", "is_error": false},
                    {"type": "tool_result", "tool_use_id": "call_2", "content": "invalid arguments", "is_error": true},
                    {"type": "text", "text": "Also keep it short.", "cache_control": {"type": "ephemeral"}},
                ]},
            ],
            "tools": [{
                "name": "read", "description": "Read a file",
                "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
            }],
        })
    );
}

#[tokio::test]
async fn a_response_round_trips_into_the_next_request() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![
            Turn::new().thinking("hmm").text("Let me read.").tool_call("call_7", "read", json!({"path": "b.rs"})),
            Turn::reply("Done."),
        ])
        .await;
        let client = Client::new(settings(kind, &provider.base_url())).map_err(|error| error.message);
        let Ok(client) = client else { panic!("{client:?}") };
        let mut request = hello();
        let first = client.stream(&request, &CancellationToken::new(), &mut |_| {}).await;
        let Ok(first) = first else { panic!("{first:?}") };
        request.messages.push(first.message.into());
        request.messages.push(
            Message {
                role: Role::User,
                content: vec![Part::ToolResult { call_id: "call_7".into(), content: "text".into(), is_error: false }],
            }
            .into(),
        );
        let second = client.stream(&request, &CancellationToken::new(), &mut |_| {}).await;
        assert!(second.is_ok(), "{second:?}");
        let body = &provider.requests()[1].body;
        let messages = body["messages"].as_array().map(Vec::len);
        match kind {
            ProviderKind::OpenAi => {
                assert_eq!(messages, Some(4), "{body}");
                assert_eq!(body["messages"][2]["tool_calls"][0]["function"]["arguments"], "{\"path\":\"b.rs\"}");
                assert_eq!(body["messages"][3], json!({"role": "tool", "tool_call_id": "call_7", "content": "text"}));
            }
            ProviderKind::Anthropic => {
                assert_eq!(messages, Some(3), "{body}");
                assert_eq!(
                    body["messages"][1]["content"][0],
                    json!({"type": "thinking", "thinking": "hmm", "signature": "fake-signature"})
                );
                assert_eq!(body["messages"][1]["content"][2]["input"], json!({"path": "b.rs"}));
                assert_eq!(body["messages"][2]["content"][0]["tool_use_id"], "call_7");
            }
        }
    }
}

/// A long history is written once and remembered (and the body buffer recycled): the provider
/// gets the whole body with its length stated, the same on a retry and on the next request,
/// which reuses what the first one wrote.
#[tokio::test]
async fn a_long_history_arrives_whole_with_its_length_on_every_attempt() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![Turn::status(503), Turn::reply("one"), Turn::reply("two")]).await;
        let client = Client::new(settings(kind, &provider.base_url())).map_err(|error| error.message);
        let Ok(client) = client else { panic!("{client:?}") };
        let mut request = hello();
        for i in 0..40 {
            let id = format!("call_{i}");
            let assistant = Message { role: Role::Assistant, content: vec![call(&id, "read", json!({"i": i}))] };
            // Big results, with text that needs escaping.
            let content = format!("{i}: \"quoted\"\tand\\slashed é\n").repeat(400);
            let result =
                Message { role: Role::User, content: vec![Part::ToolResult { call_id: id, content, is_error: false }] };
            request.messages.push(assistant.into());
            request.messages.push(result.into());
        }
        for _ in 0..2 {
            let outcome = client.stream(&request, &CancellationToken::new(), &mut |_| {}).await;
            assert!(outcome.is_ok(), "{kind:?}: {outcome:?}");
        }
        let requests = provider.requests();
        assert_eq!(requests.len(), 3, "{kind:?}");
        for received in &requests {
            let header = |name: &str| received.headers.iter().find(|(key, _)| key == name).map(|(_, v)| v.clone());
            assert_eq!(header("transfer-encoding"), None, "{kind:?}");
            // The fake provider reads exactly this many bytes: a wrong length would not parse.
            let length: Option<usize> = header("content-length").and_then(|v| v.parse().ok());
            assert!(length.is_some_and(|n| n > 40 * 400 * 20), "{kind:?}: {length:?}");
            let messages = received.body["messages"].as_array().map(Vec::len);
            let expected = match kind {
                // The system prompt, the greeting, then each call and its result.
                ProviderKind::OpenAi => 2 + 80,
                ProviderKind::Anthropic => 1 + 80,
            };
            assert_eq!(messages, Some(expected), "{kind:?}");
            let last = &received.body["messages"][expected - 1];
            let content = match kind {
                ProviderKind::OpenAi => last["content"].as_str(),
                ProviderKind::Anthropic => last["content"][0]["content"].as_str(),
            };
            assert_eq!(content.map(str::len), Some("39: \"quoted\"\tand\\slashed é\n".len() * 400), "{kind:?}");
        }
        assert_eq!(requests[0].body, requests[1].body, "{kind:?}: the retry");
        assert_eq!(requests[1].body, requests[2].body, "{kind:?}: the next request");
    }
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![Turn::status(429).retry_after(1), Turn::reply("after the wait")]).await;
        let started = Instant::now();
        let (result, events) = run(settings(kind, &provider.base_url()), &hello()).await;
        let elapsed = started.elapsed();
        assert!(result.is_ok(), "{kind:?}: {result:?}");
        let Some(Event::Retrying { attempt, delay, reason }) = events.first() else { panic!("{events:?}") };
        assert_eq!((*attempt, *delay), (1, Duration::from_secs(1)), "{kind:?}");
        assert!(reason.contains("429") && reason.contains("rate limit"), "{reason}");
        assert!(elapsed >= Duration::from_secs(1) && elapsed < Duration::from_millis(1800), "{elapsed:?}");
        assert_eq!(without_usage(&events[1..]).first(), Some(&Event::TextDelta("after the wait".into())));
        assert_eq!(provider.requests().len(), 2);
    }
}

#[tokio::test]
async fn retry_after_is_capped_by_max_delay() {
    let provider = FakeProvider::start(vec![Turn::status(503).retry_after(60), Turn::reply("ok")]).await;
    let mut settings = settings(ProviderKind::OpenAi, &provider.base_url());
    settings.retry.max_delay = Duration::from_millis(50);
    let (result, events) = run(settings, &hello()).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(matches!(events[0], Event::Retrying { delay, .. } if delay == Duration::from_millis(50)), "{events:?}");
}

#[tokio::test]
async fn server_errors_exhaust_retries() {
    for kind in KINDS {
        let provider =
            FakeProvider::start(vec![Turn::status(500), Turn::status(529), Turn::status(503), Turn::reply("never")])
                .await;
        let (result, events) = run(settings(kind, &provider.base_url()), &hello()).await;
        let Err(error) = result else { panic!("{result:?}") };
        assert_eq!(error.kind, ErrorKind::Server, "{error:?}");
        assert!(error.message.contains("HTTP 503") && error.message.contains("gave up after 2 retries"), "{error}");
        let retries: Vec<u32> = events
            .iter()
            .filter_map(|event| match event {
                Event::Retrying { attempt, delay, .. } => {
                    assert!(*delay <= Duration::from_millis(20), "{delay:?}");
                    Some(*attempt)
                }
                _ => None,
            })
            .collect();
        assert_eq!(retries, [1, 2]);
        assert_eq!(provider.requests().len(), 3);
        assert_eq!(provider.remaining(), 1);
    }
}

#[tokio::test]
async fn connection_refused_is_unreachable_with_advice() {
    let port = match std::net::TcpListener::bind("127.0.0.1:0").and_then(|listener| listener.local_addr()) {
        Ok(addr) => addr.port(),
        Err(error) => panic!("{error}"),
    };
    let base_url = format!("http://127.0.0.1:{port}/v1");
    let (result, events) = run(settings(ProviderKind::OpenAi, &base_url), &hello()).await;
    let Err(error) = result else { panic!("{result:?}") };
    assert_eq!(error.kind, ErrorKind::Unreachable);
    assert!(
        error.message.starts_with(&format!("no model provider answered at {base_url} (connection refused)")),
        "{error}"
    );
    for needle in ["TANDEM_PROVIDER", "TANDEM_BASE_URL", "TANDEM_MODEL", "TANDEM_API_KEY_ENV", ".tandem/config.toml"] {
        assert!(error.message.contains(needle), "{needle}: {error}");
    }
    // Nothing listens on this machine's port: retrying would only make the person wait.
    assert_eq!(events.iter().filter(|event| matches!(event, Event::Retrying { .. })).count(), 0);
    assert!(!error.message.contains("retries"), "{error}");

    // Ollama's default port gets the Ollama hint.
    let mut ollama = settings(ProviderKind::OpenAi, "http://127.0.0.1:11434/v1");
    ollama.retry.max_retries = 0;
    let (result, _) = run(ollama, &hello()).await;
    if let Err(error) = result
        && error.kind == ErrorKind::Unreachable
    {
        assert!(error.message.contains("Start Ollama (`ollama serve`)"), "{error}");
    }
}

#[tokio::test]
async fn unauthorized_names_the_environment_variable() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![Turn::status(401), Turn::reply("never")]).await;
        let mut settings = settings(kind, &provider.base_url());
        settings.api_key = None;
        let (result, events) = run(settings, &hello()).await;
        let Err(error) = result else { panic!("{result:?}") };
        assert_eq!(error.kind, ErrorKind::Auth);
        assert!(error.message.contains("set the environment variable TEST_PROVIDER_KEY"), "{error}");
        assert!(error.message.contains("invalid x-api-key (fake provider)"), "{error}");
        assert!(events.is_empty(), "{events:?}");
        assert_eq!(provider.requests().len(), 1);
        assert_eq!(provider.requests()[0].header("authorization"), None);
    }
}

#[tokio::test]
async fn rejected_quotes_the_provider() {
    let long = "x".repeat(5000);
    let provider = FakeProvider::start(vec![
        Turn::status(404).body(r#"{"error":{"message":"model \"test-model\" not found, try pulling it first"}}"#),
        Turn::status(400).body(long),
    ])
    .await;
    let (result, _) = run(settings(ProviderKind::OpenAi, &provider.base_url()), &hello()).await;
    let Err(error) = result else { panic!("{result:?}") };
    assert_eq!(error.kind, ErrorKind::Rejected);
    assert!(error.message.contains("HTTP 404: model \"test-model\" not found, try pulling it first"), "{error}");
    let (result, _) = run(settings(ProviderKind::OpenAi, &provider.base_url()), &hello()).await;
    let Err(error) = result else { panic!("{result:?}") };
    assert_eq!(error.kind, ErrorKind::Rejected);
    assert!(error.message.len() < 500, "{}", error.message.len());
}

#[tokio::test]
async fn a_stalled_stream_fails_after_the_stall_timeout() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![
            Turn::new().text("a").text("b").stall_after(1, Duration::from_secs(5)),
            Turn::reply("never"),
        ])
        .await;
        let mut settings = settings(kind, &provider.base_url());
        settings.timeouts.stall = Duration::from_millis(300);
        let started = Instant::now();
        let (result, events) = run(settings, &hello()).await;
        assert_eq!(kind_of(&result), Some(ErrorKind::Stalled), "{result:?}");
        assert!(started.elapsed() < Duration::from_secs(2), "{:?}", started.elapsed());
        // Text was reported, so no retry.
        assert_eq!(without_usage(&events), [Event::TextDelta("a".into())]);
        assert_eq!(provider.requests().len(), 1);
    }
}

#[tokio::test]
async fn no_headers_within_the_stall_timeout_is_stalled() {
    let provider = FakeProvider::start(vec![Turn::hang(), Turn::reply("second try")]).await;
    let mut settings = settings(ProviderKind::Anthropic, &provider.base_url());
    settings.timeouts.stall = Duration::from_millis(200);
    let (result, events) = run(settings.clone(), &hello()).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(matches!(&events[0], Event::Retrying { reason, .. } if reason.contains("no data")), "{events:?}");

    let provider = FakeProvider::start(vec![Turn::hang()]).await;
    settings.base_url = provider.base_url();
    settings.retry.max_retries = 0;
    let (result, _) = run(settings, &hello()).await;
    assert_eq!(kind_of(&result), Some(ErrorKind::Stalled), "{result:?}");
}

#[tokio::test]
async fn the_overall_timeout_ends_a_slow_stream() {
    let turn = (0..20).fold(Turn::new().chunk_delay(Duration::from_millis(100)), |turn, n| turn.text(format!("{n} ")));
    let provider = FakeProvider::start(vec![turn]).await;
    let mut settings = settings(ProviderKind::OpenAi, &provider.base_url());
    settings.timeouts.overall = Duration::from_millis(500);
    let started = Instant::now();
    let (result, events) = run(settings, &hello()).await;
    assert_eq!(kind_of(&result), Some(ErrorKind::Timeout), "{result:?}");
    assert!(started.elapsed() < Duration::from_millis(900), "{:?}", started.elapsed());
    assert!(!events.is_empty());
}

#[tokio::test]
async fn cancel_mid_stream_returns_promptly() {
    for kind in KINDS {
        let turn =
            (0..50).fold(Turn::new().chunk_delay(Duration::from_millis(100)), |turn, n| turn.text(format!("{n} ")));
        let provider = FakeProvider::start(vec![turn]).await;
        let client = Client::new(settings(kind, &provider.base_url())).map_err(|error| error.message);
        let Ok(client) = client else { panic!("{client:?}") };
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        let mut events = Vec::new();
        let mut cancelled_at = None;
        let result = client
            .stream(&hello(), &cancel, &mut |event| {
                if events.len() == 2 {
                    cancelled_at = Some(Instant::now());
                    trigger.cancel();
                }
                events.push(event);
            })
            .await;
        assert_eq!(kind_of(&result), Some(ErrorKind::Cancelled), "{result:?}");
        let Some(cancelled_at) = cancelled_at else { panic!("never cancelled: {events:?}") };
        assert!(cancelled_at.elapsed() < Duration::from_millis(500), "{:?}", cancelled_at.elapsed());
        assert!(events.len() < 6, "{events:?}");
    }
}

#[tokio::test]
async fn cancel_during_a_retry_wait() {
    let provider = FakeProvider::start(vec![Turn::status(429).retry_after(30)]).await;
    let mut settings = settings(ProviderKind::OpenAi, &provider.base_url());
    settings.retry.max_delay = Duration::from_secs(30);
    settings.timeouts.overall = Duration::from_secs(60);
    let client = Client::new(settings).map_err(|error| error.message);
    let Ok(client) = client else { panic!("{client:?}") };
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let result = client.stream(&hello(), &cancel, &mut |_| {}).await;
    assert_eq!(kind_of(&result), Some(ErrorKind::Cancelled), "{result:?}");
    assert!(started.elapsed() < Duration::from_secs(1), "{:?}", started.elapsed());
}

#[tokio::test]
async fn garbage_streams_are_protocol_errors() {
    let garbage = [
        "<html><body>502 gateway</body></html>",
        "data: {not json\n\n",
        "data: \"a string\"\n\n",
        "\u{0}\u{1}\u{2}\r\r\n\n",
        "data: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
    ];
    for kind in KINDS {
        for body in garbage {
            let provider = FakeProvider::start(vec![Turn::raw(body)]).await;
            let mut settings = settings(kind, &provider.base_url());
            settings.retry.max_retries = 0;
            let (result, _) = run(settings, &hello()).await;
            let Err(error) = result else { panic!("{kind:?} {body:?}: {result:?}") };
            assert!(matches!(error.kind, ErrorKind::Protocol | ErrorKind::Server), "{kind:?} {body:?}: {error:?}");
        }
        let provider = FakeProvider::start(vec![Turn::raw("<html>oops</html>")]).await;
        let (result, _) = run(settings(kind, &provider.base_url()), &hello()).await;
        let Err(error) = result else { panic!("{result:?}") };
        assert_eq!(error.kind, ErrorKind::Protocol);
        assert!(error.message.contains("not an event stream: <html>oops</html>"), "{error}");
    }
}

#[tokio::test]
async fn a_stream_cut_short_is_retried_only_before_any_event() {
    for kind in KINDS {
        let provider = FakeProvider::start(vec![
            Turn::reply("lost").close_after(0),
            Turn::new().text("one").text("two").close_after(1),
            Turn::reply("never"),
        ])
        .await;
        let (result, events) = run(settings(kind, &provider.base_url()), &hello()).await;
        let Err(error) = result else { panic!("{kind:?}: {result:?}") };
        assert_eq!(error.kind, ErrorKind::Server, "{kind:?}: {error:?}");
        assert!(matches!(events[0], Event::Retrying { attempt: 1, .. }), "{events:?}");
        assert_eq!(without_usage(&events[1..]), [Event::TextDelta("one".into())], "{kind:?}");
        assert_eq!(provider.requests().len(), 2);
    }
}

#[tokio::test]
async fn errors_inside_the_stream() {
    // Anthropic's overloaded error before any content is retried.
    let provider = FakeProvider::start(vec![
        Turn::new().error_event("overloaded_error", "Overloaded"),
        Turn::reply("fine"),
        Turn::new().text("partial").error_event("overloaded_error", "Overloaded"),
    ])
    .await;
    let (result, events) = run(settings(ProviderKind::Anthropic, &provider.base_url()), &hello()).await;
    assert!(result.is_ok(), "{result:?}");
    assert!(
        events
            .iter()
            .any(|event| matches!(event, Event::Retrying { reason, .. } if reason.contains("overloaded_error"))),
        "{events:?}"
    );
    let (result, _) = run(settings(ProviderKind::Anthropic, &provider.base_url()), &hello()).await;
    let Err(error) = result else { panic!("{result:?}") };
    assert_eq!(error.kind, ErrorKind::Server);
    assert!(error.message.contains("overloaded_error: Overloaded"), "{error}");

    // OpenAI-compatible servers put an error object in a chunk.
    let provider = FakeProvider::start(vec![Turn::new().text("a").error_event("server_error", "model crashed")]).await;
    let (result, _) = run(settings(ProviderKind::OpenAi, &provider.base_url()), &hello()).await;
    let Err(error) = result else { panic!("{result:?}") };
    assert_eq!(error.kind, ErrorKind::Server);
    assert!(error.message.contains("model crashed"), "{error}");
}

#[tokio::test]
async fn an_exhausted_script_says_so() {
    let provider = FakeProvider::start(vec![]).await;
    let mut settings = settings(ProviderKind::OpenAi, &provider.base_url());
    settings.retry.max_retries = 0;
    let (result, _) = run(settings, &hello()).await;
    let Err(error) = result else { panic!("{result:?}") };
    assert_eq!(error.kind, ErrorKind::Server);
    assert!(error.message.contains("script exhausted"), "{error}");
}

#[test]
fn the_stream_future_is_send() {
    fn assert_send<T: Send>(_: &T) {}
    let client = Client::new(settings(ProviderKind::OpenAi, "http://127.0.0.1:1/v1")).map_err(|error| error.message);
    let Ok(client) = client else { panic!("{client:?}") };
    let request = hello();
    let cancel = CancellationToken::new();
    let mut on_event = |_: Event| {};
    let future = client.stream(&request, &cancel, &mut on_event);
    assert_send(&future);
}
