// End-to-end: the model picker in a real VS Code workbench. The scripted provider lists two models
// besides the configured one ("scripted"). Before a session the header's dropdown shows the
// configured model; once the first prompt started a session it lists the provider's models too.
// Choosing gpt-4o-mini there, then gpt-4.1 with "Tandem: Choose Model…", switches the model of the
// next request; a new session (New) starts with the model chosen last. tests/e2e/vscode.rs checks
// the model of each request the provider got. Same environment as review.mjs.

import { join } from "node:path";

import { env, panelFrame, runCommand, runInWorkbench, sendPrompt, step, waitFor } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");

await runInWorkbench(async (page) => {
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  const dropdown = panel.locator('[data-testid="model"]');
  const options = () => dropdown.locator("option").evaluateAll((all) => all.map((o) => o.value).join(","));
  /** Waits until the dropdown shows `model`, confirmed by the sidecar (its tooltip names it). */
  const shows = (model) =>
    waitFor(
      async () => {
        const [value, title] = [await dropdown.inputValue(), (await dropdown.getAttribute("title")) ?? ""];
        return value === model && title.includes(`(${model})`) ? true : new Error(`${value}: ${title}`);
      },
      15_000,
      `the dropdown showing ${model}`,
    );

  step("before a session: the configured model");
  await dropdown.waitFor({ timeout: 30_000 });
  await waitFor(async () => ((await options()) === "scripted" ? true : new Error(await options())), 15_000, "the configured model");

  step("the first prompt starts a session: the dropdown lists the provider's models");
  await sendPrompt(panel, "hello", "First answer.");
  await waitFor(
    async () => ((await options()) === "scripted,gpt-4.1,gpt-4o-mini" ? true : new Error(await options())),
    15_000,
    "the provider's models in the dropdown",
  );
  await shows("scripted");
  await page.screenshot({ path: join(OUT_DIR, "dropdown.png") });

  step("choosing gpt-4o-mini: the next request uses it");
  await dropdown.selectOption("gpt-4o-mini");
  await shows("gpt-4o-mini");
  await sendPrompt(panel, "again", "Second answer.");

  step("Tandem: Choose Model… lists the same models, the current one marked; gpt-4.1 is chosen");
  await runCommand(page, "Tandem: Choose Model…");
  const rows = page.locator(".quick-input-list .monaco-list-row");
  await rows.filter({ hasText: "gpt-4o-mini" }).filter({ hasText: "(current)" }).waitFor({ timeout: 15_000 });
  await page.screenshot({ path: join(OUT_DIR, "quick-pick.png") });
  await page.locator(".quick-input-widget input").fill("gpt-4.1");
  await rows.filter({ hasText: "gpt-4.1" }).first().waitFor({ timeout: 5_000 });
  await page.keyboard.press("Enter");
  await shows("gpt-4.1");
  await sendPrompt(panel, "once more", "Third answer.");

  step("a new session starts with the model chosen last");
  await panel.locator('[data-testid="new-session"]').click();
  await waitFor(async () => ((await dropdown.inputValue()) === "gpt-4.1" ? true : new Error(await dropdown.inputValue())), 10_000, "gpt-4.1 after New");
  await sendPrompt(panel, "new session", "Fourth answer.");
  await shows("gpt-4.1");
  console.log("ok: the dropdown and Choose Model… listed the provider's models and switched the model of the next request");
});
