// End-to-end: code blocks in the panel and context added to a prompt, in a real VS Code workbench.
// An answer with a code block gets Copy and Insert buttons: Insert puts the code at the cursor of
// the editor the person was in, Copy puts it on the clipboard (pasted back with Ctrl+V). "Tandem:
// Add Selection to Chat" lists the selected lines above the prompt, and the next prompt carries
// them (tests/e2e/vscode.rs checks the request the model got). The provider lists no models: the
// header's model dropdown says why in its tooltip. Same environment as review.mjs.

import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");


await runInWorkbench(async (page) => {

  step("open notes.txt, put the cursor at its end");
  await runCommand(page, "notes.txt", { raw: true });
  await page.locator(".tab", { hasText: "notes.txt" }).first().waitFor({ timeout: 20_000 });
  const editorText = async () => plain(await page.locator(".monaco-editor .view-lines").first().innerText());
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+End");

  step("an answer with a code block gets Copy and Insert");
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="prompt"]').fill("write sub");
  await panel.locator('[data-testid="send"]').click();
  const answer = panel.locator('[data-testid="assistant-message"]', { hasText: "Here is sub" });
  await answer.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(OUT_DIR, "code-block.png") });
  // The scripted provider reports no usage: no token meter rather than "0".
  if (await panel.locator('[data-testid="usage"]').isVisible()) throw new Error("a token meter without any usage");
  // The scripted provider lists no models here (404): the dropdown keeps the configured model and
  // its tooltip says why, with no notification.
  const dropdown = panel.locator('[data-testid="model"]');
  await waitFor(async () => {
    const title = (await dropdown.getAttribute("title")) ?? "";
    return title.startsWith("The provider's models could not be listed: ") && title.includes("404") ? true : new Error(title);
  }, 15_000, "the model list's error as the dropdown's tooltip");
  const offered = await dropdown.locator("option").evaluateAll((all) => all.map((o) => o.value).join(","));
  if (offered !== "scripted") throw new Error(`the dropdown offers ${offered}`);
  if (await page.locator(".notification-toast", { hasText: "model" }).count()) throw new Error("a notification about the model list");

  step("Insert puts the code at the cursor of notes.txt");
  await answer.locator('[data-testid="insert-code"]').click();
  await waitFor(async () => {
    const text = await editorText();
    return text.includes("first line") && text.includes("def sub(a, b):") ? true : new Error(text);
  }, 15_000, "the inserted code in notes.txt");

  step("Copy puts it on the clipboard: Ctrl+V pastes it a second time");
  await answer.locator('[data-testid="copy-code"]').click();
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Control+V");
  await waitFor(async () => {
    const text = await editorText();
    return text.split("def sub(a, b):").length === 3 ? true : new Error(text);
  }, 15_000, "the pasted code");
  await page.keyboard.press("Control+S");

  step("Tandem: Add Selection to Chat lists the lines above the prompt; the next prompt carries them");
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("Shift+End");
  await runCommand(page, "Tandem: Add Selection to Chat");
  const attached = panel.locator('[data-testid="attachments"]');
  await attached.locator(".attachment-list", { hasText: "With the next prompt: notes.txt:1-1" }).waitFor({ timeout: 15_000 });
  await panel.locator('[data-testid="prompt"]').fill("what is this line?");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Saw the line." }).waitFor({ timeout: 30_000 });
  await attached.waitFor({ state: "hidden", timeout: 10_000 });
  await panel.locator('[data-testid="user-message"]', { hasText: "(attached notes.txt" }).waitFor({ timeout: 10_000 });
  console.log("ok: Insert and Copy put the answer's code into notes.txt, Add Selection to Chat sent the line with the next prompt");
});
