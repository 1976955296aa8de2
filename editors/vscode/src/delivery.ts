// Delivery of the extension's messages to the panel's webview: every message exactly once and in
// order, however the webview's start-up and the agent's stream interleave. Pure (no `vscode`, no
// DOM), so the extension host, the webview and the unit tests share it.
//
// A webview can be created while a turn is streaming ("Tandem: Ask…" before the panel was ever
// shown). VS Code queues what is posted before the webview's script runs and delivers it later,
// so posting live *and* replaying the backlog when the script says it is ready shows messages
// twice, interleaved. Instead the extension posts nothing live until the webview is ready, then
// sends the whole backlog as one replay, then live messages; every message carries a sequence
// number, and the webview ignores anything older than what it already has.

import type { ToPanel } from "./messages";

/** What crosses to the webview: one live message, or the backlog when its script (re)starts. */
export type Envelope = { seq: number; message: ToPanel } | { seq: number; replay: ToPanel[] };

/** The extension's side: keeps the backlog and decides what goes live. */
export class Outbox {
  /** Every message since the last reset, with its sequence number. */
  private backlog: { seq: number; message: ToPanel }[] = [];
  private seq = 0;
  private live = false;

  constructor(private readonly send: (envelope: Envelope) => void) {}

  post(message: ToPanel): void {
    if (message.type === "reset") this.backlog = [];
    // Keep the last status/mode/models/review only; everything else is the transcript.
    if (message.type === "status" || message.type === "mode" || message.type === "models" || message.type === "review") {
      this.backlog = this.backlog.filter((e) => e.message.type !== message.type);
    }
    this.seq += 1;
    this.backlog.push({ seq: this.seq, message });
    if (this.live) this.send({ seq: this.seq, message });
  }

  /** A new webview (or none): nothing goes live until its script says it is ready. */
  detach(): void {
    this.live = false;
  }

  /** The webview's script runs and listens: the backlog as one replay, then live messages. */
  ready(): void {
    this.send({ seq: this.seq, replay: this.backlog.map((e) => e.message) });
    this.live = true;
  }
}

/** The webview's side: applies a replay from scratch, then only messages newer than it. */
export class Inbox {
  /** The newest sequence number applied; undefined until the first replay. */
  private upTo: number | undefined;

  constructor(
    private readonly apply: (message: ToPanel) => void,
    private readonly restart: () => void,
  ) {}

  receive(raw: unknown): void {
    if (typeof raw !== "object" || raw === null || typeof (raw as { seq?: unknown }).seq !== "number") return;
    const envelope = raw as Envelope;
    if ("replay" in envelope) {
      // A replay older than what is shown was sent to an earlier start of this webview.
      if (this.upTo !== undefined && envelope.seq < this.upTo) return;
      this.restart();
      this.upTo = envelope.seq;
      for (const message of envelope.replay) this.apply(message);
      return;
    }
    // Before the replay: a message queued for an earlier start of this webview (the replay has it).
    // At or below `upTo`: already applied through the replay.
    if (this.upTo === undefined || envelope.seq <= this.upTo) return;
    this.upTo = envelope.seq;
    this.apply(envelope.message);
  }
}
