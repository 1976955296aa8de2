// One agent session at a time: created on the first prompt, resumable from the stored list. The
// controller turns panel actions into tandem/session/* requests and session updates into panel
// messages; the sidecar does the work. It also keeps the model picker's state: the session's
// model and its choices (asked in the background when a session starts or is resumed), and the
// model the person chose last, which new sessions start with.

import * as vscode from "vscode";

import { isConfigError, showError } from "./errorUi";
import { thumbnail } from "./images";
import type { QueuedPrompt, ToPanel } from "./messages";
import {
  type ModelChoices,
  type ModelPickItem,
  configuredModel,
  modelChoices,
  modelPickItems,
  singleModel,
  withCurrent,
} from "./models";
import {
  type ContentBlock,
  Methods,
  type ModeId,
  type SessionConfigOptionsResult,
  type SessionInfo,
  type SessionNewResult,
  type SessionNotification,
  type StopReason,
  isMode,
} from "./protocol";
import { type TurnProgress, countStreamed, progressLabel, startProgress } from "./progress";
import type { Sidecar } from "./sidecar";
import { TERMINAL_URI } from "./terminal";

export interface SessionEvents {
  post(message: ToPanel): void;
  turnChanged(running: boolean): void;
  modeChanged(mode: ModeId): void;
  modelChanged(): void;
  cancelled(): void;
}

export class SessionController {
  private sessionId: string | undefined;
  private running = false;
  private _mode: ModeId;
  /** The session's model (undefined before a session, or until a resumed one's is known). */
  private model: string | undefined;
  /** The session's model choices, once the sidecar listed them (kept across New: same provider). */
  private models: ModelChoices | undefined;
  /** The model the person chose last: new sessions start with it. */
  private picked: string | undefined;
  /** The configOptions request in flight, for the session it is about. */
  private loading:
    | { sessionId: string; promise: Promise<ModelChoices | undefined>; source: vscode.CancellationTokenSource }
    | undefined;
  /** The session/new request in flight (a prompt and "Choose Model…" must not start two). */
  private creating: Promise<string> | undefined;
  /** Context the person added for the next prompt ("Tandem: Add Selection to Chat"). */
  private attached: { label: string; block: ContentBlock }[] = [];
  /** Prompts sent while a turn ran: sent in order when it ends (each with its own context). */
  private queue: (QueuedPrompt & { context: ContentBlock[] })[] = [];
  private nextQueued = 1;
  /** The prompts sent in this window so far (each prompt's chunks share a message id). */
  private sent = 0;
  /** The running turn's elapsed time and streamed tokens (the status bar's indicator). */
  private progress: TurnProgress | undefined;

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

  /** "Working… 12s · ~340 tokens" while a turn runs; `undefined` when idle. */
  progressText(now = Date.now(), waiting?: string): string | undefined {
    return this.running && this.progress ? progressLabel(this.progress, now, waiting) : undefined;
  }

  /** Routes a session notification; updates of other sessions (sub-agents' own) are ignored. */
  onUpdate(notification: SessionNotification): void {
    if (notification.sessionId !== this.sessionId) return;
    const update = notification.update;
    if (this.progress) countStreamed(this.progress, update);
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
    // Images show as thumbnails on their chips.
    const thumbnails: Record<string, string> = {};
    for (const a of this.attached) {
      const src = thumbnail(a.block);
      if (src !== undefined) thumbnails[a.label] = src;
    }
    this.events.post({ type: "attachments", labels: this.attached.map((a) => a.label), thumbnails });
  }

  /**
   * Sends a prompt with the context added for it. During a turn it is queued instead (the panel
   * lists it; it goes when the turn ends, in order, unless the person takes it back).
   */
  async prompt(text: string, extra: ContentBlock[] = []): Promise<void> {
    const labels = this.attached.map((a) => a.label);
    const context = [...this.attached.map((a) => a.block), ...extra];
    this.clearAttachments();
    if (this.running) {
      this.queue.push({ id: this.nextQueued++, text, attachments: labels, context });
      this.postQueue();
      return;
    }
    await this.send(text, context);
  }

  /** Takes a queued prompt back (its ✕ in the panel); `false` when it is no longer queued. */
  dequeue(id: number): boolean {
    const before = this.queue.length;
    this.queue = this.queue.filter((q) => q.id !== id);
    this.postQueue();
    return this.queue.length < before;
  }

  /** Re-sends the queue (the panel's webview was created). */
  postQueue(): void {
    this.events.post({ type: "queue", items: this.queue.map(({ id, text, attachments }) => ({ id, text, attachments })) });
  }

  private async send(text: string, context: ContentBlock[]): Promise<void> {
    this.setRunning(true);
    let stopReason: StopReason = "error";
    try {
      const sessionId = await this.ensureSession();
      const block: ContentBlock = { type: "text", text };
      // All chunks of this prompt share an id, as a resumed session's do: the next prompt is
      // its own bubble even when this one gets no answer (a cancel).
      this.sent += 1;
      const messageId = `live-${this.sent}`;
      const say = (content: ContentBlock) =>
        this.events.post({ type: "update", update: { sessionUpdate: "user_message_chunk", content, messageId } });
      say(block);
      for (const c of context) {
        if (c.type === "image") {
          // The person's image shows in their message, as it will when the session is resumed.
          say(c);
          continue;
        }
        const name = c.type === "resource" ? shortName(c.resource.uri) : c.type === "resource_link" ? c.name : undefined;
        if (name !== undefined) say({ type: "text", text: `\n\n(attached ${name})` });
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
    // The next queued prompt, now that the turn is over.
    const next = this.queue.shift();
    if (next) {
      this.postQueue();
      await this.send(next.text, next.context);
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
    this.leaveSession(undefined);
    this.events.post({ type: "reset" });
    this.events.post({ type: "mode", mode: this._mode });
    this.postModels();
  }

  async list(): Promise<SessionInfo[]> {
    const result = await this.sidecar.request<{ sessions: SessionInfo[] }>(Methods.sessionList, { cwd: workspaceRoot() });
    return result.sessions;
  }

  async load(sessionId: string): Promise<void> {
    if (this.running) await this.cancel();
    this.leaveSession(sessionId);
    this.events.post({ type: "reset", sessionId });
    this.postModels();
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
      // The resumed session's model and its choices.
      this.refreshModelsInBackground();
    } catch (err) {
      this.sessionId = undefined;
      this.events.post({ type: "notice", text: `Could not resume ${sessionId}: ${err instanceof Error ? err.message : err}`, level: "error" });
    }
  }

  /** Forget the session (the sidecar restarted: its sessions are gone from memory, not from disk). */
  forget(): void {
    this.leaveSession(undefined);
    // Its settings may have changed: the models of the provider it starts with are asked again.
    this.models = undefined;
    this.picked = undefined;
    this.postModels();
    if (this.running) this.setRunning(false, "error");
  }

  /** The current session is `sessionId` from now on (undefined: none until the next prompt). */
  private leaveSession(sessionId: string | undefined): void {
    // Queued prompts were for the session left.
    if (this.queue.length > 0) {
      this.queue = [];
      this.postQueue();
    }
    this.loading?.source.cancel();
    this.loading = undefined;
    this.creating = undefined;
    this.sessionId = sessionId;
    this.model = undefined;
  }

  private ensureSession(): Promise<string> {
    if (this.sessionId) return Promise.resolve(this.sessionId);
    if (this.creating) return this.creating;
    const creating = this.createSession().finally(() => {
      if (this.creating === creating) this.creating = undefined;
    });
    this.creating = creating;
    return creating;
  }

  private async createSession(): Promise<string> {
    const worktree = vscode.workspace.getConfiguration("tandem").get<string>("worktree", "").trim();
    const result = await this.sidecar.request<SessionNewResult>(Methods.sessionNew, {
      cwd: workspaceRoot(),
      mode: this._mode,
      ...(this.picked ? { model: this.picked } : {}),
      ...(worktree ? { worktree } : {}),
    });
    if (result.worktree) {
      // Where the session works, said once in the panel (and the log).
      const where = `Working in worktree ${result.worktree.name} at ${result.worktree.path} (branch ${result.worktree.branch}${result.worktree.created ? ", new" : ""}).`;
      this.log(where);
      this.events.post({ type: "notice", text: where, level: "info" });
    }
    this.sessionId = result.sessionId;
    this.model = result.model ?? undefined;
    this.events.post({ type: "status", state: "ready" });
    this.postModels();
    this.events.modelChanged();
    this.log(`session ${result.sessionId} (mode ${result.modes.current}, model ${result.model ?? "?"})`);
    // The provider's models for the dropdown, while the prompt goes on.
    this.refreshModelsInBackground();
    return result.sessionId;
  }

  // The model picker -------------------------------------------------------------------------

  /** The model the dropdown shows: the session's, else the one the next session starts with. */
  private shownModel(): string | undefined {
    const setting = vscode.workspace.getConfiguration("tandem").get<string>("provider.model", "").trim();
    return this.model ?? this.picked ?? configuredModel(this.models) ?? (setting || undefined);
  }

  /** Posts the dropdown's state (the panel's webview was created, a session started or changed). */
  postModels(): void {
    const current = this.shownModel();
    if (current === undefined) return;
    this.events.post({ type: "models", models: this.models ? withCurrent(this.models, current) : singleModel(current) });
  }

  /**
   * The session's model choices from the sidecar (the provider's list may take a moment: one
   * request per session at a time; a new session cancels the old one's).
   */
  private refreshModels(): Promise<ModelChoices | undefined> {
    const sessionId = this.sessionId;
    if (!sessionId) return Promise.resolve(undefined);
    if (this.loading?.sessionId === sessionId) return this.loading.promise;
    const source = new vscode.CancellationTokenSource();
    const promise: Promise<ModelChoices | undefined> = this.sidecar
      .request<SessionConfigOptionsResult>(Methods.sessionConfigOptions, { sessionId }, source.token)
      .then((result) => (sessionId === this.sessionId ? this.showModels(result) : undefined))
      .finally(() => {
        if (this.loading?.promise === promise) this.loading = undefined;
        source.dispose();
      });
    this.loading = { sessionId, promise, source };
    return promise;
  }

  private refreshModelsInBackground(): void {
    this.refreshModels().catch((err) => this.log(`the model list: ${errorText(err)}`));
  }

  /**
   * Shows a configOptions / setConfigOption result. A setConfigOption result (`listed` false)
   * asks the provider nothing: the reason its list is missing stays the one last read.
   */
  private showModels(result: SessionConfigOptionsResult, listed = true): ModelChoices | undefined {
    const found = modelChoices(result);
    if (!found) return undefined;
    const error = listed ? found.error : this.models?.error;
    const models: ModelChoices = { current: found.current, choices: found.choices, ...(error ? { error } : {}) };
    if (listed && error) this.log(`the provider's models could not be listed (only the configured model is offered): ${error}`);
    this.models = models;
    this.model = models.current;
    this.postModels();
    this.events.modelChanged();
    return models;
  }

  /**
   * Switches the session to `model` (from its next request to the provider); before a session,
   * the next session starts with it. A refusal is an error notification offering the model's
   * setting, and the dropdown goes back to the model in force.
   */
  async setModel(model: string): Promise<boolean> {
    if (!this.sessionId && this.creating) await this.creating.catch(() => undefined);
    const sessionId = this.sessionId;
    if (!sessionId) {
      this.picked = model;
      this.postModels();
      this.log(`model ${model} (for the next session)`);
      return true;
    }
    try {
      const result = await this.sidecar.request<SessionConfigOptionsResult>(Methods.sessionSetConfigOption, {
        sessionId,
        configId: "model",
        value: model,
      });
      this.picked = model;
      if (sessionId === this.sessionId) this.showModels(result, false);
      this.log(`session ${sessionId}: model ${model}`);
      return true;
    } catch (err) {
      const text = `Could not switch to the model ${model}: ${errorText(err)}`;
      this.log(text);
      this.postModels();
      void showError(text, "tandem.provider.model");
      return false;
    }
  }

  /** "Tandem: Choose Model…": a quick pick of the session's model choices (starts the session if none). */
  async chooseModel(): Promise<void> {
    const pick = vscode.window.createQuickPick<ModelPickItem>();
    pick.title = "Tandem: model";
    pick.placeholder = "Asking the provider for its models…";
    pick.matchOnDescription = true;
    pick.matchOnDetail = true;
    pick.busy = true;
    const chosen = new Promise<string | undefined>((resolve) => {
      pick.onDidAccept(() => {
        resolve(pick.selectedItems[0]?.value);
        pick.hide();
      });
      pick.onDidHide(() => resolve(undefined));
    });
    pick.show();
    try {
      await this.ensureSession();
      const models = await this.refreshModels();
      if (!models) throw new Error("the sidecar offers no model option");
      pick.items = modelPickItems(models);
      pick.activeItems = pick.items.filter((item) => item.value === models.current);
      pick.placeholder = models.error
        ? `The provider's models could not be listed: ${models.error}`
        : `Now ${models.current}: the next request to the provider uses the model chosen here`;
      pick.busy = false;
    } catch (err) {
      pick.hide();
      pick.dispose();
      void showError(`Could not list the models: ${errorText(err)}`, "tandem.provider.model");
      return;
    }
    const value = await chosen;
    pick.dispose();
    if (value !== undefined && value !== this.model) await this.setModel(value);
  }

  private setRunning(running: boolean, stopReason?: StopReason): void {
    this.running = running;
    this.progress = running ? startProgress(Date.now()) : undefined;
    void vscode.commands.executeCommand("setContext", "tandem.turnRunning", running);
    this.events.turnChanged(running);
    this.events.post({ type: "turn", running, ...(stopReason ? { stopReason } : {}) });
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
