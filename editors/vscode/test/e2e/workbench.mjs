// What the VS Code end-to-end scripts share: the packaged extension installed into a fresh
// code-server profile, the workbench opened in Chromium (playwright-core), and small helpers to
// drive it. Each script starts its own workbench so that it sees the extension exactly as a person
// does after installing it (no panel opened yet, nothing restored).

import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

export const step = (name) => console.log(`-- ${name}`);

/**
 * The workbench the Rust test prepared, from its environment: CODE_SERVER, VSIX, WORKSPACE,
 * TANDEM_BIN, PROVIDER_URL, OUT_DIR and (optionally) CHROMIUM.
 */
export function openWorkbenchFromEnv() {
  return openWorkbench({
    codeServer: env("CODE_SERVER"),
    vsix: env("VSIX"),
    workspace: env("WORKSPACE"),
    tandemBin: env("TANDEM_BIN"),
    providerUrl: env("PROVIDER_URL"),
    outDir: env("OUT_DIR"),
    chromiumPath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  });
}

/**
 * Runs a script's `steps(page)` in the workbench from the environment (openWorkbenchFromEnv), once
 * the extension is active (its status bar item shows); a failure is printed with its stack, a
 * screenshot `failure.png` is taken and the exit status is 1. The workbench is closed either way.
 */
export async function runInWorkbench(steps) {
  const outDir = env("OUT_DIR");
  let page;
  let close;
  try {
    ({ page, close } = await openWorkbenchFromEnv());
    await page.locator(".statusbar-item", { hasText: "Tandem: default" }).first().waitFor({ timeout: 60_000 });
    await steps(page);
  } catch (err) {
    console.error(`FAILED: ${err instanceof Error ? err.stack : err}`);
    if (page) await page.screenshot({ path: join(outDir, "failure.png") }).catch(() => {});
    process.exitCode = 1;
  } finally {
    await close?.();
  }
}

/**
 * Installs VSIX into a scratch profile whose settings point Tandem at TANDEM_BIN and the scripted
 * provider, serves code-server on a free port and opens `workspace` in Chromium. Returns the page
 * and a `close()` that stops the browser and the server (code-server's log goes to `outDir`).
 */
export async function openWorkbench({ codeServer, vsix, workspace, tandemBin, providerUrl, outDir, chromiumPath }) {
  mkdirSync(outDir, { recursive: true });
  const scratch = mkdtempSync(join(tmpdir(), "tandem-vscode-"));
  const userData = join(scratch, "user-data");
  const extensions = join(scratch, "extensions");
  mkdirSync(join(userData, "User"), { recursive: true });
  writeFileSync(
    join(userData, "User", "settings.json"),
    JSON.stringify(
      {
        "tandem.path": tandemBin,
        "tandem.provider.kind": "openai",
        "tandem.provider.baseUrl": providerUrl,
        "tandem.provider.model": "scripted",
        "tandem.mode": "default",
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": false,
        "security.workspace.trust.enabled": false,
        "extensions.autoCheckUpdates": false,
        "extensions.autoUpdate": false,
        "telemetry.telemetryLevel": "off",
        "window.commandCenter": false,
        "chat.commandCenter.enabled": false,
        "workbench.secondarySideBar.defaultVisibility": "hidden",
      },
      null,
      2,
    ),
  );

  let server;
  let browser;
  const close = async () => {
    await browser?.close().catch(() => {});
    server?.kill();
  };
  try {
    step("install the .vsix");
    const install = spawnSync(
      codeServer,
      ["--user-data-dir", userData, "--extensions-dir", extensions, "--install-extension", vsix, "--force"],
      { encoding: "utf8" },
    );
    if (install.status !== 0) throw new Error(`--install-extension failed: ${install.stdout}${install.stderr}`);
    console.log(install.stdout.trim());

    step("serve code-server");
    const port = await freePort();
    server = spawn(
      codeServer,
      [
        "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
        "--disable-workspace-trust", "--user-data-dir", userData, "--extensions-dir", extensions, workspace,
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let serverLog = "";
    server.stdout.on("data", (d) => (serverLog += d));
    server.stderr.on("data", (d) => (serverLog += d));
    server.on("exit", () => writeFileSync(join(outDir, "code-server.log"), serverLog));
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 30_000, "code-server /healthz");

    step("open the workbench in Chromium");
    browser = await chromium.launchPersistentContext(join(scratch, "chromium"), {
      executablePath: chromiumPath,
      headless: true,
      viewport: { width: 1400, height: 900 },
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"],
    });
    // As a person allows when the browser asks: VS Code's clipboard is the page's here.
    await browser.grantPermissions(["clipboard-read", "clipboard-write"], { origin: `http://127.0.0.1:${port}` });
    const page = browser.pages()[0] ?? (await browser.newPage());
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ timeout: 60_000 });
    return { page, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** The panel's document (the webview's inner frame). */
export function panelFrame(page) {
  return page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
}

/** Sends `text` from the panel's prompt box and waits for the answer that contains `answer`. */
export async function sendPrompt(panel, text, answer) {
  await panel.locator('[data-testid="prompt"]').fill(text);
  await panel.locator('[data-testid="send"]').click();
  await panel.locator('[data-testid="assistant-message"]', { hasText: answer }).waitFor({ timeout: 30_000 });
}

/** Editor text as rendered: Monaco draws spaces as non-breaking ones. */
export function plain(text) {
  return text.replace(/\u00a0/g, " ");
}

export function vscodeVersion(codeServer) {
  const out = spawnSync(codeServer, ["--version"], { encoding: "utf8" }).stdout;
  return out.split("\n")[0];
}

/** Runs a command from the palette (F1) by its title; with `raw`, types `text` into Quick Open. */
export async function runCommand(page, text, options = {}) {
  await page.keyboard.press(options.raw ? "Control+P" : "F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: 10_000 });
  await input.fill(options.raw ? text : `>${text}`);
  await page.locator(".quick-input-list .monaco-list-row", { hasText: text }).first().waitFor({ timeout: 10_000 });
  await page.keyboard.press("Enter");
}

export async function waitFor(check, timeout, what) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    last = await check().catch((e) => e);
    if (last && !(last instanceof Error)) return last;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`timed out after ${timeout} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ""}`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}
