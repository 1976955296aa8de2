import assert from "node:assert/strict";
import { test } from "node:test";

import { configAdvice } from "../../src/configErrors";
import { mentionAt, typedUrls, webUrl } from "../../src/mentionSyntax";
import { parseFromPanel } from "../../src/messages";
import { parseSymbols, rankSymbols, rangeUri, symbolExtent, symbolMention, wantsSymbols } from "../../src/symbols";
import type { WorkspaceSymbol } from "../../src/symbols";
import {
  ExecutionLog,
  MAX_EXECUTIONS,
  MAX_OUTPUT_CHARS,
  executionText,
  hasOutput,
  plainTerminalText,
  screenText,
} from "../../src/terminalText";

test("the mention at the caret: after a space or at the start, never inside a word", () => {
  assert.deepEqual(mentionAt("look at @calc"), { query: "calc", start: 8 });
  assert.deepEqual(mentionAt("@"), { query: "", start: 0 });
  assert.deepEqual(mentionAt("see\n@https://example.com/x"), { query: "https://example.com/x", start: 4 });
  assert.equal(mentionAt("mail me@example.com"), undefined);
  assert.equal(mentionAt("@calc and more"), undefined, "the caret is past the mention");
  assert.equal(mentionAt("@a@b"), undefined);
});

test("web addresses: http and https with a host; trailing punctuation is not part of them", () => {
  assert.equal(webUrl("https://example.com/x"), "https://example.com/x");
  assert.equal(webUrl("HTTP://example.com/a?b=1#c"), "HTTP://example.com/a?b=1#c");
  assert.equal(webUrl("https://example.com/x)."), "https://example.com/x");
  for (const not of ["https://", "http:/x", "ftp://example.com", "example.com", "calc.py", "https", "file:///etc/passwd"]) {
    assert.equal(webUrl(not), undefined, not);
  }
  assert.deepEqual(typedUrls("read @https://a.example/x, then @http://b.example and @https://a.example/x again; not me@https://c.example"), [
    "https://a.example/x",
    "http://b.example",
  ]);
  assert.deepEqual(typedUrls("no links, https://d.example is not mentioned"), []);
});

test("symbol and URL mentions from the panel are checked like the others", () => {
  const symbol = { name: "increment", kind: "method", path: "shop/counter.py", line: 7, endLine: 9 };
  assert.deepEqual(parseFromPanel({ type: "mention", mention: { kind: "symbol", label: "increment", symbol } }), {
    type: "mention",
    mention: { kind: "symbol", label: "increment", symbol },
  });
  assert.deepEqual(parseFromPanel({ type: "mention", mention: { kind: "url", label: "https://example.com/x" } }), {
    type: "mention",
    mention: { kind: "url", label: "https://example.com/x" },
  });
  assert.deepEqual(parseFromPanel({ type: "mention", mention: { kind: "terminal", label: "terminal" } }), {
    type: "mention",
    mention: { kind: "terminal", label: "terminal" },
  });
  for (const bad of [
    { kind: "symbol", label: "increment" },
    { kind: "symbol", label: "increment", symbol: { ...symbol, line: 0 } },
    { kind: "symbol", label: "increment", symbol: { ...symbol, line: 1.5 } },
    { kind: "symbol", label: "increment", symbol: { ...symbol, endLine: 3 } },
    { kind: "symbol", label: "increment", symbol: { ...symbol, path: "" } },
    { kind: "symbol", label: "increment", symbol: { ...symbol, name: 42 } },
    { kind: "shell", label: "rm -rf /" },
  ]) {
    assert.equal(parseFromPanel({ type: "mention", mention: bad }), undefined, JSON.stringify(bad));
  }
});

const SYMBOLS: WorkspaceSymbol[] = [
  { name: "counter", kind: "variable", path: "shop/main.py", line: 5, character: 5, endLine: 5 },
  { name: "Counter", kind: "class", path: "shop/counter.py", line: 1, character: 7, endLine: 1 },
  { name: "count_to", kind: "function", path: "shop/main.py", line: 4, character: 5, endLine: 4 },
  { name: "increment", kind: "method", path: "shop/counter.py", line: 7, character: 9, endLine: 7, container: "Counter" },
  { name: "Counter", kind: "class", path: "shop/counter.py", line: 1, character: 7, endLine: 1 },
  { name: "account", kind: "variable", path: "a.py", line: 1, character: 1 },
];

test("the lsp tool's metadata.symbols become completion items, best match first", () => {
  const parsed = parseSymbols({
    count: 4,
    symbols: [
      SYMBOLS[3],
      { name: "", kind: "x", path: "a.py", line: 1, character: 1 },
      { name: "x", kind: "x", path: "a.py", line: 0, character: 1 },
      { name: "y", path: "b.py", line: 2, character: 3, endLine: 1, container: null },
      { name: "dataclass", kind: "function", path: "/usr/lib/python3/dataclasses.py", line: 9, character: 5 },
      { name: "z", kind: "function", path: "../elsewhere.py", line: 9, character: 5 },
      "junk",
    ],
  });
  assert.deepEqual(parsed, [SYMBOLS[3], { name: "y", kind: "symbol", path: "b.py", line: 2, character: 3 }]);
  assert.deepEqual(parseSymbols({ count: 0 }), [], "an older sidecar without metadata.symbols: no symbols");
  assert.deepEqual(parseSymbols(undefined), []);

  const ranked = rankSymbols(SYMBOLS, "Counter").map((s) => `${s.kind} ${s.name} ${s.path}:${s.line}`);
  assert.deepEqual(ranked, [
    "class Counter shop/counter.py:1",
    "variable counter shop/main.py:5",
    // What the server matched in its own way comes last.
    "function count_to shop/main.py:4",
    "method increment shop/counter.py:7",
    "variable account a.py:1",
  ]);
  assert.deepEqual(
    rankSymbols(SYMBOLS, "count").map((s) => s.name),
    ["count_to", "Counter", "counter", "account", "increment"],
  );
  assert.equal(rankSymbols(SYMBOLS, "c", 2).length, 2);

  assert.deepEqual(symbolMention(SYMBOLS[3]!), {
    kind: "symbol",
    label: "increment",
    detail: "method in Counter · shop/counter.py:7",
    symbol: { name: "increment", kind: "method", path: "shop/counter.py", line: 7, endLine: 7 },
  });
  assert.ok(wantsSymbols("inc"));
  for (const not of ["", "i", "src/a", "https://x", "two words"]) assert.equal(wantsSymbols(not), false, not);
});

const extent = (text: string, line: number, path: string, endLine?: number) => {
  const { start, end } = symbolExtent(text.split("\n"), line - 1, endLine === undefined ? undefined : endLine - 1, path);
  return [start + 1, end + 1];
};

test("a symbol's definition: Python blocks by indentation, with their decorators", () => {
  const py = [
    "class Counter:", //  1
    '    """A counter."""', //  2
    "", //  3
    "    @property", //  4
    "    def value(self,", //  5
    "              x: int = (1)) -> int:", //  6
    "        # the value", //  7
    "        return self.count", //  8
    "", //  9
    "    def reset(self): return 0", // 10
    "", // 11
    "LIMIT = {", // 12
    '    "a": 1,', // 13
    "}", // 14
    "counter = Counter()", // 15
  ].join("\n");
  assert.deepEqual(extent(py, 1, "shop/counter.py"), [1, 10], "the class, up to its last indented line");
  assert.deepEqual(extent(py, 5, "shop/counter.py"), [4, 8], "the method with its decorator and its signature over two lines");
  assert.deepEqual(extent(py, 10, "shop/counter.py"), [10, 10], "a one-line method");
  assert.deepEqual(extent(py, 12, "shop/counter.py"), [12, 14], "a statement over several lines");
  assert.deepEqual(extent(py, 15, "shop/counter.py"), [15, 15]);
  assert.deepEqual(extent(py, 1, "shop/counter.py", 3), [1, 3], "a range the server gave over several lines wins");
});

test("a symbol's definition: braces in Rust, TypeScript and C, strings and comments aside", () => {
  const rs = [
    "/// Adds.", // 1
    "#[inline]", // 2
    "pub fn add<'a>(a: &'a str, b: i32) -> i32", // 3
    "where", // 4
    "    i32: Copy,", // 5
    "{", // 6
    '    let s = "}"; // }', // 7
    "    let c = '{';", // 8
    "    b", // 9
    "}", // 10
    "pub const X: i32 = 5;", // 11
    "struct Unit;", // 12
  ].join("\n");
  assert.deepEqual(extent(rs, 3, "src/lib.rs"), [1, 10]);
  assert.deepEqual(extent(rs, 11, "src/lib.rs"), [11, 11]);
  assert.deepEqual(extent(rs, 12, "src/lib.rs"), [12, 12]);
  const ts = [
    "export class A extends B {", // 1
    "  f(): string { return `}`; }", // 2
    "}", // 3
    "export const g = (a: number) =>", // 4
    "  a + 1;", // 5
    "const h = 1", // 6
    "function k() {}", // 7
  ].join("\n");
  assert.deepEqual(extent(ts, 1, "a.ts"), [1, 3]);
  assert.deepEqual(extent(ts, 2, "a.ts"), [2, 2]);
  assert.deepEqual(extent(ts, 4, "a.ts"), [4, 5]);
  assert.deepEqual(extent(ts, 6, "a.ts"), [6, 6], "no semicolon, and the next line is another statement");
  const c = ["int main(void)", "{", "  /* } */ return 0;", "}"].join("\n");
  assert.deepEqual(extent(c, 1, "main.c"), [1, 4]);
  assert.equal(rangeUri("file:///w/a.py", 3, 9), "file:///w/a.py#L3-L9");
});

test("@terminal: escape sequences go, a long output keeps its end, the last few commands are kept", () => {
  assert.equal(plainTerminalText("\x1b]633;C\x07\x1b[1;31merror\x1b[0m: boom\r\n 10%\r 50%\r100%\n"), "error: boom\n100%\n");
  const log = new ExecutionLog<string>();
  for (let i = 0; i < MAX_EXECUTIONS + 2; i += 1) log.end(log.start("t", `echo ${i}`), 0);
  assert.deepEqual(log.of("t").map((e) => e.command), ["echo 2", "echo 3", "echo 4", "echo 5", "echo 6"]);
  const last = log.start("t", "cargo test", "/w");
  log.append(last, "x".repeat(MAX_OUTPUT_CHARS));
  log.append(last, "\ntest result: FAILED\n");
  assert.equal(last.output.length, MAX_OUTPUT_CHARS);
  assert.ok(last.output.endsWith("test result: FAILED\n"));
  log.end(last, 101);
  const text = executionText("bash", log.of("t"));
  assert.ok(text.startsWith('Terminal "bash", the last command (in /w):\n$ cargo test\n[… 21 earlier characters of output left out]\n'), text);
  assert.ok(text.includes("test result: FAILED\n[exit code 101]\n\nThe commands before it:\n$ echo 3  (exit code 0)"), text);
  assert.equal(log.of("other").length, 0);
  log.forget("t");
  assert.equal(log.of("t").length, 0);

  const running = new ExecutionLog<string>();
  running.start("t", "sleep 100");
  assert.equal(executionText("zsh", running.of("t")), 'Terminal "zsh", the last command:\n$ sleep 100\n[no output]\n[still running]');
  const screen = screenText("sh", `${Array.from({ length: 250 }, (_, i) => `line ${i}`).join("\n")}\n$ \n\n`);
  assert.ok(screen.startsWith('Terminal "sh", its last 200 lines (no shell integration'), screen);
  assert.ok(screen.endsWith("line 249\n$"), screen);
  const cold = new ExecutionLog<string>();
  const first = cold.start("t", "npm test");
  assert.equal(hasOutput(first), false);
  cold.end(first, 1);
  assert.equal(
    screenText("bash", "$ npm test\n1 failing\n$ ", first),
    'Terminal "bash", its text; the last command was `npm test` [exit code 1]:\n$ npm test\n1 failing\n$',
  );
  cold.append(first, "\x1b[31m1 failing\x1b[0m\n");
  assert.equal(hasOutput(first), true);
});

test("configuration errors name the setting to open and the config file", () => {
  const cases: [string, string | undefined, string | undefined][] = [
    [
      "the provider at https://api.example/v1 refused the API key (HTTP 401). No API key is configured: set TANDEM_API_KEY_ENV (or api_key_env under [provider] in .tandem/config.toml) to the name of the environment variable that holds it.",
      "tandem.provider.apiKeyEnv",
      ".tandem/config.toml",
    ],
    ["the provider at http://x refused the API key (HTTP 403). Check the key in the environment variable K.", "tandem.provider.apiKeyEnv", undefined],
    [
      "no model provider answered at http://127.0.0.1:11434/v1 (connection refused). Start Ollama (`ollama serve`) or configure a provider: set TANDEM_PROVIDER, TANDEM_BASE_URL, TANDEM_MODEL and TANDEM_API_KEY_ENV, or [provider] in .tandem/config.toml",
      "tandem.provider.baseUrl",
      ".tandem/config.toml",
    ],
    ["the provider at http://x rejected the request for model gpt-9 (HTTP 404: model not found)", "tandem.provider.model", undefined],
    ['unknown provider kind `gemini`: use "openai" (OpenAI, …) or "anthropic"', "tandem.provider.kind", undefined],
    [
      "No tandem binary found: tandem.path is empty, `tandem` is not on PATH. Install it (`cargo install --path server/tandem`) or set tandem.path.",
      "tandem.path",
      undefined,
    ],
    [
      "The tandem sidecar did not start: Request initialize failed with message: unknown key `profil` in [tools] of /w/.tandem/config.toml: did you mean `profile`?",
      undefined,
      "/w/.tandem/config.toml",
    ],
    ["invalid configuration in /home/me/.config/tandem/config.toml: TOML parse error at line 3", undefined, "/home/me/.config/tandem/config.toml"],
    ["The tandem sidecar did not start: initializationOptions: unknown variant `fast`, expected one of `default`, `auto-edit`, `plan`, `yolo`", "tandem.mode", undefined],
    ["the provider at http://x is rate-limiting requests for model m (HTTP 429)", undefined, undefined],
    ["Could not restore: the checkpoint is gone", undefined, undefined],
  ];
  for (const [message, setting, configFile] of cases) {
    const advice = configAdvice(message);
    assert.deepEqual([advice.setting, advice.configFile], [setting, configFile], message);
  }
});
