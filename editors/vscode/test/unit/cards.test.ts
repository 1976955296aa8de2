import assert from "node:assert/strict";
import { test } from "node:test";

import {
  applyUpdate,
  changeLabel,
  emptyTranscript,
  commandSummary,
  fileChanges,
  hunksOf,
  lineDiff,
  questionAnswers,
  relativePath,
} from "../../src/transcript";

test("an applied edit is `file +added −removed` with its diff, relative to the workspace", () => {
  const [change] = fileChanges(
    [
      {
        type: "diff",
        path: "/ws/src/calc.py",
        oldText: "a\nb\nc\nd\n",
        newText: "a\nB\nc\nD\ne\n",
      },
      { type: "content", content: { type: "text", text: "Edited calc.py" } },
    ],
    "/ws/",
  );
  assert.ok(change);
  assert.equal(changeLabel(change), "src/calc.py +3 \u22122");
  assert.equal(change.created, false);
  assert.deepEqual(
    change.lines.map((l) => `${l.op}${l.text}`),
    ["@@@ -1 +1 @@", " a", "-b", "+B", " c", "-d", "+D", "+e"],
  );
});

test("a new file counts every line as added", () => {
  const [change] = fileChanges([{ type: "diff", path: "/elsewhere/x.txt", oldText: null, newText: "1\n2\n" }], "/ws");
  assert.equal(changeLabel(change!), "/elsewhere/x.txt +2 \u22120");
  assert.equal(change!.created, true);
});

test("the line diff keeps common lines and far-apart changes become separate stretches", () => {
  const old = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n");
  const neu = old.replace("l2", "L2").replace("l17", "L17");
  const lines = hunksOf(lineDiff(old, neu));
  assert.equal(lines.filter((l) => l.op === "@").length, 2);
  assert.deepEqual(
    lines.filter((l) => l.op !== " " && l.op !== "@").map((l) => `${l.op}${l.text}`),
    ["-l2", "+L2", "-l17", "+L17"],
  );
  assert.equal(relativePath("C:\\ws\\a.txt", "C:\\ws"), "a.txt");
});

test("a command's card: the command, a non-zero exit is a failure, the tail of the output", () => {
  const output = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n");
  const summary = commandSummary({
    kind: "execute",
    status: "completed",
    rawInput: { command: "make test" },
    rawOutput: { metadata: { exitCode: 2 } },
    content: [{ type: "content", content: { type: "text", text: `${output}\n` } }],
  });
  assert.ok(summary);
  assert.equal(summary.command, "make test");
  assert.equal(summary.exitCode, 2);
  assert.equal(summary.failed, true);
  assert.equal(summary.tail.length, 12);
  assert.equal(summary.tail.at(-1), "line 20");
  assert.equal(summary.hidden, 8);
  const ok = commandSummary({
    kind: "execute",
    status: "completed",
    rawInput: { command: "true" },
    rawOutput: { metadata: { exitCode: 0 } },
    content: [{ type: "content", content: { type: "text", text: "(no output)" } }],
  });
  assert.deepEqual([ok?.failed, ok?.tail], [false, []]);
  const running = commandSummary({ kind: "execute", status: "in_progress", rawInput: { command: "sleep 9" } });
  assert.deepEqual([running?.exitCode, running?.failed], [undefined, false]);
  assert.equal(commandSummary({ kind: "read", status: "completed", rawInput: { file_path: "a" } }), undefined);
});

test("a question's card pairs each question with its answer", () => {
  const pairs = questionAnswers({
    kind: "other",
    status: "completed",
    rawInput: { questions: [{ question: "Which style?" }] },
    content: [{ type: "content", content: { type: "text", text: "Q: Which style?\nA: casual" } }],
  });
  assert.deepEqual(pairs, [{ question: "Which style?", answer: "casual" }]);
});

test("a command's card reads the exit status the final update's rawOutput carries", () => {
  const t = emptyTranscript();
  applyUpdate(t, {
    sessionUpdate: "tool_call",
    toolCallId: "c1",
    title: "Run `false`",
    kind: "execute",
    status: "pending",
    rawInput: { command: "false" },
  });
  applyUpdate(t, {
    sessionUpdate: "tool_call_update",
    toolCallId: "c1",
    status: "completed",
    title: "Exit 1: false",
    content: [{ type: "content", content: { type: "text", text: "nope\n" } }],
    rawOutput: { title: "Exit 1: false", error: null, metadata: { exitCode: 1 } },
  });
  const entry = t.entries[0];
  assert.ok(entry?.kind === "tool");
  const summary = commandSummary(entry.call);
  assert.deepEqual([summary?.exitCode, summary?.failed, summary?.tail], [1, true, ["nope"]]);
});
