// End-to-end: the panel's tool cards, code blocks and context, in a real VS Code workbench.
// In yolo mode (nothing asks) the scripted model runs a failing command and edits a.txt: the
// command's card shows ✗, `exit 3` and the tail of its output; the edit's card shows
// `a.txt +1 −1` with the applied diff, the text meant for the model folded away, and its file opens
// in a diff editor. tests/e2e/vscode.rs checks what the model was sent. Same environment as
// review.mjs.

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");
const WORKSPACE = env("WORKSPACE");


await runInWorkbench(async (page) => {

  step("yolo mode, then a prompt: a failing command and an edit");
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="mode"]').selectOption("yolo");
  await page.locator(".statusbar-item", { hasText: "Tandem: yolo" }).first().waitFor({ timeout: 15_000 });
  await panel.locator('[data-testid="prompt"]').fill("run the checks and fix a.txt");
  await panel.locator('[data-testid="send"]').click();
  const pick = page.locator(".quick-input-widget");
  await pick.locator(".quick-input-title", { hasText: "Which greeting style?" }).waitFor({ timeout: 60_000 });
  await pick.locator(".quick-input-list .monaco-list-row", { hasText: "casual" }).click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "All done." }).waitFor({ timeout: 60_000 });

  step("the question's card shows the answer");
  const answerText = await panel.locator('[data-testid="tool-call"] [data-testid="answer"]').first().innerText();
  if (!answerText.includes("Which greeting style?") || !answerText.includes("casual")) throw new Error(`answer row ${JSON.stringify(answerText)}`);

  step("the failed command's card: ✗, exit 3, the tail of its output");
  const command = panel.locator('[data-testid="tool-call"][data-kind="execute"]');
  await command.waitFor({ timeout: 10_000 });
  const mark = await command.locator('[data-testid="tool-mark"]').innerText();
  if (mark !== "✗") throw new Error(`the failed command's mark is ${JSON.stringify(mark)}`);
  const exit = await command.locator('[data-testid="exit-status"]').innerText();
  if (exit !== "exit 3") throw new Error(`exit status shown as ${JSON.stringify(exit)}`);
  const tail = await command.locator('[data-testid="output-tail"]').innerText();
  if (!tail.includes("boom") || !tail.includes("checking")) throw new Error(`output tail: ${JSON.stringify(tail)}`);
  if (!(await command.evaluate((el) => el.open))) throw new Error("a failed command's card must be open");
  const color = await command.locator('[data-testid="tool-mark"]').evaluate((el) => getComputedStyle(el).color);
  const [r, g, b] = (color.match(/\d+/g) ?? []).map(Number);
  if (!(r > 150 && r > g + 60 && r > b + 60)) throw new Error(`the ✗ is not red: ${color}`);

  step("the edit's card: a.txt +1 −1, the applied diff, the model's text folded");
  const edit = panel.locator('[data-testid="tool-call"][data-kind="edit"]');
  const title = await edit.locator("summary .title").first().innerText();
  if (title !== "a.txt +1 \u22121") throw new Error(`edit card title ${JSON.stringify(title)}`);
  const diff = await edit.locator('[data-testid="file-diff"]').innerText();
  if (!diff.includes("-old line") || !diff.includes("+new line")) throw new Error(`edit card diff ${JSON.stringify(diff)}`);
  const folded = edit.locator('[data-testid="model-text"]');
  if (await folded.evaluate((el) => el.open)) throw new Error("the text for the model must start folded");
  await folded.locator("summary").click();
  await folded.locator("pre", { hasText: "a.txt" }).waitFor({ timeout: 5_000 });
  await page.screenshot({ path: join(OUT_DIR, "cards.png") });

  step("the file name opens what was applied in a diff editor");
  await edit.locator('[data-testid="file-change"]').click();
  await page.locator(".tab", { hasText: "a.txt (applied by Tandem)" }).first().waitFor({ timeout: 15_000 });
  const sides = page.locator(".monaco-diff-editor .view-lines");
  await waitFor(async () => {
    const text = plain((await sides.allInnerTexts()).join("|"));
    return text.includes("old line") && text.includes("new line") ? true : new Error(text);
  }, 15_000, "both sides of the applied change");
  await page.screenshot({ path: join(OUT_DIR, "applied-diff.png") });

  step("a code block is highlighted; Apply to file proposes it as a change to calc.py, reviewed per hunk");
  await runCommand(page, "calc.py", { raw: true });
  await page.locator(".tab", { hasText: "calc.py" }).first().waitFor({ timeout: 20_000 });
  await page.locator(".monaco-editor .view-lines").first().click();
  await panel.locator('[data-testid="mode"]').selectOption("default");
  await panel.locator('[data-testid="prompt"]').fill("how should add look?");
  await panel.locator('[data-testid="send"]').click();
  const answer = panel.locator('[data-testid="assistant-message"]', { hasText: "Like this" });
  await answer.waitFor({ timeout: 30_000 });
  const code = answer.locator("pre code");
  if ((await code.getAttribute("data-highlighted")) !== "true") throw new Error("the code block is not highlighted");
  const keyword = answer.locator("pre code .hljs-keyword", { hasText: "def" });
  await keyword.first().waitFor({ timeout: 5_000 });
  const plainColor = await answer.locator("p").first().evaluate((el) => getComputedStyle(el).color);
  const keywordColor = await keyword.first().evaluate((el) => getComputedStyle(el).color);
  if (keywordColor === plainColor) throw new Error(`the keyword has the text's colour ${keywordColor}`);
  await answer.locator('[data-testid="apply-code"]').click();
  const accept = page.locator('.codelens-decoration a[title^="Accept h1"]');
  await accept.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(OUT_DIR, "apply-review.png") });
  await accept.click();
  await waitFor(async () => {
    const disk = readFileSync(join(WORKSPACE, "calc.py"), "utf8");
    return disk.includes("return a + b") ? true : new Error(disk);
  }, 20_000, "the applied hunk in calc.py");
  await panel.locator(".notice", { hasText: "Applied 1 of 1 hunk to calc.py." }).waitFor({ timeout: 10_000 });
  await page.screenshot({ path: join(OUT_DIR, "panel.png") });

  step("@ completes files and @problems; the chosen ones go with the next prompt");
  await runCommand(page, "bad.json", { raw: true });
  await page.locator(".tab", { hasText: "bad.json" }).first().waitFor({ timeout: 20_000 });
  await page.locator(".monaco-editor .squiggly-error").first().waitFor({ timeout: 30_000 });
  const prompt = panel.locator('[data-testid="prompt"]');
  await prompt.click();
  await prompt.pressSequentially("look at @prob");
  const mentions = panel.locator('[data-testid="mention-list"]');
  await mentions.locator('[data-testid="mention"][data-kind="problems"]').waitFor({ timeout: 15_000 });
  await prompt.press("Enter");
  await prompt.pressSequentially("and @a.t");
  await mentions.locator('[data-testid="mention"][data-kind="file"]', { hasText: "@a.txt" }).waitFor({ timeout: 15_000 });
  await page.screenshot({ path: join(OUT_DIR, "mentions.png") });
  await prompt.press("Enter");
  const listed = panel.locator('[data-testid="attachments"] .attachment-list');
  await listed.filter({ hasText: "@problems" }).filter({ hasText: "a.txt" }).waitFor({ timeout: 10_000 });
  const typed = await prompt.inputValue();
  if (typed !== "look at @problems and @a.txt ") throw new Error(`the prompt reads ${JSON.stringify(typed)}`);
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Saw the problems." }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="user-message"]', { hasText: "(attached @problems)" }).waitFor({ timeout: 10_000 });

  step("Add to Tandem in the explorer's context menu lists the file for the next prompt");
  await page.keyboard.press("Control+Shift+E");
  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "calc.py" }).first();
  await row.waitFor({ timeout: 15_000 });
  const listedCalc = panel.locator('[data-testid="attachments"] .attachment-list', { hasText: "calc.py" });
  // The menu's first click can land while it is still opening: choose again until the list shows it.
  await waitFor(async () => {
    if (await listedCalc.isVisible()) return true;
    const item = page.locator(".context-view .action-label", { hasText: "Add to Tandem" }).first();
    if (!(await item.isVisible())) await row.click({ button: "right" });
    await item.hover();
    await item.click();
    await listedCalc.waitFor({ timeout: 3_000 });
    return true;
  }, 30_000, "calc.py in the list for the next prompt");
  await panel.locator('[data-testid="clear-attachments"]').click();

  step("the walkthrough: its doctor step runs tandem doctor in a terminal");
  await runCommand(page, "Welcome: Open Walkthrough...");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Get started with Tandem" }).first().click();
  await page.locator(".getting-started-step", { hasText: "Point Tandem at a model" }).first().waitFor({ timeout: 15_000 });
  const doctorStep = page.locator(".getting-started-step", { hasText: "Check the setup" }).first();
  await doctorStep.click();
  await doctorStep.getByText("Run tandem doctor", { exact: true }).click();
  await page.locator('textarea.xterm-helper-textarea[aria-label*="Tandem doctor"]').first().waitFor({ state: "attached", timeout: 20_000 });
  // xterm draws on a canvas: the report itself is in walkthrough.png (language servers, sandbox, MCP servers).
  await page.waitForTimeout(3_000);
  await page.screenshot({ path: join(OUT_DIR, "walkthrough.png") });

  console.log("ok: the failed command's card showed ✗ exit 3 and its output tail; the edit's card showed a.txt +1 −1 and opened its diff; the question's card showed its answer; a highlighted code block was applied to calc.py through the per-hunk review; @problems and @a.txt went with a prompt; Add to Tandem listed calc.py; the walkthrough ran tandem doctor");
});
