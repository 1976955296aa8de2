//! What each model can take: a built-in table of common models (context window, output limit,
//! tools, images, thinking, prompt caching), configuration overrides, and a conservative
//! default for models the table does not know.
//!
//! Names are matched after dropping a router's prefix (`openai/gpt-4.1`, `anthropic/claude-…`)
//! and an Ollama tag (`qwen2.5-coder:7b`), by the longest entry that starts the name, so dated
//! and suffixed names (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`) find their family.

use crate::ProviderSettings;

/// What one model can take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelProfile {
    /// Tokens of prompt and answer together.
    pub context_window: u32,
    /// Most tokens of one answer.
    pub max_output: u32,
    /// Function calling.
    pub tools: bool,
    /// Image input.
    pub images: bool,
    /// Extended thinking / reasoning.
    pub thinking: bool,
    /// Prompt caching (automatic, or Anthropic's `cache_control`).
    pub caching: bool,
}

/// The profile of models the table does not know: small enough for most local models.
pub const UNKNOWN: ModelProfile = ModelProfile {
    context_window: 32_768,
    max_output: 4_096,
    tools: true,
    images: false,
    thinking: false,
    caching: false,
};

/// Ollama answers with the model's window only when `num_ctx` was raised; by default it cuts
/// the prompt to a few thousand tokens without saying so.
const OLLAMA_DEFAULT_WINDOW: u32 = 8_192;

const fn p(context_window: u32, max_output: u32, images: bool, thinking: bool, caching: bool) -> ModelProfile {
    ModelProfile { context_window, max_output, tools: true, images, thinking, caching }
}

/// The table: name prefix → profile. The longest matching prefix wins.
const TABLE: &[(&str, ModelProfile)] = &[
    // OpenAI
    ("gpt-4.1", p(1_047_576, 32_768, true, false, true)),
    ("gpt-4o", p(128_000, 16_384, true, false, true)),
    ("gpt-4-turbo", p(128_000, 4_096, true, false, false)),
    ("gpt-5", p(400_000, 128_000, true, true, true)),
    ("o1", p(200_000, 100_000, true, true, true)),
    ("o1-mini", p(128_000, 65_536, false, true, true)),
    ("o3", p(200_000, 100_000, true, true, true)),
    ("o4-mini", p(200_000, 100_000, true, true, true)),
    // Anthropic
    ("claude-3-5-sonnet", p(200_000, 8_192, true, false, true)),
    ("claude-3-5-haiku", p(200_000, 8_192, true, false, true)),
    ("claude-3-7-sonnet", p(200_000, 64_000, true, true, true)),
    ("claude-sonnet-4", p(200_000, 64_000, true, true, true)),
    ("claude-opus-4", p(200_000, 32_000, true, true, true)),
    ("claude-haiku-4", p(200_000, 64_000, true, true, true)),
    // Google
    ("gemini-2.0", p(1_048_576, 8_192, true, false, true)),
    ("gemini-2.5", p(1_048_576, 65_536, true, true, true)),
    ("gemini-3", p(1_048_576, 65_536, true, true, true)),
    // DeepSeek
    ("deepseek-chat", p(128_000, 8_192, false, false, true)),
    ("deepseek-reasoner", p(128_000, 64_000, false, true, true)),
    ("deepseek-v3", p(128_000, 8_192, false, false, true)),
    ("deepseek-r1", p(128_000, 32_768, false, true, false)),
    // Qwen
    ("qwen2.5-coder", p(32_768, 8_192, false, false, false)),
    ("qwen2.5", p(32_768, 8_192, false, false, false)),
    ("qwen3", p(32_768, 8_192, false, true, false)),
    ("qwen3-coder", p(262_144, 65_536, false, false, false)),
    ("qwq", p(32_768, 16_384, false, true, false)),
    // Llama
    ("llama3", p(8_192, 2_048, false, false, false)),
    ("llama3.1", p(131_072, 8_192, false, false, false)),
    ("llama3.2", p(131_072, 8_192, false, false, false)),
    ("llama3.3", p(131_072, 8_192, false, false, false)),
    ("llama-3.1", p(131_072, 8_192, false, false, false)),
    ("llama-3.3", p(131_072, 32_768, false, false, false)),
    ("llama-4", p(131_072, 8_192, true, false, false)),
    // Mistral
    ("mistral-large", p(131_072, 8_192, false, false, false)),
    ("mistral-medium", p(131_072, 8_192, true, false, false)),
    ("mistral-small", p(131_072, 8_192, true, false, false)),
    ("magistral", p(131_072, 40_000, false, true, false)),
    ("codestral", p(262_144, 8_192, false, false, false)),
    ("devstral", p(131_072, 8_192, false, false, false)),
];

/// The table's profile of `model`, if it has one.
pub fn lookup(model: &str) -> Option<ModelProfile> {
    longest_prefix(TABLE, model).copied()
}

/// The entry of `table` whose name prefix matches `model` (provider prefix `org/` and Ollama tag
/// `:7b` aside, case ignored) the longest; a prefix matches a whole name or one continued after
/// `-`, `.`, `@` or `_`.
pub(crate) fn longest_prefix<'t, T>(table: &'t [(&str, T)], model: &str) -> Option<&'t T> {
    let name = model.rsplit('/').next().unwrap_or(model);
    let name = name.split(':').next().unwrap_or(name).to_ascii_lowercase();
    table
        .iter()
        .filter(|(prefix, _)| {
            name.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', '@', '_']))
        })
        .max_by_key(|(prefix, _)| prefix.len())
        .map(|(_, entry)| entry)
}

/// A model's limits as Tandem uses them: the table's (or the default), the configuration's
/// overrides applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resolved {
    /// The profile, overrides applied.
    pub profile: ModelProfile,
    /// Whether the table knew the model (or the configuration named its window).
    pub known: bool,
    /// Output tokens asked for per answer (the configured `max_tokens`, within the model's limit).
    pub max_output: u32,
}

impl Resolved {
    /// Tokens of instruction files and rules the system prompt may carry: an eighth of the
    /// context window, between 1,000 and 16,000.
    pub fn instruction_budget(&self) -> u32 {
        (self.profile.context_window / 8).clamp(1_000, 16_000)
    }

    /// The one-line notice for a model the table does not know, `None` for a known one.
    pub fn notice(&self, model: &str) -> Option<String> {
        (!self.known).then(|| {
            format!(
                "model `{model}` is not in Tandem's model table: assuming a {}-token context window and {} output tokens; set context_window and max_output_tokens under [provider] if it has more",
                self.profile.context_window, self.profile.max_output
            )
        })
    }
}

/// The limits of `model` under `settings` (its `context_window` override, its `max_tokens`).
pub fn resolve(settings: &ProviderSettings, model: &str) -> Resolved {
    let found = lookup(model);
    let mut profile = found.unwrap_or(UNKNOWN);
    if settings.base_url.contains(":11434") {
        profile.context_window = profile.context_window.min(OLLAMA_DEFAULT_WINDOW);
    }
    if let Some(window) = settings.context_window {
        profile.context_window = window;
    }
    if let Some(images) = settings.images {
        profile.images = images;
    }
    // An answer never gets more than half the window.
    let max_output = settings.max_tokens.min(profile.max_output.max(1)).min(profile.context_window / 2).max(1);
    Resolved { profile, known: found.is_some() || settings.context_window.is_some(), max_output }
}

/// The `max_tokens` to ask for when the configuration names none: the model's limit, at most
/// 8192, at most a quarter of its window (an answer must leave room for the conversation).
pub fn default_max_tokens(model: &str, base_url: &str, context_window: Option<u32>) -> u32 {
    let profile = lookup(model).unwrap_or(UNKNOWN);
    let mut window = context_window.unwrap_or(profile.context_window);
    if base_url.contains(":11434") && context_window.is_none() {
        window = window.min(OLLAMA_DEFAULT_WINDOW);
    }
    profile.max_output.min(8_192).min(window / 4).max(256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_find_their_family() {
        let windows: [(Option<u32>, &[&str]); 10] = [
            (Some(1_047_576), &["gpt-4.1-mini"]),
            (Some(1_048_576), &["gemini-2.5-flash"]),
            (Some(400_000), &["openai/gpt-5"]),
            (Some(262_144), &["qwen3-coder:30b"]),
            (Some(200_000), &["o1-preview", "claude-sonnet-4-5-20250929"]),
            (Some(131_072), &["llama3.1:8b", "magistral-medium-2509"]),
            (Some(128_000), &["gpt-4o-2024-08-06", "o1-mini", "deepseek-chat"]),
            (Some(32_768), &["qwen2.5-coder:7b"]),
            (Some(8_192), &["llama3"]),
            (None, &["my-finetune", "gpt-4.10"]),
        ];
        for (window, models) in windows {
            for model in models {
                assert_eq!(lookup(model).map(|p| p.context_window), window, "{model}");
            }
        }
        assert_eq!(lookup("claude-3-5-sonnet-latest").map(|p| p.max_output), Some(8_192));
    }

    fn settings(model: &str, base_url: &str, max_tokens: u32, context_window: Option<u32>) -> ProviderSettings {
        ProviderSettings {
            kind: crate::ProviderKind::OpenAi,
            base_url: base_url.into(),
            model: model.into(),
            api_key: None,
            api_key_env: None,
            max_tokens,
            reasoning: crate::Reasoning::default(),
            context_window,
            timeouts: crate::Timeouts::default(),
            price: None,
            retry: crate::RetryPolicy::default(),
            images: None,
        }
    }

    #[test]
    fn overrides_ollama_and_output_limits() {
        let cloud = "https://api.example.com/v1";
        // Known: the table's window; the configured output, within the model's limit.
        let known = resolve(&settings("claude-3-5-sonnet", cloud, 20_000, None), "claude-3-5-sonnet");
        assert_eq!((known.known, known.profile.context_window, known.max_output), (true, 200_000, 8_192));
        assert_eq!(known.notice("claude-3-5-sonnet"), None);
        // Unknown: the default and a notice; naming the window makes it known.
        let unknown = resolve(&settings("my-model", cloud, 8_192, None), "my-model");
        assert_eq!((unknown.known, unknown.profile.context_window, unknown.max_output), (false, 32_768, 4_096));
        assert!(unknown.notice("my-model").is_some_and(|n| n.contains("context_window")));
        let named = resolve(&settings("my-model", cloud, 8_192, Some(16_000)), "my-model");
        assert_eq!((named.known, named.profile.context_window, named.max_output), (true, 16_000, 4_096));
        // Ollama: its default window unless configured; an answer never takes more than half.
        let ollama =
            resolve(&settings("qwen2.5-coder:7b", "http://127.0.0.1:11434/v1", 8_192, None), "qwen2.5-coder:7b");
        assert_eq!((ollama.profile.context_window, ollama.max_output), (8_192, 4_096));
        assert_eq!(default_max_tokens("qwen2.5-coder", "http://127.0.0.1:11434/v1", None), 2_048);
        assert_eq!(default_max_tokens("gpt-4.1", cloud, None), 8_192);
        assert_eq!(default_max_tokens("llama3", cloud, None), 2_048);
    }
}
