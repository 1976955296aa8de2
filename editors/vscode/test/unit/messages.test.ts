import assert from "node:assert/strict";
import { test } from "node:test";

import { MAX_PROMPT_CHARS, parseFromPanel } from "../../src/messages";

test("well-formed panel messages parse", () => {
  assert.deepEqual(parseFromPanel({ type: "prompt", text: "fix it" }), { type: "prompt", text: "fix it" });
  assert.deepEqual(parseFromPanel({ type: "setMode", mode: "auto-edit" }), { type: "setMode", mode: "auto-edit" });
  assert.deepEqual(parseFromPanel({ type: "loadSession", sessionId: "s18a2b3c1" }), { type: "loadSession", sessionId: "s18a2b3c1" });
  assert.deepEqual(parseFromPanel({ type: "reviewAll", accept: false }), { type: "reviewAll", accept: false });
  assert.deepEqual(parseFromPanel({ type: "restoreTurn", turn: 2 }), { type: "restoreTurn", turn: 2 });
  assert.deepEqual(parseFromPanel({ type: "openFile", path: "/w/a.py", line: 3 }), { type: "openFile", path: "/w/a.py", line: 3 });
  assert.deepEqual(parseFromPanel({ type: "cancel", extra: 1 }), { type: "cancel" });
  assert.deepEqual(parseFromPanel({ type: "clearAttachments" }), { type: "clearAttachments" });
  assert.deepEqual(parseFromPanel({ type: "copyCode", text: "x = 1\n" }), { type: "copyCode", text: "x = 1\n" });
  assert.deepEqual(parseFromPanel({ type: "insertCode", text: "x = 1\n" }), { type: "insertCode", text: "x = 1\n" });
});

test("malformed panel messages are refused", () => {
  for (const bad of [
    null,
    "prompt",
    42,
    {},
    { type: "nope" },
    { type: "prompt" },
    { type: "prompt", text: "   " },
    { type: "prompt", text: "x".repeat(MAX_PROMPT_CHARS + 1) },
    { type: "setMode", mode: "root" },
    { type: "loadSession", sessionId: "../../etc/passwd" },
    { type: "reviewAll", accept: "yes" },
    { type: "restoreTurn", turn: 0 },
    { type: "restoreTurn", turn: 1.5 },
    { type: "restoreTurn", turn: "2" },
    { type: "openFile", path: "" },
    { type: "copyCode" },
    { type: "insertCode", text: 42 },
    { type: "insertCode", text: "x".repeat(MAX_PROMPT_CHARS + 1) },
  ]) {
    assert.equal(parseFromPanel(bad), undefined, JSON.stringify(bad)?.slice(0, 80));
  }
  assert.deepEqual(parseFromPanel({ type: "openFile", path: "/w/a.py", line: -1 }), { type: "openFile", path: "/w/a.py" });
});

test("the panel's tool card, Apply and @ messages parse; bad ones are refused", () => {
  assert.deepEqual(parseFromPanel({ type: "applyCode", text: "x = 2\n" }), { type: "applyCode", text: "x = 2\n" });
  assert.deepEqual(parseFromPanel({ type: "openChange", toolCallId: "c2", path: "/w/a.txt" }), {
    type: "openChange",
    toolCallId: "c2",
    path: "/w/a.txt",
  });
  assert.deepEqual(parseFromPanel({ type: "mentionQuery", query: "src/" }), { type: "mentionQuery", query: "src/" });
  assert.deepEqual(parseFromPanel({ type: "mention", mention: { kind: "folder", label: "src/", extra: 1 } }), {
    type: "mention",
    mention: { kind: "folder", label: "src/" },
  });
  for (const bad of [
    { type: "openChange", toolCallId: "", path: "/w/a.txt" },
    { type: "mention", mention: { kind: "url", label: "x" } },
    { type: "mention", mention: { kind: "file", label: "" } },
    { type: "mention" },
    { type: "mentionQuery", query: 3 },
  ]) {
    assert.equal(parseFromPanel(bad), undefined, JSON.stringify(bad));
  }
});
