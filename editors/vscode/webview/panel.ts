// The panel's script (runs in the webview; bundled to media/panel.js). It folds the updates the
// extension posts into a transcript (src/transcript.ts) and redraws only the entry that changed.
// Markdown goes through markdown-it with raw HTML off, so model output cannot inject markup.

import MarkdownIt from "markdown-it";

import { Inbox } from "../src/delivery";
import { mentionAt } from "../src/mentionSyntax";
import { type SlashCommand, matchCommands, slashAt } from "../src/slash";
import { highlight } from "./highlight";
import type { Mention, QueuedPrompt, ToPanel } from "../src/messages";
import { type TurnProgress, countStreamed, progressLabel, startProgress } from "../src/progress";
import { type ModelChoices, modelTooltip, selectOptions } from "../src/models";
import type { ModeId, SessionInfo } from "../src/protocol";
import {
  type Entry,
  type Transcript,
  addNotice,
  applyUpdate,
  changeLabel,
  commandSummary,
  contentSummary,
  emptyTranscript,
  fileChanges,
  questionAnswers,
  relativePath,
} from "../src/transcript";
import { usageLabel } from "../src/usage";

declare function acquireVsCodeApi(): { postMessage(message: unknown): void };

const vscode = acquireVsCodeApi();
const md = new MarkdownIt({ html: false, linkify: true, breaks: false, highlight });
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
const model = $<HTMLSelectElement>("model");
const sessions = $<HTMLElement>("sessions");
const review = $<HTMLElement>("review");
const usage = $<HTMLElement>("usage");
const attachments = $<HTMLElement>("attachments");
const queue = $<HTMLOListElement>("queue");
const mentionList = $<HTMLUListElement>("mention-list");
/** The workspace folder: paths in cards are shown relative to it. */
const root = document.body.dataset.root || undefined;

let transcript: Transcript = emptyTranscript();
let running = false;
/** How the last turn ended ("Done (end turn)"), shown while idle. */
let outcome = "";
/** The status line shows the sidecar's state (starting, stopped, an error), not a turn's. */
let sidecarNote = false;
/** The running turn's time and streamed tokens, shown in the status line once a second. */
let progress: TurnProgress | undefined;
let ticker: ReturnType<typeof setInterval> | undefined;

/** Whether a review waits for the person (the indicator says so instead of "the model"). */
let reviewing = false;

function showProgress(): void {
  if (progress && !sidecarNote) status.textContent = progressLabel(progress, Date.now(), reviewing ? "your review" : undefined);
}

/** Sends the prompt; during a turn the extension queues it (the list above the prompt shows it). */
function submit(): void {
  const text = prompt.value.trim();
  if (text === "") return;
  vscode.postMessage({ type: "prompt", text });
  prompt.value = "";
}

send.addEventListener("click", submit);
prompt.addEventListener("keydown", (e) => {
  if (!mentionList.hidden && slashItems.length > 0) {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      slashIndex = (slashIndex + (e.key === "ArrowDown" ? 1 : slashItems.length - 1)) % slashItems.length;
      showSlash();
      return;
    }
    const item = slashItems[slashIndex]!;
    // Enter on a name typed in full sends it; otherwise Enter and Tab complete the name.
    if ((e.key === "Tab" || (e.key === "Enter" && slashAtCaret() !== item.name)) && !e.isComposing) {
      e.preventDefault();
      chooseSlash(item);
      return;
    }
    if (e.key === "Escape") {
      e.preventDefault();
      hideSlash();
      return;
    }
  }
  if (!mentionList.hidden && mentionItems.length > 0) {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      mentionIndex = (mentionIndex + (e.key === "ArrowDown" ? 1 : mentionItems.length - 1)) % mentionItems.length;
      renderMentions();
      return;
    }
    if ((e.key === "Enter" || e.key === "Tab") && !e.isComposing) {
      e.preventDefault();
      chooseMention(mentionItems[mentionIndex]!);
      return;
    }
    if (e.key === "Escape") {
      e.preventDefault();
      hideMentions();
      return;
    }
  }
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    submit();
  }
});
cancel.addEventListener("click", () => vscode.postMessage({ type: "cancel" }));
prompt.addEventListener("input", () => {
  const slash = slashAtCaret();
  if (slash !== undefined) {
    // Asked when `/` is typed (the list stays fresh), answered with a `commands` message.
    if (slash === "" || slashCommands.length === 0) vscode.postMessage({ type: "listCommands" });
    hideMentions();
    showSlash();
    return;
  }
  hideSlash();
  const at = mentionAtCaret();
  if (!at) {
    hideMentions();
    return;
  }
  mentionQuery = at.query;
  vscode.postMessage({ type: "mentionQuery", query: at.query });
});
prompt.addEventListener("blur", () =>
  setTimeout(() => {
    hideMentions();
    hideSlash();
  }, 200),
);

// `/` completion: while the prompt's first word starts with `/`, the sidecar's slash commands
// (`/context`, `/init`, the project's and yours) whose name starts with what is typed; choosing
// one puts `/name ` in the prompt. The sidecar expands the command when the prompt is sent.
let slashCommands: SlashCommand[] = [];
let slashItems: SlashCommand[] = [];
let slashIndex = 0;

function slashAtCaret(): string | undefined {
  return slashAt(prompt.value.slice(0, prompt.selectionStart ?? prompt.value.length));
}

function showSlash(): void {
  const query = slashAtCaret();
  if (query === undefined) {
    hideSlash();
    return;
  }
  slashItems = matchCommands(query, slashCommands);
  slashIndex = Math.min(slashIndex, Math.max(slashItems.length - 1, 0));
  mentionList.replaceChildren();
  mentionList.hidden = slashItems.length === 0;
  slashItems.forEach((item, i) => {
    const li = document.createElement("li");
    li.dataset.testid = "command";
    li.className = i === slashIndex ? "selected" : "";
    li.setAttribute("role", "option");
    li.append(span("label", item.hint ? `/${item.name} ${item.hint}` : `/${item.name}`));
    if (item.description) li.append(span("detail", item.description));
    li.addEventListener("mousedown", (e) => {
      e.preventDefault();
      chooseSlash(item);
    });
    mentionList.append(li);
  });
  mentionList.children[slashIndex]?.scrollIntoView({ block: "nearest" });
}

function hideSlash(): void {
  if (slashItems.length === 0) return;
  slashItems = [];
  slashIndex = 0;
  mentionList.hidden = true;
}

function chooseSlash(item: SlashCommand): void {
  const caret = prompt.selectionStart ?? prompt.value.length;
  const inserted = `/${item.name} `;
  prompt.value = inserted + prompt.value.slice(caret).trimStart();
  prompt.selectionStart = prompt.selectionEnd = inserted.length;
  hideSlash();
  prompt.focus();
}

// `@` completion: the extension answers each query with the matching mentions; choosing one
// attaches it to the next prompt (the list above the prompt shows it) and leaves `@name` in the text.
let mentionQuery: string | undefined;
let mentionItems: Mention[] = [];
let mentionIndex = 0;

function mentionAtCaret(): { query: string; start: number } | undefined {
  return mentionAt(prompt.value.slice(0, prompt.selectionStart ?? prompt.value.length));
}

function hideMentions(): void {
  mentionList.hidden = true;
  mentionQuery = undefined;
  mentionItems = [];
}

function renderMentions(): void {
  mentionList.replaceChildren();
  mentionList.hidden = mentionItems.length === 0;
  mentionItems.forEach((item, i) => {
    const li = document.createElement("li");
    li.dataset.testid = "mention";
    li.dataset.kind = item.kind;
    li.className = i === mentionIndex ? "selected" : "";
    li.setAttribute("role", "option");
    li.append(span("label", `@${item.label}`));
    if (item.detail) li.append(span("detail", item.detail));
    li.addEventListener("mousedown", (e) => {
      e.preventDefault();
      chooseMention(item);
    });
    mentionList.append(li);
  });
  mentionList.children[mentionIndex]?.scrollIntoView({ block: "nearest" });
}

function chooseMention(item: Mention): void {
  const at = mentionAtCaret();
  if (at) {
    const caret = prompt.selectionStart ?? prompt.value.length;
    const inserted = `@${item.label} `;
    prompt.value = prompt.value.slice(0, at.start) + inserted + prompt.value.slice(caret);
    prompt.selectionStart = prompt.selectionEnd = at.start + inserted.length;
  }
  vscode.postMessage({ type: "mention", mention: { kind: item.kind, label: item.label, ...(item.symbol ? { symbol: item.symbol } : {}) } });
  hideMentions();
  prompt.focus();
}
mode.addEventListener("change", () => vscode.postMessage({ type: "setMode", mode: mode.value }));
// The extension answers with the model in force: the chosen one, or the one before when refused.
model.addEventListener("change", () => vscode.postMessage({ type: "setModel", model: model.value }));
$("new-session").addEventListener("click", () => vscode.postMessage({ type: "newSession" }));
$("sessions-button").addEventListener("click", () => {
  if (!sessions.hidden) {
    sessions.hidden = true;
    return;
  }
  vscode.postMessage({ type: "listSessions" });
});
$("clear-attachments").addEventListener("click", () => vscode.postMessage({ type: "clearAttachments" }));

// A screenshot pasted into the prompt, or image files dropped on the panel, go with the next
// prompt (a chip with a thumbnail above the prompt shows each).
const IMAGE_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"];

function attachImageFiles(files: File[]): boolean {
  const images = files.filter((f) => IMAGE_TYPES.includes(f.type));
  for (const file of images) {
    const reader = new FileReader();
    reader.addEventListener("load", () => {
      const url = typeof reader.result === "string" ? reader.result : "";
      const data = url.slice(url.indexOf(",") + 1);
      const name = file.name && file.name !== "image.png" ? file.name : "pasted image";
      vscode.postMessage({ type: "attachImage", name, mimeType: file.type, data });
    });
    reader.readAsDataURL(file);
  }
  return images.length > 0;
}

prompt.addEventListener("paste", (e) => {
  const items: DataTransferItem[] = e.clipboardData ? Array.from(e.clipboardData.items) : [];
  const files = items.flatMap((item) => (item.kind === "file" ? [item.getAsFile()] : [])).filter((f): f is File => f !== null);
  if (attachImageFiles(files)) e.preventDefault();
});
document.body.addEventListener("dragover", (e) => {
  if (e.dataTransfer && Array.from(e.dataTransfer.items).some((item) => item.kind === "file")) e.preventDefault();
});
document.body.addEventListener("drop", (e) => {
  if (attachImageFiles(e.dataTransfer ? Array.from(e.dataTransfer.files) : [])) e.preventDefault();
});
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
      if (progress) {
        countStreamed(progress, message.update);
        showProgress();
      }
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
      sidecarNote = false;
      cancel.disabled = !running;
      // During a turn a prompt is queued: it goes when the turn ends.
      send.textContent = running ? "Queue" : "Send";
      send.title = running ? "Send when this turn ends (queued; ✕ takes it back)" : "";
      document.body.classList.toggle("running", running);
      outcome = message.stopReason ? `Done (${message.stopReason.replace("_", " ")})` : "";
      if (running) {
        progress = startProgress(Date.now());
        ticker ??= setInterval(showProgress, 1000);
        showProgress();
      } else {
        progress = undefined;
        if (ticker) clearInterval(ticker);
        ticker = undefined;
        status.textContent = outcome;
      }
      break;
    case "queue":
      renderQueue(message.items);
      break;
    case "mode":
      mode.value = message.mode satisfies ModeId;
      break;
    case "models":
      renderModels(message.models);
      break;
    case "status":
      if (message.state !== "ready") {
        status.textContent = message.detail ?? `Sidecar ${message.state}`;
        sidecarNote = true;
      } else if (sidecarNote && !running) {
        // Only the sidecar's own note goes: a late "ready" must not wipe how the last turn ended.
        status.textContent = outcome;
        sidecarNote = false;
      }
      break;
    case "sessions":
      renderSessions(message.sessions);
      break;
    case "attachments": {
      attachments.hidden = message.labels.length === 0;
      const list = attachments.querySelector(".attachment-list")!;
      list.textContent = message.labels.length > 0 ? `With the next prompt: ${message.labels.join(", ")}` : "";
      // Images: a chip with a thumbnail each.
      for (const [label, src] of Object.entries(message.thumbnails ?? {})) {
        const chip = span("image-chip", "");
        chip.dataset.testid = "image-chip";
        chip.title = label;
        const img = document.createElement("img");
        img.src = src;
        img.alt = label;
        chip.append(img);
        list.append(chip);
      }
      break;
    }
    case "commands":
      slashCommands = message.commands;
      showSlash();
      break;
    case "mentions": {
      if (message.query !== mentionQuery) break;
      // The symbols come after the files: the item the person moved to stays chosen.
      const chosen = mentionItems[mentionIndex];
      mentionItems = message.items;
      const kept = chosen ? mentionItems.findIndex((m) => m.kind === chosen.kind && m.label === chosen.label) : -1;
      mentionIndex = Math.max(kept, 0);
      renderMentions();
      break;
    }
    case "review":
      reviewing = message.pending;
      showProgress();
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

/** The prompts waiting for the turn's end: each with a ✕ that takes it back. */
function renderQueue(items: QueuedPrompt[]): void {
  queue.replaceChildren();
  queue.hidden = items.length === 0;
  for (const item of items) {
    const li = document.createElement("li");
    li.dataset.testid = "queued-prompt";
    const label = span("queued-text", `Queued: ${item.text}`);
    li.title = "Sent when the running turn ends";
    li.append(label);
    if (item.attachments.length > 0) li.append(span("detail", ` (with ${item.attachments.join(", ")})`));
    const remove = document.createElement("button");
    remove.className = "secondary dequeue";
    remove.dataset.testid = "dequeue";
    remove.textContent = "✕";
    remove.title = "Do not send this prompt";
    remove.addEventListener("click", () => vscode.postMessage({ type: "dequeue", id: item.id }));
    li.append(remove);
    queue.append(li);
  }
}

/** The model dropdown: the choices by name, the current one selected; the tooltip says why a list is short. */
function renderModels(models: ModelChoices): void {
  model.replaceChildren(
    ...selectOptions(models).map((o) => {
      const option = document.createElement("option");
      option.value = o.value;
      option.textContent = o.label;
      option.title = o.title;
      option.selected = o.selected;
      return option;
    }),
  );
  model.value = models.current;
  model.title = modelTooltip(models);
  model.dataset.error = models.error ? "true" : "";
  model.hidden = models.choices.length === 0;
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

/**
 * A prompt's "Restore" button: the files back to before its turn (the extension asks first with
 * the plan). The turn is the prompt's place among the session's prompts (turn 1 is the first).
 */
function addRestore(el: HTMLElement, entry: Entry): void {
  const prompts: Entry[] = transcript.entries.filter((e) => e.kind === "user");
  const turn = prompts.indexOf(entry) + 1;
  if (turn < 1) return;
  const button = document.createElement("button");
  button.className = "restore-turn";
  button.dataset.testid = "restore-turn";
  button.textContent = "↺ Restore";
  button.title = `Restore the files to how they were before this turn (turn ${turn}); asks first`;
  button.addEventListener("click", () => vscode.postMessage({ type: "restoreTurn", turn }));
  el.append(button);
}

function draw(entry: Entry): HTMLElement {
  switch (entry.kind) {
    case "user":
    case "assistant": {
      const el = div(`msg ${entry.kind}`);
      el.dataset.testid = entry.kind === "user" ? "user-message" : "assistant-message";
      el.innerHTML = md.render(entry.text);
      if (entry.kind === "assistant") addCodeActions(el);
      else addRestore(el, entry);
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
    case "tool":
      return drawTool(entry.call);
  }
}

const ICONS: Record<string, string> = { pending: "○", in_progress: "◐", completed: "✓", failed: "✗" };

/**
 * A tool call's card. Edits: `calc.py +2 −2` per file with the diff of what was applied (click the
 * name for a diff editor), the text meant for the model folded away. Commands: the command, its
 * exit status (✗ in red when not 0) and the tail of its output. Questions: each question and its
 * answer. Anything else: its content as text.
 */
function drawTool(call: Extract<Entry, { kind: "tool" }>["call"]): HTMLElement {
  const el = document.createElement("details");
  el.className = `tool ${call.status}`;
  el.dataset.testid = "tool-call";
  el.dataset.status = call.status;
  el.dataset.kind = call.kind;
  const changes = fileChanges(call.content, root);
  const command = commandSummary(call);
  const answers = questionAnswers(call);
  const failed = call.status === "failed" || command?.failed === true;
  el.classList.toggle("bad", failed);
  const summary = document.createElement("summary");
  const icon = span("icon", failed ? "✗" : (ICONS[call.status] ?? "○"));
  icon.dataset.testid = "tool-mark";
  const title = span("title", call.title);
  if (changes.length === 1) title.textContent = changeLabel(changes[0]!);
  else if (changes.length > 1) {
    const added = changes.reduce((n, c) => n + c.added, 0);
    const removed = changes.reduce((n, c) => n + c.removed, 0);
    title.textContent = `${changes.length} files +${added} \u2212${removed}`;
  }
  const state = span("state", call.status.replace("_", " "));
  if (command && command.exitCode !== undefined) {
    state.textContent = command.timedOut ? "timed out" : command.exitCode === null ? "killed" : `exit ${command.exitCode}`;
    state.dataset.testid = "exit-status";
  }
  summary.append(icon, title, state);
  el.append(summary);

  if (command) {
    el.dataset.exit = command.exitCode === undefined || command.exitCode === null ? "" : String(command.exitCode);
    // The command is the title (on one line); a long or multi-line one is shown whole below it.
    title.textContent = `$ ${command.command.split("\n")[0]}`;
    title.classList.add("one-line");
    title.title = command.command;
    if (command.command.length > 60 || command.command.includes("\n")) {
      const pre = document.createElement("pre");
      pre.className = "command";
      pre.textContent = `$ ${command.command}`;
      el.append(pre);
    }
    if (command.tail.length > 0) {
      const out = document.createElement("pre");
      out.className = "output";
      out.dataset.testid = "output-tail";
      out.textContent = `${command.hidden > 0 ? `… ${command.hidden} more line${command.hidden === 1 ? "" : "s"}\n` : ""}${command.tail.join("\n")}`;
      el.append(out);
      // The end of the tail is what matters (FAILED, the exit status): scrolled into view once
      // the box is laid out, and again when the card opens.
      const bottom = () => {
        out.scrollTop = out.scrollHeight;
      };
      requestAnimationFrame(bottom);
      el.addEventListener("toggle", bottom);
    }
    el.open = failed || call.status === "in_progress";
    return el;
  }

  if (answers) {
    for (const { question, answer } of answers) {
      const row = div("answer");
      row.dataset.testid = "answer";
      row.append(span("question", question), span("reply", answer));
      el.append(row);
    }
    el.open = answers.length > 0;
    if (answers.length > 0) return el;
  }

  for (const change of changes) {
    const head = div("file-change");
    const a = document.createElement("a");
    a.href = "#";
    a.dataset.testid = "file-change";
    a.textContent = change.display;
    a.title = "Open what was applied in a diff editor";
    a.addEventListener("click", (e) => {
      e.preventDefault();
      vscode.postMessage({ type: "openChange", toolCallId: call.toolCallId, path: change.path });
    });
    head.append(a, span("stat add", ` +${change.added}`), span("stat del", ` \u2212${change.removed}`));
    if (change.created) head.append(span("stat", " (new)"));
    el.append(head);
    const pre = document.createElement("pre");
    pre.className = "diff";
    pre.dataset.testid = "file-diff";
    for (const line of change.lines) {
      const cls = { "+": "add", "-": "del", "@": "hunk", " ": "" }[line.op];
      const row = span(cls, `${line.op === "@" ? "" : line.op}${line.text}\n`);
      pre.append(row);
    }
    el.append(pre);
  }
  if (changes.length === 0) {
    for (const loc of call.locations ?? []) {
      const a = document.createElement("a");
      a.className = "location";
      a.href = "#";
      const shown = relativePath(loc.path, root);
      a.textContent = loc.line ? `${shown}:${loc.line}` : shown;
      a.addEventListener("click", (e) => {
        e.preventDefault();
        vscode.postMessage({ type: "openFile", path: loc.path, line: loc.line ? loc.line - 1 : undefined });
      });
      el.append(a);
    }
  }
  // What the model was told (or a pending request's diff): folded when the card shows a change.
  const rest = (call.content ?? []).filter((c) => changes.length === 0 || c.type !== "diff");
  // A failed call's reason is in view (a change that did not land says why), never folded away.
  const target = changes.length > 0 && rest.length > 0 && call.status !== "failed" ? document.createElement("details") : el;
  if (target !== el) {
    target.className = "model-text";
    target.dataset.testid = "model-text";
    const s = document.createElement("summary");
    s.textContent = "Result for the model";
    target.append(s);
    el.append(target);
  }
  for (const content of rest) {
    const { kind, text } = contentSummary(content);
    const pre = document.createElement("pre");
    pre.className = kind;
    if (kind === "diff") {
      for (const line of text.split("\n")) {
        const cls = line.startsWith("+") ? "add" : line.startsWith("-") ? "del" : line.startsWith("@@") ? "hunk" : "";
        pre.append(span(cls, `${line}\n`));
      }
    } else {
      pre.textContent = text;
    }
    target.append(pre);
  }
  el.open = failed || changes.length > 0;
  return el;
}

function span(className: string, text: string): HTMLSpanElement {
  const el = document.createElement("span");
  el.className = className;
  el.textContent = text;
  return el;
}

/** A Copy and an Insert button on every code block of an answer. */
function addCodeActions(el: HTMLElement): void {
  for (const code of Array.from(el.querySelectorAll<HTMLElement>("pre > code"))) {
    const pre = code.parentElement!;
    // Whether highlight.js coloured it (a test looks, and so can a stylesheet).
    code.dataset.highlighted = code.querySelector('[class^="hljs-"]') ? "true" : "false";
    const bar = div("code-actions");
    for (const [label, type, tip] of [
      ["Copy", "copyCode", "Copy the code"],
      ["Insert", "insertCode", "Insert the code at the cursor of the editor you were in (replacing its selection)"],
      [
        "Apply to file",
        "applyCode",
        "Propose the code as a change to the file you were in (its selection, the function it rewrites, or the whole file), reviewed hunk by hunk",
      ],
    ] as const) {
      const button = document.createElement("button");
      button.className = "secondary";
      button.textContent = label;
      button.title = tip;
      button.dataset.testid = { copyCode: "copy-code", insertCode: "insert-code", applyCode: "apply-code" }[type];
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
