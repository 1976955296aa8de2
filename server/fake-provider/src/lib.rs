//! A scripted model provider over real HTTP and SSE, for tests.
//!
//! [`FakeProvider::start`] binds `127.0.0.1:0` and serves `POST …/chat/completions` (OpenAI
//! Chat Completions) and `POST …/messages` (Anthropic Messages), each request answered with
//! the next scripted [`Turn`] in the format its path asks for. It runs on a thread of its own
//! with its own runtime, so it keeps answering while a test blocks on something else (such as
//! a child process's stdout). It records every request ([`FakeProvider::requests`]) and stops
//! when dropped. Requests beyond the script get HTTP 500 with a body saying "script exhausted".
//!
//! ```
//! use serde_json::json;
//! use tandem_fake_provider::{FakeProvider, Turn};
//!
//! # #[tokio::main(flavor = "current_thread")] async fn main() {
//! let provider = FakeProvider::start(vec![
//!     // First request: a tool call whose arguments arrive in two fragments.
//!     Turn::new().text("Let me look.").tool_call_fragments("call_1", "read", [r#"{"path":"#, r#""a.rs"}"#]),
//!     // Second request: a text answer with usage.
//!     Turn::reply("It defines `main`.").usage(120, 8),
//! ])
//! .await;
//! let base_url = provider.base_url(); // "http://127.0.0.1:PORT/v1": point the client here
//! # drop(base_url);
//! // ... run the code under test, then:
//! for request in provider.requests() {
//!     assert_eq!(request.path, "/v1/chat/completions");
//!     assert_eq!(request.body["stream"], json!(true));
//! }
//! # }
//! ```

mod images;
mod server;
mod turn;

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use images::{ImageRefusal, SentImage};
pub use turn::{Stop, Turn};

/// One request the fake provider received.
#[derive(Clone, Debug, PartialEq)]
pub struct ReceivedRequest {
    /// Request path, e.g. `/v1/messages`.
    pub path: String,
    /// Headers in order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as JSON (a JSON string holding the text when it was not JSON).
    pub body: Value,
    /// When the request had been read.
    pub received_at: std::time::Instant,
    /// When the whole response had been written (`None` while streaming, or if it never was).
    pub answered_at: Option<std::time::Instant>,
}

impl ReceivedRequest {
    /// The images the request carried, in order, each checked against the documented format
    /// of the endpoint it was sent to (a request that breaks it was answered with HTTP 400).
    ///
    /// # Errors
    ///
    /// What the provider would refuse about them.
    pub fn images(&self) -> Result<Vec<SentImage>, ImageRefusal> {
        let format = if self.path.ends_with("/messages") { turn::Format::Anthropic } else { turn::Format::OpenAi };
        images::check(format, &self.body)
    }

    /// The first header called `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers.iter().find(|(key, _)| *key == name).map(|(_, value)| value.as_str())
    }
}

/// Which requests a standing answer is for.
pub(crate) struct Rule(pub Box<dyn Fn(&Value) -> bool + Send + Sync>);

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Rule")
    }
}

/// A model's context window as the fake provider plays it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Window {
    /// Request bytes per token (the fake tokenizer).
    pub bytes_per_token: f64,
    /// Requests of more tokens are refused with the format's "context too long" error.
    pub tokens: Option<u64>,
}

/// State shared with the server thread.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub script: Mutex<VecDeque<Turn>>,
    pub requests: Mutex<Vec<ReceivedRequest>>,
    pub rules: Mutex<Vec<(Rule, Turn)>>,
    pub window: Mutex<Option<Window>>,
    pub models: Mutex<Option<Vec<String>>>,
}

/// A running fake provider; stops when dropped.
#[derive(Debug)]
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
}

impl FakeProvider {
    /// Starts serving `script`, one turn per request, in order.
    ///
    /// # Panics
    ///
    /// When no loopback port can be bound or no thread started (a broken test machine).
    pub async fn start(script: Vec<Turn>) -> FakeProvider {
        Self::start_blocking(script)
    }

    /// [`FakeProvider::start`] for tests without an async runtime.
    ///
    /// # Panics
    ///
    /// As [`FakeProvider::start`].
    #[expect(clippy::expect_used, reason = "test infrastructure: failing to bind loopback is a broken machine")]
    pub fn start_blocking(script: Vec<Turn>) -> FakeProvider {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("fake provider: bind 127.0.0.1:0");
        listener.set_nonblocking(true).expect("fake provider: non-blocking listener");
        let addr = listener.local_addr().expect("fake provider: local address");
        let shared = Arc::new(Shared { script: Mutex::new(script.into()), ..Shared::default() });
        let shutdown = CancellationToken::new();
        let (thread_shared, thread_shutdown) = (Arc::clone(&shared), shutdown.clone());
        std::thread::Builder::new()
            .name(format!("fake-provider-{}", addr.port()))
            .spawn(move || server::run(listener, thread_shared, thread_shutdown))
            .expect("fake provider: spawn thread");
        FakeProvider { addr, shared, shutdown }
    }

    /// `http://127.0.0.1:PORT/v1`: the base URL for either wire format.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in order (requests to unknown paths included).
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        self.shared.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }

    /// When the latest request had been read, and how many have come (without copying them all).
    pub fn latest_received(&self) -> Option<(usize, std::time::Instant)> {
        let requests = self.shared.requests.lock().unwrap_or_else(PoisonError::into_inner);
        requests.last().map(|request| (requests.len(), request.received_at))
    }

    /// Appends a turn to the script.
    pub fn push(&self, turn: Turn) {
        self.shared.script.lock().unwrap_or_else(PoisonError::into_inner).push_back(turn);
    }

    /// Answers every request whose JSON body `matches` with `turn`, before the script and
    /// without using it up (e.g. a summary request that may come at any point).
    pub fn answer_when(&self, matches: impl Fn(&Value) -> bool + Send + Sync + 'static, turn: Turn) {
        self.shared.rules.lock().unwrap_or_else(PoisonError::into_inner).push((Rule(Box::new(matches)), turn));
    }

    /// Counts a request's tokens as its body's bytes / `bytes_per_token`: streamed turns without
    /// their own [`Turn::usage`] report that many input tokens; with `window`, a request of more
    /// tokens is refused as the real providers refuse it (HTTP 400: OpenAI
    /// `context_length_exceeded`, Anthropic "prompt is too long"), without using up the script.
    pub fn count_tokens(&self, bytes_per_token: f64, window: Option<u64>) {
        *self.shared.window.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(Window { bytes_per_token, tokens: window });
    }

    /// Lists `models` at `GET …/models` (OpenAI's and Anthropic's format: `data[].id`); without
    /// this, that endpoint answers 404. Model-list requests are not recorded.
    pub fn list_models(&self, models: &[&str]) {
        *self.shared.models.lock().unwrap_or_else(PoisonError::into_inner) =
            Some(models.iter().map(|m| (*m).to_owned()).collect());
    }

    /// How many scripted turns are still unused.
    pub fn remaining(&self) -> usize {
        self.shared.script.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
