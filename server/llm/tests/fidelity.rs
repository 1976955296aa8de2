//! Provider fidelity: recorded-shape streams of each provider (written from its documented wire
//! format, quirks included, in `tests/fixtures/`) replayed through the real HTTP client; the
//! assertions are on the *next request body*, which must carry back exactly what the provider
//! requires (DeepSeek's `reasoning_content`, Gemini's thought signatures, Anthropic's signed and
//! redacted thinking), and on the reasoning settings of each wire format.

use serde_json::{Value, json};
use tandem_fake_provider::{FakeProvider, Turn};
use tandem_llm::{
    Client, ErrorKind, Event, Message, Part, ProviderKind, ProviderSettings, Reasoning, ReasoningField, Request,
    Response, Role, StopReason, Usage,
};
use tokio_util::sync::CancellationToken;

mod support;
use support::settings;

fn fixture(name: &str) -> String {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{path}: {error}"))
}

fn user(text: &str) -> Message {
    Message { role: Role::User, content: vec![Part::Text { text: text.into() }] }
}

fn results(ids: &[&str]) -> Message {
    Message {
        role: Role::User,
        content: ids
            .iter()
            .map(|id| Part::ToolResult { call_id: (*id).into(), content: format!("text of {id}"), is_error: false })
            .collect(),
    }
}

async fn turn(client: &Client, request: &Request) -> (Response, Vec<Event>) {
    let mut events = Vec::new();
    let result = client.stream(request, &CancellationToken::new(), &mut |event| events.push(event)).await;
    match result {
        Ok(response) => (response, events),
        Err(error) => panic!("{error:?}"),
    }
}

/// A provider that streams the recorded `stream`, then answers `then`, and a client speaking
/// `kind` to it for `model`.
async fn recorded(kind: ProviderKind, model: &str, stream: &str, then: Vec<Turn>) -> (FakeProvider, Client) {
    let provider = FakeProvider::start([vec![Turn::raw(fixture(stream))], then].concat()).await;
    let client = client(settings(kind, &provider.base_url(), model));
    (provider, client)
}

/// A conversation that starts with `text`, and its first turn.
async fn ask(client: &Client, text: &str) -> (Request, (Response, Vec<Event>)) {
    let request = Request { messages: vec![user(text).into()], ..Request::default() };
    let first = turn(client, &request).await;
    (request, first)
}

/// The turn after `first`: the request goes on with its message and the results of `calls`.
async fn answer(client: &Client, request: &mut Request, first: Response, calls: &[&str]) -> Response {
    request.messages.push(first.message.into());
    request.messages.push(results(calls).into());
    turn(client, request).await.0
}

fn client(settings: ProviderSettings) -> Client {
    match Client::new(settings) {
        Ok(client) => client,
        Err(error) => panic!("{error:?}"),
    }
}

/// The assistant messages of an OpenAI-format request body.
fn assistant_messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "assistant").cloned().collect()
}

#[tokio::test]
async fn deepseek_reasoning_goes_back_on_every_tool_call_turn_and_only_there() {
    let provider = FakeProvider::start(vec![
        Turn::raw(fixture("deepseek_tool_call.sse")),
        Turn::raw(fixture("deepseek_answer.sse")),
        Turn::reply("ok"),
    ])
    .await;
    let client = client(settings(ProviderKind::OpenAi, &provider.base_url(), "deepseek-chat"));
    let (mut request, (first, events)) = ask(&client, "fix a.rs").await;
    assert_eq!(
        first.message.content[0],
        Part::Thinking {
            text: "The person wants a.rs fixed. Read it first.".into(),
            signature: None,
            field: Some(ReasoningField::ReasoningContent),
        }
    );
    assert_eq!(first.stop, StopReason::ToolUse);
    assert_eq!(
        first.usage,
        Usage {
            input_tokens: 1200,
            output_tokens: 40,
            cache_read_tokens: 1024,
            cache_write_tokens: 0,
            reasoning_tokens: 12
        }
    );
    assert!(events.contains(&Event::ThinkingDelta(" Read it first.".into())), "{events:?}");
    let second = answer(&client, &mut request, first, &["call_00_q9kKpmHzF"]).await;
    request.messages.push(second.message.into());
    request.messages.push((user("thanks; and y?")).into());
    turn(&client, &request).await;

    let requests = provider.requests();
    let tool_turn = json!({
        "role": "assistant",
        "content": null,
        "reasoning_content": "The person wants a.rs fixed. Read it first.",
        "tool_calls": [{"id": "call_00_q9kKpmHzF", "type": "function",
                        "function": {"name": "read", "arguments": "{\"file_path\":\"a.rs\"}"}}],
    });
    assert_eq!(assistant_messages(&requests[1].body), std::slice::from_ref(&tool_turn));
    // The answer without tool calls goes back without its reasoning (DeepSeek ignores it
    // there, older reasoners refuse it); the tool-call turn keeps it in every later request.
    assert_eq!(
        assistant_messages(&requests[2].body),
        [tool_turn, json!({"role": "assistant", "content": "x returns 1."})]
    );
}

#[tokio::test]
async fn gemini_thought_signatures_go_back_verbatim_on_their_call_only() {
    let (provider, client) =
        recorded(ProviderKind::OpenAi, "gemini-2.5-flash", "gemini_parallel_calls.sse", vec![Turn::reply("done")])
            .await;
    let (mut request, (first, _)) = ask(&client, "read a.rs and b.rs").await;
    assert_eq!(first.usage.reasoning_tokens, 134);
    let ids: Vec<String> = first
        .message
        .content
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(ids, ["function-call-13398155582946432386", "function-call-13398155582946432387"]);
    answer(&client, &mut request, first, &["function-call-13398155582946432386", "function-call-13398155582946432387"])
        .await;
    let body = &provider.requests()[1].body;
    assert_eq!(
        assistant_messages(body),
        [json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [
                {"id": "function-call-13398155582946432386", "type": "function",
                 "function": {"name": "read", "arguments": "{\"file_path\":\"a.rs\"}"},
                 "extra_content": {"google": {"thought_signature":
                    "CiQBVKhc7vB+vaaq6rA/xmD4CYJpPr8AmMLJO6VeSm3cz4AwfFMSXwFUqFzu9Vr6M2K1fY5yR6dR8rRc"}}},
                {"id": "function-call-13398155582946432387", "type": "function",
                 "function": {"name": "read", "arguments": "{\"file_path\":\"b.rs\"}"}},
            ],
        })]
    );
    let tool_messages: Vec<&Value> =
        body["messages"].as_array().into_iter().flatten().filter(|m| m["role"] == "tool").collect();
    assert_eq!(tool_messages.len(), 2);
}

#[tokio::test]
async fn mistral_typed_thinking_parts_are_shown_as_thinking_and_not_sent_back() {
    let (provider, client) =
        recorded(ProviderKind::OpenAi, "magistral-medium-2509", "mistral_magistral.sse", vec![Turn::reply("ok")]).await;
    let (mut request, (first, events)) = ask(&client, "what is in a.rs?").await;
    let shown: Vec<&Event> = events.iter().filter(|event| !matches!(event, Event::Usage(_))).collect();
    assert_eq!(
        shown[..4],
        [
            &Event::ThinkingDelta("I should read".into()),
            &Event::ThinkingDelta(" the file.".into()),
            &Event::TextDelta("Reading ".into()),
            &Event::TextDelta("a.rs.".into()),
        ]
    );
    assert_eq!(
        first.message.content,
        vec![
            Part::Thinking {
                text: "I should read the file.".into(),
                signature: None,
                field: Some(ReasoningField::ThinkingPart)
            },
            Part::Text { text: "Reading a.rs.".into() },
            // Mistral sends no `index` on tool call deltas.
            Part::ToolCall {
                id: "D681PevKs".into(),
                name: "read".into(),
                arguments: json!({"file_path": "a.rs"}),
                extra: None
            },
        ]
    );
    assert_eq!((first.usage.input_tokens, first.usage.output_tokens), (90, 40));
    answer(&client, &mut request, first, &["D681PevKs"]).await;
    assert_eq!(
        assistant_messages(&provider.requests()[1].body),
        [json!({
            "role": "assistant",
            "content": "Reading a.rs.",
            "tool_calls": [{"id": "D681PevKs", "type": "function",
                            "function": {"name": "read", "arguments": "{\"file_path\":\"a.rs\"}"}}],
        })]
    );
}

#[tokio::test]
async fn groq_whole_calls_in_one_chunk_and_usage_under_x_groq() {
    let (_provider, client) =
        recorded(ProviderKind::OpenAi, "llama-3.3-70b-versatile", "groq_whole_calls.sse", vec![]).await;
    let request = Request { messages: vec![user("read both").into()], ..Request::default() };
    let (response, _) = turn(&client, &request).await;
    let calls: Vec<(String, Value)> = response
        .message
        .content
        .iter()
        .filter_map(|part| match part {
            Part::ToolCall { id, arguments, .. } => Some((id.clone(), arguments.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        [("call_g1".to_owned(), json!({"file_path": "a.rs"})), ("call_g2".to_owned(), json!({"file_path": "b.rs"}))]
    );
    assert_eq!((response.usage.input_tokens, response.usage.output_tokens), (200, 25));
}

#[tokio::test]
async fn ollama_whole_calls_under_one_index_and_reasoning_goes_back_as_reasoning() {
    let (provider, client) =
        recorded(ProviderKind::OpenAi, "qwen3:8b", "ollama_reasoning_calls.sse", vec![Turn::reply("ok")]).await;
    let (mut request, (first, _)) = ask(&client, "read both").await;
    answer(&client, &mut request, first, &["call_o1", "call_o2"]).await;
    let sent = assistant_messages(&provider.requests()[1].body);
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0]["reasoning"], "Two files to read.");
    assert!(sent[0].get("reasoning_content").is_none(), "{}", sent[0]);
    let ids: Vec<&str> =
        sent[0]["tool_calls"].as_array().into_iter().flatten().filter_map(|c| c["id"].as_str()).collect();
    assert_eq!(ids, ["call_o1", "call_o2"]);
}

#[tokio::test]
async fn anthropic_signed_and_redacted_thinking_go_back_in_order() {
    let (provider, client) = recorded(
        ProviderKind::Anthropic,
        "claude-sonnet-4-5",
        "anthropic_redacted_thinking.sse",
        vec![Turn::reply("ok")],
    )
    .await;
    let (mut request, (first, _)) = ask(&client, "what does a.rs do?").await;
    // Cache reads are part of the prompt.
    assert_eq!((first.usage.input_tokens, first.usage.cache_read_tokens, first.usage.output_tokens), (2050, 2000, 89));
    answer(&client, &mut request, first, &["toolu_01T1x1fJ34qAmk2tNTrN7Up6"]).await;
    let body = &provider.requests()[1].body;
    assert_eq!(
        body["messages"][1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "Let me read a.rs.",
             "signature": "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"},
            {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"},
            {"type": "tool_use", "id": "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "name": "read", "input": {"file_path": "a.rs"}},
        ]})
    );
}

#[tokio::test]
async fn reasoning_settings_per_wire_format() {
    let provider = FakeProvider::start(vec![Turn::reply("a"), Turn::reply("b"), Turn::reply("c")]).await;
    let request = Request { messages: vec![user("hi").into()], temperature: Some(0.5), ..Request::default() };
    // OpenAI reasoning model: max_completion_tokens and reasoning_effort.
    let mut openai = settings(ProviderKind::OpenAi, &provider.base_url(), "o3-mini");
    openai.reasoning.effort = Some("high".into());
    turn(&client(openai.clone()), &request).await;
    // Any other model keeps max_tokens.
    openai.model = "gpt-4.1".into();
    openai.reasoning = Reasoning::default();
    turn(&client(openai), &request).await;
    // Anthropic: a thinking budget, room for the answer beyond it, no temperature.
    let mut anthropic = settings(ProviderKind::Anthropic, &provider.base_url(), "claude-sonnet-4-5");
    anthropic.reasoning.budget_tokens = Some(2000);
    turn(&client(anthropic), &request).await;
    let requests = provider.requests();
    let pick = |body: &Value, keys: &[&str]| -> Value {
        keys.iter().map(|key| ((*key).to_owned(), body.get(*key).cloned().unwrap_or(Value::Null))).collect()
    };
    let keys = ["max_tokens", "max_completion_tokens", "reasoning_effort", "temperature", "thinking"];
    assert_eq!(
        pick(&requests[0].body, &keys),
        json!({"max_tokens": null, "max_completion_tokens": 1000, "reasoning_effort": "high",
               "temperature": 0.5, "thinking": null})
    );
    assert_eq!(
        pick(&requests[1].body, &keys),
        json!({"max_tokens": 1000, "max_completion_tokens": null, "reasoning_effort": null,
               "temperature": 0.5, "thinking": null})
    );
    assert_eq!(
        pick(&requests[2].body, &keys),
        json!({"max_tokens": 3024, "max_completion_tokens": null, "reasoning_effort": null,
               "temperature": null, "thinking": {"type": "enabled", "budget_tokens": 2000}})
    );
}

#[tokio::test]
async fn context_too_long_is_its_own_kind_in_each_providers_words() {
    let bodies = [
        (
            400,
            r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        (
            400,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
        ),
        (
            400,
            r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#,
        ),
        (
            400,
            r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}}"#,
        ),
        (413, ""),
    ];
    for (code, body) in bodies {
        let provider = FakeProvider::start(vec![Turn::status(code).body(body), Turn::reply("never")]).await;
        let mut settings = settings(ProviderKind::OpenAi, &provider.base_url(), "m");
        settings.retry.max_retries = 2;
        let result = client(settings).stream(&Request::default(), &CancellationToken::new(), &mut |_| {}).await;
        let Err(error) = result else { panic!("{body}: {result:?}") };
        assert_eq!(error.kind, ErrorKind::ContextTooLong, "{body}: {error}");
        assert!(error.message.contains("no longer fits the context window"), "{error}");
        assert_eq!(provider.requests().len(), 1, "not retried as it is: {body}");
    }
    // Another 400 stays a plain rejection.
    let provider = FakeProvider::start(vec![Turn::status(400)]).await;
    let result = client(settings(ProviderKind::OpenAi, &provider.base_url(), "m"))
        .stream(&Request::default(), &CancellationToken::new(), &mut |_| {})
        .await;
    assert_eq!(result.err().map(|error| error.kind), Some(ErrorKind::Rejected));
}
