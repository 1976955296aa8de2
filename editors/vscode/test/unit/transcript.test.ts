import assert from "node:assert/strict";
import { test } from "node:test";

import { applyUpdate, changedRegion, contentSummary, emptyTranscript } from "../../src/transcript";

test("message chunks join into one entry until another kind interrupts", () => {
  const t = emptyTranscript();
  assert.deepEqual(applyUpdate(t, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hel" } }), {
    what: "entry",
    index: 0,
    added: true,
  });
  assert.deepEqual(applyUpdate(t, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "lo" } }), {
    what: "entry",
    index: 0,
    added: false,
  });
  applyUpdate(t, { sessionUpdate: "tool_call", toolCallId: "c1", title: "Read a.py", kind: "read", status: "pending" });
  applyUpdate(t, { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done" } });
  assert.deepEqual(
    t.entries.map((e) => e.kind),
    ["assistant", "tool", "assistant"],
  );
  assert.equal(t.entries[0]!.kind === "assistant" && t.entries[0]!.text, "Hello");
});

test("tool call updates change only the fields they carry", () => {
  const t = emptyTranscript();
  applyUpdate(t, { sessionUpdate: "tool_call", toolCallId: "c1", title: "Run ls", kind: "execute", status: "pending" });
  const change = applyUpdate(t, { sessionUpdate: "tool_call_update", toolCallId: "c1", status: "completed" });
  assert.deepEqual(change, { what: "entry", index: 0, added: false });
  const entry = t.entries[0]!;
  assert.ok(entry.kind === "tool");
  assert.equal(entry.call.status, "completed");
  assert.equal(entry.call.title, "Run ls");
  assert.equal(entry.call.kind, "execute");
});

test("an update for an unknown call still shows a card", () => {
  const t = emptyTranscript();
  applyUpdate(t, { sessionUpdate: "tool_call_update", toolCallId: "zz", status: "failed" });
  const entry = t.entries[0]!;
  assert.ok(entry.kind === "tool");
  assert.equal(entry.call.title, "zz");
  assert.equal(entry.call.status, "failed");
});

test("plan, mode and usage are state, not entries", () => {
  const t = emptyTranscript();
  applyUpdate(t, { sessionUpdate: "plan", entries: [{ content: "write tests", status: "in_progress", priority: "medium" }] });
  applyUpdate(t, { sessionUpdate: "current_mode_update", currentModeId: "plan" });
  applyUpdate(t, { sessionUpdate: "usage_update", inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, totalTokens: 12 });
  assert.equal(t.entries.length, 0);
  assert.equal(t.plan[0]!.content, "write tests");
  assert.equal(t.mode, "plan");
  assert.deepEqual(t.usage, { inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, totalTokens: 12 });
});

test("content summaries: text, diff patches, terminals", () => {
  assert.deepEqual(contentSummary({ type: "content", content: { type: "text", text: "ok" } }), { kind: "text", text: "ok" });
  assert.deepEqual(
    contentSummary({
      type: "diff",
      path: "/w/a.py",
      oldText: "a",
      newText: "b",
      hunks: [{ id: "h1", oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, patch: "@@ -1 +1 @@\n-a\n+b\n" }],
    }),
    { kind: "diff", text: "@@ -1 +1 @@\n-a\n+b\n" },
  );
  assert.deepEqual(contentSummary({ type: "diff", path: "/w/n.py", oldText: null, newText: "x" }), {
    kind: "diff",
    text: "/w/n.py (new file)\n+x",
  });
  // Without hunks (what was applied): the region between the common prefix and suffix.
  assert.deepEqual(contentSummary({ type: "diff", path: "/w/a.py", oldText: "a\nb\nc\nd\n", newText: "a\nB\nC\nd\n" }), {
    kind: "diff",
    text: "@@ /w/a.py:2 @@\n-b\n-c\n+B\n+C",
  });
  assert.deepEqual(contentSummary({ type: "terminal", terminalId: "t1" }), { kind: "terminal", text: "terminal t1" });
});

test("changed regions: unchanged, pure insertion, long changes are cut", () => {
  assert.equal(changedRegion("f", "a\n", "a\n"), "f (unchanged)");
  assert.equal(changedRegion("f", "a\nc\n", "a\nb\nc\n"), "@@ f:2 @@\n+b");
  const long = changedRegion("f", "", Array.from({ length: 50 }, (_, i) => `l${i}`).join("\n"), 5);
  assert.equal(long.split("\n").length, 7);
  assert.match(long, /… 45 more lines$/);
});

test("a replayed prompt shows its attachments by name, as the live one did", () => {
  const t = emptyTranscript();
  applyUpdate(t, { sessionUpdate: "user_message_chunk", content: { type: "text", text: "look at this" } });
  applyUpdate(t, {
    sessionUpdate: "user_message_chunk",
    content: { type: "resource_link", uri: "file:///w/calc.py", name: "calc.py" },
  });
  assert.deepEqual(t.entries, [{ kind: "user", text: "look at this\n\n(attached calc.py)" }]);
});

test("a prompt that got no answer (cancelled) stays its own bubble: a new messageId is a new prompt", () => {
  const t = emptyTranscript();
  const chunk = (text: string, messageId: string) =>
    applyUpdate(t, { sessionUpdate: "user_message_chunk", content: { type: "text", text }, messageId });
  chunk("think hard about calc", "prompt-1");
  chunk("hello after cancel", "prompt-2");
  applyUpdate(t, {
    sessionUpdate: "user_message_chunk",
    content: { type: "resource_link", uri: "file:///w/calc.py", name: "calc.py" },
    messageId: "prompt-2",
  });
  assert.deepEqual(
    t.entries.map((e) => (e.kind === "user" ? e.text : e.kind)),
    ["think hard about calc", "hello after cancel\n\n(attached calc.py)"],
  );
});
