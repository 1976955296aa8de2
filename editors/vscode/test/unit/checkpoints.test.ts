import assert from "node:assert/strict";
import { test } from "node:test";

import {
  compactMessage,
  describeCheckpoint,
  filesSince,
  kindLabel,
  lastTurn,
  localTime,
  planQuestion,
  restoreOutcome,
  spanFiles,
} from "../../src/checkpoints";
import type { CheckpointInfo } from "../../src/protocol";

const LIST: CheckpointInfo[] = [
  { id: 1, kind: "beforeTurn", turn: 1, time: "2025-05-04T10:12:00Z" },
  { id: 2, kind: "beforeTool", turn: 1, toolCallId: "c2", tool: "edit", time: "2025-05-04T10:12:03Z", files: ["calc.py"] },
  { id: 3, kind: "beforeTool", turn: 1, toolCallId: "c3", tool: "write", time: "2025-05-04T10:12:04Z", files: ["new.txt", "calc.py"] },
  { id: 4, kind: "afterTurn", turn: 1, time: "2025-05-04T10:12:09Z", files: ["util.py"] },
  { id: 5, kind: "beforeTurn", turn: 2, time: "2025-05-04T10:13:00Z" },
];

test("a checkpoint's stretch: a turn's files, the person's after it, nothing at the end", () => {
  assert.deepEqual(spanFiles(LIST, 0), ["calc.py", "new.txt"]);
  assert.deepEqual(spanFiles(LIST, 2), ["new.txt", "calc.py"]);
  assert.deepEqual(spanFiles(LIST, 3), ["util.py"]);
  assert.deepEqual(spanFiles(LIST, 4), []);
  assert.deepEqual(filesSince(LIST, 0), ["calc.py", "new.txt", "util.py"]);
  assert.deepEqual(filesSince(LIST, 4), []);
  assert.equal(lastTurn(LIST), 2);
  assert.equal(lastTurn([]), undefined);
});

test("a checkpoint's row: id and kind, turn and local time, the files", () => {
  const now = new Date("2025-05-04T12:00:00Z");
  const row = describeCheckpoint(LIST, 1, now);
  assert.equal(row.label, "#2 Before edit (c2)");
  assert.match(row.description, /^turn 1 · \d\d:\d\d:03$/);
  assert.equal(row.detail, "changed: calc.py, new.txt");
  assert.equal(describeCheckpoint(LIST, 4, now).detail, "no changes");
  assert.equal(kindLabel(LIST[0]!), "Start of turn 1");
  assert.equal(kindLabel(LIST[3]!), "End of turn 1");
  assert.equal(kindLabel({ ...LIST[1]!, kind: "afterTool" }), "After edit (c2)");
  assert.match(localTime("2025-05-04T10:12:03Z", new Date("2030-01-01T00:00:00Z")), /^2025-05-0\d \d\d:\d\d:03$/);
  assert.equal(localTime("not a time"), "not a time");
});

test("the plan as a question: the person's changes are named and need their own button", () => {
  const plan = {
    restored: ["calc.py", "util.py"],
    conflicts: ["util.py"],
    skipped: ["big.bin"],
    notCovered: ["build/out.log"],
    diff: "",
    message: "2 file(s) would be restored.",
  };
  const q = planQuestion("Undo turn 2", plan);
  assert.equal(q.message, "Undo turn 2?");
  assert.deepEqual(q.plain, ["calc.py"]);
  assert.equal(
    q.detail,
    "Restores: calc.py\nConflict: changed by you since, kept unless you include them: util.py\nNot restored (too large, not text, or now a symbolic link): big.bin\nNot covered by undo (changed by the agent, left out of checkpoints): build/out.log",
  );
  assert.deepEqual(q.choices, [
    { title: "Restore 1 File(s)", includeConflicts: false },
    { title: "Restore 2 File(s) Including My Changes", includeConflicts: true },
  ]);
  const onlyMine = planQuestion("Undo", { ...plan, restored: ["util.py"] });
  assert.deepEqual(onlyMine.choices.map((c) => c.includeConflicts), [true]);
  const done = { ...plan, restored: ["calc.py"], message: "Restored calc.py." };
  assert.equal(restoreOutcome("Undo turn 2", done, false), "Undo turn 2: Restored calc.py. Kept your changes to util.py.");
  assert.equal(restoreOutcome("Undo turn 2", done, true), "Undo turn 2: Restored calc.py.");
  assert.equal(
    compactMessage({ tokensBefore: 51234, tokensAfter: 9120, summarized: true }),
    "Compacted the conversation: 51234 → 9120 tokens (older turns summarised)",
  );
});
