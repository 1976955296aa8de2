// End-to-end: a resumed session renders exactly as it did live. In one workbench, a session with
// a prompt carrying an attachment, a failed command, an edit reviewed hunk by hunk (one accepted,
// one rejected), a cancelled prompt and a prompt queued meanwhile (sent when the cancelled turn
// ends); the panel's transcript is captured. Then a fresh workbench (a new profile, a new
// sidecar) resumes the session and its transcript must be the same, card for card: each entry's
// kind, status, exit code and text. The panel's own notices (a turn's error) are the editor's,
// not the session's: left out. Environment as review.mjs (WORKSPACE holds calc.py).

import { writeFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, step } from "./workbench.mjs";

const OUT_DIR = env("OUT_DIR");

/** The transcript as the panel renders it: one line per entry (kind, status, exit) and its text. */
async function transcript(panel) {
  const entries = await panel.locator('[data-testid="messages"] > *').evaluateAll((els) =>
    els
      .filter((el) => !el.classList.contains("notice"))
      .map((el) => {
        const what = [el.dataset.testid ?? el.className, el.dataset.status, el.dataset.exit].filter((x) => x).join(" ");
        return `[${what}] ${el.textContent}`;
      }),
  );
  return entries.map(plain);
}

let live;

await runInWorkbench(async (page) => {
  step("live: calc.py added to the next prompt");
  await runCommand(page, "calc.py", { raw: true });
  await page.locator(".tab", { hasText: "calc.py" }).first().waitFor({ timeout: 20_000 });
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await page.locator(".tab", { hasText: "calc.py" }).first().click();
  await runCommand(page, "Tandem: Add to Tandem");
  await panel.locator('[data-testid="attachments"]', { hasText: "calc.py" }).waitFor({ timeout: 10_000 });

  step("live: a failed command (approved in the dialog)");
  await panel.locator('[data-testid="prompt"]').fill("run the tests");
  await panel.locator('[data-testid="send"]').click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: 30_000 });
  await dialog.locator(".monaco-button", { hasText: /^Run$/ }).click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: "The tests failed." }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="tool-call"][data-exit="1"]').waitFor({ timeout: 10_000 });

  step("live: an edit reviewed hunk by hunk, h1 accepted and h2 rejected");
  await panel.locator('[data-testid="prompt"]').fill("fix add and mul");
  await panel.locator('[data-testid="send"]').click();
  await page.locator('.codelens-decoration a[title^="Accept h1"]').click({ timeout: 30_000 });
  await page.locator('.codelens-decoration a[title^="Reject h2"]').click({ timeout: 30_000 });
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Fixed what you accepted." }).waitFor({ timeout: 30_000 });

  step("live: a prompt the model never answers, one queued meanwhile, then Cancel");
  await panel.locator('[data-testid="prompt"]').fill("think hard about calc");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="status"]', { hasText: "Waiting for the model…" }).waitFor({ timeout: 10_000 });
  await panel.locator('[data-testid="prompt"]').fill("hello after cancel");
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="queued-prompt"]', { hasText: "Queued: hello after cancel" }).waitFor({ timeout: 10_000 });
  await panel.locator('[data-testid="cancel"]').click();
  // The queued prompt goes when the cancelled turn ends.
  await panel.locator('[data-testid="assistant-message"]', { hasText: "Hello again." }).waitFor({ timeout: 30_000 });
  await panel.locator('[data-testid="queued-prompt"]').waitFor({ state: "detached", timeout: 10_000 });
  await panel.locator('[data-testid="status"]', { hasText: "Done (end turn)" }).waitFor({ timeout: 10_000 });
  live = await transcript(panel);
  writeFileSync(join(OUT_DIR, "live.txt"), live.join("\n"));
  const users = await panel.locator('[data-testid="user-message"]').allTextContents();
  const expected = ["run the tests", "fix add and mul", "think hard about calc", "hello after cancel"];
  if (users.length !== 4 || !expected.every((text, i) => users[i].startsWith(text))) {
    throw new Error(`each prompt its own bubble, in order: ${JSON.stringify(users)}`);
  }
  if (!users[0].includes("(attached calc.py)")) throw new Error(`the attachment as a chip: ${users[0]}`);
});

if (process.exitCode !== 1) {
  await runInWorkbench(async (page) => {
    step("resumed in a fresh workbench");
    await runCommand(page, "Tandem: Open Panel");
    const panel = panelFrame(page);
    await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
    await panel.locator('[data-testid="sessions-button"]').click();
    await panel.locator('[data-testid="session"]').first().click();
    await panel.locator('[data-testid="assistant-message"]', { hasText: "Hello again." }).waitFor({ timeout: 30_000 });
    const replayed = await transcript(panel);
    writeFileSync(join(OUT_DIR, "replayed.txt"), replayed.join("\n"));
    const differ = live.findIndex((line, i) => replayed[i] !== line);
    if (differ >= 0 || replayed.length !== live.length) {
      const at = differ >= 0 ? differ : Math.min(live.length, replayed.length);
      throw new Error(`the resumed transcript differs at entry ${at}:\n  live:     ${live[at]}\n  replayed: ${replayed[at]}`);
    }
    console.log(`ok: ${live.length} entries, the resumed session renders as the live one did`);
  });
}
