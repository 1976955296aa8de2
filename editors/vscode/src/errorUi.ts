// Errors as notifications with what fixes them one click away: a configuration error (a missing
// API key, a provider that does not answer, an unknown model, the binary not found, a bad
// `.tandem/config.toml`) offers "Open Setting" (the exact `tandem.*` setting) and, when it names
// a config file that exists, "Open config"; every error offers the log.

import * as os from "node:os";
import * as vscode from "vscode";

import { configAdvice } from "./configErrors";

const OPEN_SETTING = "Open Setting";
const OPEN_CONFIG = "Open config";
const SHOW_LOG = "Show Log";

/**
 * Shows `Tandem: <message>` with the actions that fix it; resolves once it is dismissed or acted
 * on. `fallbackSetting` (a settings search such as `tandem.`) is offered when the message names none.
 */
export async function showError(message: string, fallbackSetting?: string): Promise<void> {
  const advice = configAdvice(message);
  const setting = advice.setting ?? fallbackSetting;
  const config = advice.configFile ? await existingConfig(advice.configFile) : undefined;
  const actions = [...(setting ? [OPEN_SETTING] : []), ...(config ? [OPEN_CONFIG] : []), SHOW_LOG];
  const choice = await vscode.window.showErrorMessage(`Tandem: ${message}`, ...actions);
  if (choice === OPEN_SETTING && setting) {
    await vscode.commands.executeCommand("workbench.action.openSettings", setting);
  } else if (choice === OPEN_CONFIG && config) {
    await vscode.window.showTextDocument(config);
  } else if (choice === SHOW_LOG) {
    await vscode.commands.executeCommand("tandem.showLog");
  }
}

/** Whether `message` is about a setting or a config file (so it deserves a notification). */
export function isConfigError(message: string): boolean {
  const advice = configAdvice(message);
  return advice.setting !== undefined || advice.configFile !== undefined;
}

/** The config file an error names, when it exists: absolute, `~/…`, or the workspace's `.tandem/config.toml`. */
async function existingConfig(file: string): Promise<vscode.Uri | undefined> {
  const root = vscode.workspace.workspaceFolders?.[0];
  const uri = file.startsWith("~/")
    ? vscode.Uri.file(`${os.homedir()}/${file.slice(2)}`)
    : /^([A-Za-z]:)?[\\/]/.test(file)
      ? vscode.Uri.file(file)
      : root
        ? vscode.Uri.joinPath(root.uri, file)
        : undefined;
  if (!uri) return undefined;
  return vscode.workspace.fs.stat(uri).then(
    () => uri,
    () => undefined,
  );
}
