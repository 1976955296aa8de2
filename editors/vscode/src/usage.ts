// The token meter in the panel's header, from the sidecar's `usage_update`: how full the context
// window was at the last request, how much of it the provider's cache served, the session's total,
// and its estimated cost where the sidecar knows the model's price (list prices, or the ones set in
// `[provider]`). Pure, shared by the webview and the unit tests.

import type { Usage } from "./protocol";

/** 950 → "950", 1234 → "1.2k", 128000 → "128k", 1500000 → "1.5M". */
export function compactCount(n: number): string {
  const scaled = (value: number, unit: string) => {
    const text = value >= 100 ? String(Math.round(value)) : value.toFixed(1).replace(/\.0$/, "");
    return `${text}${unit}`;
  };
  if (n >= 1_000_000) return scaled(n / 1_000_000, "M");
  if (n >= 1_000) return scaled(n / 1_000, "k");
  return String(n);
}

/** The header's text and its tooltip; an empty text when the provider reported nothing at all. */
export function usageLabel(u: Usage): { text: string; title: string } {
  const window = u.contextWindow ?? 0;
  const context =
    window > 0
      ? `${compactCount(u.inputTokens)}/${compactCount(window)} (${Math.round((u.inputTokens / window) * 100)}%)`
      : compactCount(u.inputTokens);
  if (u.inputTokens === 0 && u.totalTokens === 0) return { text: "", title: "" };
  // 0 prompt tokens: the provider did not say; the session's total is still known.
  // How much of the last request the provider read from its cache (cheaper, and a sign the prefix is stable).
  const cached = u.inputTokens > 0 && u.cacheReadTokens > 0 ? ` · ${compactCount(u.cacheReadTokens)} cached` : "";
  const cost = u.session?.costUsd;
  const money = cost === undefined || cost === null ? "" : ` · ${dollars(cost)}`;
  const text =
    u.inputTokens > 0
      ? `${context}${cached} · Σ ${compactCount(u.totalTokens)}${money}`
      : `Σ ${compactCount(u.totalTokens)}${money}`;
  const lines = [
    `Context: ${u.inputTokens.toLocaleString("en-US")} tokens in the last request${
      window > 0 ? ` of a ${window.toLocaleString("en-US")}-token window` : ""
    }${u.cacheReadTokens > 0 ? `, ${u.cacheReadTokens.toLocaleString("en-US")} of them cached` : ""}`,
    `Session: ${u.totalTokens.toLocaleString("en-US")} tokens in all`,
  ];
  const s = u.session;
  if (s) {
    lines.push(
      `  input ${s.inputTokens.toLocaleString("en-US")} (cached ${s.cacheReadTokens.toLocaleString("en-US")}), output ${s.outputTokens.toLocaleString("en-US")}${
        s.reasoningTokens > 0 ? ` (reasoning ${s.reasoningTokens.toLocaleString("en-US")})` : ""
      }`,
    );
  }
  if (cost !== undefined && cost !== null) {
    lines.push(`Estimated cost: $${cost.toFixed(4)} (from list prices; the provider's bill is the truth)`);
  }
  return { text, title: lines.join("\n") };
}

/** 0.004 → "$0.004", 0.1234 → "$0.12", 12.5 → "$12.50": cents, or three significant digits below one. */
export function dollars(usd: number): string {
  if (usd <= 0) return "$0";
  if (usd < 0.01) return `$${usd.toPrecision(1)}`;
  return `$${usd.toFixed(2)}`;
}
