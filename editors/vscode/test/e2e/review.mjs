// End-to-end: the packaged extension in a real VS Code workbench (code-server 4.100.3 = VS Code
// 1.100.3), driven through Chromium with playwright-core. Started by tests/e2e/vscode.rs, which runs
// the scripted model provider and checks the file afterwards. Environment:
//   CODE_SERVER   path of the code-server launcher
//   VSIX          the packaged extension
//   WORKSPACE     folder to open (holds calc.py)
//   TANDEM_BIN    the sidecar binary (set as tandem.path)
//   PROVIDER_URL  base URL of the scripted OpenAI-format provider
//   OUT_DIR       where screenshots and logs go
// Exit status 0 when every step passed; on failure a screenshot failure.png is left in OUT_DIR.

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step, vscodeVersion, waitFor } from "./workbench.mjs";

const CODE_SERVER = env("CODE_SERVER");
const WORKSPACE = env("WORKSPACE");
const OUT_DIR = env("OUT_DIR");

const started = Date.now();

await runInWorkbench(async (page) => {


  step("open calc.py in an editor (so the accepted edit goes through the buffer)");
  await runCommand(page, "calc.py", { raw: true });
  await page.locator(".tab", { hasText: "calc.py" }).first().waitFor({ timeout: 20_000 });

  step("open the panel and send a prompt");
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="prompt"]').fill("Fix both functions in calc.py");
  await panel.locator('[data-testid="send"]').click();

  step("the streamed answer appears in the panel");
  await panel.locator('[data-testid="assistant-message"]', { hasText: "I'll fix both functions." }).waitFor({ timeout: 30_000 });

  step("the review opens with per-hunk CodeLens");
  const acceptH1 = page.locator('.codelens-decoration a[title^="Accept h1"]');
  const rejectH1 = page.locator('.codelens-decoration a[title^="Reject h1"]');
  const acceptH2 = page.locator('.codelens-decoration a[title^="Accept h2"]');
  await acceptH1.waitFor({ timeout: 30_000 });
  await acceptH2.waitFor({ timeout: 10_000 });
  const proposedText = await page.locator(".editor-instance .modified-in-monaco-diff-editor .view-lines, .monaco-diff-editor .editor.modified .view-lines").first().innerText().then(plain);
  if (!proposedText.includes("return a * b")) throw new Error(`the proposed side does not show the change: ${proposedText}`);
  await panel.locator('[data-testid="review"]').waitFor({ state: "visible", timeout: 10_000 });
  await page.screenshot({ path: join(OUT_DIR, "review.png") });

  step("each hunk says where it is in the review");
  await page.locator(".codelens-decoration a", { hasText: "1 of 2" }).waitFor({ timeout: 10_000 });
  await page.locator(".codelens-decoration a", { hasText: "2 of 2" }).waitFor({ timeout: 10_000 });
  const cursorLine = async (line, what) => {
    const selection = page.locator('[id="status.editor.selection"]');
    await waitFor(async () => {
      const text = await selection.innerText().catch(() => "");
      return text.includes(`Ln ${line},`) ? text : false;
    }, 10_000, what);
  };

  step("reject h1: the cursor moves on to h2, the next undecided hunk");
  await rejectH1.click();
  await page.locator('.codelens-decoration a', { hasText: "✗ Rejected" }).waitFor({ timeout: 10_000 });
  await cursorLine(18, "the cursor on h2 (line 18) after h1 was decided");

  step("previous / next hunk with the keys");
  await page.keyboard.press("Control+Alt+BracketLeft");
  await cursorLine(6, "the cursor back on h1 (line 6)");
  await page.keyboard.press("Control+Alt+BracketRight");
  await cursorLine(18, "the cursor on h2 (line 18) again");

  step("accept h2");
  await acceptH2.click();

  step("the turn ends with the model's answer; the review closes");
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Kept the second fix" }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="tool-call"][data-status="completed"]').first().waitFor({ timeout: 10_000 });
  await page.locator(".codelens-decoration a[title^='Accept h']").first().waitFor({ state: "detached", timeout: 10_000 });

  step("the editor's buffer holds exactly the accepted hunk and is saved");
  await page.locator(".tab", { hasText: "calc.py" }).first().click();
  await waitFor(async () => {
    const text = plain(await page.locator(".monaco-editor .view-lines").first().innerText());
    return text.includes("return a * b") && text.includes("return a - b  # TODO") ? text : false;
  }, 15_000, "the buffer to show the accepted hunk only");
  await waitFor(async () => (await page.locator(".tab.dirty", { hasText: "calc.py" }).count()) === 0, 10_000, "calc.py to be saved");
  const disk = readFileSync(join(WORKSPACE, "calc.py"), "utf8");
  if (!disk.includes("return a * b") || !disk.includes("return a - b  # TODO")) throw new Error(`disk content:\n${disk}`);

  await page.screenshot({ path: join(OUT_DIR, "done.png") });

  step("mode picker: auto-edit shows in the status bar");
  await panel.locator('[data-testid="mode"]').selectOption("auto-edit");
  await page.locator(".statusbar-item", { hasText: "Tandem: auto-edit" }).first().waitFor({ timeout: 10_000 });

  step("a command asks in a modal with the command; Run runs it");
  await panel.locator('[data-testid="prompt"]').fill("Create the marker file");
  await panel.locator('[data-testid="send"]').click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: 30_000 });
  const dialogText = plain(await dialog.innerText());
  if (!dialogText.includes("touch made-by-tandem.txt")) throw new Error(`the dialog does not show the command: ${dialogText}`);
  await page.screenshot({ path: join(OUT_DIR, "command.png") });
  await dialog.locator(".monaco-button", { hasText: /^Run$/ }).click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Created it." }).waitFor({ timeout: 30_000 });

  step("a question from the agent is a quick pick; the answer reaches the model");
  await panel.locator('[data-testid="prompt"]').fill("Ask me about the style");
  await panel.locator('[data-testid="send"]').click();
  const pick = page.locator(".quick-input-widget");
  await pick.locator(".quick-input-title", { hasText: "Which greeting style?" }).waitFor({ timeout: 30_000 });
  await pick.locator(".quick-input-list .monaco-list-row", { hasText: "casual" }).click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Casual it is." }).waitFor({ timeout: 30_000 });

  step("closing the review's diff editor rejects its hunks");
  await panel.locator('[data-testid="mode"]').selectOption("default");
  await page.locator(".statusbar-item", { hasText: "Tandem: default" }).first().waitFor({ timeout: 10_000 });
  await panel.locator('[data-testid="prompt"]').fill("Guard div against zero");
  await panel.locator('[data-testid="send"]').click();
  await page.locator('.codelens-decoration a[title^="Accept h1"]').waitFor({ timeout: 30_000 });
  const reviewTab = page.locator(".tab", { hasText: "← Tandem" }).first();
  await reviewTab.hover();
  await reviewTab.locator(".codicon-close").click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Left div alone." }).waitFor({ timeout: 30_000 });
  if (readFileSync(join(WORKSPACE, "calc.py"), "utf8").includes("ZeroDivisionError")) throw new Error("a closed review was applied");

  step("cancel stops a running turn");
  await panel.locator('[data-testid="prompt"]').fill("Think for a long time");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="status"]', { hasText: "Waiting for the model…" }).waitFor({ timeout: 10_000 });
  step("a prompt sent meanwhile is queued, and its ✕ takes it back");
  await panel.locator('[data-testid="prompt"]').fill("Never mind");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="queued-prompt"]', { hasText: "Queued: Never mind" }).waitFor({ timeout: 10_000 });
  await panel.locator('[data-testid="dequeue"]').click();
  await panel.locator('[data-testid="queued-prompt"]').waitFor({ state: "detached", timeout: 10_000 });
  await panel.locator('[data-testid="cancel"]').click();
  await panel.locator('[data-testid="status"]', { hasText: "Done (cancelled)" }).waitFor({ timeout: 10_000 });

  step("sessions: the stored session resumes with its history");
  await panel.locator('[data-testid="new-session"]').click();
  await panel.locator('[data-testid="user-message"]').first().waitFor({ state: "detached", timeout: 10_000 });
  await panel.locator('[data-testid="sessions-button"]').click();
  await panel.locator('[data-testid="session"]').first().click();
  await panel.locator('[data-testid="user-message"]', { hasText: "Fix both functions in calc.py" }).waitFor({ timeout: 15_000 });
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Kept the second fix" }).waitFor({ timeout: 15_000 });

  step("Tandem: Ask… sends the editor's selection along");
  await page.locator(".tab", { hasText: "calc.py" }).first().click();
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+A");
  await runCommand(page, "Tandem: Ask…");
  const ask = page.locator(".quick-input-widget input");
  await ask.waitFor({ timeout: 10_000 });
  await ask.fill("Explain the selection");
  await page.keyboard.press("Enter");
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Saw the selection." }).waitFor({ timeout: 30_000 });

  step("a provider error shows its reason in the panel");
  await panel.locator('[data-testid="prompt"]').fill("One more thing");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator(".notice.error", { hasText: "401" }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="status"]', { hasText: "Done (error)" }).waitFor({ timeout: 10_000 });

  step("the refused key's notification offers Open Setting, which opens tandem.provider.apiKeyEnv");
  const toast = page.locator(".notification-toast", { hasText: "refused the API key" });
  await toast.waitFor({ timeout: 15_000 });
  await toast.locator(".monaco-button", { hasText: "Open Setting" }).click();
  const titles = page.locator(".settings-editor .settings-body .setting-item-title");
  await waitFor(async () => {
    const shown = await titles.allInnerTexts();
    return shown.length === 1 && shown[0].includes("Api Key Env") ? true : new Error(JSON.stringify(shown));
  }, 20_000, "exactly the API key's setting in the Settings editor");
  await page.screenshot({ path: join(OUT_DIR, "open-setting.png") });
  console.log(`ok: in VS Code ${vscodeVersion(CODE_SERVER)} the review applied exactly h2, a command ran after the modal, a question was answered, a closed review was rejected, a turn was cancelled, the session resumed, Ask… carried the selection, a provider error was shown and opened its setting (${((Date.now() - started) / 1000).toFixed(1)} s)`);
});
