// End-to-end: `@` symbols, `@https://…` and `@terminal` in the panel of a real VS Code workbench,
// against the real sidecar with real pyright (WORKSPACE is a copy of tests/fixtures/python; no
// file is open, so the workspace's own Python file picks the server). Typing `@incr` lists
// pyright's `increment` with its kind and file; choosing it attaches its definition. Typing
// `@https://example.com/x` offers the address; `@terminal` attaches a command run in a terminal.
// tests/e2e/vscode.rs checks what the model was sent. Environment as in review.mjs.

import { join } from "node:path";

import { env, panelFrame, runCommand, runInWorkbench, step, waitFor } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");

await runInWorkbench(async (page) => {
  step("a command in a terminal, for @terminal");
  await runCommand(page, "Terminal: Create New Terminal");
  const terminal = page.locator(".terminal-wrapper textarea.xterm-helper-textarea").first();
  await terminal.waitFor({ state: "attached", timeout: 30_000 });
  // The shell's prompt first (a command typed before it is still run, but VS Code may not pass
  // its output on: then @terminal reads the terminal's text, which the next step also covers).
  await page.waitForTimeout(6_000);
  await terminal.focus();
  await page.keyboard.type("echo tandem-$((6*7))");
  await page.keyboard.press("Enter");
  // xterm draws on a canvas: the command's output is not in the page to wait for.
  await page.waitForTimeout(3_000);
  await page.screenshot({ path: join(OUT_DIR, "terminal.png") });

  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  const prompt = panel.locator('[data-testid="prompt"]');
  await prompt.waitFor({ timeout: 30_000 });
  const mentions = panel.locator('[data-testid="mention-list"]');
  const listed = panel.locator('[data-testid="attachments"] .attachment-list');

  step("@incr lists pyright's increment with its kind and file");
  await prompt.click();
  await prompt.pressSequentially("explain @incr");
  // pyright starts and analyses the workspace first: generous, this is not a timing test.
  const symbol = mentions.locator('[data-testid="mention"][data-kind="symbol"]', { hasText: "@increment" });
  await symbol.waitFor({ timeout: 120_000 });
  const detail = await symbol.locator(".detail").innerText();
  if (!detail.includes("method") || !detail.includes("shop/counter.py:7")) throw new Error(`the symbol's detail reads ${JSON.stringify(detail)}`);
  await page.screenshot({ path: join(OUT_DIR, "symbols.png") });
  await symbol.click();
  await listed.filter({ hasText: "increment (shop/counter.py:7-9)" }).waitFor({ timeout: 15_000 });

  step("@https://example.com/x offers to attach the address");
  await prompt.pressSequentially("and @https://example.com/x");
  const url = mentions.locator('[data-testid="mention"][data-kind="url"]', { hasText: "@https://example.com/x" });
  await url.waitFor({ timeout: 15_000 });
  const urlDetail = await url.locator(".detail").innerText();
  if (!urlDetail.includes("attach this URL")) throw new Error(`the URL's detail reads ${JSON.stringify(urlDetail)}`);
  await prompt.press("Enter");
  await listed.filter({ hasText: "https://example.com/x" }).waitFor({ timeout: 10_000 });

  step("@terminal attaches the terminal's last command and its output");
  await prompt.pressSequentially("and @term");
  await mentions.locator('[data-testid="mention"][data-kind="terminal"]').waitFor({ timeout: 15_000 });
  await prompt.press("Enter");
  await listed.filter({ hasText: "@terminal" }).waitFor({ timeout: 15_000 });
  const typed = await prompt.inputValue();
  if (typed !== "explain @increment and @https://example.com/x and @terminal ") throw new Error(`the prompt reads ${JSON.stringify(typed)}`);

  step("send: the answer comes, the prompt lists what went with it");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Explained." }).waitFor({ timeout: 60_000 });
  const sent = panel.locator('[data-testid="user-message"]').first();
  await waitFor(async () => {
    const text = await sent.innerText();
    return ["(attached counter.py#L7-L9)", "(attached https://example.com/x)", "(attached @terminal)"].every((t) => text.includes(t))
      ? true
      : new Error(text);
  }, 10_000, "the attachments under the prompt");
  await page.screenshot({ path: join(OUT_DIR, "mentions.png") });

  console.log("ok: @incr listed pyright's increment (method, shop/counter.py:7) and attached its definition; @https://example.com/x and @terminal went with the prompt");
});
