//! What the client tests share: the settings of a client of the scripted provider.

use std::time::Duration;

use tandem_llm::{ProviderKind, ProviderSettings, Reasoning, RetryPolicy, Timeouts};

/// A client of `kind` for `model` at `base_url`, with a test key, short timeouts and no retries.
pub fn settings(kind: ProviderKind, base_url: &str, model: &str) -> ProviderSettings {
    ProviderSettings {
        kind,
        base_url: base_url.to_owned(),
        model: model.to_owned(),
        api_key: Some("sk-test".into()),
        api_key_env: Some("TEST_PROVIDER_KEY".into()),
        max_tokens: 1000,
        reasoning: Reasoning::default(),
        context_window: None,
        timeouts: Timeouts {
            connect: Duration::from_secs(2),
            overall: Duration::from_secs(10),
            stall: Duration::from_secs(2),
        },
        price: None,
        images: None,
        retry: RetryPolicy { max_retries: 0, base_delay: Duration::from_millis(10), max_delay: Duration::from_secs(1) },
    }
}
