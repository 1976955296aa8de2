//! OpenTelemetry: traces of what the agent does, exported over OTLP/HTTP to the collector a team
//! already runs (Jaeger, Grafana Tempo, Honeycomb, an OpenTelemetry Collector). On when the
//! standard `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, or
//! `[telemetry] endpoint` in the person's own configuration; `OTEL_EXPORTER_OTLP_PROTOCOL`
//! (`http/protobuf` or `http/json`) and `OTEL_EXPORTER_OTLP_HEADERS` are honoured.
//!
//! The agent opens `tracing` spans under the target [`tandem_agent::otel::TARGET`] (a turn, each
//! model request, each tool call); this layer turns them into OpenTelemetry spans with
//! `service.name = "tandem"`. Off, no layer is installed and those spans are disabled at their
//! call sites: nothing is recorded or sent.

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

use crate::config::TelemetrySettings;

/// Running export: shut down at exit, so that the last spans are sent.
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Telemetry {
    /// Sends what is left and stops.
    pub fn shutdown(self) {
        if let Err(err) = self.provider.shutdown() {
            eprintln!("tandem: telemetry could not send its last spans: {err}");
        }
    }
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// The layer that exports the agent's spans, when telemetry is on; a note on stderr when it is
/// set up wrongly (it is then off).
pub fn layer<S>(settings: &TelemetrySettings) -> Option<(impl Layer<S> + use<S>, Telemetry)>
where
    S: tracing::Subscriber + for<'span> LookupSpan<'span>,
{
    let from_env = env("OTEL_EXPORTER_OTLP_ENDPOINT").is_some() || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").is_some();
    if !from_env && settings.endpoint.is_none() {
        return None;
    }
    let protocol = env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
        .or_else(|| env("OTEL_EXPORTER_OTLP_PROTOCOL"))
        .or_else(|| settings.protocol.clone())
        .unwrap_or_else(|| "http/protobuf".to_owned());
    let protocol = match protocol.as_str() {
        "http/protobuf" => Protocol::HttpBinary,
        "http/json" => Protocol::HttpJson,
        other => {
            eprintln!(
                "tandem: telemetry is off: protocol `{other}` is not supported; use http/protobuf or http/json (OTEL_EXPORTER_OTLP_PROTOCOL)"
            );
            return None;
        }
    };
    // The exporter's HTTP client needs TLS for an https endpoint (the same provider as the
    // model clients').
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        rustls::crypto::ring::default_provider().install_default().ok();
    }
    let mut builder = opentelemetry_otlp::SpanExporter::builder().with_http().with_protocol(protocol);
    if !from_env && let Some(endpoint) = &settings.endpoint {
        let endpoint = endpoint.trim_end_matches('/');
        let url = if endpoint.ends_with("/v1/traces") { endpoint.to_owned() } else { format!("{endpoint}/v1/traces") };
        builder = builder.with_endpoint(url);
    }
    if env("OTEL_EXPORTER_OTLP_HEADERS").is_none() && !settings.headers.is_empty() {
        builder = builder.with_headers(settings.headers.clone().into_iter().collect());
    }
    let exporter = match builder.build() {
        Ok(exporter) => exporter,
        Err(err) => {
            eprintln!("tandem: telemetry is off: {err}");
            return None;
        }
    };
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(env("OTEL_SERVICE_NAME").unwrap_or_else(|| "tandem".to_owned()))
        .with_attribute(opentelemetry::KeyValue::new("service.version", env!("CARGO_PKG_VERSION")))
        .build();
    let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
    let tracer = provider.tracer("tandem");
    tandem_agent::otel::set_log_content(settings.log_content.unwrap_or(false));
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_filter(tracing_subscriber::filter::filter_fn(|meta| meta.target() == tandem_agent::otel::TARGET));
    Some((layer, Telemetry { provider }))
}
