// Bundles the extension (Node, CommonJS, `vscode` external) and the panel's script (browser IIFE),
// or with --tests the unit tests (Node) into out-test/.
import * as esbuild from "esbuild";
import { readdirSync, rmSync } from "node:fs";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

if (tests) {
  rmSync("out-test", { recursive: true, force: true });
  const entryPoints = readdirSync("test/unit")
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/unit/${f}`);
  await esbuild.build({
    entryPoints,
    outdir: "out-test",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
    sourcemap: "inline",
    logLevel: "warning",
  });
} else {
  await esbuild.build({
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node18",
    external: ["vscode"],
    sourcemap: !production,
    minify: production,
    logLevel: "warning",
  });
  await esbuild.build({
    entryPoints: ["webview/panel.ts"],
    outfile: "media/panel.js",
    bundle: true,
    platform: "browser",
    format: "iife",
    target: "es2020",
    sourcemap: false,
    minify: production,
    logLevel: "warning",
  });
}
