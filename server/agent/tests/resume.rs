//! A resumed session goes on as the live one left it: the model chosen in it, the person's
//! prompts as typed (attachments as links, not their text), none of Tandem's notes to the
//! model in the person's words, and the session's token totals for the cost meter.

mod support;

use std::path::Path;
use std::sync::Arc;

use support::{Recorder, prompt};
use tandem_agent::{Agent, AgentConfig};
use tandem_fake_provider::{FakeProvider, Turn};
use tandem_llm::ProviderKind;
use tandem_protocol::{
    ContentBlock, EmbeddedResource, SessionLoadParams, SessionPromptParams, SessionUpdate, StopReason,
};

fn start_agent(root: &Path, provider: &FakeProvider, client: Arc<Recorder>) -> Arc<Agent> {
    let config = AgentConfig::new(support::settings(ProviderKind::OpenAi, &provider.base_url(), 100_000, 1_024));
    support::start(root, config, client)
}

/// An agent and a new session of it.
fn start_session(root: &Path, provider: &FakeProvider) -> (Arc<Agent>, String) {
    let agent = start_agent(root, provider, Arc::new(Recorder::default()));
    let session = support::new_session(&agent);
    (agent, session)
}

fn tempdir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"))
}

/// The session reloaded in a fresh agent (a new process), with the updates its load replayed.
async fn reload(root: &Path, provider: &FakeProvider, session: &str) -> (Arc<Agent>, Arc<Recorder>) {
    let client = Arc::new(Recorder::default());
    let agent = start_agent(root, provider, Arc::clone(&client));
    agent
        .load(SessionLoadParams { session_id: session.to_owned(), cwd: None, mcp_servers: None })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (agent, client)
}

/// The user chunks a load replayed.
fn user_chunks(client: &Recorder) -> Vec<ContentBlock> {
    client
        .updates()
        .into_iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk { content, .. } => Some(content),
            _ => None,
        })
        .collect()
}

fn text_of(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text { text } => text.clone(),
        other => format!("{other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_the_model_chosen_in_it_and_its_next_request_uses_it() {
    let dir = tempdir();
    let provider = FakeProvider::start(vec![Turn::reply("one")]).await;
    let (agent, session) = start_session(dir.path(), &provider);
    let result = agent.prompt(prompt(&session, "hello")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    agent.set_model(&session, "chosen-model").unwrap_or_else(|e| panic!("{e}"));
    drop(agent);

    let (agent, _) = reload(dir.path(), &provider, &session).await;
    assert_eq!(agent.model(&session).ok().as_deref(), Some("chosen-model"));
    provider.push(Turn::reply("two"));
    let result = agent.prompt(prompt(&session, "again")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let last = provider.requests().pop().unwrap_or_else(|| panic!("no request"));
    assert_eq!(last.body["model"], "chosen-model", "the resumed session's request: {}", last.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tandems_notes_to_the_model_never_replay_as_the_persons_words() {
    let dir = tempdir();
    // A nested instruction file comes into force when the model reads beside it: Tandem tells
    // the model, in the same message as the tool's result.
    std::fs::create_dir_all(dir.path().join("sub")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("sub/AGENTS.md"), "Sub rules: tabs.\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("sub/x.txt"), "x\n").unwrap_or_else(|e| panic!("{e}"));
    let provider = FakeProvider::start(vec![
        Turn::new().text("Reading.").tool_call("call_0", "read", serde_json::json!({"file_path": "sub/x.txt"})),
        Turn::new().text("Writing.").tool_call(
            "call_1",
            "write",
            serde_json::json!({"file_path": "new.txt", "content": "two\n"}),
        ),
        Turn::reply("written"),
    ])
    .await;
    let (agent, session) = start_session(dir.path(), &provider);
    let result = agent.prompt(prompt(&session, "write it")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let restored = agent.undo(&session, None).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(!restored.restored.is_empty(), "{restored:?}");
    provider.push(Turn::reply("ok"));
    let result = agent.prompt(prompt(&session, "after the restore")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    // The model was told of the restore and of the instruction file.
    let last = provider.requests().pop().unwrap_or_else(|| panic!("no request")).body.to_string();
    assert!(last.contains("[The person restored the workspace"), "{last}");
    assert!(last.contains("Sub rules: tabs."), "{last}");
    drop(agent);

    // Resumed twice: the second load reads what the first session wrote after its load too.
    let (agent, _) = reload(dir.path(), &provider, &session).await;
    provider.push(Turn::reply("fine"));
    let result = agent.prompt(prompt(&session, "resumed once")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    drop(agent);
    let (_agent, client) = reload(dir.path(), &provider, &session).await;
    let said: Vec<String> = user_chunks(&client).iter().map(text_of).collect();
    assert_eq!(said, ["write it", "after the restore", "resumed once"], "the person's words replayed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_persons_prompts_replay_as_typed_with_attachments_as_links() {
    let dir = tempdir();
    let provider = FakeProvider::start(vec![Turn::reply("seen")]).await;
    let (agent, session) = start_session(dir.path(), &provider);
    let uri = format!("file://{}/calc.py", dir.path().display());
    let typed = vec![
        ContentBlock::text("look at this"),
        ContentBlock::Resource {
            resource: EmbeddedResource {
                uri: uri.clone(),
                text: "def div(a, b):\n    return a / b\n".into(),
                mime_type: None,
            },
        },
        ContentBlock::ResourceLink { uri: "https://example.com/doc".into(), name: "doc".into(), mime_type: None },
    ];
    let result = agent.prompt(SessionPromptParams { session_id: session.clone(), prompt: typed }).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let sent = provider.requests().pop().unwrap_or_else(|| panic!("no request")).body.to_string();
    assert!(sent.contains("return a / b"), "the model gets the attached text: {sent}");
    drop(agent);

    let (_agent, client) = reload(dir.path(), &provider, &session).await;
    assert_eq!(
        user_chunks(&client),
        [
            ContentBlock::text("look at this"),
            ContentBlock::ResourceLink { uri, name: "calc.py".into(), mime_type: None },
            ContentBlock::ResourceLink { uri: "https://example.com/doc".into(), name: "doc".into(), mime_type: None },
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_shows_its_token_totals() {
    let dir = tempdir();
    let provider = FakeProvider::start(vec![Turn::reply("one").usage(1_000, 200)]).await;
    let (agent, session) = start_session(dir.path(), &provider);
    let result = agent.prompt(prompt(&session, "hello")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    drop(agent);

    let (_agent, client) = reload(dir.path(), &provider, &session).await;
    let usage = client
        .updates()
        .into_iter()
        .rev()
        .find_map(|u| match u {
            SessionUpdate::UsageUpdate(usage) => Some(usage),
            _ => None,
        })
        .unwrap_or_else(|| panic!("the load replays no usage"));
    assert_eq!((usage.session.input_tokens, usage.session.output_tokens), (1_000, 200));
    assert_eq!(usage.total_tokens, 1_200);
    assert_eq!(usage.context_window, 100_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_prompt_replays_as_its_own_message() {
    let dir = tempdir();
    // The first turn never gets an answer: the person cancels it.
    let provider = FakeProvider::start(vec![Turn::hang(), Turn::reply("hello back")]).await;
    let (agent, session) = start_session(dir.path(), &provider);
    let running = tokio::spawn({
        let agent = Arc::clone(&agent);
        let params = prompt(&session, "think hard about calc");
        async move { agent.prompt(params).await }
    });
    // Waits for the request to reach the provider (the turn is running), then cancels it.
    while provider.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    agent.cancel(&session);
    let result = running.await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::Cancelled));
    let result = agent.prompt(prompt(&session, "hello after cancel")).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    drop(agent);

    let (_agent, client) = reload(dir.path(), &provider, &session).await;
    let chunks: Vec<(Option<String>, String)> = client
        .updates()
        .into_iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk { content, message_id } => Some((message_id, text_of(&content))),
            _ => None,
        })
        .collect();
    assert_eq!(chunks.len(), 2, "{chunks:?}");
    assert_eq!(chunks[0].1, "think hard about calc");
    assert_eq!(chunks[1].1, "hello after cancel");
    assert!(chunks[0].0.is_some() && chunks[0].0 != chunks[1].0, "two prompts, two messages: {chunks:?}");
}
