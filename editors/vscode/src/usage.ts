// The token meter in the panel's header, from the sidecar's `usage_update`: how full the context
// window was at the last request, how much of it the provider's cache served, and the session's
// total. Pure, shared by the webview and the unit tests. No prices: the sidecar sends tokens, and
// what they cost depends on the contract.

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
  const text = u.inputTokens > 0 ? `${context}${cached} · Σ ${compactCount(u.totalTokens)}` : `Σ ${compactCount(u.totalTokens)}`;
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
  return { text, title: lines.join("\n") };
}
