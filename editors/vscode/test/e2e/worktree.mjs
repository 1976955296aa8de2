// End-to-end: "Tandem: Review Worktree…" in a real VS Code workbench. The workspace is a git
// repository whose worktree `feat` tests/e2e/vscode.rs made and changed (keep.txt changed at two
// places, new.txt created, gone.txt deleted). The command's quick pick lists it with its branch
// and changed files; choosing it opens the usual review (nothing written before the answer);
// "Accept All Changes" brings it over and a notification says so. vscode.rs checks the files.
// The workspace's settings name the worktree `side` (`tandem.worktree`): the first prompt's
// session works there, and the panel says where.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

import { env, panelFrame, plain, runCommand, runInWorkbench, sendPrompt, step, waitFor } from "./workbench.mjs";

const WORKSPACE = env("WORKSPACE");
const OUT_DIR = env("OUT_DIR");

await runInWorkbench(async (page) => {
  step("the quick pick lists the worktree with its branch and changes");
  await runCommand(page, "Tandem: Review Worktree…");
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "feat" }).first();
  await row.waitFor({ timeout: 30_000 });
  const text = plain(await row.innerText());
  if (!text.includes("tandem/feat · 3 changed files · 1 session")) throw new Error(`the worktree's row: ${text}`);
  await page.screenshot({ path: join(OUT_DIR, "worktrees.png") });
  await row.click();

  step("the review opens; nothing is written before the answer");
  await page.locator('.codelens-decoration a[title^="Accept h"]').first().waitFor({ timeout: 30_000 });
  await page.screenshot({ path: join(OUT_DIR, "review.png") });
  if (existsSync(join(WORKSPACE, "new.txt")) || !existsSync(join(WORKSPACE, "gone.txt"))) {
    throw new Error("the workspace changed before the answer");
  }
  if (readFileSync(join(WORKSPACE, "keep.txt"), "utf8").includes("line two")) throw new Error("keep.txt written before the answer");

  step("Accept All Changes brings it over");
  await runCommand(page, "Tandem: Accept All Changes");
  await page.locator(".notifications-toasts", { hasText: "Brought over 3 file(s)." }).waitFor({ timeout: 30_000 });
  await waitFor(async () => (existsSync(join(WORKSPACE, "new.txt")) && !existsSync(join(WORKSPACE, "gone.txt")) ? true : new Error("not yet")), 10_000, "the files on disk");

  step("tandem.worktree: the session works in that worktree and the panel says where");
  await runCommand(page, "Tandem: Open Panel");
  const panel = panelFrame(page);
  await panel.locator('[data-testid="prompt"]').waitFor({ timeout: 30_000 });
  await sendPrompt(panel, "hello", "Hello from the worktree.");
  await panel.locator(".notice", { hasText: /Working in worktree side at .*\(branch tandem\/side, new\)/ }).waitFor({ timeout: 10_000 });
  await page.screenshot({ path: join(OUT_DIR, "session-in-worktree.png") });
  console.log("ok: the worktree was listed, reviewed and brought over; a session worked in another");
});
