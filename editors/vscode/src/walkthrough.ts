// The first-run walkthrough's commands: the provider settings, and `tandem doctor` in a terminal
// (the language servers and MCP servers the workspace would use, and how to install what is missing).

import * as vscode from "vscode";

import { doctorCommand, resolveBinary } from "./binary";
import { showError } from "./errorUi";
import { isExecutable } from "./sidecar";

export function openProviderSettings(): Thenable<unknown> {
  return vscode.commands.executeCommand("workbench.action.openSettings", "tandem.provider");
}

/** `tandem doctor` in a terminal of its own, in the workspace folder. */
export function runDoctor(): void {
  const config = vscode.workspace.getConfiguration("tandem");
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
  const found = resolveBinary(config.get<string>("path", ""), process.env.PATH, folders, isExecutable);
  if ("error" in found) {
    void showError(found.error);
    return;
  }
  const terminal = vscode.window.createTerminal({ name: "Tandem doctor", cwd: folders[0] });
  terminal.show();
  terminal.sendText(doctorCommand(found.path, process.platform));
}
