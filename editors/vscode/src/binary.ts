// Where the `tandem` binary is: the `tandem.path` setting, else `tandem` on PATH, else a build in
// one of the workspace folders (`target/debug`, then `target/release`). Pure apart from the
// injected file check, so it is unit-tested.

import * as path from "node:path";

export interface Found {
  path: string;
  source: "setting" | "PATH" | "workspace";
}

export type IsExecutable = (file: string) => boolean;

export function resolveBinary(
  setting: string,
  envPath: string | undefined,
  workspaceFolders: string[],
  isExecutable: IsExecutable,
  platform: NodeJS.Platform = process.platform,
): Found | { error: string } {
  const exe = platform === "win32" ? "tandem.exe" : "tandem";
  const configured = setting.trim();
  if (configured !== "") {
    return isExecutable(configured)
      ? { path: configured, source: "setting" }
      : { error: `tandem.path is set to ${configured}, but no executable file is there. Fix the setting or clear it to search PATH.` };
  }
  const searched: string[] = [];
  for (const dir of (envPath ?? "").split(path.delimiter).filter((d) => d !== "")) {
    const candidate = path.join(dir, exe);
    if (isExecutable(candidate)) return { path: candidate, source: "PATH" };
  }
  for (const folder of workspaceFolders) {
    for (const profile of ["debug", "release"]) {
      const candidate = path.join(folder, "target", profile, exe);
      searched.push(candidate);
      if (isExecutable(candidate)) return { path: candidate, source: "workspace" };
    }
  }
  return {
    error:
      `No tandem binary found: tandem.path is empty, \`${exe}\` is not on PATH` +
      (searched.length > 0 ? `, and none of ${searched.join(", ")} exists` : "") +
      ". Install it (`cargo install --path server/tandem`) or set tandem.path.",
  };
}

/** The shell line that runs `<binary> doctor`, the path quoted for the platform's shell. */
export function doctorCommand(binary: string, platform: NodeJS.Platform): string {
  if (platform === "win32") return `& "${binary.replace(/"/g, '`"')}" doctor`;
  return `'${binary.replace(/'/g, `'\\''`)}' doctor`;
}
