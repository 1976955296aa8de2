import assert from "node:assert/strict";
import { test } from "node:test";

import { commandsOf, matchCommands, slashAt } from "../../src/slash";

test("slash: the commands of tandem/commands/list, malformed ones left out", () => {
  const commands = commandsOf({
    commands: [
      { name: "context", description: "What is in force" },
      { name: "review", description: "Review a file", input: { hint: "<file>" } },
      { name: 7 },
      { description: "no name" },
    ],
  });
  assert.deepEqual(commands, [
    { name: "context", description: "What is in force" },
    { name: "review", description: "Review a file", hint: "<file>" },
  ]);
  assert.deepEqual(commandsOf(undefined), []);
  assert.deepEqual(commandsOf({ commands: "x" }), []);
});

test("slash: only the prompt's first word, while it starts with /", () => {
  assert.equal(slashAt("/"), "");
  assert.equal(slashAt("/rev"), "rev");
  assert.equal(slashAt("/review src"), undefined);
  assert.equal(slashAt("fix /rev"), undefined);
  assert.equal(slashAt("/usr/bin"), undefined);
  const commands = commandsOf({ commands: [{ name: "review" }, { name: "release" }, { name: "context" }] });
  assert.deepEqual(matchCommands("re", commands).map((c) => c.name), ["review", "release"]);
  assert.deepEqual(matchCommands("", commands).length, 3);
});
