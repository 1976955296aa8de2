//! What a model's tokens cost, for the cost the editors show: a table of list prices in US
//! dollars per million tokens by model name prefix (the longest matching prefix wins, as in the
//! model table), which the configuration can override or supply (`[provider] input_price`,
//! `output_price`, `cache_read_price`). Models the table does not know (local ones, most
//! compatible servers) have no price, and no cost is shown for them.
//!
//! The cost is an estimate from the token counts the provider reported: cache writes are
//! priced as prompt tokens, and prices change; the provider's bill is the truth.

use crate::Usage;

/// US dollars per million tokens.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Price {
    /// Prompt tokens not read from the cache.
    pub input: f64,
    /// Completion tokens (reasoning included).
    pub output: f64,
    /// Prompt tokens read from the provider's cache.
    pub cache_read: f64,
}

const fn usd(input: f64, output: f64, cache_read: f64) -> Price {
    Price { input, output, cache_read }
}

/// List prices (USD per million tokens) by model name prefix.
const TABLE: &[(&str, Price)] = &[
    // OpenAI
    ("gpt-4o", usd(2.50, 10.0, 1.25)),
    ("gpt-4o-mini", usd(0.15, 0.60, 0.075)),
    ("gpt-4.1", usd(2.0, 8.0, 0.50)),
    ("gpt-4.1-mini", usd(0.40, 1.60, 0.10)),
    ("gpt-4.1-nano", usd(0.10, 0.40, 0.025)),
    ("gpt-5", usd(1.25, 10.0, 0.125)),
    ("gpt-5-mini", usd(0.25, 2.0, 0.025)),
    ("gpt-5-nano", usd(0.05, 0.40, 0.005)),
    ("o1", usd(15.0, 60.0, 7.50)),
    ("o3", usd(2.0, 8.0, 0.50)),
    ("o4-mini", usd(1.10, 4.40, 0.275)),
    // Anthropic
    ("claude-3-5-haiku", usd(0.80, 4.0, 0.08)),
    ("claude-3-5-sonnet", usd(3.0, 15.0, 0.30)),
    ("claude-3-7-sonnet", usd(3.0, 15.0, 0.30)),
    ("claude-sonnet-4", usd(3.0, 15.0, 0.30)),
    ("claude-haiku-4", usd(1.0, 5.0, 0.10)),
    ("claude-opus-4", usd(15.0, 75.0, 1.50)),
    ("claude-opus-4-5", usd(5.0, 25.0, 0.50)),
];

/// The table's price of `model`, if it has one.
pub fn lookup(model: &str) -> Option<Price> {
    crate::profile::longest_prefix(TABLE, model).copied()
}

impl Price {
    /// The cost in US dollars of one model turn's `usage`.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cache_read_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input + cached as f64 * self.cache_read + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_prefix_prices_a_model_and_unknown_models_have_no_price() {
        assert_eq!(lookup("gpt-4o-mini-2024-07-18"), Some(usd(0.15, 0.60, 0.075)));
        assert_eq!(lookup("gpt-4o-2024-08-06"), Some(usd(2.50, 10.0, 1.25)));
        assert_eq!(lookup("claude-opus-4-5-20251101"), Some(usd(5.0, 25.0, 0.50)));
        assert_eq!(lookup("claude-opus-4-1-20250805"), Some(usd(15.0, 75.0, 1.50)));
        assert_eq!(lookup("anthropic/claude-sonnet-4-5"), Some(usd(3.0, 15.0, 0.30)));
        assert_eq!(lookup("qwen2.5-coder:7b"), None);
        assert_eq!(lookup("gpt-4o-evil"), Some(usd(2.50, 10.0, 1.25)), "a dash continues a family name");
        assert_eq!(lookup("gpt-4output"), None);
    }

    #[test]
    fn cached_prompt_tokens_cost_the_cache_price() {
        let usage = Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 600_000,
            cache_write_tokens: 0,
            reasoning_tokens: 0,
        };
        let cost = usd(3.0, 15.0, 0.30).cost(&usage);
        assert!((cost - (0.4 * 3.0 + 0.6 * 0.30 + 0.1 * 15.0)).abs() < 1e-9, "{cost}");
        // A provider that reports more cached than prompt tokens is not charged below zero.
        let odd = Usage { input_tokens: 10, cache_read_tokens: 20, ..usage };
        assert!(usd(3.0, 15.0, 0.30).cost(&odd) >= 0.0);
    }
}
