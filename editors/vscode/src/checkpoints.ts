// What the checkpoint commands show, as plain functions (no `vscode`, so the unit tests run them
// under Node): one line per checkpoint, the files its stretch changed, a restore plan as a
// question, a compaction's counts. The checkpoints, plans and diffs come from the sidecar.

import type { CheckpointInfo, SessionCompactResult, SessionRestoreResult } from "./protocol";

const KINDS: Record<CheckpointInfo["kind"], string> = {
  beforeTurn: "Start of turn",
  beforeTool: "Before",
  afterTool: "After",
  afterTurn: "End of turn",
  beforeRestore: "Before a restore",
  afterRestore: "After a restore",
};

const handsBack = (c: CheckpointInfo) => c.kind === "afterTurn" || c.kind === "afterRestore";

/**
 * The files the stretch starting at `list[i]` changed: its own and the following checkpoints'
 * until the workspace went back to the person. For a turn's start, what the turn changed; for
 * an end of turn, what the person changed next.
 */
export function spanFiles(list: CheckpointInfo[], i: number): string[] {
  const files = new Set<string>();
  for (let j = i; j < list.length; j++) {
    const c = list[j]!;
    if (j > i && handsBack(c)) break;
    for (const f of c.files ?? []) files.add(f);
    if (handsBack(c)) break;
  }
  return [...files];
}

/** Every file changed since `list[i]` (what a Compare offers). */
export function filesSince(list: CheckpointInfo[], i: number): string[] {
  const files = new Set<string>();
  for (const c of list.slice(i)) for (const f of c.files ?? []) files.add(f);
  return [...files].sort();
}

/** "10:12:03" for today, else the date too, in the local time zone. */
export function localTime(rfc3339: string, now: Date = new Date()): string {
  const t = new Date(rfc3339);
  if (Number.isNaN(t.getTime())) return rfc3339;
  const pad = (n: number) => String(n).padStart(2, "0");
  const time = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}`;
  if (t.toDateString() === now.toDateString()) return time;
  return `${t.getFullYear()}-${pad(t.getMonth() + 1)}-${pad(t.getDate())} ${time}`;
}

/** What a checkpoint is, in words: "Start of turn 2", "Before edit (c2)", "After edit (c2)". */
export function kindLabel(c: CheckpointInfo): string {
  if (c.kind === "beforeTool" || c.kind === "afterTool") {
    return `${KINDS[c.kind]} ${c.tool ?? "tool"}${c.toolCallId ? ` (${c.toolCallId})` : ""}`;
  }
  if (c.kind === "beforeTurn" || c.kind === "afterTurn") return `${KINDS[c.kind]} ${c.turn}`;
  return KINDS[c.kind];
}

/** A QuickPick row for `list[i]`: label, description (turn, time), detail (the files). */
export function describeCheckpoint(
  list: CheckpointInfo[],
  i: number,
  now?: Date,
): { label: string; description: string; detail: string } {
  const c = list[i]!;
  const files = spanFiles(list, i);
  return {
    label: `#${c.id} ${kindLabel(c)}`,
    description: `turn ${c.turn} · ${localTime(c.time, now)}`,
    detail: files.length > 0 ? `changed: ${files.join(", ")}` : "no changes",
  };
}

/** The newest turn of the list (what "Undo Last Turn" restores to the start of), if any. */
export function lastTurn(list: CheckpointInfo[]): number | undefined {
  const turns = list.filter((c) => c.kind === "beforeTurn").map((c) => c.turn);
  return turns.length > 0 ? Math.max(...turns) : undefined;
}

export interface PlanQuestion {
  message: string;
  detail: string;
  /** The agent's files (restored whatever the choice). */
  plain: string[];
  /** The buttons: restore keeping the person's changes, and (with conflicts) including them. */
  choices: { title: string; includeConflicts: boolean }[];
}

/** A dry run (with `includeConflicts`) as the modal question before a restore. */
export function planQuestion(title: string, plan: SessionRestoreResult): PlanQuestion {
  const conflicts = new Set(plan.conflicts);
  const plain = plan.restored.filter((f) => !conflicts.has(f));
  const lines = [plain.length > 0 ? `Restores: ${plain.join(", ")}` : "Restores nothing of the agent's."];
  if (plan.conflicts.length > 0) {
    lines.push(`Conflict: changed by you since, kept unless you include them: ${plan.conflicts.join(", ")}`);
  }
  if (plan.skipped.length > 0) {
    lines.push(`Not restored (too large, not text, or now a symbolic link): ${plan.skipped.join(", ")}`);
  }
  if ((plan.notCovered ?? []).length > 0) {
    lines.push(`Not covered by undo (changed by the agent, left out of checkpoints): ${(plan.notCovered ?? []).join(", ")}`);
  }
  const choices: PlanQuestion["choices"] = [];
  if (plain.length > 0) choices.push({ title: `Restore ${plain.length} File(s)`, includeConflicts: false });
  if (plan.conflicts.length > 0) {
    choices.push({ title: `Restore ${plan.restored.length} File(s) Including My Changes`, includeConflicts: true });
  }
  return { message: `${title}?`, detail: lines.join("\n"), plain, choices };
}

/** What a restore did, for a notification. */
export function restoreOutcome(title: string, result: SessionRestoreResult, includedConflicts: boolean): string {
  let text = `${title}: ${result.message}`;
  if (result.conflicts.length > 0 && !includedConflicts) text += ` Kept your changes to ${result.conflicts.join(", ")}.`;
  return text;
}

/** "Compacted the conversation: 51234 → 9120 tokens (older turns summarised)". */
export function compactMessage(result: SessionCompactResult): string {
  return `Compacted the conversation: ${result.tokensBefore} → ${result.tokensAfter} tokens${
    result.summarized ? " (older turns summarised)" : ""
  }`;
}
