import assert from "node:assert/strict";
import { test } from "node:test";

import { type Envelope, Inbox, Outbox } from "../../src/delivery";
import type { ToPanel } from "../../src/messages";

const chunk = (text: string): ToPanel => ({
  type: "update",
  update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text } },
});
const text = (applied: ToPanel[]) =>
  applied.map((m) => (m.type === "update" && m.update.sessionUpdate === "agent_message_chunk" && m.update.content.type === "text" ? m.update.content.text : `<${m.type}>`)).join("");

/** A webview: what it applied since its last restart. */
function webview() {
  const applied: ToPanel[] = [];
  const inbox = new Inbox(
    (m) => applied.push(m),
    () => applied.splice(0),
  );
  return { applied, inbox };
}

test("messages posted before the webview is ready arrive once, in order, with the live ones after", () => {
  const sent: Envelope[] = [];
  const outbox = new Outbox((e) => sent.push(e));
  outbox.post(chunk("Say "));
  outbox.post(chunk("hello"));
  assert.equal(sent.length, 0, "nothing goes live before ready");
  outbox.ready();
  outbox.post(chunk(" there"));
  const { applied, inbox } = webview();
  for (const e of sent) inbox.receive(e);
  assert.equal(text(applied), "Say hello there");
});

test("every interleaving of queued, replayed and live deliveries gives the posted sequence once", () => {
  // The webview may receive, in any order relative to its own start, what an earlier start of it
  // was sent: simulate VS Code delivering a stale live message before and after the replay.
  for (let split = 0; split <= 6; split += 1) {
    const sent: Envelope[] = [];
    const outbox = new Outbox((e) => sent.push(e));
    outbox.ready(); // a first webview
    const words = ["a", "b", "c", "d", "e", "f"];
    words.slice(0, split).forEach((w) => outbox.post(chunk(w)));
    const stale = [...sent];
    outbox.detach(); // its content is recreated
    words.slice(split, 4).forEach((w) => outbox.post(chunk(w)));
    outbox.ready();
    words.slice(Math.max(split, 4)).forEach((w) => outbox.post(chunk(w)));
    const fresh = sent.slice(stale.length);
    const { applied, inbox } = webview();
    // Stale messages before the replay and again after it (the worst case).
    for (const e of [...stale, ...fresh.slice(0, 1), ...stale, ...fresh.slice(1)]) inbox.receive(e);
    assert.equal(text(applied), "abcdef", `split ${split}`);
  }
});

test("a second ready (the webview's script ran again) replays from scratch", () => {
  const sent: Envelope[] = [];
  const outbox = new Outbox((e) => sent.push(e));
  outbox.ready();
  outbox.post(chunk("one"));
  outbox.post({ type: "reset" });
  outbox.post(chunk("two"));
  outbox.post({ type: "status", state: "starting" });
  outbox.post({ type: "status", state: "ready" });
  const { applied, inbox } = webview();
  for (const e of sent) inbox.receive(e);
  outbox.ready();
  inbox.receive(sent[sent.length - 1]);
  assert.deepEqual(
    applied.map((m) => m.type),
    ["reset", "update", "status"],
    "the backlog since the reset, with the last status only",
  );
  assert.equal(text(applied), "<reset>two<status>");
});

test("malformed envelopes are ignored", () => {
  const { applied, inbox } = webview();
  for (const bad of [null, 1, "x", {}, { type: "update" }, { seq: "1", replay: [] }]) inbox.receive(bad);
  assert.equal(applied.length, 0);
});
