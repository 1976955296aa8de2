// The live indicator of a running turn: how long it has run and about how many tokens the model
// has streamed so far (its answer and its reasoning, counted as characters / 4 while they stream;
// the provider's own count comes with the usage meter when each request ends). Pure, shared by
// the webview, the status bar and the unit tests.

import type { SessionUpdate } from "./protocol";
import { compactCount } from "./usage";

export interface TurnProgress {
  /** When the turn started (ms since the epoch). */
  startedAt: number;
  /** Characters of streamed text (answer and reasoning). */
  chars: number;
}

export function startProgress(now: number): TurnProgress {
  return { startedAt: now, chars: 0 };
}

/** Counts a streamed chunk of the model's; other updates leave the count as it is. */
export function countStreamed(progress: TurnProgress, update: SessionUpdate): void {
  if (update.sessionUpdate !== "agent_message_chunk" && update.sessionUpdate !== "agent_thought_chunk") return;
  if (update.content.type === "text") progress.chars += update.content.text.length;
}

/** About how many tokens `chars` characters are (the usual 4 characters a token). */
export function approxTokens(chars: number): number {
  return Math.ceil(chars / 4);
}

/** 7_500 → "7s", 65_000 → "1m 05s". */
export function elapsedLabel(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m ${String(seconds % 60).padStart(2, "0")}s`;
}

/**
 * "Waiting for the model… 12s" before the first token, then "Working… 1m 05s · ~340 tokens";
 * "Waiting for your review… 40s · ~340 tokens" while the turn waits for the person (`waiting`).
 */
export function progressLabel(progress: TurnProgress, now: number, waiting?: string): string {
  const elapsed = elapsedLabel(now - progress.startedAt);
  const tokens = progress.chars === 0 ? "" : ` · ~${compactCount(approxTokens(progress.chars))} tokens`;
  if (waiting !== undefined) return `Waiting for ${waiting}… ${elapsed}${tokens}`;
  if (progress.chars === 0) return `Waiting for the model… ${elapsed}`;
  return `Working… ${elapsed}${tokens}`;
}
