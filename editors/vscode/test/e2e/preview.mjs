// End-to-end: a review whose permission request carries a diagnostics preview (real pyright,
// through the real sidecar) shows it in a real VS Code workbench: the headline as a CodeLens on
// the proposed side and in the panel's review bar, the introduced error as a squiggle on the
// proposed side and in the Problems view; all of it goes when the review ends. Started by
// tests/e2e/vscode.rs (environment as in review.mjs; WORKSPACE holds shop/main.py). With
// EXPECT=notReady the workspace gives pyright no time to answer: the review must say that nothing
// is known, and show no problem.

import { readFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step, vscodeVersion, waitFor } from "./workbench.mjs";

const CODE_SERVER = env("CODE_SERVER");
const WORKSPACE = env("WORKSPACE");
const OUT_DIR = env("OUT_DIR");

let page;
const started = Date.now();

await runInWorkbench(async (p) => {
  page = p;

  step("ask for the change");
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="prompt"]').fill("Return a string from count_to");
  await panel.locator('[data-testid="send"]').click();

  step("the review opens with the preview's headline on the proposed side");
  await page.locator('.codelens-decoration a[title^="Reject h1"]').waitFor({ timeout: 90_000 });
  if (process.env.EXPECT === "notReady") {
    await notReady();
  } else {
    await ready();
  }
});

/** A preview that is not ready: said so on the proposed side and in the panel, no problem shown. */
async function notReady() {
  const panel = panelFrame(page);
  const notReadyLine = "Diagnostics preview: diagnostics not ready, so nothing is known about errors";
  await page.locator(".codelens-decoration a", { hasText: notReadyLine }).first().waitFor({ timeout: 10_000 });
  const bar = panel.locator('[data-testid="review-diagnostics"]');
  await bar.waitFor({ state: "visible", timeout: 10_000 });
  const barText = await bar.innerText();
  // The reason is in the summary.
  if (!barText.startsWith(notReadyLine) || !barText.includes("not ready: shop/main.py (pyright: ")) throw new Error(`review bar: ${barText}`);
  await page.waitForTimeout(2_000);
  const squiggles = await page.locator(".monaco-diff-editor .squiggly-error, .monaco-diff-editor .squiggly-warning").count();
  if (squiggles !== 0) throw new Error(`${squiggles} squiggle(s) although nothing is known`);
  if ((await page.locator(".codelens-decoration a", { hasText: "new error" }).count()) !== 0) throw new Error("a hunk counts errors");
  await page.screenshot({ path: join(OUT_DIR, "not-ready.png") });
  await page.locator('.codelens-decoration a[title^="Reject h1"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Left it." }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="review"]').waitFor({ state: "hidden", timeout: 10_000 });
  console.log(`ok: in VS Code ${vscodeVersion(CODE_SERVER)} a preview that was not ready said so, with no problem shown (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}

/** pyright's preview: headline, count on the hunk, squiggle, Problems; cleared when rejected. */
async function ready() {
  const panel = panelFrame(page);
  const headline = page.locator(".codelens-decoration a", { hasText: "Diagnostics preview: introduces 1 error: shop/main.py:9:" });
  await headline.first().waitFor({ timeout: 10_000 });
  const hunkCount = page.locator(".codelens-decoration a", { hasText: "1 new error:" });
  await hunkCount.first().waitFor({ timeout: 10_000 });

  step("the panel's review bar has the summary");
  const bar = panel.locator('[data-testid="review-diagnostics"]');
  await bar.waitFor({ state: "visible", timeout: 10_000 });
  const barText = await bar.innerText();
  if (!barText.startsWith("Diagnostics preview: introduces 1 error: shop/main.py:9:")) throw new Error(`review bar: ${barText}`);

  step("the introduced error is a squiggle on the proposed side only");
  const modified = page.locator(".monaco-diff-editor .editor.modified");
  await waitFor(async () => (await modified.locator(".squiggly-error").count()) > 0, 15_000, "a squiggle on the proposed side");
  const original = await page.locator(".monaco-diff-editor .editor.original .squiggly-error").count();
  if (original !== 0) throw new Error(`${original} squiggle(s) on the current side`);
  const proposedText = plain(await modified.locator(".view-lines").first().innerText());
  if (!proposedText.includes('return "total"')) throw new Error(`the proposed side does not show the change: ${proposedText}`);
  await page.screenshot({ path: join(OUT_DIR, "preview.png") });

  step("the Problems view lists it as Tandem's preview (opened from the status bar's problem count)");
  await page.locator('[id="status.problems"]').click();
  const problems = page.locator(".markers-panel");
  await problems.locator(".monaco-list-row", { hasText: "Tandem preview" }).first().waitFor({ timeout: 15_000 });
  const problemsText = plain(await problems.innerText());
  if (!problemsText.includes("is not assignable")) throw new Error(`Problems: ${problemsText}`);
  await page.screenshot({ path: join(OUT_DIR, "problems.png") });

  step("reject: the review ends, and the preview's problems go with it");
  await page.locator('.codelens-decoration a[title^="Reject h1"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Left it." }).waitFor({ timeout: 30_000 });
  await page.locator(".codelens-decoration a[title^='Reject h']").first().waitFor({ state: "detached", timeout: 10_000 });
  await problems.locator(".monaco-list-row", { hasText: "Tandem preview" }).first().waitFor({ state: "detached", timeout: 10_000 });
  await panel.locator('[data-testid="review"]').waitFor({ state: "hidden", timeout: 10_000 });
  if (readFileSync(join(WORKSPACE, "shop/main.py"), "utf8").includes('"total"')) throw new Error("the rejected change was written");

  console.log(`ok: in VS Code ${vscodeVersion(CODE_SERVER)} the review showed pyright's preview (headline, hunk count, squiggle, Problems, review bar) and cleared it when rejected (${((Date.now() - started) / 1000).toFixed(1)} s)`);
}
