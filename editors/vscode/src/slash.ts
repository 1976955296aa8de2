// `/` completion in the panel's prompt: the slash commands the sidecar lists
// (`tandem/commands/list`: `/context`, `/init`, the project's and your own), matched against
// what is typed while the prompt's first word starts with `/`. Pure, shared by the webview and
// the unit tests; the sidecar expands a command when the prompt is sent.

/** A command as the panel offers it. */
export interface SlashCommand {
  name: string;
  description: string;
  /** What to type after the name (`<file> [focus]`). */
  hint?: string;
}

/** The commands of a `tandem/commands/list` result (anything malformed left out). */
export function commandsOf(result: unknown): SlashCommand[] {
  const list = (result as { commands?: unknown } | undefined)?.commands;
  if (!Array.isArray(list)) return [];
  const out: SlashCommand[] = [];
  for (const raw of list) {
    const c = raw as { name?: unknown; description?: unknown; input?: { hint?: unknown } | null };
    if (typeof c?.name !== "string" || c.name === "" || c.name.length > 100) continue;
    const description = typeof c.description === "string" ? c.description.slice(0, 500) : "";
    const hint = typeof c.input?.hint === "string" ? c.input.hint.slice(0, 200) : undefined;
    out.push({ name: c.name, description, ...(hint ? { hint } : {}) });
  }
  return out;
}

/** The name being typed when the text before the caret is `/name` at the very start (no space yet). */
export function slashAt(beforeCaret: string): string | undefined {
  const match = /^\/([^\s/]*)$/.exec(beforeCaret);
  return match ? match[1] : undefined;
}

/** The commands whose name starts with `query`, in the sidecar's order. */
export function matchCommands(query: string, commands: readonly SlashCommand[]): SlashCommand[] {
  return commands.filter((c) => c.name.startsWith(query));
}
