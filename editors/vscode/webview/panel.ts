// The panel's script (runs in the webview; bundled to media/panel.js). It folds the updates the
// extension posts into a transcript (src/transcript.ts) and redraws only the entry that changed.
// Markdown goes through markdown-it with raw HTML off, so model output cannot inject markup.

import MarkdownIt from "markdown-it";

import { Inbox } from "../src/delivery";
import type { ToPanel } from "../src/messages";
import type { ModeId, SessionInfo } from "../src/protocol";
import { type Entry, type Transcript, addNotice, applyUpdate, contentSummary, emptyTranscript } from "../src/transcript";
import { usageLabel } from "../src/usage";

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();
const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
// "calc.py" is not a link to Paraguay: only links with a scheme or www.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

const $ = <T extends HTMLElement>(id: string): T => {
  const el = document.querySelector<T>(`[data-testid="${id}"]`);
  if (!el) throw new Error(`panel: missing element ${id}`);
  return el;
};

const messages = $<HTMLElement>("messages");
const prompt = $<HTMLTextAreaElement>("prompt");
const send = $<HTMLButtonElement>("send");
const cancel = $<HTMLButtonElement>("cancel");
const mode = $<HTMLSelectElement>("mode");
const plan = $<HTMLOListElement>("plan");
const status = $<HTMLElement>("status");
const model = $<HTMLElement>("model");
const sessions = $<HTMLElement>("sessions");
const review = $<HTMLElement>("review");
const usage = $<HTMLElement>("usage");
const attachments = $<HTMLElement>("attachments");

let transcript: Transcript = emptyTranscript();
let running = false;
/** How the last turn ended ("Done (end turn)"), shown while idle. */
let outcome = "";

function submit(): void {
  const text = prompt.value.trim();
  if (text === "" || running) return;
  vscode.postMessage({ type: "prompt", text });
  prompt.value = "";
}

send.addEventListener("click", submit);
prompt.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
cancel.addEventListener("click", () => vscode.postMessage({ type: "cancel" }));
mode.addEventListener("change", () => vscode.postMessage({ type: "setMode", mode: mode.value }));
$("new-session").addEventListener("click", () => vscode.postMessage({ type: "newSession" }));
$("sessions-button").addEventListener("click", () => {
  if (!sessions.hidden) {
    sessions.hidden = true;
    return;
  }
  vscode.postMessage({ type: "listSessions" });
});
$("clear-attachments").addEventListener("click", () => vscode.postMessage({ type: "clearAttachments" }));
$("review-accept-all").addEventListener("click", () => vscode.postMessage({ type: "reviewAll", accept: true }));
$("review-reject-all").addEventListener("click", () => vscode.postMessage({ type: "reviewAll", accept: false }));

// The extension answers "ready" with everything so far (one replay), then sends live messages;
// the inbox applies each exactly once, whatever VS Code delivered before this script ran.
const inbox = new Inbox(handle, () => handle({ type: "reset" }));
window.addEventListener("message", (event: MessageEvent<unknown>) => inbox.receive(event.data));
vscode.postMessage({ type: "ready" });

function handle(message: ToPanel): void {
  switch (message.type) {
    case "reset":
      transcript = emptyTranscript();
      messages.replaceChildren();
      renderPlan();
      renderUsage();
      break;
    case "update": {
      const change = applyUpdate(transcript, message.update);
      if (change.what === "entry") renderEntry(change.index);
      else if (change.what === "plan") renderPlan();
      else if (change.what === "mode" && transcript.mode) mode.value = transcript.mode;
      else if (change.what === "usage") renderUsage();
      break;
    }
    case "notice": {
      const change = addNotice(transcript, message.text, message.level);
      if (change.what === "entry") renderEntry(change.index);
      break;
    }
    case "turn":
      running = message.running;
      cancel.disabled = !running;
      send.disabled = running;
      document.body.classList.toggle("running", running);
      outcome = message.stopReason ? `Done (${message.stopReason.replace("_", " ")})` : "";
      status.textContent = running ? "Working…" : outcome;
      break;
    case "mode":
      mode.value = message.mode satisfies ModeId;
      break;
    case "status":
      model.textContent = message.model ?? "";
      if (message.state !== "ready") status.textContent = message.detail ?? `Sidecar ${message.state}`;
      // The sidecar being ready (again) does not erase how the last turn ended.
      else if (!running) status.textContent = outcome;
      break;
    case "sessions":
      renderSessions(message.sessions);
      break;
    case "attachments":
      attachments.hidden = message.labels.length === 0;
      attachments.querySelector(".attachment-list")!.textContent =
        message.labels.length > 0 ? `With the next prompt: ${message.labels.join(", ")}` : "";
      break;
    case "review":
      review.hidden = !message.pending;
      review.querySelector(".review-summary")!.textContent = message.summary ?? "";
      {
        const preview = review.querySelector<HTMLElement>(".review-diagnostics")!;
        preview.hidden = !message.diagnostics;
        preview.textContent = message.diagnostics ?? "";
        preview.dataset.status = message.diagnosticsStatus ?? "";
      }
      break;
  }
}

function renderUsage(): void {
  const label = transcript.usage ? usageLabel(transcript.usage) : undefined;
  usage.hidden = !label?.text;
  if (!label) return;
  usage.textContent = label.text;
  usage.title = label.title;
}

function renderEntry(index: number): void {
  const entry = transcript.entries[index];
  if (!entry) return;
  const el = draw(entry);
  el.dataset.index = String(index);
  const existing = messages.querySelector(`[data-index="${index}"]`);
  const stick = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 40;
  if (existing) existing.replaceWith(el);
  else messages.append(el);
  if (stick) messages.scrollTop = messages.scrollHeight;
}

function draw(entry: Entry): HTMLElement {
  switch (entry.kind) {
    case "user":
    case "assistant": {
      const el = div(`msg ${entry.kind}`);
      el.dataset.testid = entry.kind === "user" ? "user-message" : "assistant-message";
      el.innerHTML = md.render(entry.text);
      if (entry.kind === "assistant") addCodeActions(el);
      return el;
    }
    case "thought": {
      const el = document.createElement("details");
      el.className = "thought";
      const summary = document.createElement("summary");
      summary.textContent = "Thinking";
      const body = div("body");
      body.textContent = entry.text;
      el.append(summary, body);
      return el;
    }
    case "notice": {
      const el = div(`notice ${entry.level}`);
      el.textContent = entry.text;
      return el;
    }
    case "tool": {
      const call = entry.call;
      const el = document.createElement("details");
      el.className = `tool ${call.status}`;
      el.dataset.testid = "tool-call";
      el.dataset.status = call.status;
      el.dataset.kind = call.kind;
      el.open = call.status === "failed";
      const summary = document.createElement("summary");
      const icon = document.createElement("span");
      icon.className = "icon";
      icon.textContent = { pending: "○", in_progress: "◐", completed: "●", failed: "✗" }[call.status] ?? "○";
      const title = document.createElement("span");
      title.className = "title";
      title.textContent = call.title;
      const state = document.createElement("span");
      state.className = "state";
      state.textContent = call.status.replace("_", " ");
      summary.append(icon, title, state);
      el.append(summary);
      for (const loc of call.locations ?? []) {
        const a = document.createElement("a");
        a.className = "location";
        a.href = "#";
        a.textContent = loc.line ? `${loc.path}:${loc.line}` : loc.path;
        a.addEventListener("click", (e) => {
          e.preventDefault();
          vscode.postMessage({ type: "openFile", path: loc.path, line: loc.line ? loc.line - 1 : undefined });
        });
        el.append(a);
      }
      for (const content of call.content ?? []) {
        const { kind, text } = contentSummary(content);
        const pre = document.createElement("pre");
        pre.className = kind;
        if (kind === "diff") {
          for (const line of text.split("\n")) {
            const span = document.createElement("span");
            span.className = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "";
            span.textContent = `${line}\n`;
            pre.append(span);
          }
        } else {
          pre.textContent = text;
        }
        el.append(pre);
      }
      return el;
    }
  }
}

/** A Copy and an Insert button on every code block of an answer. */
function addCodeActions(el: HTMLElement): void {
  for (const code of Array.from(el.querySelectorAll<HTMLElement>("pre > code"))) {
    const pre = code.parentElement!;
    const bar = div("code-actions");
    for (const [label, type, tip] of [
      ["Copy", "copyCode", "Copy the code"],
      ["Insert", "insertCode", "Insert the code at the cursor of the editor you were in (replacing its selection)"],
    ] as const) {
      const button = document.createElement("button");
      button.className = "secondary";
      button.textContent = label;
      button.title = tip;
      button.dataset.testid = type === "copyCode" ? "copy-code" : "insert-code";
      button.addEventListener("click", () => vscode.postMessage({ type, text: code.textContent ?? "" }));
      bar.append(button);
    }
    const block = div("code-block");
    pre.replaceWith(block);
    block.append(bar, pre);
  }
}

function renderPlan(): void {
  plan.replaceChildren();
  plan.hidden = transcript.plan.length === 0;
  for (const item of transcript.plan) {
    const li = document.createElement("li");
    li.className = item.status;
    li.textContent = `${item.status === "completed" ? "☑" : item.status === "in_progress" ? "◐" : "☐"} ${item.content}`;
    plan.append(li);
  }
}

function renderSessions(list: SessionInfo[]): void {
  sessions.replaceChildren();
  sessions.hidden = false;
  if (list.length === 0) {
    sessions.textContent = "No stored sessions in this workspace.";
    return;
  }
  for (const s of list) {
    const button = document.createElement("button");
    button.className = "session";
    button.dataset.testid = "session";
    button.textContent = `${s.title ?? s.sessionId}${s.updatedAt ? ` · ${s.updatedAt.replace("T", " ").slice(0, 16)}` : ""}`;
    button.addEventListener("click", () => {
      sessions.hidden = true;
      vscode.postMessage({ type: "loadSession", sessionId: s.sessionId });
    });
    sessions.append(button);
  }
}

function div(className: string): HTMLDivElement {
  const el = document.createElement("div");
  el.className = className;
  return el;
}
