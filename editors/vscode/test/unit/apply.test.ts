import assert from "node:assert/strict";
import { test } from "node:test";

import { propose, proposedText } from "../../src/apply";

const file = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";

test("a block replaces the selection, or the whole file keeping its final newline", () => {
  assert.equal(proposedText("a\nb\nc\n", "B", { start: 2, end: 3 }), "a\nB\nc\n");
  assert.equal(proposedText("a\nb\n", "x = 1"), "x = 1\n");
  assert.equal(proposedText("a", "x = 1"), "x = 1");
});

test("far-apart changes are separate hunks; any subset applies", () => {
  const changed = file.replace("line 2\n", "LINE 2\n").replace("line 18\n", "LINE 18\nline 18b\n");
  const p = propose(file, changed);
  assert.deepEqual(
    p.hunks.map((h) => [h.id, h.oldStart, h.oldLines, h.newStart, h.newLines]),
    [
      ["h1", 1, 5, 1, 5],
      ["h2", 15, 6, 15, 7],
    ],
  );
  assert.ok(p.hunks[0]!.patch.startsWith("@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n"));
  assert.equal(p.apply(), changed);
  assert.equal(p.apply([]), file);
  assert.equal(p.apply(["h1", "h2"]), changed);
  assert.equal(p.apply(["h1"]), file.replace("line 2\n", "LINE 2\n"));
  assert.equal(p.apply(["h2"]), file.replace("line 18\n", "LINE 18\nline 18b\n"));
});

test("a block that starts like a function of the file replaces that function only", () => {
  const source = "import os\n\ndef add(a, b):\n    x = 1\n    return a - b\n\ndef mul(a, b):\n    return a * b\n";
  assert.equal(
    proposedText(source, "def add(a, b):\n    return a + b\n"),
    source.replace("    x = 1\n    return a - b\n", "    return a + b\n"),
  );
  const rust = "fn main() {\n    let x = 1;\n    println!(\"{x}\");\n}\n\nfn other() {}\n";
  assert.equal(proposedText(rust, "fn main() {\n    println!(\"hi\");\n}"), rust.replace("    let x = 1;\n    println!(\"{x}\");\n", "    println!(\"hi\");\n"));
  // No header line in the file: the whole file.
  assert.equal(proposedText(source, "print(1)\n"), "print(1)\n");
  const p = propose(source, proposedText(source, "def add(a, b):\n    return a + b\n"));
  assert.equal(p.hunks.length, 1);
  assert.equal(p.apply(["h1"]), source.replace("    x = 1\n    return a - b\n", "    return a + b\n"));
});

test("a CRLF file keeps its line ends", () => {
  const source = "def add(a, b):\r\n    return a - b\r\n\r\ndef mul(a, b):\r\n    return a * b\r\n";
  assert.equal(
    proposedText(source, "def add(a, b):\r\n    return a + b"),
    source.replace("a - b", "a + b"),
  );
});
