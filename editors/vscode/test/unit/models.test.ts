import assert from "node:assert/strict";
import { test } from "node:test";

import { Outbox } from "../../src/delivery";
import type { ToPanel } from "../../src/messages";
import { parseFromPanel } from "../../src/messages";
import {
  configuredModel,
  modelChoices,
  modelPickItems,
  modelTooltip,
  selectOptions,
  singleModel,
  withCurrent,
} from "../../src/models";
import type { SessionConfigOptionsResult } from "../../src/protocol";

/** A configOptions result as the sidecar sends it: the mode, then the model. */
function result(current: string, models: string[], modelsError?: string): SessionConfigOptionsResult {
  return {
    configOptions: [
      {
        type: "select",
        id: "mode",
        name: "Mode",
        description: "What the agent may do without asking",
        category: "mode",
        currentValue: "default",
        options: [{ value: "default", name: "Default" }],
      },
      {
        type: "select",
        id: "model",
        name: "Model",
        description: "The model of the configured provider",
        category: "model",
        currentValue: current,
        options: models.map((m, i) => ({
          value: m,
          name: m === "claude-sonnet-4-5" ? "Claude Sonnet 4.5" : m,
          ...(i === 0 ? { description: "the configured model" } : {}),
        })),
      },
    ],
    ...(modelsError ? { modelsError } : {}),
  };
}

test("the dropdown lists the model choices by name with the current one selected", () => {
  const models = modelChoices(result("gpt-4o-mini", ["scripted", "gpt-4.1", "gpt-4o-mini"]));
  assert.ok(models);
  assert.deepEqual(selectOptions(models), [
    { value: "scripted", label: "scripted", title: "the configured model", selected: false },
    { value: "gpt-4.1", label: "gpt-4.1", title: "", selected: false },
    { value: "gpt-4o-mini", label: "gpt-4o-mini", title: "", selected: true },
  ]);
  assert.equal(models.error, undefined);
  assert.equal(modelTooltip(models), "Model (gpt-4o-mini): the next request to the provider uses the one chosen here");
  assert.equal(configuredModel(models), "scripted");
  // A name that is not the value (Anthropic's display names): the value is the option's tooltip.
  const anthropic = modelChoices(result("claude-sonnet-4-5", ["claude-opus-4-1", "claude-sonnet-4-5"]));
  assert.ok(anthropic);
  assert.deepEqual(selectOptions(anthropic)[1], {
    value: "claude-sonnet-4-5",
    label: "Claude Sonnet 4.5",
    title: "claude-sonnet-4-5",
    selected: true,
  });
});

test("a provider whose list could not be read: the models there are, the reason as the tooltip", () => {
  const models = modelChoices(result("scripted", ["scripted"], "GET http://127.0.0.1:9/v1/models: HTTP 404"));
  assert.ok(models);
  assert.deepEqual(
    selectOptions(models).map((o) => o.value),
    ["scripted"],
  );
  assert.equal(models.error, "GET http://127.0.0.1:9/v1/models: HTTP 404");
  assert.equal(modelTooltip(models), "The provider's models could not be listed: GET http://127.0.0.1:9/v1/models: HTTP 404");
  // A blank reason is no reason.
  assert.equal(modelChoices(result("scripted", ["scripted"], "  "))?.error, undefined);
});

test("the current model is always a choice; no model option means no dropdown", () => {
  const models = modelChoices(result("my-finetune", ["scripted", "gpt-4.1"]));
  assert.deepEqual(
    models?.choices.map((c) => c.value),
    ["my-finetune", "scripted", "gpt-4.1"],
  );
  const back = withCurrent(models!, "gpt-4.1");
  assert.equal(back.current, "gpt-4.1");
  assert.equal(back.choices.length, 3, "a known model is not added twice");
  assert.deepEqual(singleModel("scripted"), { current: "scripted", choices: [{ value: "scripted", name: "scripted" }] });
  assert.equal(configuredModel(singleModel("scripted")), undefined, "only the sidecar says which is configured");
  assert.equal(modelChoices({ configOptions: [] }), undefined);
});

test("Choose Model… lists each model by name, marks the current one, shows what differs", () => {
  const models = modelChoices(result("claude-sonnet-4-5", ["claude-opus-4-1", "claude-sonnet-4-5"]))!;
  assert.deepEqual(modelPickItems(models), [
    { label: "claude-opus-4-1", value: "claude-opus-4-1", detail: "the configured model" },
    { label: "Claude Sonnet 4.5", value: "claude-sonnet-4-5", description: "claude-sonnet-4-5 (current)", picked: true },
  ]);
});

test("the dropdown's choice reaches the extension only as a model name", () => {
  assert.deepEqual(parseFromPanel({ type: "setModel", model: "gpt-4o-mini" }), { type: "setModel", model: "gpt-4o-mini" });
  assert.deepEqual(parseFromPanel({ type: "setModel", model: "qwen2.5-coder:7b" }), { type: "setModel", model: "qwen2.5-coder:7b" });
  for (const bad of [{ type: "setModel" }, { type: "setModel", model: "" }, { type: "setModel", model: "  " }, { type: "setModel", model: 4 },
    { type: "setModel", model: "a\nb" }, { type: "setModel", model: "x".repeat(301) }]) {
    assert.equal(parseFromPanel(bad), undefined, JSON.stringify(bad));
  }
});

test("a recreated panel gets the last model list only, also after a reset", () => {
  const replayed: ToPanel[] = [];
  const outbox = new Outbox((e) => "replay" in e && replayed.push(...e.replay));
  outbox.post({ type: "models", models: singleModel("scripted") });
  outbox.post({ type: "models", models: modelChoices(result("scripted", ["scripted", "gpt-4.1"]))! });
  outbox.post({ type: "reset" });
  outbox.post({ type: "models", models: singleModel("gpt-4.1") });
  outbox.post({ type: "models", models: singleModel("gpt-4o-mini") });
  outbox.ready();
  assert.deepEqual(replayed, [{ type: "reset" }, { type: "models", models: singleModel("gpt-4o-mini") }]);
});
