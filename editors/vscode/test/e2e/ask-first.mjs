// End-to-end: "Tandem: Ask…" from the command palette in a fresh workbench, before the panel was
// ever opened. Asking reveals the panel, so the webview is created while the turn already streams:
// every message must reach it exactly once and in order, however the webview's start-up and the
// stream interleave. Started by tests/e2e/vscode.rs (same environment as review.mjs, plus
//   PROMPT  the prompt to type
//   ANSWER  the scripted answer, streamed in several chunks).

import { join } from "node:path";

import { env, panelFrame, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");
const PROMPT = env("PROMPT");
const ANSWER = env("ANSWER");


await runInWorkbench(async (page) => {

  step("the extension is active and the panel was never opened");
  if ((await page.locator("iframe.webview").count()) !== 0) throw new Error("a webview exists before the panel was opened");

  step("Tandem: Ask… from the palette");
  await runCommand(page, "Tandem: Ask…");
  const ask = page.locator(".quick-input-widget input");
  await ask.waitFor({ timeout: 10_000 });
  await ask.fill(PROMPT);
  await page.keyboard.press("Enter");

  step("the panel opens and the turn ends");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="status"]', { hasText: "Done (end turn)" }).waitFor({ timeout: 60_000 });
  // Anything replayed late would land after the turn's end: give it time to show up.
  await new Promise((r) => setTimeout(r, 2_000));

  step("the transcript holds the prompt and the answer, each exactly once");
  const entries = await waitFor(
    async () => {
      const all = await panel.locator('[data-testid="messages"] > *').evaluateAll((els) =>
        els.map((el) => {
          // The message's text, without its controls (a prompt's Restore button).
          const text = el.cloneNode(true);
          for (const control of text.querySelectorAll("button")) control.remove();
          return `${el.dataset.testid ?? el.className}: ${text.textContent.trim()}`;
        }),
      );
      return all.length > 0 ? all : false;
    },
    10_000,
    "the transcript",
  );
  const expected = [`user-message: ${PROMPT}`, `assistant-message: ${ANSWER}`];
  if (JSON.stringify(entries) !== JSON.stringify(expected)) {
    await page.screenshot({ path: join(OUT_DIR, "ask-first.png") }).catch(() => {});
    throw new Error(`the transcript is not the prompt and the answer once each:\n  got      ${JSON.stringify(entries)}\n  expected ${JSON.stringify(expected)}`);
  }
  console.log("ok: Ask… before the panel was opened showed the prompt and the answer exactly once");
});
