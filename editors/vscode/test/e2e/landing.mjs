// End-to-end: an accepted hunk lands where it was reviewed, or not at all, while the person types
// in the file during the review (code-server + Chromium, the real sidecar, the scripted model).
// Started by tests/e2e/vscode.rs, which checks the bytes on disk. Environment as review.mjs, and
//   EXPECT_ABOVE  the bytes calc.py must hold after the first turn (a line typed above the hunk)

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const WORKSPACE = env("WORKSPACE");
const EXPECT_ABOVE = env("EXPECT_ABOVE");

await runInWorkbench(async (page) => {
  const fileTab = () => page.locator(".tab", { hasText: "calc.py" }).filter({ hasNotText: "Tandem" }).first();
  const reviewTab = () => page.locator(".tab", { hasText: "← Tandem" }).first();
  const typeInFile = async (keys) => {
    await fileTab().click();
    await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
    await keys();
  };

  step("open calc.py and ask for a change");
  await runCommand(page, "calc.py", { raw: true });
  await fileTab().waitFor({ timeout: 20_000 });
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="prompt"]').fill("Tweak div please");
  await panel.locator('[data-testid="send"]').click();
  await page.locator('.codelens-decoration a[title^="Accept h1"]').waitFor({ timeout: 30_000 });

  step("type a line at the top of calc.py while the review waits (not saved), then accept");
  await typeInFile(async () => {
    await page.keyboard.press("Control+Home");
    await page.keyboard.type("# note");
    await page.keyboard.press("Enter");
  });
  await reviewTab().click();
  await page.locator('.codelens-decoration a[title^="Accept h1"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Done with the division." }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (await page.locator(".tab.dirty", { hasText: "calc.py" }).count()) === 0, 10_000, "calc.py to be saved");
  const above = readFileSync(join(WORKSPACE, "calc.py"), "utf8");
  if (above !== EXPECT_ABOVE) throw new Error(`the bytes on disk after a line typed above:\n${above}\nexpected:\n${EXPECT_ABOVE}`);

  step("type inside the next hunk and save, then accept: refused, with the reason in view");
  await panel.locator('[data-testid="prompt"]').fill("Fix add please");
  await panel.locator('[data-testid="send"]').click();
  await page.locator('.codelens-decoration a[title^="Accept h1"]').waitFor({ timeout: 30_000 });
  await typeInFile(async () => {
    await page.keyboard.press("Control+Home");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("End");
    await page.keyboard.type("  # mine");
    await page.keyboard.press("Control+S");
  });
  await waitFor(async () => (await page.locator(".tab.dirty", { hasText: "calc.py" }).count()) === 0, 10_000, "calc.py to be saved");
  await reviewTab().click();
  await page.locator('.codelens-decoration a[title^="Accept h1"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Left it." }).waitFor({ timeout: 30_000 });
  const card = panel.locator('[data-testid="tool-call"][data-status="failed"]').last();
  await card.waitFor({ timeout: 10_000 });
  const reason = card.locator("pre", { hasText: "not applied" }).first();
  if (!(await reason.isVisible())) throw new Error(`the reason is not in view on the card: ${plain(await card.innerText())}`);
  const bar = plain(await page.locator(".statusbar").innerText());
  if (/accepted/.test(bar) && !/not applied/.test(bar)) throw new Error(`the status bar says accepted: ${bar}`);
  await page.screenshot({ path: join(env("OUT_DIR"), "refused.png") });
});
