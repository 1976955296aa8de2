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
    ContentBlock, EmbeddedResource, SessionLoadParams, SessionNewParams, SessionPromptParams, SessionUpdate, StopReason,
};

fn start_agent(root: &Path, provider: &FakeProvider, client: Arc<Recorder>) -> Arc<Agent> {
    let config = AgentConfig::new(support::settings(ProviderKind::OpenAi, &provider.base_url(), 100_000, 1_024));
    support::start(root, config, client)
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
            SessionUpdate::UserMessageChunk { content } => Some(content),
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
    let agent = start_agent(dir.path(), &provider, Arc::new(Recorder::default()));
    let session = agent.new_session(SessionNewParams::default()).unwrap_or_else(|e| panic!("{e}")).session_id;
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
