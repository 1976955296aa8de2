import assert from "node:assert/strict";
import { test } from "node:test";

import { doctorCommand, resolveBinary } from "../../src/binary";

const exists = (files: string[]) => (f: string) => files.includes(f);

test("the setting wins, and a wrong setting is an error that says so", () => {
  assert.deepEqual(resolveBinary("/opt/tandem", "/usr/bin", [], exists(["/opt/tandem", "/usr/bin/tandem"]), "linux"), {
    path: "/opt/tandem",
    source: "setting",
  });
  const err = resolveBinary("/nope/tandem", "/usr/bin", [], exists(["/usr/bin/tandem"]), "linux");
  assert.ok("error" in err && err.error.includes("tandem.path is set to /nope/tandem"));
});

test("PATH before the workspace build, debug before release", () => {
  assert.deepEqual(resolveBinary("", "/a:/usr/bin", ["/w"], exists(["/usr/bin/tandem", "/w/target/debug/tandem"]), "linux"), {
    path: "/usr/bin/tandem",
    source: "PATH",
  });
  assert.deepEqual(
    resolveBinary("", "/a", ["/w"], exists(["/w/target/debug/tandem", "/w/target/release/tandem"]), "linux"),
    { path: "/w/target/debug/tandem", source: "workspace" },
  );
});

test("nothing found names every place searched and how to fix it", () => {
  const err = resolveBinary("  ", undefined, ["/w"], exists([]), "linux");
  assert.ok("error" in err);
  assert.match(err.error, /\/w\/target\/debug\/tandem, \/w\/target\/release\/tandem/);
  assert.match(err.error, /set tandem\.path/);
});

test("tandem doctor's shell line quotes the binary's path", () => {
  assert.equal(doctorCommand("/opt/my tools/tandem", "linux"), "'/opt/my tools/tandem' doctor");
  assert.equal(doctorCommand("/o'k/tandem", "darwin"), "'/o'\\''k/tandem' doctor");
  assert.equal(doctorCommand("C:\\Tools\\tandem.exe", "win32"), '& "C:\\Tools\\tandem.exe" doctor');
});
