//! Images end to end through the agent, against the scripted provider, which checks each
//! request's images against the format its endpoint documents (and refuses a malformed one as
//! the provider would): the person's images and a `read` of an image reach a vision model in
//! the provider's format, resized under its limits; a model without vision is refused by name;
//! compaction drops old images before any text.

mod support;

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::json;
use support::Recorder;
use tandem_agent::{Agent, AgentConfig};
use tandem_fake_provider::{FakeProvider, SentImage, Turn};
use tandem_llm::ProviderKind;
use tandem_protocol::{ContentBlock, SessionPromptParams, SessionUpdate, StopReason};
use tandem_tool_api::{Registry, ToolConfig};

fn start(kind: ProviderKind, model: &str, root: &Path, provider: &FakeProvider, window: Option<u32>) -> Arc<Agent> {
    let mut settings = support::settings(kind, &provider.base_url(), 0, 1_024);
    settings.model = model.to_owned();
    settings.context_window = window;
    let registry = Registry::new(tandem_tool_fs::all(), ToolConfig::default());
    support::start_with(root, AgentConfig::new(settings), Arc::new(Recorder::default()), registry)
}

/// A PNG of `width` × `height` (a gradient: small on disk, whatever its size).
fn png(width: u32, height: u32) -> Vec<u8> {
    let picture = image::RgbImage::from_fn(width, height, |x, y| image::Rgb([(x % 251) as u8, (y % 241) as u8, 90]));
    let mut out = Vec::new();
    image::DynamicImage::ImageRgb8(picture)
        .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap_or_else(|e| panic!("{e}"));
    out
}

fn dimensions(image: &SentImage) -> (u32, u32) {
    let decoded = image::load_from_memory(&image.bytes).unwrap_or_else(|e| panic!("{e}"));
    (decoded.width(), decoded.height())
}

fn image_block(bytes: &[u8]) -> ContentBlock {
    ContentBlock::Image {
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        mime_type: "image/png".into(),
        uri: None,
    }
}

fn prompt(session: &str, blocks: Vec<ContentBlock>) -> SessionPromptParams {
    SessionPromptParams { session_id: session.to_owned(), prompt: blocks }
}

const VISION: [(ProviderKind, &str); 2] =
    [(ProviderKind::Anthropic, "claude-sonnet-4-5"), (ProviderKind::OpenAi, "gpt-4o")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_png_reaches_a_vision_model_in_each_providers_format() {
    for (kind, model) in VISION {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let bytes = png(40, 30);
        std::fs::write(dir.path().join("shot.png"), &bytes).unwrap_or_else(|e| panic!("{e}"));
        let provider = FakeProvider::start(vec![
            Turn::new().tool_call("call_1", "read", json!({"file_path": "shot.png"})),
            Turn::reply("A gradient."),
        ])
        .await;
        let agent = start(kind, model, dir.path(), &provider, None);
        let session = support::new_session(&agent);
        let result = agent.prompt(prompt(&session, vec![ContentBlock::text("what is in shot.png?")])).await;
        assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn), "{kind:?}");
        let requests = provider.requests();
        assert_eq!(requests.len(), 2, "{kind:?}: the provider refused a request");
        let images = requests[1].images().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(images.len(), 1, "{kind:?}: {}", requests[1].body);
        assert_eq!(images[0].bytes, bytes, "{kind:?}: an image within the limits goes as it is");
        assert_eq!(images[0].media_type, "image/png");
        // Anthropic: inside the tool result; OpenAI: in a user message naming the call.
        assert!(images[0].in_tool_result, "{kind:?}: {}", requests[1].body);
        assert!(requests[1].body.to_string().contains("40×30 px"), "{kind:?}: the dimensions are told as text too");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pasted_screenshot_is_resized_under_each_providers_limits() {
    for (kind, model, edge) in
        [(ProviderKind::Anthropic, "claude-sonnet-4-5", 1_568), (ProviderKind::OpenAi, "gpt-4.1", 2_048)]
    {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let provider = FakeProvider::start(vec![Turn::reply("A wide screenshot.")]).await;
        let agent = start(kind, model, dir.path(), &provider, None);
        let session = support::new_session(&agent);
        let blocks = vec![ContentBlock::text("what is this?"), image_block(&png(4_000, 1_000))];
        let result = agent.prompt(prompt(&session, blocks)).await;
        assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn), "{kind:?}");
        let images = provider.requests()[0].images().unwrap_or_else(|e| panic!("{kind:?}: {e}"));
        assert_eq!(images.len(), 1);
        assert!(!images[0].in_tool_result);
        assert_eq!(dimensions(&images[0]), (edge, edge / 4), "{kind:?}: long edge at the limit, ratio kept");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_vision_refuses_an_image_by_name_and_read_says_so() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.path().join("shot.png"), png(64, 48)).unwrap_or_else(|e| panic!("{e}"));
    let provider = FakeProvider::start(vec![
        Turn::new().tool_call("call_1", "read", json!({"file_path": "shot.png"})),
        Turn::reply("I cannot see it."),
    ])
    .await;
    let agent = start(ProviderKind::OpenAi, "qwen2.5-coder", dir.path(), &provider, None);
    let session = support::new_session(&agent);
    let refused = agent.prompt(prompt(&session, vec![ContentBlock::text("look"), image_block(&png(8, 8))])).await;
    let message = refused.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(message.contains("`qwen2.5-coder` does not take images"), "{message}");
    assert!(provider.requests().is_empty(), "nothing was sent");
    // `read` of an image: the model is told it was not shown, with its description.
    let result = agent.prompt(prompt(&session, vec![ContentBlock::text("what is in shot.png?")])).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let requests = provider.requests();
    assert_eq!(requests[1].images(), Ok(Vec::new()));
    let body = requests[1].body.to_string();
    assert!(body.contains("64×48 px") && body.contains("`qwen2.5-coder` does not take images"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_drops_old_images_before_any_text() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Each 1024 × 1024 image costs about 765 tokens at OpenAI; the window holds about four turns of
    // text and image, so the fourth compacts: down to half the budget, by dropping old images.
    let provider = FakeProvider::start((0..4).map(|i| Turn::reply(format!("Seen {i}."))).collect()).await;
    let client = Arc::new(Recorder::default());
    let mut settings = support::settings(ProviderKind::OpenAi, &provider.base_url(), 0, 512);
    settings.model = "gpt-4o".into();
    settings.context_window = Some(5_000);
    let empty = Registry::new(Vec::new(), ToolConfig::default());
    let agent = support::start_with(dir.path(), AgentConfig::new(settings), Arc::clone(&client), empty);
    let session = support::new_session(&agent);
    let text = "notes ".repeat(100);
    for i in 0..4 {
        let blocks = vec![ContentBlock::text(format!("screenshot {i}: {text}")), image_block(&png(1_024, 1_024))];
        let result = agent.prompt(prompt(&session, blocks)).await;
        assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    }
    let requests = provider.requests();
    assert_eq!(requests.len(), 4, "no summary was needed");
    let counts: Vec<usize> = requests.iter().map(|r| r.images().map_or(usize::MAX, |i| i.len())).collect();
    assert_eq!(counts[..2], [1, 2]);
    assert!(counts[3] < 4 && counts[3] >= 1, "old images were dropped, the latest kept: {counts:?}");
    let last = requests[3].body.to_string();
    assert!(last.contains("[image dropped to save context: the pasted image: PNG image, 1024×1024 px"), "{last}");
    // Every prompt's text is still there, word for word.
    for i in 0..4 {
        assert!(last.contains(&format!("screenshot {i}: {text}")), "the text of prompt {i} was kept");
    }
    let compactions: Vec<String> = client
        .updates
        .lock()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(call) if call.title == "Compacted the conversation" => {
                Some(format!("{:?}", call.content))
            }
            _ => None,
        })
        .collect();
    assert!(
        !compactions.is_empty()
            && compactions.iter().all(|c| c.contains("old images dropped") && !c.contains("summarised")),
        "{compactions:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_its_images_and_replays_the_persons() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let provider = FakeProvider::start(vec![Turn::reply("A gradient."), Turn::reply("Still a gradient.")]).await;
    let agent = start(ProviderKind::Anthropic, "claude-sonnet-4-5", dir.path(), &provider, None);
    let session = support::new_session(&agent);
    let bytes = png(20, 10);
    let result = agent.prompt(prompt(&session, vec![ContentBlock::text("what is this?"), image_block(&bytes)])).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    drop(agent);
    // Another process loads the session: the image is replayed to the person and still sent.
    let client = Arc::new(Recorder::default());
    let mut settings = support::settings(ProviderKind::Anthropic, &provider.base_url(), 0, 1_024);
    settings.model = "claude-sonnet-4-5".into();
    settings.context_window = None;
    let empty = Registry::new(Vec::new(), ToolConfig::default());
    let agent = support::start_with(dir.path(), AgentConfig::new(settings), Arc::clone(&client), empty);
    agent
        .load(tandem_protocol::SessionLoadParams { session_id: session.clone(), cwd: None, mcp_servers: None })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let replayed: Vec<String> = client
        .updates
        .lock()
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UserMessageChunk { content: ContentBlock::Image { data, mime_type, .. }, .. } => {
                Some(format!("{mime_type}:{}", data.len()))
            }
            _ => None,
        })
        .collect();
    let data = base64::engine::general_purpose::STANDARD.encode(&bytes);
    assert_eq!(replayed, [format!("image/png:{}", data.len())]);
    let result = agent.prompt(prompt(&session, vec![ContentBlock::text("and now?")])).await;
    assert_eq!(result.map(|r| r.stop_reason), Ok(StopReason::EndTurn));
    let resumed = provider.requests()[1].images().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(resumed.len(), 1);
    assert_eq!(resumed[0].bytes, bytes);
}
