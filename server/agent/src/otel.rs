//! The agent's spans, for OpenTelemetry export (the `tandem` binary installs the exporter): one
//! per turn, per model request and per tool call, with the OpenTelemetry GenAI attribute names
//! where they exist. Without an exporter these call sites are disabled and cost nothing. Prompt
//! text and tool inputs go in only when the person asks for content ([`set_log_content`]).

use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;
use tracing::Span;
use tracing::field::Empty;

/// The `tracing` target of the spans the exporter sends.
pub const TARGET: &str = "tandem::otel";

static LOG_CONTENT: AtomicBool = AtomicBool::new(false);

/// Puts prompts and tool inputs in the spans (`[telemetry] log_content = true`).
pub fn set_log_content(on: bool) {
    LOG_CONTENT.store(on, Ordering::Relaxed);
}

fn content() -> bool {
    LOG_CONTENT.load(Ordering::Relaxed)
}

/// A turn of session `session_id` (its prompt as content).
pub(crate) fn turn(session_id: &str, model: &str, depth: u32, prompt: &str) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "turn",
        otel.name = "invoke_agent tandem",
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = "tandem",
        gen_ai.conversation.id = session_id,
        gen_ai.request.model = model,
        tandem.agent.depth = depth,
        tandem.stop_reason = Empty,
        tandem.prompt = Empty,
        otel.status_code = Empty,
    );
    if content() {
        span.record("tandem.prompt", prompt);
    }
    span
}

/// How a turn ended.
pub(crate) fn end_turn(span: &Span, stop_reason: &str, failed: bool) {
    span.record("tandem.stop_reason", stop_reason);
    if failed {
        span.record("otel.status_code", "ERROR");
    }
}

/// One model request.
pub(crate) fn request(model: &str) -> Span {
    tracing::info_span!(
        target: TARGET,
        "model_request",
        otel.name = format!("chat {model}"),
        gen_ai.operation.name = "chat",
        gen_ai.request.model = model,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        gen_ai.usage.cache_read_tokens = Empty,
        tandem.cost_usd = Empty,
        otel.status_code = Empty,
        tandem.error = Empty,
    )
}

/// What a model request used and cost (`None`: the price is unknown).
pub(crate) fn used(span: &Span, usage: &tandem_llm::Usage, cost_usd: Option<f64>) {
    span.record("gen_ai.usage.input_tokens", usage.input_tokens);
    span.record("gen_ai.usage.output_tokens", usage.output_tokens);
    span.record("gen_ai.usage.cache_read_tokens", usage.cache_read_tokens);
    if let Some(cost) = cost_usd {
        span.record("tandem.cost_usd", cost);
    }
}

/// A model request that failed.
pub(crate) fn failed(span: &Span, error: &str) {
    span.record("otel.status_code", "ERROR");
    span.record("tandem.error", error);
}

/// One tool call (its input as content).
pub(crate) fn tool(name: &str, call_id: &str, input: &Value) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "tool_call",
        otel.name = format!("execute_tool {name}"),
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = name,
        gen_ai.tool.call.id = call_id,
        tandem.tool.status = Empty,
        tandem.tool.input = Empty,
        otel.status_code = Empty,
    );
    if content() {
        span.record("tandem.tool.input", input.to_string());
    }
    span
}

/// How a tool call ended.
pub(crate) fn tool_done(span: &Span, failed: bool) {
    span.record("tandem.tool.status", if failed { "failed" } else { "completed" });
    if failed {
        span.record("otel.status_code", "ERROR");
    }
}

#[cfg(test)]
mod tests {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    /// The log layer as the binary installs it (its default level, no `TANDEM_LOG`).
    fn log_layer<S>() -> impl tracing_subscriber::Layer<S>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        tracing_subscriber::fmt::layer()
            .with_writer(std::io::sink)
            .with_filter(tracing_subscriber::EnvFilter::new("warn"))
    }

    fn spans() -> Vec<tracing::Span> {
        let input = serde_json::json!({ "file_path": "a.txt" });
        vec![super::turn("s1", "m", 0, "hello"), super::request("m"), super::tool("read", "c1", &input)]
    }

    /// Telemetry off (the binary's subscriber without the export layer): the agent's spans are
    /// disabled at their call sites, so their fields are never evaluated (no `format!` of a
    /// name) and every `record` on them returns at once. With the export layer they are real.
    #[test]
    fn without_the_export_layer_the_spans_are_disabled_at_their_call_sites() {
        let off = tracing_subscriber::registry().with(log_layer());
        tracing::subscriber::with_default(off, || {
            assert!(spans().iter().all(tracing::Span::is_disabled));
        });
        let export = tracing_subscriber::fmt::layer()
            .with_writer(std::io::sink)
            .with_filter(tracing_subscriber::filter::filter_fn(|meta| meta.target() == super::TARGET));
        let on = tracing_subscriber::registry().with(log_layer()).with(export);
        tracing::subscriber::with_default(on, || {
            assert!(spans().iter().all(|span| !span.is_disabled()));
        });
    }
}
