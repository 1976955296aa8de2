//! The provider client: one HTTP client per configuration, one streamed request per turn.
//!
//! A turn is a loop of attempts. An attempt that fails before any event was reported is retried
//! when the failure is transient (429, 5xx, 529, connection errors, a stream cut short, a
//! provider that says nothing before the stall timeout); once an event was reported, a failure
//! ends the turn, so the caller never sees a piece twice. The overall timeout covers every
//! attempt and every wait; the stall timeout covers each wait for bytes; cancelling drops the
//! response, which closes the connection.

use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap};
use serde_json::Value;
use tokio::time::{Instant, sleep, sleep_until, timeout};
use tokio_util::sync::CancellationToken;

use crate::assemble::Assembler;
use crate::encoded::EncodeCache;
use crate::openai::{StreamFault, snippet};
use crate::sse::{SseEvent, SseParser};
use crate::{
    ErrorKind, Event, LlmError, ProviderKind, ProviderSettings, Request, Response, StopReason, anthropic, openai,
};

/// At most this much of an error body is read.
const ERROR_BODY_LIMIT: usize = 16 * 1024;

/// A configured model provider.
#[derive(Clone, Debug)]
pub struct Client {
    settings: ProviderSettings,
    /// The HTTP client, made at the first request and shared by the clones of this client:
    /// making one reads the system's certificates (a few milliseconds), which a sidecar that
    /// has not talked to a model yet (its start, `tandem tool`) does not need.
    http: Arc<OnceLock<reqwest::Client>>,
    /// The JSON of messages already sent, shared by the clones of this client.
    encoded: Arc<Mutex<EncodeCache>>,
}

/// A failed attempt: the error to report and whether another attempt may help.
#[derive(Debug)]
struct Failure {
    error: LlmError,
    /// Short reason for [`Event::Retrying`].
    reason: String,
    retryable: bool,
    retry_after: Option<Duration>,
}

impl Failure {
    fn fatal(kind: ErrorKind, message: String) -> Self {
        Self { reason: message.clone(), error: LlmError { kind, message }, retryable: false, retry_after: None }
    }

    fn transient(kind: ErrorKind, reason: String, message: String) -> Self {
        Self { error: LlmError { kind, message }, reason, retryable: true, retry_after: None }
    }
}

enum Decoder {
    OpenAi(openai::Decoder),
    Anthropic(anthropic::Decoder),
}

impl Client {
    /// A client for `settings` (no network traffic yet).
    pub fn new(settings: ProviderSettings) -> Result<Self, LlmError> {
        // reqwest is built without a default crypto provider (ring instead of aws-lc, which
        // needs cmake); the first client installs ring for the process unless something else
        // already installed one. Losing that race to another thread is fine: one is installed.
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            match rustls::crypto::ring::default_provider().install_default() {
                Ok(()) | Err(_) => {}
            }
        }
        Ok(Self { settings, http: Arc::default(), encoded: Arc::default() })
    }

    /// The configuration this client uses.
    pub fn settings(&self) -> &ProviderSettings {
        &self.settings
    }

    /// The HTTP client (connection pool) requests share.
    pub(crate) fn http(&self) -> Result<&reqwest::Client, LlmError> {
        if let Some(http) = self.http.get() {
            return Ok(http);
        }
        let made =
            reqwest::Client::builder().connect_timeout(self.settings.timeouts.connect).build().map_err(|error| {
                LlmError { kind: ErrorKind::Unreachable, message: format!("could not set up the HTTP client: {error}") }
            })?;
        // Two first requests at once may both make one; the first kept serves both.
        Ok(self.http.get_or_init(|| made))
    }

    /// `builder` with the provider's authentication: OpenAI's bearer key, Anthropic's
    /// `x-api-key` and API version.
    pub(crate) fn authorize(&self, mut builder: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        let key = self.settings.api_key.as_deref().filter(|key| !key.is_empty());
        match self.settings.kind {
            ProviderKind::OpenAi => {
                if let Some(key) = key {
                    builder = builder.bearer_auth(key);
                }
            }
            ProviderKind::Anthropic => {
                if let Some(key) = key {
                    builder = builder.header("x-api-key", key);
                }
                builder = builder.header("anthropic-version", "2023-06-01");
            }
        }
        builder
    }

    /// Runs one model turn: sends `request`, calls `on_event` for each streamed event, and
    /// returns the complete response. `cancel` closes the connection and returns
    /// [`ErrorKind::Cancelled`].
    pub async fn stream(
        &self,
        request: &Request,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, LlmError> {
        let base = self.settings.base_url.trim_end_matches('/');
        let (url, body) = {
            let mut encoded = self.encoded.lock().unwrap_or_else(PoisonError::into_inner);
            match self.settings.kind {
                ProviderKind::OpenAi => {
                    (format!("{base}/chat/completions"), openai::request_body(&self.settings, request, &mut encoded))
                }
                ProviderKind::Anthropic => {
                    (format!("{base}/messages"), anthropic::request_body(&self.settings, request, &mut encoded))
                }
            }
        };
        // Written once; each attempt shares the bytes.
        let outcome = self.send(&url, &body, cancel, on_event).await;
        self.encoded.lock().unwrap_or_else(PoisonError::into_inner).recycle(body);
        outcome
    }

    /// Sends `body` to `url`, retrying as the policy says.
    async fn send(
        &self,
        url: &str,
        body: &bytes::Bytes,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, LlmError> {
        let overall = self.settings.timeouts.overall;
        let deadline = Instant::now() + overall;
        let retry = self.settings.retry;
        let mut reported = false;
        let mut retries = 0;
        loop {
            let outcome = {
                let mut report = |event: Event| {
                    // Token counts replace each other, so a retry after them repeats nothing.
                    if !matches!(event, Event::Usage(_)) {
                        reported = true;
                    }
                    on_event(event);
                };
                tokio::select! {
                    biased;
                    () = cancel.cancelled() => return Err(cancelled()),
                    () = sleep_until(deadline) => return Err(self.timed_out()),
                    outcome = self.attempt(url, body, &mut report) => outcome,
                }
            };
            let failure = match outcome {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            if !failure.retryable || reported {
                return Err(failure.error);
            }
            if retries >= retry.max_retries {
                let mut error = failure.error;
                if retries > 0 {
                    error.message = format!("{} (gave up after {retries} retries)", error.message);
                }
                return Err(error);
            }
            retries += 1;
            let delay = match failure.retry_after {
                Some(after) => after.min(retry.max_delay),
                None => backoff(retry.base_delay, retry.max_delay, retries),
            };
            if Instant::now() + delay >= deadline {
                return Err(failure.error);
            }
            tracing::warn!(url, attempt = retries, ?delay, reason = %failure.reason, "retrying model request");
            on_event(Event::Retrying { attempt: retries, delay, reason: failure.reason });
            tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(cancelled()),
                () = sleep(delay) => {}
            }
        }
    }

    /// One HTTP request and its stream.
    async fn attempt(
        &self,
        url: &str,
        body: &bytes::Bytes,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<Response, Failure> {
        let http = self.http().map_err(|error| Failure::fatal(error.kind, error.message))?;
        let builder = http
            .post(url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "text/event-stream")
            .body(body.clone());
        let builder = self.authorize(builder);
        let stall = self.settings.timeouts.stall;
        let mut response = match timeout(stall, builder.send()).await {
            Err(_) => return Err(self.stalled("before answering")),
            Ok(Err(error)) => return Err(self.transport_failure(&error)),
            Ok(Ok(response)) => response,
        };
        if !response.status().is_success() {
            return Err(self.status_failure(response).await);
        }

        let mut parser = SseParser::default();
        let mut decoder = match self.settings.kind {
            ProviderKind::OpenAi => Decoder::OpenAi(openai::Decoder::default()),
            ProviderKind::Anthropic => Decoder::Anthropic(anthropic::Decoder::default()),
        };
        let mut asm = Assembler::default();
        let mut events = Vec::new();
        let mut saw_event = false;
        // The start of the body, to quote when it turns out not to be an event stream.
        let mut head = Vec::new();
        loop {
            let chunk = match timeout(stall, response.chunk()).await {
                Err(_) => return Err(self.stalled("in the middle of its answer")),
                Ok(Err(error)) => return Err(self.transport_failure(&error)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            if head.len() < 512 {
                head.extend_from_slice(&chunk[..chunk.len().min(512 - head.len())]);
            }
            parser.push(&chunk, &mut events);
            for event in events.drain(..) {
                saw_event = true;
                if self.decode(&mut decoder, &event, &mut asm, on_event)? {
                    return Ok(finish(asm));
                }
            }
        }
        parser.finish(&mut events);
        for event in events.drain(..) {
            saw_event = true;
            if self.decode(&mut decoder, &event, &mut asm, on_event)? {
                return Ok(finish(asm));
            }
        }
        if !saw_event {
            let text = String::from_utf8_lossy(&head);
            return Err(Failure::fatal(
                ErrorKind::Protocol,
                format!(
                    "the provider at {} answered with something that is not an event stream: {}",
                    self.settings.base_url,
                    snippet(text.trim())
                ),
            ));
        }
        let ended = match &mut decoder {
            Decoder::OpenAi(decoder) => decoder.finish(&mut asm, on_event),
            Decoder::Anthropic(decoder) => decoder.finish(&mut asm, on_event),
        };
        ended.map_err(|fault| self.stream_failure(fault))?;
        Ok(finish(asm))
    }

    fn decode(
        &self,
        decoder: &mut Decoder,
        event: &SseEvent,
        asm: &mut Assembler,
        on_event: &mut (dyn FnMut(Event) + Send),
    ) -> Result<bool, Failure> {
        let outcome = match decoder {
            Decoder::OpenAi(decoder) => decoder.event(event, asm, on_event),
            Decoder::Anthropic(decoder) => decoder.event(event, asm, on_event),
        };
        outcome.map_err(|fault| self.stream_failure(fault))
    }

    fn stream_failure(&self, fault: StreamFault) -> Failure {
        let base = &self.settings.base_url;
        match fault {
            StreamFault::Protocol(detail) => Failure::fatal(
                ErrorKind::Protocol,
                format!("the provider at {base} sent a stream Tandem cannot read: {detail}"),
            ),
            StreamFault::Provider { message, .. } if is_context_overflow(message.as_bytes()) => Failure::fatal(
                ErrorKind::ContextTooLong,
                format!(
                    "the conversation no longer fits the context window of model {}: {message}",
                    self.settings.model
                ),
            ),
            StreamFault::Provider { retryable, message } => {
                let full = format!("the provider at {base} failed while answering: {message}");
                if retryable {
                    Failure::transient(ErrorKind::Server, message, full)
                } else {
                    Failure::fatal(ErrorKind::Server, full)
                }
            }
        }
    }

    fn stalled(&self, when: &str) -> Failure {
        let stall = self.settings.timeouts.stall;
        Failure::transient(
            ErrorKind::Stalled,
            format!("no data for {stall:?}"),
            format!(
                "the provider at {} sent nothing for {stall:?} {when} (model {}); it may be overloaded or stuck",
                self.settings.base_url, self.settings.model
            ),
        )
    }

    fn timed_out(&self) -> LlmError {
        LlmError {
            kind: ErrorKind::Timeout,
            message: format!(
                "the model {} at {} did not finish within {:?}",
                self.settings.model, self.settings.base_url, self.settings.timeouts.overall
            ),
        }
    }

    fn transport_failure(&self, error: &reqwest::Error) -> Failure {
        let reason = root_cause(error);
        if error.is_connect() {
            let reason = if error.is_timeout() {
                format!("no connection within {:?}", self.settings.timeouts.connect)
            } else {
                reason
            };
            let base = &self.settings.base_url;
            let start = if base.contains(":11434") {
                "Start Ollama (`ollama serve`) or configure"
            } else {
                "Check that it is running, or configure"
            };
            let message = format!(
                "no model provider answered at {base} ({reason}). {start} a provider: set TANDEM_PROVIDER, \
                 TANDEM_BASE_URL, TANDEM_MODEL and TANDEM_API_KEY_ENV, or [provider] in your own \
                 ~/.config/tandem/config.toml (a project's .tandem/config.toml counts for its kind and base_url \
                 only once the folder is trusted: `tandem trust`)"
            );
            // Nothing listens on this machine's own port: waiting will not start it.
            if reason == "connection refused" && refused_locally(base) {
                return Failure::fatal(ErrorKind::Unreachable, message);
            }
            return Failure::transient(ErrorKind::Unreachable, reason.clone(), message);
        }
        Failure::transient(
            ErrorKind::Server,
            format!("connection failed: {reason}"),
            format!("the connection to the provider at {} failed: {reason}", self.settings.base_url),
        )
    }

    async fn status_failure(&self, mut response: reqwest::Response) -> Failure {
        let status = response.status();
        let retry_after = retry_after(response.headers());
        let mut body = Vec::new();
        while body.len() < ERROR_BODY_LIMIT {
            match timeout(self.settings.timeouts.stall, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                Ok(Ok(None) | Err(_)) | Err(_) => break,
            }
        }
        let detail = provider_message(&body);
        let code = status.as_u16();
        if code == 413 || (matches!(code, 400 | 422) && is_context_overflow(&body)) {
            return Failure::fatal(
                ErrorKind::ContextTooLong,
                format!(
                    "the conversation no longer fits the context window of model {} at {} (HTTP {code}: {detail})",
                    self.settings.model, self.settings.base_url
                ),
            );
        }
        let http = if detail.is_empty() { format!("HTTP {code}") } else { format!("HTTP {code}: {detail}") };
        let base = &self.settings.base_url;
        let model = &self.settings.model;
        let mut failure = match code {
            401 | 403 => {
                let hint = match (&self.settings.api_key, &self.settings.api_key_env) {
                    (None, Some(env)) => {
                        format!("No API key was found: set the environment variable {env} to your key.")
                    }
                    (Some(_), Some(env)) => format!("Check the key in the environment variable {env}."),
                    (_, None) => "No API key is configured: set TANDEM_API_KEY_ENV (or api_key_env under [provider] \
                                  in ~/.config/tandem/config.toml, or in the project's .tandem/config.toml once \
                                  it is trusted) to the name of the environment variable that holds it."
                        .to_owned(),
                };
                Failure::fatal(ErrorKind::Auth, format!("the provider at {base} refused the API key ({http}). {hint}"))
            }
            429 => Failure::transient(
                ErrorKind::RateLimited,
                http.clone(),
                format!("the provider at {base} is rate-limiting requests for model {model} ({http})"),
            ),
            408 | 500..=599 => Failure::transient(
                ErrorKind::Server,
                http.clone(),
                format!("the provider at {base} failed for model {model} ({http})"),
            ),
            _ => Failure::fatal(
                ErrorKind::Rejected,
                format!("the provider at {base} rejected the request for model {model} ({http})"),
            ),
        };
        failure.retry_after = retry_after;
        failure
    }
}

fn finish(asm: Assembler) -> Response {
    let stop = match &asm.stop {
        Some(stop) => stop.clone(),
        None if asm.has_tool_calls() => StopReason::ToolUse,
        None => StopReason::EndTurn,
    };
    let usage = asm.usage;
    Response { message: asm.into_message(), stop, usage }
}

fn cancelled() -> LlmError {
    LlmError { kind: ErrorKind::Cancelled, message: "the model request was cancelled".into() }
}

/// `base · 2^(attempt-1)` capped at `max`, with "equal jitter": half fixed, half random.
fn backoff(base: Duration, max: Duration, attempt: u32) -> Duration {
    let exponential = base.saturating_mul(1 << attempt.saturating_sub(1).min(20)).min(max);
    let random = RandomState::new().hash_one(std::time::SystemTime::now());
    let fraction = (random % 1_000_000) as f64 / 1_000_000.0;
    exponential / 2 + exponential.mul_f64(fraction / 2.0)
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds; HTTP dates are ignored.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers.get(name)?.to_str().ok()?.trim().parse::<f64>().ok().filter(|value| value.is_finite() && *value >= 0.0)
    };
    if let Some(ms) = number("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    number("retry-after").map(|secs| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// The provider's own words from an error body: `error.message` (both formats), `message`, or
/// the text itself, shortened.
fn provider_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    if let Ok(json) = serde_json::from_str::<Value>(&text) {
        let found = json
            .pointer("/error/message")
            .or_else(|| json.get("message"))
            .or_else(|| json.get("error").filter(|error| error.is_string()))
            .and_then(Value::as_str);
        if let Some(message) = found {
            return snippet(message.trim());
        }
    }
    snippet(text.trim())
}

/// Whether an error body says the prompt is longer than the model's context window, in the
/// words providers use: OpenAI's `context_length_exceeded` code, Anthropic's "prompt is too
/// long", vLLM's and Mistral's "maximum context length", Gemini's "exceeds the maximum number of
/// tokens", llama.cpp's "context size", Groq's "reduce the length".
pub(crate) fn is_context_overflow(body: &[u8]) -> bool {
    const SIGNS: [&str; 10] = [
        "context_length_exceeded",
        "prompt is too long",
        "maximum context length",
        "context length",
        "context window",
        "context size",
        "exceeds the maximum number of tokens",
        "too many tokens",
        "input is too long",
        "reduce the length",
    ];
    let text = String::from_utf8_lossy(body).to_ascii_lowercase();
    SIGNS.iter().any(|sign| text.contains(sign))
}

/// Whether `base_url` names this machine (a refused connection there means nothing listens).
fn refused_locally(base_url: &str) -> bool {
    reqwest::Url::parse(base_url).ok().and_then(|url| url.host_str().map(str::to_owned)).is_some_and(|host| {
        host == "localhost"
            || host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    })
}

/// The innermost cause, e.g. "connection refused" rather than "error sending request".
fn root_cause(error: &reqwest::Error) -> String {
    let mut source: &dyn std::error::Error = error;
    while let Some(next) = source.source() {
        if let Some(io) = next.downcast_ref::<std::io::Error>() {
            match io.kind() {
                std::io::ErrorKind::ConnectionRefused => return "connection refused".into(),
                std::io::ErrorKind::ConnectionReset => return "connection reset".into(),
                std::io::ErrorKind::TimedOut => return "timed out".into(),
                _ => {}
            }
        }
        source = next;
    }
    source.to_string()
}
