import assert from "node:assert/strict";
import { test } from "node:test";

import { countStreamed, elapsedLabel, progressLabel, startProgress } from "../../src/progress";

test("the live indicator says how long a turn has run and about how many tokens streamed", () => {
  const p = startProgress(1_000);
  assert.equal(progressLabel(p, 13_500), "Waiting for the model… 12s");
  countStreamed(p, { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "x".repeat(400) } });
  countStreamed(p, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "y".repeat(961) } });
  // Not the model's streamed text: not counted.
  countStreamed(p, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "z".repeat(4000) } });
  countStreamed(p, { sessionUpdate: "tool_call", toolCallId: "c1", title: "x".repeat(400), kind: "read", status: "pending" });
  assert.equal(progressLabel(p, 66_000), "Working… 1m 05s · ~341 tokens");
  countStreamed(p, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "y".repeat(8000) } });
  assert.equal(progressLabel(p, 66_000), "Working… 1m 05s · ~2.3k tokens");
  // While the turn waits for the person, the indicator says so.
  assert.equal(progressLabel(p, 66_000, "your review"), "Waiting for your review… 1m 05s · ~2.3k tokens");
  assert.equal(progressLabel(startProgress(0), 3_000, "your review"), "Waiting for your review… 3s");
});

test("elapsed time: seconds, then minutes and seconds", () => {
  assert.equal(elapsedLabel(0), "0s");
  assert.equal(elapsedLabel(59_999), "59s");
  assert.equal(elapsedLabel(60_000), "1m 00s");
  assert.equal(elapsedLabel(-5), "0s");
});
