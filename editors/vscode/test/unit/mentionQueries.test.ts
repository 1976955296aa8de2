import assert from "node:assert/strict";
import { test } from "node:test";

import type { Mention } from "../../src/messages";
import { MentionQueries, type SymbolScheduler } from "../../src/mentionQueries";

/** A file search whose answers the test releases, in any order. */
function heldSearch() {
  const held = new Map<string, (items: Mention[]) => void>();
  const find = (query: string) => new Promise<Mention[]>((resolve) => held.set(query, resolve));
  const release = (query: string) => held.get(query)?.([{ kind: "file", label: `${query}.py` }]);
  return { find, release };
}

/** Symbol searches as asked: the newest one scheduled is the one that runs. */
function recordingSymbols() {
  const scheduled: string[] = [];
  let current: { query: string; found: (items: Mention[]) => void } | undefined;
  const symbols: SymbolScheduler = {
    schedule(query, found) {
      scheduled.push(query);
      current = { query, found };
    },
    cancel() {
      current = undefined;
    },
  };
  return { symbols, scheduled, current: () => current };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

test("typing @incr: file searches that finish out of order never leave an older query's symbol search running", async () => {
  for (const order of [
    ["i", "in", "inc", "incr"],
    ["incr", "inc", "in", "i"],
    ["in", "incr", "i", "inc"],
    ["inc", "i", "incr", "in"],
  ]) {
    const files = heldSearch();
    const sym = recordingSymbols();
    const posted: { query: string; labels: string[] }[] = [];
    const queries = new MentionQueries(files.find, sym.symbols, (query, items) => posted.push({ query, labels: items.map((m) => m.label) }), () => {});
    const asked = ["i", "in", "inc", "incr"].map((q) => queries.ask(q));
    for (const q of order) {
      files.release(q);
      await settle();
    }
    await Promise.all(asked);
    assert.equal(sym.current()?.query, "incr", `order ${order}: the symbol search running is for ${sym.current()?.query}`);
    assert.deepEqual(sym.scheduled.filter((q) => q !== "incr"), [], `order ${order}: older queries were scheduled after all: ${sym.scheduled}`);
    assert.deepEqual(posted, [{ query: "incr", labels: ["incr.py"] }], `order ${order}`);
    sym.current()?.found([{ kind: "symbol", label: "increment" }]);
    assert.deepEqual(posted.at(-1), { query: "incr", labels: ["incr.py", "increment"] });
  }
});

test("a query whose file search ends after the list closed (a mention chosen, the prompt sent) schedules nothing", async () => {
  const files = heldSearch();
  const sym = recordingSymbols();
  const posted: string[] = [];
  const queries = new MentionQueries(files.find, sym.symbols, (query) => posted.push(query), () => {});
  const asked = queries.ask("calc");
  queries.cancel();
  files.release("calc");
  await asked;
  assert.deepEqual(sym.scheduled, []);
  assert.deepEqual(posted, []);
});

test("a file search that fails still lists the symbols, and says why in the log", async () => {
  const sym = recordingSymbols();
  const logged: string[] = [];
  const posted: { query: string; labels: string[] }[] = [];
  const queries = new MentionQueries(
    () => Promise.reject(new Error("no folder open")),
    sym.symbols,
    (query, items) => posted.push({ query, labels: items.map((m) => m.label) }),
    (line) => logged.push(line),
  );
  await queries.ask("calc");
  assert.deepEqual(sym.scheduled, ["calc"]);
  sym.current()?.found([{ kind: "symbol", label: "calculate" }]);
  assert.deepEqual(posted, [
    { query: "calc", labels: [] },
    { query: "calc", labels: ["calculate"] },
  ]);
  assert.match(logged.join("\n"), /no folder open/);
});
