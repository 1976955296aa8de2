//! Long sessions against a scripted provider with a small context window: the provider counts
//! a request's tokens from its size and refuses, in its own words, any request over the window,
//! as real providers do. The agent must keep every request within its budget by compacting,
//! store the compaction so a loaded session resumes from it, and recover from a "context too
//! long" refusal by compacting and retrying.

mod support;

use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use support::{Recorder, prompt};
use tandem_agent::{Agent, AgentConfig};
use tandem_fake_provider::{FakeProvider, ReceivedRequest, Turn};
use tandem_llm::ProviderKind;
use tandem_protocol::{SessionCompactParams, SessionLoadParams, SessionUpdate, StopReason};

/// The window of the scripted model, and the tokenizer the fake provider plays: 4 bytes a token.
const WINDOW: u32 = 8_192;
const BYTES_PER_TOKEN: f64 = 4.0;
const MAX_OUTPUT: u32 = 1_024;
/// The budget: what a request may take and still leave the answer its room. (The agent aims
/// lower still, by a margin of 1/20 of the window for its estimate's error.)
const LIMIT: u64 = (WINDOW - MAX_OUTPUT) as u64;

fn start_agent(root: &Path, provider: &FakeProvider, window: u32, client: Arc<Recorder>) -> Arc<Agent> {
    start_agent_of(ProviderKind::OpenAi, root, provider, window, client)
}

/// An agent with a recording client, and a new session of it.
fn start_session(root: &Path, provider: &FakeProvider, window: u32) -> (Arc<Agent>, Arc<Recorder>, String) {
    let client = Arc::new(Recorder::default());
    let agent = start_agent(root, provider, window, Arc::clone(&client));
    let session = support::new_session(&agent);
    (agent, client, session)
}

fn start_agent_of(
    kind: ProviderKind,
    root: &Path,
    provider: &FakeProvider,
    window: u32,
    client: Arc<Recorder>,
) -> Arc<Agent> {
    let mut config = AgentConfig::new(support::settings(kind, &provider.base_url(), window, MAX_OUTPUT));
    config.max_turns = 200;
    support::start(root, config, client)
}

/// A summary request: the agent's compaction prompt, no tools.
fn is_summary(body: &Value) -> bool {
    body.get("tools").is_none() && body.to_string().contains("<transcript>")
}

const SUMMARY: &str = "## Goal\nRead every file.\n## Files\nf0.txt … read.\n## Open\nRead the rest.";

fn tokens_of(request: &ReceivedRequest) -> u64 {
    (request.body.to_string().len() as f64 / BYTES_PER_TOKEN).ceil() as u64
}

fn workspace_with_files(count: usize, bytes: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for i in 0..count {
        let line = format!("file {i}: the quick brown fox jumps over the lazy dog\n");
        let text = line.repeat(bytes / line.len() + 1);
        std::fs::write(dir.path().join(format!("f{i}.txt")), text).unwrap_or_else(|e| panic!("{e}"));
    }
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sixty_turn_session_of_large_reads_stays_within_a_small_window_and_resumes_compacted() {
    const TURNS: usize = 60;
    let dir = workspace_with_files(TURNS, 6_000);
    let mut script: Vec<Turn> = (0..TURNS)
        .map(|i| {
            Turn::new().text(format!("Reading f{i}.")).tool_call(
                format!("call_{i}"),
                "read",
                json!({"file_path": format!("f{i}.txt")}),
            )
        })
        .collect();
    script.push(Turn::reply("All read."));
    let provider = FakeProvider::start(script).await;
    provider.count_tokens(BYTES_PER_TOKEN, Some(u64::from(WINDOW)));
    provider.answer_when(is_summary, Turn::reply(SUMMARY));
    let (agent, client, session) = start_session(dir.path(), &provider, WINDOW);

    let result = agent.prompt(prompt(&session, "read every file, one at a time")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    assert_eq!(provider.remaining(), 0, "every scripted turn was asked for");

    let requests = provider.requests();
    let turns: Vec<&ReceivedRequest> = requests.iter().filter(|r| !is_summary(&r.body)).collect();
    let summaries = requests.len() - turns.len();
    assert_eq!(turns.len(), TURNS + 1, "no request was refused and retried");
    assert!(summaries >= 1, "the history was summarised at least once");
    let largest = requests.iter().map(tokens_of).max().unwrap_or(0);
    eprintln!("{} requests, {summaries} summaries, largest {largest} tokens (budget {LIMIT})", requests.len());
    assert!(largest <= LIMIT, "a request of {largest} tokens is over the budget of {LIMIT}");
    // The full tool set does not fit a small window: tools were deferred to `tool_search`.
    let offered = turns[0].body["tools"].as_array().map_or(0, Vec::len);
    assert!((1..10).contains(&offered), "{offered} tools offered");
    // Old outputs became stubs that say how to get them again.
    let last = turns[TURNS].body.to_string();
    assert!(last.contains("elided; read it again if needed]") || last.contains("[Summary of the earlier"), "{last}");
    assert!(last.contains("[Summary of the earlier conversation"), "the summary goes on in later requests");
    // The person saw the compactions.
    let shown = client
        .updates()
        .iter()
        .filter(|u| matches!(u, SessionUpdate::ToolCall(call) if call.title == "Compacted the conversation"))
        .count();
    assert!(shown >= 1);
    // Token accounting: the totals add up every turn's counts.
    let Some(SessionUpdate::UsageUpdate(usage)) =
        client.updates().into_iter().rev().find(|u| matches!(u, SessionUpdate::UsageUpdate(_)))
    else {
        panic!("no usage update")
    };
    assert_eq!(usage.context_window, u64::from(WINDOW));
    let counted: u64 = requests.iter().map(tokens_of).sum();
    // The fake counts the body it received; the agent adds what it reported (summaries too).
    assert!(
        usage.session.input_tokens >= counted * 9 / 10 && usage.session.input_tokens <= counted,
        "{usage:?} vs {counted}"
    );

    // A new process loads the session: it resumes from the compacted state, within the budget.
    drop(agent);
    provider.push(Turn::reply("Still here."));
    let client = Arc::new(Recorder::default());
    let agent = start_agent(dir.path(), &provider, WINDOW, Arc::clone(&client));
    agent
        .load(SessionLoadParams { session_id: session.clone(), cwd: None, mcp_servers: None })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let result = agent.prompt(prompt(&session, "what did you read?")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let resumed = provider.requests().pop().unwrap_or_else(|| panic!("no request"));
    assert!(!is_summary(&resumed.body));
    assert!(tokens_of(&resumed) <= LIMIT, "{} tokens", tokens_of(&resumed));
    let text = resumed.body.to_string();
    assert!(text.contains("[Summary of the earlier conversation"), "{text}");
    assert!(text.contains("what did you read?"));
    // The replay still shows the person everything that happened.
    let replayed_reads = client
        .updates()
        .iter()
        .filter(|u| matches!(u, SessionUpdate::ToolCall(c) if c.title.starts_with("Read f")))
        .count();
    assert_eq!(replayed_reads, TURNS);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_length_error_mid_session_compacts_and_the_turn_goes_on() {
    let dir = workspace_with_files(3, 6_000);
    let overflow = r#"{"error":{"message":"This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("call_0", "read", json!({"file_path": "f0.txt"})),
        Turn::new().tool_call("call_1", "read", json!({"file_path": "f1.txt"})),
        Turn::new().tool_call("call_2", "read", json!({"file_path": "f2.txt"})),
        // The provider counts differently from the agent's estimate and refuses.
        Turn::status(400).body(overflow),
        Turn::reply("Done."),
    ])
    .await;
    provider.answer_when(is_summary, Turn::reply(SUMMARY));
    // A large window: the agent sees no reason to compact by itself.
    let (agent, client, session) = start_session(dir.path(), &provider, 200_000);
    let result = agent.prompt(prompt(&session, "read three files")).await;
    assert_eq!(result, Ok(tandem_protocol::SessionPromptResult { stop_reason: StopReason::EndTurn, error: None }));
    let requests = provider.requests();
    let kinds: Vec<&str> = requests.iter().map(|r| if is_summary(&r.body) { "summary" } else { "turn" }).collect();
    assert_eq!(kinds, ["turn", "turn", "turn", "turn", "summary", "turn"]);
    let retried = requests[5].body.to_string();
    assert!(retried.contains("[Summary of the earlier conversation"), "{retried}");
    assert!(retried.len() < requests[3].body.to_string().len(), "the retry is shorter than the refused request");
    assert!(
        client
            .updates()
            .iter()
            .any(|u| matches!(u, SessionUpdate::ToolCall(c) if c.title == "Compacted the conversation"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_on_request_summarises_and_a_second_refusal_ends_the_turn_with_the_error() {
    let dir = workspace_with_files(2, 3_000);
    let overflow = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 9000 tokens > 8192 maximum"}}"#;
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("call_0", "read", json!({"file_path": "f0.txt"})),
        Turn::new().tool_call("call_1", "read", json!({"file_path": "f1.txt"})),
        Turn::reply("Read both."),
        Turn::status(400).body(overflow),
        Turn::status(400).body(overflow),
    ])
    .await;
    provider.answer_when(is_summary, Turn::reply(SUMMARY));
    let (agent, _, session) = start_session(dir.path(), &provider, 200_000);
    let result = agent.prompt(prompt(&session, "read two files")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));

    let done = agent.compact(SessionCompactParams { session_id: session.clone() }).await;
    let done = done.unwrap_or_else(|e| panic!("{e}"));
    assert!(done.summarized, "{done:?}");
    assert!(done.tokens_after < done.tokens_before, "{done:?}");
    assert!(is_summary(&provider.requests()[3].body));

    // One compaction and retry per turn: a provider that still refuses ends the turn.
    let result = agent.prompt(prompt(&session, "more")).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.stop_reason, StopReason::Error);
    assert!(result.error.unwrap_or_default().contains("no longer fits the context window"));
}

/// A compaction whose summary is no smaller than the turns it would replace keeps the turns:
/// `/compact` on a short session never makes it bigger.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_keeps_the_history_when_the_summary_is_not_smaller() {
    let dir = workspace_with_files(1, 200);
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("call_0", "read", json!({"file_path": "f0.txt"})),
        Turn::reply("Read it."),
        Turn::reply("And again."),
    ])
    .await;
    // A summariser that writes more than the conversation held.
    provider.answer_when(is_summary, Turn::reply(SUMMARY.repeat(20)));
    let (agent, _, session) = start_session(dir.path(), &provider, 200_000);
    for text in ["read the file", "once more"] {
        let result = agent.prompt(prompt(&session, text)).await;
        assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    }
    let done = agent.compact(SessionCompactParams { session_id: session.clone() }).await;
    let done = done.unwrap_or_else(|e| panic!("{e}"));
    assert!(done.tokens_after <= done.tokens_before, "{done:?}");
    assert!(!done.summarized, "{done:?}");
}

/// `value` without Anthropic's `cache_control` markers (which move to the latest turn).
fn unmarked(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            map.iter().filter(|(key, _)| *key != "cache_control").map(|(k, v)| (k.clone(), unmarked(v))).collect()
        }
        Value::Array(items) => Value::Array(items.iter().map(unmarked).collect()),
        other => other.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_request_extends_the_last_one_so_provider_caches_hit_and_anthropic_marks_two_breakpoints() {
    for kind in [ProviderKind::OpenAi, ProviderKind::Anthropic] {
        let dir = workspace_with_files(4, 2_000);
        let mut script: Vec<Turn> = (0..4)
            .map(|i| Turn::new().tool_call(format!("call_{i}"), "read", json!({"file_path": format!("f{i}.txt")})))
            .collect();
        script.push(Turn::reply("Done."));
        let provider = FakeProvider::start(script).await;
        let agent = start_agent_of(kind, dir.path(), &provider, 200_000, Arc::new(Recorder::default()));
        let session = support::new_session(&agent);
        let result = agent.prompt(prompt(&session, "read four files")).await;
        assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
        let requests = provider.requests();
        assert_eq!(requests.len(), 5);
        for pair in requests.windows(2) {
            let (before, after) = (unmarked(&pair[0].body), unmarked(&pair[1].body));
            assert_eq!(before["system"], after["system"], "{kind:?}: the system prompt is stable");
            assert_eq!(before["tools"], after["tools"], "{kind:?}: the tools are stable");
            let (old, new) = (before["messages"].as_array(), after["messages"].as_array());
            let (Some(old), Some(new)) = (old, new) else { panic!("no messages") };
            assert!(new.len() > old.len() && new[..old.len()] == old[..], "{kind:?}: the history is a prefix");
        }
        if kind == ProviderKind::Anthropic {
            for request in &requests {
                let text = request.body.to_string();
                assert_eq!(text.matches("cache_control").count(), 2, "system and the latest turn: {text}");
                let last = request.body["messages"].as_array().and_then(|m| m.last()).cloned().unwrap_or_default();
                assert!(last.to_string().contains("cache_control"), "{last}");
            }
        }
    }
}

/// The session's estimated cost in the last usage update.
fn last_cost(client: &Recorder) -> Option<f64> {
    client.updates().into_iter().rev().find_map(|u| match u {
        SessionUpdate::UsageUpdate(usage) => Some(usage.session.cost_usd),
        _ => None,
    })?
}

/// A window the cost test's reported usage (a million tokens a turn) fits in: its turns are about
/// prices, not compaction.
const COST_WINDOW: u32 = 4_000_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sessions_cost_adds_every_turn_at_its_models_price_and_survives_a_reload() {
    let dir = workspace_with_files(0, 0);
    // Anthropic reports cache reads apart from `input_tokens`; they cost a tenth.
    let provider = FakeProvider::start(vec![Turn::reply("one").usage(400_000, 100_000).cache_usage(600_000, 0)]).await;
    let client = Arc::new(Recorder::default());
    let agent = start_agent_of(ProviderKind::Anthropic, dir.path(), &provider, COST_WINDOW, Arc::clone(&client));
    let session = support::new_session(&agent);

    // A model the price table does not know costs nothing that anyone could state.
    let result = agent.prompt(prompt(&session, "hello")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    assert_eq!(last_cost(&client), None);

    agent.set_model(&session, "claude-sonnet-4-5").unwrap_or_else(|e| panic!("{e}"));
    provider.push(Turn::reply("two").usage(400_000, 100_000).cache_usage(600_000, 0));
    let result = agent.prompt(prompt(&session, "again")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    // 400k fresh prompt tokens at $3/M, 600k cached at $0.30/M, 100k out at $15/M.
    let cost = last_cost(&client).unwrap_or_else(|| panic!("no cost for a priced model"));
    assert!((cost - 2.88).abs() < 1e-6, "{cost}");

    drop(agent);
    let client = Arc::new(Recorder::default());
    let agent = start_agent_of(ProviderKind::Anthropic, dir.path(), &provider, COST_WINDOW, Arc::clone(&client));
    agent
        .load(SessionLoadParams { session_id: session.clone(), cwd: None, mcp_servers: None })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    agent.set_model(&session, "claude-sonnet-4-5").unwrap_or_else(|e| panic!("{e}"));
    provider.push(Turn::reply("three").usage(1_000_000, 0));
    let result = agent.prompt(prompt(&session, "once more")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let cost = last_cost(&client).unwrap_or_else(|| panic!("no cost after the reload"));
    assert!((cost - 5.88).abs() < 1e-6, "the reloaded session goes on from its cost: {cost}");
}

/// What one long scripted session of reads asked of the model.
struct Compactions {
    turns: usize,
    summaries: usize,
    /// The largest request's tokens (as the provider counts them) and the budget.
    largest: u64,
    limit: u64,
}

/// `turns` reads of `bytes`-byte files in one turn against a model of `window` tokens whose
/// answers may take the default share of it (as `tandem` sets `max_tokens` when the configuration
/// names none).
async fn read_session(turns: usize, bytes: usize, window: u32) -> Compactions {
    let dir = workspace_with_files(turns, bytes);
    let mut script: Vec<Turn> = (0..turns)
        .map(|i| Turn::new().tool_call(format!("call_{i}"), "read", json!({"file_path": format!("f{i}.txt")})))
        .collect();
    script.push(Turn::reply("All read."));
    let provider = FakeProvider::start(script).await;
    provider.count_tokens(BYTES_PER_TOKEN, Some(u64::from(window)));
    provider.answer_when(is_summary, Turn::reply(SUMMARY));
    let max_tokens = tandem_llm::profile::default_max_tokens("scripted", &provider.base_url(), Some(window));
    let mut config =
        AgentConfig::new(support::settings(ProviderKind::OpenAi, &provider.base_url(), window, max_tokens));
    config.max_turns = turns as u32 + 10;
    let agent = support::start(dir.path(), config, Arc::new(Recorder::default()));
    let session = support::new_session(&agent);
    let result = agent.prompt(prompt(&session, "read every file, one at a time")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn), "{bytes} B in a {window}-token window");
    let requests = provider.requests();
    let summaries = requests.iter().filter(|r| is_summary(&r.body)).count();
    assert_eq!(requests.len() - summaries, turns + 1, "no request was refused and retried");
    Compactions {
        turns,
        summaries,
        largest: requests.iter().map(tokens_of).max().unwrap_or(0),
        limit: u64::from(window - max_tokens),
    }
}

fn check_compactions(run: &Compactions, bytes: usize, window: u32) {
    eprintln!(
        "{bytes} B outputs, {window}-token window: {} summaries in {} turns, largest request {} of {} tokens",
        run.summaries, run.turns, run.largest, run.limit
    );
    assert!(
        run.largest <= run.limit,
        "{bytes} B in {window}: a request of {} tokens, budget {}",
        run.largest,
        run.limit
    );
    assert!(
        run.summaries * 100 <= 10 * run.turns,
        "{bytes} B in {window}: {} summaries in {} turns (at most 10 per 100)",
        run.summaries,
        run.turns
    );
}

/// Compaction with hysteresis: whatever the output size and the window, a session of large
/// reads asks the model for a summary at most once in ten turns, and no request goes over the
/// budget (an oversized output is cut, old ones elided, before anything is summarised).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_reads_in_any_window_need_at_most_ten_summaries_per_hundred_turns() {
    for window in [8_192, 32_768, 131_072] {
        for bytes in [4_096, 50_000, 200_000] {
            let run = read_session(100, bytes, window).await;
            check_compactions(&run, bytes, window);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig { cases: 6, ..Default::default() })]
    /// The same for output sizes and windows in between.
    #[test]
    fn summaries_stay_rare_and_requests_within_the_budget(
        bytes in 1_000usize..150_000,
        window in proptest::sample::select(vec![8_192u32, 16_384, 24_000, 32_768, 65_536, 100_000]),
    ) {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build();
        let runtime = runtime.unwrap_or_else(|e| panic!("{e}"));
        let run = runtime.block_on(read_session(50, bytes, window));
        check_compactions(&run, bytes, window);
    }
}

/// Every model gets the core tools up front, within 2,500 tokens of definitions for the whole
/// built-in set; a tool outside it is found with `tool_search`, offered from then on, and runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deferred_tool_is_found_with_tool_search_and_called() {
    let dir = workspace_with_files(0, 0);
    std::fs::write(dir.path().join("a.txt"), "one\ntwo\n").unwrap_or_else(|e| panic!("{e}"));
    let edits = json!({"file_path": "a.txt", "edits": [
        {"old_string": "one", "new_string": "uno"},
        {"old_string": "two", "new_string": "dos"},
    ]});
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("s1", "tool_search", json!({"query": "several edits to one file at once"})),
        Turn::new().tool_call("e1", "multiedit", edits),
        Turn::reply("Done."),
    ])
    .await;
    // A large window: the core set is what every model gets, not a small-window fallback.
    let agent = start_agent(dir.path(), &provider, 200_000, Arc::new(Recorder::default()));
    let session = support::new_session(&agent);
    let result = agent.prompt(prompt(&session, "translate a.txt")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let requests = provider.requests();
    let names = |body: &Value| -> Vec<String> {
        body["tools"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["function"]["name"].as_str())
            .map(str::to_owned)
            .collect()
    };
    let first = names(&requests[0].body);
    for core in ["read", "write", "edit", "bash", "grep", "glob", "list", "tool_search"] {
        assert!(first.contains(&core.to_owned()), "{core} is offered up front: {first:?}");
    }
    assert!(!first.contains(&"multiedit".to_owned()), "deferred: {first:?}");
    assert!(!first.contains(&"skill".to_owned()), "no skill is listed: no `skill` tool: {first:?}");
    assert!((8..=12).contains(&first.len()), "about ten tools up front: {first:?}");
    let tokens = requests[0].body["tools"].to_string().len() as f64 / BYTES_PER_TOKEN;
    assert!(tokens <= 2_500.0, "the first request's tool definitions take {tokens} tokens");
    assert!(names(&requests[1].body).contains(&"multiedit".to_owned()), "found, then offered");
    let text = std::fs::read_to_string(dir.path().join("a.txt")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, "uno\ndos\n");
}
