// End-to-end: images in the panel of a real VS Code workbench. "Add to Tandem" on shot.png in the
// explorer, a screenshot pasted into the prompt and an image dropped on the panel each show as a
// chip with a thumbnail above the prompt; the next prompt carries all three, and the person's
// message shows them. tests/e2e/vscode.rs checks that the model's request had the three images, in
// the OpenAI format (the workspace's config says the scripted model takes images). Same
// environment as review.mjs.

import { join } from "node:path";

import { env, panelFrame, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");

/** In the panel's document: a PNG of `width` × `height` drawn on a canvas, as a File. */
const MAKE_FILE = `async ([width, height, name]) => {
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = height;
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#c0392b";
  ctx.fillRect(0, 0, width, height);
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/png"));
  return new File([blob], name, { type: "image/png" });
}`;

await runInWorkbench(async (page) => {
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  const prompt = panel.locator('[data-testid="prompt"]');
  await prompt.waitFor({ timeout: 30_000 });
  const chips = panel.locator('[data-testid="attachments"] [data-testid="image-chip"] img');

  step("Add to Tandem on shot.png in the explorer: a chip with its thumbnail");
  await page.keyboard.press("Control+Shift+E");
  const row = page.locator(".explorer-folders-view .monaco-list-row", { hasText: "shot.png" }).first();
  await row.waitFor({ timeout: 15_000 });
  const listed = panel.locator('[data-testid="attachments"] .attachment-list', { hasText: "shot.png" });
  // The menu's first click can land while it is still opening: choose again until the list shows it.
  await waitFor(async () => {
    if (await listed.isVisible()) return true;
    const item = page.locator(".context-view .action-label", { hasText: "Add to Tandem" }).first();
    if (!(await item.isVisible())) await row.click({ button: "right" });
    await item.hover();
    await item.click();
    await listed.waitFor({ timeout: 3_000 });
    return true;
  }, 30_000, "shot.png in the list for the next prompt");
  await chips.first().waitFor({ timeout: 10_000 });

  step("a screenshot pasted into the prompt");
  await prompt.click();
  await prompt.evaluate(async (el, make) => {
    const file = await (0, eval)(make)([4, 3, "image.png"]);
    const data = new DataTransfer();
    data.items.add(file);
    el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, MAKE_FILE);
  await panel.locator('[data-testid="attachments"] .attachment-list', { hasText: "pasted image" }).waitFor({ timeout: 10_000 });
  await waitFor(async () => ((await chips.count()) === 2 ? true : new Error(`${await chips.count()} chips`)), 10_000, "two image chips");

  step("an image dropped on the panel (Shift held)");
  await prompt.evaluate(async (el, make) => {
    const file = await (0, eval)(make)([5, 2, "dropped.png"]);
    const data = new DataTransfer();
    data.items.add(file);
    // With Shift held, as VS Code asks for a drop into a view (without it, the workbench takes the
    // drag to open the file in an editor).
    const init = { dataTransfer: data, bubbles: true, cancelable: true, shiftKey: true };
    el.dispatchEvent(new DragEvent("dragenter", init));
    el.dispatchEvent(new DragEvent("dragover", init));
    el.dispatchEvent(new DragEvent("drop", init));
  }, MAKE_FILE);
  await panel.locator('[data-testid="attachments"] .attachment-list', { hasText: "dropped.png" }).waitFor({ timeout: 10_000 });
  await waitFor(async () => ((await chips.count()) === 3 ? true : new Error(`${await chips.count()} chips`)), 10_000, "three image chips");
  await page.screenshot({ path: join(OUT_DIR, "chips.png") });

  step("the prompt carries the three images; the person's message shows them");
  await prompt.fill("what do these show?");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Three red pictures." }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="attachments"]').waitFor({ state: "hidden", timeout: 10_000 });
  const shown = panel.locator('[data-testid="user-message"] img');
  await waitFor(async () => ((await shown.count()) === 3 ? true : new Error(`${await shown.count()} images`)), 10_000, "three images in the message");
  await page.screenshot({ path: join(OUT_DIR, "sent.png") });
  console.log("ok: Add to Tandem, paste and drop attached three images and the prompt sent them");
});
