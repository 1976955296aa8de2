// One agent session at a time: created on the first prompt, resumable from the stored list. The
// controller turns panel actions into tandem/session/* requests and session updates into panel
// messages; the sidecar does the work.

import * as vscode from "vscode";

import { isConfigError, showError } from "./errorUi";
import type { ToPanel } from "./messages";
import {
  type ContentBlock,
  Methods,
  type ModeId,
  type SessionInfo,
  type SessionNewResult,
  type SessionNotification,
  type StopReason,
  isMode,
} from "./protocol";
import type { Sidecar } from "./sidecar";
import { TERMINAL_URI } from "./terminal";

export interface SessionEvents {
  post(message: ToPanel): void;
  turnChanged(running: boolean): void;
  modeChanged(mode: ModeId): void;
  cancelled(): void;
}

export class SessionController {
  private sessionId: string | undefined;
  private running = false;
  private _mode: ModeId;
  private model: string | undefined;
  /** Context the person added for the next prompt ("Tandem: Add Selection to Chat"). */
  private attached: { label: string; block: ContentBlock }[] = [];

  constructor(
    private readonly sidecar: Sidecar,
    private readonly events: SessionEvents,
    private readonly log: (line: string) => void,
  ) {
    const configured = vscode.workspace.getConfiguration("tandem").get<string>("mode", "default");
    this._mode = isMode(configured) ? configured : "default";
  }

  get mode(): ModeId {
    return this._mode;
  }

  /** The current session's id; `undefined` before the first prompt. */
  get id(): string | undefined {
    return this.sessionId;
  }

  get isRunning(): boolean {
    return this.running;
  }

  get modelName(): string | undefined {
    return this.model;
  }

  /** Routes a session notification; updates of other sessions (sub-agents' own) are ignored. */
  onUpdate(notification: SessionNotification): void {
    if (notification.sessionId !== this.sessionId) return;
    const update = notification.update;
    if (update.sessionUpdate === "current_mode_update" && isMode(update.currentModeId)) {
      this._mode = update.currentModeId;
      this.events.modeChanged(this._mode);
    }
    this.events.post({ type: "update", update });
  }

  /** Adds context (a selection, a file) to the next prompt; the panel lists it until then. */
  attach(label: string, block: ContentBlock): void {
    this.attached.push({ label, block });
    this.postAttachments();
  }

  /** Whether a context with this label waits for the next prompt. */
  isAttached(label: string): boolean {
    return this.attached.some((a) => a.label === label);
  }

  clearAttachments(): void {
    this.attached = [];
    this.postAttachments();
  }

  /** Re-sends the list (the panel's webview was created). */
  postAttachments(): void {
    this.events.post({ type: "attachments", labels: this.attached.map((a) => a.label) });
  }

  async prompt(text: string, extra: ContentBlock[] = []): Promise<void> {
    if (this.running) {
      void vscode.window.showWarningMessage("Tandem is still working on the last prompt. Cancel it first or wait.");
      return;
    }
    const context = [...this.attached.map((a) => a.block), ...extra];
    this.clearAttachments();
    this.setRunning(true);
    let stopReason: StopReason = "error";
    try {
      const sessionId = await this.ensureSession();
      const block: ContentBlock = { type: "text", text };
      this.events.post({ type: "update", update: { sessionUpdate: "user_message_chunk", content: block } });
      for (const c of context) {
        const name = c.type === "resource" ? shortName(c.resource.uri) : c.type === "resource_link" ? c.name : undefined;
        if (name !== undefined) {
          this.events.post({
            type: "update",
            update: { sessionUpdate: "user_message_chunk", content: { type: "text", text: `\n\n(attached ${name})` } },
          });
        }
      }
      const result = await this.sidecar.request<{ stopReason: StopReason; error?: string }>(Methods.sessionPrompt, {
        sessionId,
        prompt: [block, ...context],
      });
      stopReason = result.stopReason;
      if (result.error) {
        // What failed and what to do (a provider that is down, a wrong key, a bad model name).
        this.log(`turn ended with an error: ${result.error}`);
        this.events.post({ type: "notice", text: result.error, level: "error" });
        void showError(result.error);
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.log(`prompt failed: ${message}`);
      this.events.post({ type: "notice", text: `The prompt failed: ${message}`, level: "error" });
      // A session the settings cannot start (an unknown provider kind, say): offer to fix them.
      if (isConfigError(message)) void showError(message);
    } finally {
      this.setRunning(false, stopReason);
    }
  }

  async cancel(): Promise<void> {
    if (!this.sessionId || !this.running) return;
    this.events.cancelled();
    await this.sidecar.notify(Methods.sessionCancel, { sessionId: this.sessionId });
  }

  async setMode(mode: ModeId): Promise<void> {
    this._mode = mode;
    this.events.modeChanged(mode);
    this.events.post({ type: "mode", mode });
    if (!this.sessionId) return;
    try {
      await this.sidecar.request(Methods.sessionSetMode, { sessionId: this.sessionId, modeId: mode });
    } catch (err) {
      this.events.post({ type: "notice", text: `Could not set the mode: ${err instanceof Error ? err.message : err}`, level: "error" });
    }
  }

  async newSession(): Promise<void> {
    if (this.running) await this.cancel();
    this.sessionId = undefined;
    this.events.post({ type: "reset" });
    this.events.post({ type: "mode", mode: this._mode });
  }

  async list(): Promise<SessionInfo[]> {
    const result = await this.sidecar.request<{ sessions: SessionInfo[] }>(Methods.sessionList, { cwd: workspaceRoot() });
    return result.sessions;
  }

  async load(sessionId: string): Promise<void> {
    if (this.running) await this.cancel();
    this.sessionId = sessionId;
    this.events.post({ type: "reset", sessionId });
    try {
      // The sidecar replays the history as updates before it answers.
      const result = await this.sidecar.request<{ modes: { current: ModeId } }>(Methods.sessionLoad, {
        sessionId,
        cwd: workspaceRoot(),
      });
      if (isMode(result.modes.current)) {
        this._mode = result.modes.current;
        this.events.modeChanged(this._mode);
        this.events.post({ type: "mode", mode: this._mode });
      }
    } catch (err) {
      this.sessionId = undefined;
      this.events.post({ type: "notice", text: `Could not resume ${sessionId}: ${err instanceof Error ? err.message : err}`, level: "error" });
    }
  }

  /** Forget the session (the sidecar restarted: its sessions are gone from memory, not from disk). */
  forget(): void {
    this.sessionId = undefined;
    if (this.running) this.setRunning(false, "error");
  }

  private async ensureSession(): Promise<string> {
    if (this.sessionId) return this.sessionId;
    const result = await this.sidecar.request<SessionNewResult>(Methods.sessionNew, {
      cwd: workspaceRoot(),
      mode: this._mode,
    });
    this.sessionId = result.sessionId;
    this.model = result.model ?? undefined;
    this.events.post({ type: "status", state: "ready", model: this.model });
    this.log(`session ${result.sessionId} (mode ${result.modes.current}, model ${result.model ?? "?"})`);
    return result.sessionId;
  }

  private setRunning(running: boolean, stopReason?: StopReason): void {
    this.running = running;
    void vscode.commands.executeCommand("setContext", "tandem.turnRunning", running);
    this.events.turnChanged(running);
    this.events.post({ type: "turn", running, ...(stopReason ? { stopReason } : {}) });
  }
}

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

function shortName(uri: string): string {
  if (uri === "tandem://problems") return "@problems";
  if (uri === TERMINAL_URI) return "@terminal";
  if (/^https?:\/\//i.test(uri)) return uri;
  return uri.split("/").pop() ?? uri;
}
