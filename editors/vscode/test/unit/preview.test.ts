import assert from "node:assert/strict";
import { test } from "node:test";

import { counts, fileLine, fileOf, headline, inHunk, place, utf16Offset } from "../../src/preview";
import type { DiagnosticsPreview, PreviewDiagnostic, RequestPermissionParams } from "../../src/protocol";
import { Review } from "../../src/review";

const ERROR: PreviewDiagnostic = {
  severity: "error",
  message: 'Type "Literal[\'total\']" is not assignable to return type "int"',
  line: 9,
  column: 12,
  endLine: 9,
  endColumn: 19,
  source: "Pyright",
  code: "reportReturnType",
  hunk: "h1",
};

const READY: DiagnosticsPreview = {
  status: "ready",
  summary: "introduces 1 error: shop/main.py:9: Type \"Literal['total']\" is not assignable to return type \"int\"",
  files: [{ path: "/w/shop/main.py", changed: true, server: "pyright", status: "ready", introduced: [ERROR] }],
};

test("the headline is the server's summary, prefixed", () => {
  assert.equal(headline(READY), `Diagnostics preview: ${READY.summary}`);
  assert.equal(headline(undefined), undefined);
  assert.equal(headline(null), undefined);
});

test("a preview that is not ready says so, never 'no problems'", () => {
  const notReady: DiagnosticsPreview = {
    status: "notReady",
    summary: "diagnostics not ready, so nothing is known about errors; not ready: shop/main.py (pyright: timed out)",
    files: [{ path: "/w/shop/main.py", changed: true, server: "pyright", status: "notReady", reason: "timed out" }],
  };
  assert.match(headline(notReady)!, /^Diagnostics preview: diagnostics not ready/);
  // Even when a server sent no summary, or one that does not say so.
  assert.equal(headline({ ...notReady, summary: "" }), "Diagnostics preview: diagnostics not ready, so nothing is known about errors");
  assert.match(headline({ ...notReady, summary: "no new errors or warnings" })!, /not ready.*; no new errors/);
  const line = fileLine(notReady.files[0]);
  assert.match(line!, /not ready \(pyright: timed out\)/);
  assert.doesNotMatch(line!, /no new/);
});

test("a file's line counts its new and resolved problems", () => {
  assert.equal(fileLine(READY.files[0]), "this file: 1 new error");
  assert.equal(fileLine({ ...READY.files[0]!, introduced: [], resolved: [ERROR] }), "this file: 1 resolved");
  assert.equal(fileLine({ ...READY.files[0]!, introduced: [] }), "this file: no new errors or warnings");
  assert.equal(counts([ERROR, { ...ERROR, severity: "warning" }, { ...ERROR, severity: "warning" }]), "1 error, 2 warnings");
});

test("files and hunks: found by path, counted per hunk", () => {
  assert.equal(fileOf(READY, "/w/shop/main.py")?.server, "pyright");
  assert.equal(fileOf(READY, "/w/other.py"), undefined);
  assert.equal(inHunk(READY.files[0], "h1").length, 1);
  assert.equal(inHunk(READY.files[0], "h2").length, 0);
});

test("positions: 1-based scalar columns become 0-based UTF-16 ones, clamped to the text", () => {
  const text = 'a\n"😀x" = 1\nlast\n';
  const placed = place([{ ...ERROR, line: 2, column: 2, endLine: 2, endColumn: 4 }], text);
  // 😀 is one scalar value and two UTF-16 code units.
  assert.deepEqual(
    { line: placed[0]!.line, character: placed[0]!.character, endLine: placed[0]!.endLine, endCharacter: placed[0]!.endCharacter },
    { line: 1, character: 1, endLine: 1, endCharacter: 4 },
  );
  assert.equal(placed[0]!.hunk, "h1");
  assert.equal(placed[0]!.source, "Pyright");
  const beyond = place([{ ...ERROR, line: 99, column: 50, endLine: 99, endColumn: 60 }], text);
  assert.equal(beyond[0]!.line, 3);
  assert.equal(utf16Offset("😀😀", 1), 2);
  assert.equal(utf16Offset("ab", 9), 2);
});

test("a review keeps the request's preview", () => {
  const params: RequestPermissionParams = {
    sessionId: "s1",
    toolCall: {
      toolCallId: "c1",
      content: [
        {
          type: "diff",
          path: "/w/shop/main.py",
          oldText: "x\n",
          newText: "y\n",
          hunks: [{ id: "h1", oldStart: 1, oldLines: 1, newStart: 1, newLines: 1, patch: "@@ -1 +1 @@\n-x\n+y\n" }],
        },
      ],
    },
    options: [],
    diagnostics: READY,
  };
  assert.equal(Review.fromRequest(params)?.preview, READY);
  assert.equal(Review.fromRequest({ ...params, diagnostics: null })?.preview, undefined);
});
