import assert from "node:assert/strict";
import { test } from "node:test";

import { compactCount, dollars, usageLabel } from "../../src/usage";

test("token counts are short: 950, 1.2k, 128k, 1.5M", () => {
  assert.deepEqual([950, 1234, 12_345, 128_000, 1_500_000].map(compactCount), ["950", "1.2k", "12.3k", "128k", "1.5M"]);
});

test("the meter: the context's fill at the last request, the session's total; the tooltip has the detail", () => {
  const label = usageLabel({
    inputTokens: 12_345,
    outputTokens: 200,
    cacheReadTokens: 10_000,
    totalTokens: 40_500,
    contextWindow: 128_000,
    session: { inputTokens: 40_000, outputTokens: 500, cacheReadTokens: 30_000, reasoningTokens: 0 },
  });
  assert.equal(label.text, "12.3k/128k (10%) · 10k cached · Σ 40.5k");
  assert.equal(
    label.title,
    "Context: 12,345 tokens in the last request of a 128,000-token window, 10,000 of them cached\nSession: 40,500 tokens in all\n  input 40,000 (cached 30,000), output 500",
  );
  assert.equal(usageLabel({ inputTokens: 900, outputTokens: 10, cacheReadTokens: 0, totalTokens: 910 }).text, "900 · Σ 910");
  // A provider that reports nothing: no meter.
  assert.equal(usageLabel({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, totalTokens: 0 }).text, "");
  // A turn whose provider reported nothing: the total only.
  assert.equal(usageLabel({ inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, totalTokens: 1230, contextWindow: 32_768 }).text, "Σ 1.2k");
});

test("the session's estimated cost shows where the sidecar knows the model's price, and only there", () => {
  const priced = usageLabel({
    inputTokens: 1_000,
    outputTokens: 100,
    cacheReadTokens: 0,
    totalTokens: 1_100,
    session: { inputTokens: 1_000, outputTokens: 100, cacheReadTokens: 0, reasoningTokens: 0, costUsd: 0.1234 },
  });
  assert.equal(priced.text, "1k · Σ 1.1k · $0.12");
  assert.match(priced.title, /Estimated cost: \$0\.1234/);
  const free = usageLabel({
    inputTokens: 1_000,
    outputTokens: 100,
    cacheReadTokens: 0,
    totalTokens: 1_100,
    session: { inputTokens: 1_000, outputTokens: 100, cacheReadTokens: 0, reasoningTokens: 0 },
  });
  assert.equal(free.text, "1k · Σ 1.1k");
  assert.deepEqual([0, 0.004, 0.0123, 2, 12.5].map(dollars), ["$0", "$0.004", "$0.01", "$2.00", "$12.50"]);
});
