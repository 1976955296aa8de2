// End-to-end: a project's slash command in the panel of a real VS Code workbench. `/` typed first in
// the prompt lists the sidecar's commands (`tandem/commands/list`: `/context`, `/init` and the
// project's `.tandem/commands/review.md` with its argument hint); Tab completes the name; the
// prompt `/review notes.txt naming` is sent as typed, the sidecar expands it (tests/e2e/vscode.rs
// checks the request the model got) and the transcript shows the command and its card.
// Same environment as review.mjs.

import { join } from "node:path";

import { env, panelFrame, runCommand, runInWorkbench, step } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");

await runInWorkbench(async (page) => {
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  const prompt = panel.locator('[data-testid="prompt"]');
  await prompt.waitFor({ timeout: 30_000 });
  const list = panel.locator('[data-testid="mention-list"]');

  step("/ lists the commands, the project's with its hint");
  await prompt.click();
  await prompt.pressSequentially("/");
  await list.locator('[data-testid="command"]', { hasText: "/context" }).waitFor({ timeout: 30_000 });
  await list.locator('[data-testid="command"]', { hasText: "/init" }).waitFor({ timeout: 10_000 });
  await prompt.pressSequentially("rev");
  const review = list.locator('[data-testid="command"]', { hasText: "/review <file> <concern>" });
  await review.waitFor({ timeout: 10_000 });
  const detail = await review.locator(".detail").innerText();
  if (detail !== "Review a file for one concern") throw new Error(`the command's description reads ${JSON.stringify(detail)}`);
  if ((await list.locator('[data-testid="command"]').count()) !== 1) throw new Error("commands not matching /rev are listed");
  await page.screenshot({ path: join(OUT_DIR, "commands.png") });

  step("Tab completes the name; the prompt is sent as typed");
  await prompt.press("Tab");
  const value = await prompt.inputValue();
  if (value !== "/review ") throw new Error(`Tab left the prompt as ${JSON.stringify(value)}`);
  await prompt.pressSequentially("notes.txt naming");
  await prompt.press("Enter");
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Reviewed." }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="user-message"]', { hasText: "/review notes.txt naming" }).waitFor({ timeout: 10_000 });
  await panel.locator('[data-testid="tool-call"]', { hasText: ".tandem/commands/review.md" }).waitFor({ timeout: 10_000 });
  console.log("ok: / listed the commands, Tab completed /review, and the command was sent and shown");
});
