// The `tandem lsp` process, started and spoken to through vscode-languageclient: text sync of every
// `file` document (so the agent sees unsaved edits), `workspace/applyEdit` and `$/progress` come
// from the library; the tandem/* requests and notifications are wired to the handlers given here.

import * as fs from "node:fs";
import * as vscode from "vscode";
import { LanguageClient, type LanguageClientOptions, RevealOutputChannelOn, State } from "vscode-languageclient/node";

import { resolveBinary } from "./binary";
import {
  type AskUserParams,
  type AskUserResult,
  Methods,
  type PermissionResult,
  type RequestPermissionParams,
  type SessionNotification,
} from "./protocol";

export type SidecarState = "starting" | "ready" | "stopped" | "error";

export interface SidecarHandlers {
  update(notification: SessionNotification): void;
  requestPermission(params: RequestPermissionParams, token: vscode.CancellationToken): Promise<PermissionResult>;
  askUser(params: AskUserParams, token: vscode.CancellationToken): Promise<AskUserResult>;
  stateChanged(state: SidecarState, detail?: string): void;
}

export class Sidecar implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private _state: SidecarState = "stopped";

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly handlers: SidecarHandlers,
  ) {}

  get state(): SidecarState {
    return this._state;
  }

  async start(): Promise<void> {
    if (this.client) return;
    const config = vscode.workspace.getConfiguration("tandem");
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const found = resolveBinary(config.get<string>("path", ""), process.env.PATH, folders, isExecutable);
    if ("error" in found) {
      this.setState("error", found.error);
      this.output.appendLine(found.error);
      throw new Error(found.error);
    }
    this.output.appendLine(`Starting ${found.path} lsp (found via ${found.source})`);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: initializationOptions(config),
    };
    const client = new LanguageClient(
      "tandem",
      "Tandem",
      { command: found.path, args: ["lsp"], options: { env: { ...process.env } } },
      clientOptions,
    );
    client.onDidChangeState((e) => {
      if (e.newState === State.Running) this.setState("ready");
      else if (e.newState === State.Stopped) this.setState("stopped");
      else this.setState("starting");
    });
    client.onNotification(Methods.sessionUpdate, (params: SessionNotification) => this.handlers.update(params));
    client.onRequest(Methods.requestPermission, (params: RequestPermissionParams, token) =>
      this.handlers.requestPermission(params, token),
    );
    client.onRequest(Methods.askUser, (params: AskUserParams, token) => this.handlers.askUser(params, token));
    client.onRequest(Methods.documentSave, async (params: { uri: string }) => ({ saved: await saveDocument(params.uri) }));
    this.client = client;
    this.setState("starting");
    try {
      await client.start();
    } catch (err) {
      this.client = undefined;
      const message = `The tandem sidecar did not start: ${err instanceof Error ? err.message : String(err)}`;
      this.output.appendLine(message);
      this.setState("error", message);
      throw new Error(message, { cause: err });
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.stop().catch((err) => this.output.appendLine(`stop: ${err}`));
    this.setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    if (!this.client) await this.start();
    const client = this.client;
    if (!client) throw new Error("the tandem sidecar is not running");
    // vscode-jsonrpc takes a trailing `undefined` for a second positional parameter: pass the token only when there is one.
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  async notify(method: string, params: unknown): Promise<void> {
    if (!this.client) return;
    await this.client.sendNotification(method, params);
  }

  dispose(): void {
    void this.stop();
  }

  private setState(state: SidecarState, detail?: string): void {
    this._state = state;
    this.handlers.stateChanged(state, detail);
  }
}

export function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** `initializationOptions` from the settings; empty settings are left out so config.toml decides. */
export function initializationOptions(config: vscode.WorkspaceConfiguration): Record<string, unknown> {
  const provider: Record<string, string> = {};
  for (const [key, setting] of [
    ["kind", "provider.kind"],
    ["baseUrl", "provider.baseUrl"],
    ["model", "provider.model"],
    ["apiKeyEnv", "provider.apiKeyEnv"],
  ] as const) {
    const value = config.get<string>(setting, "").trim();
    if (value !== "") provider[key] = value;
  }
  const profile = config.get<string>("profile", "").trim();
  const permissions: Record<string, string[]> = {};
  for (const list of ["allow", "ask", "deny"] as const) {
    const rules = config.get<string[]>(`permissions.${list}`, []).filter((r) => typeof r === "string" && r.trim() !== "");
    if (rules.length > 0) permissions[list] = rules;
  }
  return {
    mode: config.get<string>("mode", "default"),
    ...(profile !== "" ? { profile } : {}),
    ...(Object.keys(provider).length > 0 ? { provider } : {}),
    ...(Object.keys(permissions).length > 0 ? { permissions } : {}),
  };
}

/** `tandem/document/save`: the editor saves the buffer it just applied an edit to. */
async function saveDocument(uri: string): Promise<boolean> {
  const target = vscode.Uri.parse(uri);
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
  if (!doc) return false;
  if (!doc.isDirty) return true;
  return doc.save();
}
