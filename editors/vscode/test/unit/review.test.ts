import assert from "node:assert/strict";
import { test } from "node:test";

import type { PermissionOption, RequestPermissionParams } from "../../src/protocol";
import { Review, ReviewError, anchorLine, changedLines, lineCount } from "../../src/review";

const OPTIONS: PermissionOption[] = [
  { optionId: "allow_once", name: "Accept", kind: "allow_once" },
  { optionId: "allow_always", name: "Always allow edits this session", kind: "allow_always" },
  { optionId: "reject_once", name: "Reject", kind: "reject_once" },
];

function request(files: { path: string; hunks: string[] }[]): RequestPermissionParams {
  return {
    sessionId: "s1",
    toolCall: {
      toolCallId: "c7",
      title: "Edit",
      kind: "edit",
      content: files.map((f) => ({
        type: "diff" as const,
        path: f.path,
        oldText: "a\nb\nc\n",
        newText: "a\nB\nc\nd\n",
        hunks: f.hunks.map((id, i) => ({ id, oldStart: 2 + i, oldLines: 1, newStart: 2 + i, newLines: 1, patch: `@@ ${id}\n` })),
      })),
    },
    options: OPTIONS,
  };
}

test("a request without a diff is not a review", () => {
  const params: RequestPermissionParams = {
    sessionId: "s1",
    toolCall: { toolCallId: "c1", content: [{ type: "content", content: { type: "text", text: "$ ls" } }] },
    options: OPTIONS,
  };
  assert.equal(Review.fromRequest(params), undefined);
});

test("accepting a subset answers allow_once with exactly those hunks", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h2"] }, { path: "/w/b.py", hunks: ["h3"] }]))!;
  assert.equal(review.hunks.length, 3);
  review.decide("h1", false);
  review.decide("h2", true);
  assert.equal(review.complete, false);
  assert.throws(() => review.answer(), ReviewError);
  review.decide("h3", true);
  assert.equal(review.summary(), "3 hunks: 2 accepted, 1 rejected, 0 pending");
  assert.deepEqual(review.answer(), { outcome: { outcome: "selected", optionId: "allow_once", acceptedHunks: ["h2", "h3"] } });
  assert.equal(review.isAnswered, true);
  assert.throws(() => review.decide("h1", true), /already been answered/);
});

test("accepting everything leaves acceptedHunks out (all hunks)", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h2"] }]))!;
  review.decideAll(true);
  assert.deepEqual(review.answer(), { outcome: { outcome: "selected", optionId: "allow_once" } });
});

test("rejecting everything answers reject_once with a message", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h2"] }]))!;
  review.decide("h1", false);
  review.decide("h2", false);
  const answer = review.answer();
  assert.equal(answer.outcome.outcome, "selected");
  assert.equal("optionId" in answer.outcome && answer.outcome.optionId, "reject_once");
});

test("a decision can change until the review is answered", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h2"] }]))!;
  review.decide("h1", true);
  review.decide("h1", false);
  review.decide("h2", true);
  assert.deepEqual(review.answer(), { outcome: { outcome: "selected", optionId: "allow_once", acceptedHunks: ["h2"] } });
});

test("unknown and duplicate hunk ids are errors that name the hunks", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1"] }]))!;
  assert.throws(() => review.decide("h9", true), /no hunk h9 in this review \(hunks: h1\)/);
  assert.throws(() => Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h1"] }])), /appears twice/);
});

test("a file without hunks is decided as a whole", () => {
  const params = request([{ path: "/w/a.py", hunks: ["h1"] }]);
  params.toolCall.content!.push({ type: "diff", path: "/w/moved.py", oldText: "x\n", newText: "x\n", hunks: [] });
  const review = Review.fromRequest(params)!;
  assert.equal(review.hunks.length, 2);
  const whole = review.hunks[1]!;
  assert.equal(whole.wholeFile, true);
  review.decide(whole.id, true);
  assert.equal(review.complete, true);
  assert.deepEqual(review.answer(), { outcome: { outcome: "selected", optionId: "allow_once" } });
});

test("always allow and close", () => {
  const a = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1"] }]))!;
  assert.deepEqual(a.answerAlways(), { outcome: { outcome: "selected", optionId: "allow_always" } });
  const b = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1"] }]))!;
  assert.deepEqual(b.close(), { outcome: { outcome: "cancelled" } });
  assert.equal(b.isAnswered, true);
});

test("the hunk under the cursor, and the lens line of a pure deletion", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h2"] }]))!;
  // h1 covers proposed line 2 (0-based 1), h2 line 3 (0-based 2).
  assert.equal(review.hunkAt("/w/a.py", 1)?.id, "h1");
  assert.equal(review.hunkAt("/w/a.py", 2)?.id, "h2");
  assert.equal(review.hunkAt("/w/a.py", 0)?.id, "h1", "above every hunk: the next one");
  assert.equal(review.hunkAt("/w/a.py", 40)?.id, "h2", "below every hunk: the last one");
  assert.equal(review.hunkAt("/w/other.py", 1), undefined);
  assert.equal(anchorLine({ newStart: 5, newLines: 0 }), 5);
  assert.equal(anchorLine({ newStart: 5, newLines: 2 }), 4);
  assert.equal(anchorLine({ newStart: 0, newLines: 0 }), 0);
  // Leading context is skipped: the lens sits on the first changed line.
  assert.equal(anchorLine({ newStart: 3, newLines: 7, patch: "@@ -3,7 +3,7 @@\n x\n y\n z\n-a\n+b\n w\n" }), 5);
  assert.equal(lineCount(""), 0);
  assert.equal(lineCount("a\nb"), 2);
  assert.equal(lineCount("a\nb\n"), 2);
});

test("navigation moves across files, wraps, and after a decision finds the next pending hunk", () => {
  const review = Review.fromRequest(request([{ path: "/w/a.py", hunks: ["h1", "h2"] }, { path: "/w/b.py", hunks: ["h3"] }]));
  assert.ok(review);
  const [h1, h2, h3] = review.hunks;
  assert.deepEqual([review.position(h1!), review.position(h3!)], [1, 3]);
  assert.equal(review.neighbour(undefined, 1, true), h1);
  assert.equal(review.neighbour(h2, 1, false), h3, "from the last hunk of a.py to b.py");
  assert.equal(review.neighbour(h3, 1, false), h1, "wraps to the start");
  assert.equal(review.neighbour(h1, -1, false), h3, "and backwards to the end");
  review.decide("h2", true);
  assert.equal(review.neighbour(h1, 1, true), h3, "decided hunks are skipped");
  assert.equal(review.nextFile(h1), h3);
  assert.equal(review.nextFile(h3), h1, "back to the first file's first pending hunk");
  review.decide("h1", false);
  review.decide("h3", true);
  assert.equal(review.neighbour(h3, 1, true), undefined, "nothing left to decide");
});

test("a decided hunk's marks go on the lines it changes, never on its context", () => {
  // calc.py: `def mul` and `def div` are context around the changed `return` line; a blank line too.
  const patch = "@@ -4,7 +4,8 @@\n def mul(a, b):\n     return a * b\n \n def div(a, b):\n-    return a / b\n+    return a // b\n+    # floor\n \n"
  assert.deepEqual(changedLines({ newStart: 4, newLines: 8, patch }), [7, 8]);
  // Added at the top (no leading context), and a pure deletion (no line of its own).
  assert.deepEqual(changedLines({ newStart: 1, newLines: 4, patch: "@@ -1,3 +1,4 @@\n+# note\n a\n b\n c\n" }), [0]);
  assert.deepEqual(changedLines({ newStart: 3, newLines: 0, patch: "@@ -4,1 +3,0 @@\n-gone\n" }), []);
  // A whole-file stand-in (no patch): all its lines.
  assert.deepEqual(changedLines({ newStart: 1, newLines: 2, patch: "" }), [0, 1]);
});
