// End-to-end: more ways the file changes while a hunk waits for review, each in its own file
// (the model changes `return a / b` to `return a // b` in calcN.py; the person then changes the
// file, goes back to the review and accepts). tests/e2e/vscode.rs checks the bytes on disk:
//   below      a line typed below the hunk (not saved)
//   undo       a word typed above the hunk, then undone
//   outside    another program writes the file (a line at its top)
//   formatter  a line with trailing blanks typed above and saved: the workspace's
//              files.trimTrailingWhitespace changes the text as it is saved
// Environment as review.mjs.

import { writeFileSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const WORKSPACE = env("WORKSPACE");

const CASES = [
  {
    name: "below",
    keys: async (page) => {
      await page.keyboard.press("Control+End");
      await page.keyboard.type("# end");
    },
  },
  {
    name: "undo",
    keys: async (page) => {
      await page.keyboard.press("Control+Home");
      await page.keyboard.type("x");
      await page.keyboard.press("Control+Z");
    },
  },
  {
    name: "outside",
    outside: (file) => writeFileSync(file, `# outside\n${readFileSync(file, "utf8")}`),
  },
  {
    name: "formatter",
    keys: async (page) => {
      await page.keyboard.press("Control+Home");
      await page.keyboard.type("# note   ");
      await page.keyboard.press("Enter");
      await page.keyboard.press("Control+S");
    },
  },
];

await runInWorkbench(async (page) => {
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  for (const [i, c] of CASES.entries()) {
    const name = `calc${i + 1}.py`;
    const fileTab = () => page.locator(".tab", { hasText: name }).filter({ hasNotText: "Tandem" }).first();
    step(`${c.name}: open ${name} and ask for a change`);
    await runCommand(page, name, { raw: true });
    await fileTab().waitFor({ timeout: 20_000 });
    await panel.locator('[data-testid="prompt"]').fill(`Tweak div in ${name}`);
    await panel.locator('[data-testid="send"]').click();
    await page.locator('.codelens-decoration a[title^="Accept h1"]').waitFor({ timeout: 30_000 });
    step(`${c.name}: change the file while the review waits, then accept`);
    if (c.keys) {
      await fileTab().click();
      await page.locator(".editor-instance .monaco-editor .view-lines").first().click();
      await c.keys(page);
    }
    if (c.outside) {
      c.outside(join(WORKSPACE, name));
      // VS Code reloads the (unmodified) editor from disk.
      await fileTab().click();
      await waitFor(async () => (await page.locator(".editor-instance .view-line", { hasText: "# outside" }).count()) > 0 || new Error("not reloaded"), 15_000, "the editor to show the outside write");
    }
    await page.locator(".tab", { hasText: "← Tandem" }).first().click();
    await page.locator('.codelens-decoration a[title^="Accept h1"]').click();
    await panel.locator('[data-testid="assistant-message"]', { hasText: `Done with ${name}.` }).waitFor({ timeout: 30_000 });
    await waitFor(async () => (await page.locator(".tab.dirty", { hasText: name }).count()) === 0, 10_000, `${name} to be saved`);
  }
});
