// End-to-end: the checkpoint commands in a real VS Code workbench. Two turns fix calc.py (each
// reviewed and accepted) with the person's own edit of util.py between them; then "Tandem: Show
// Checkpoints" lists them (the panel's token meter shows the reported usage on the way), Compare opens a diff editor between calc.py at the session's start and
// now, Restore asks with the plan (util.py named as the person's change, kept) and goes through
// the review; "Tandem: Undo Last Turn" restores to before turn 2; "Tandem: Compact Conversation"
// shows the token counts. Started by tests/e2e/vscode.rs (same environment as review.mjs), which
// checks the files afterwards.

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const WORKSPACE = env("WORKSPACE");
const OUT_DIR = env("OUT_DIR");

const started = Date.now();
const calc = () => readFileSync(join(WORKSPACE, "calc.py"), "utf8");

await runInWorkbench(async (page) => {
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });

  /** Sends a prompt, accepts its review whole, waits for the answer. */
  const promptAndAccept = async (text, answer) => {
    await panel.locator('[data-testid="prompt"]').fill(text);
    await panel.locator('[data-testid="send"]').click();
    await page.locator('.codelens-decoration a[title^="Accept h1"]').waitFor({ timeout: 30_000 });
    await runCommand(page, "Tandem: Accept All Changes");
    await panel.locator('[data-testid="assistant-message"]', { hasText: answer }).waitFor({ timeout: 30_000 });
  };

  /** The review a restore opens, accepted whole; then the panel's note. */
  const acceptRestore = async (note) => {
    await page.locator('.codelens-decoration a[title^="Accept h1"]').waitFor({ timeout: 30_000 });
    await runCommand(page, "Tandem: Accept All Changes");
    await panel.locator(".notice", { hasText: note }).waitFor({ timeout: 30_000 });
  };

  step("two turns, the person's own edit of util.py between them");
  await promptAndAccept("fix add", "Fixed add.");
  step("the header's token meter shows the usage the model reported (1200 prompt tokens)");
  const meter = panel.locator('[data-testid="usage"]');
  await waitFor(async () => (/^1\.2k\/[\d.]+k \(\d+%\) · Σ [\d.]+k$/.test(plain(await meter.innerText())) ? true : new Error(await meter.innerText())), 10_000, "the token meter");
  await page.screenshot({ path: join(OUT_DIR, "meter.png") });
  writeFileSync(join(WORKSPACE, "util.py"), "x = 5\n");
  await promptAndAccept("fix mul", "Fixed mul.");
  if (!calc().includes("return a + b") || !calc().includes("return a * b")) throw new Error(`calc.py:\n${calc()}`);

  step("Tandem: Show Checkpoints lists them, newest first, with the files each changed");
  await runCommand(page, "Tandem: Show Checkpoints");
  const rows = page.locator(".quick-input-list .monaco-list-row");
  const first = rows.filter({ hasText: "#1 Start of turn 1" });
  await first.waitFor({ timeout: 15_000 });
  const firstText = plain(await first.innerText());
  if (!firstText.includes("changed: calc.py")) throw new Error(`the first checkpoint's row: ${firstText}`);
  await rows.filter({ hasText: "End of turn 1" }).filter({ hasText: "changed: util.py" }).waitFor({ timeout: 5_000 });
  await page.screenshot({ path: join(OUT_DIR, "checkpoints.png") });

  step("Compare: calc.py at the session's start beside calc.py now");
  await first.hover();
  await first.locator('.action-label[aria-label="Compare"], .action-label[title="Compare"]').first().click();
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "calc.py" }).first().waitFor({ timeout: 10_000 });
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "calc.py" }).first().click();
  await page.locator(".tab", { hasText: "calc.py (checkpoint #1 ↔ now)" }).first().waitFor({ timeout: 15_000 });
  await waitFor(async () => {
    const original = plain(await page.locator(".monaco-diff-editor .editor.original .view-lines").first().innerText());
    const modified = plain(await page.locator(".monaco-diff-editor .editor.modified .view-lines").first().innerText());
    return original.includes("return a - b") && modified.includes("return a + b") ? true : new Error(`${original}\n---\n${modified}`);
  }, 15_000, "the checkpoint's text on the left, today's on the right");
  await page.screenshot({ path: join(OUT_DIR, "compare.png") });

  step("Restore: the plan names util.py as the person's change; restoring keeps it");
  await runCommand(page, "Tandem: Show Checkpoints");
  await first.waitFor({ timeout: 15_000 });
  await first.click();
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Restore" }).first().click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: 15_000 });
  const asked = plain(await dialog.innerText());
  for (const part of ["Restore to checkpoint #1 (Start of turn 1)?", "Restores: calc.py", "Conflict: changed by you since, kept unless you include them: util.py"]) {
    if (!asked.includes(part)) throw new Error(`the question lacks "${part}":\n${asked}`);
  }
  await page.screenshot({ path: join(OUT_DIR, "restore-question.png") });
  await dialog.locator(".monaco-button", { hasText: /^Restore 1 File\(s\)$/ }).click();
  await acceptRestore("Restore to checkpoint #1");
  await waitFor(async () => (calc().includes("return a - b") && calc().includes("return a / b") ? true : new Error(calc())), 10_000, "calc.py as at the start");
  if (readFileSync(join(WORKSPACE, "util.py"), "utf8") !== "x = 5\n") throw new Error("the person's util.py was not kept");
  await panel.locator(".notice", { hasText: "Kept your changes to util.py." }).waitFor({ timeout: 5_000 });

  step("the second prompt's Restore button asks to restore to before turn 2 (declined here)");
  await panel.locator('[data-testid="user-message"]').nth(1).hover();
  await panel.locator('[data-testid="user-message"]').nth(1).locator('[data-testid="restore-turn"]').click();
  await dialog.waitFor({ timeout: 15_000 });
  const fromPanel = plain(await dialog.innerText());
  if (!fromPanel.includes("Restore to before turn 2?") || !fromPanel.includes("Restores: calc.py")) {
    throw new Error(`the panel's restore question:\n${fromPanel}`);
  }
  await dialog.locator(".monaco-button", { hasText: /^Cancel$/ }).click();
  await dialog.waitFor({ state: "detached", timeout: 10_000 });

  step("Tandem: Undo Last Turn restores to before turn 2");
  await runCommand(page, "Tandem: Undo Last Turn");
  await dialog.waitFor({ timeout: 15_000 });
  const undo = plain(await dialog.innerText());
  if (!undo.includes("Undo turn 2?") || !undo.includes("Restores: calc.py")) throw new Error(`the undo's question:\n${undo}`);
  await dialog.locator(".monaco-button", { hasText: /^Restore 1 File\(s\)$/ }).click();
  await acceptRestore("Undo turn 2");
  await waitFor(async () => (calc().includes("return a + b") && calc().includes("return a / b") ? true : new Error(calc())), 10_000, "calc.py as before turn 2");

  step("Tandem: Compact Conversation shows the tokens before and after");
  await runCommand(page, "Tandem: Compact Conversation");
  const compacted = panel.locator(".notice", { hasText: "Compacted the conversation:" });
  await compacted.waitFor({ timeout: 30_000 });
  const counts = plain(await compacted.innerText());
  if (!/Compacted the conversation: \d+ → \d+ tokens/.test(counts)) throw new Error(`the compaction's notice: ${counts}`);
  console.log(`ok: checkpoints listed, compared, restored (the person's edit kept), last turn undone, ${counts} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
});
