// The `@` list's queries, one per keystroke after `@`: files and the special mentions at once, the
// language servers' symbols after a pause. Each query's file search is awaited, and those searches
// can finish in any order; only the newest query still typed may post its list or start a symbol
// search (an older one finishing last would otherwise cancel the newest's symbols and leave the
// list without them).

import type { Mention } from "./messages";

/** The symbol search: one at a time, a newer `schedule` replaces the older one. */
export interface SymbolScheduler {
  schedule(query: string, found: (items: Mention[]) => void): void;
  cancel(): void;
}

export class MentionQueries {
  private newest = 0;

  constructor(
    private readonly find: (query: string) => Promise<Mention[]>,
    private readonly symbols: SymbolScheduler,
    private readonly post: (query: string, items: Mention[]) => void,
    private readonly log: (line: string) => void,
  ) {}

  /** Answers `query`: its files and special mentions, then its symbols (if it is still the newest). */
  async ask(query: string): Promise<void> {
    const mine = ++this.newest;
    let items: Mention[] = [];
    try {
      items = await this.find(query);
    } catch (err) {
      this.log(`@ completion failed: ${err instanceof Error ? err.message : err}`);
    }
    // A newer query came (or the list closed) while the files were searched: it is the one to answer.
    if (mine !== this.newest) return;
    this.post(query, items);
    this.symbols.schedule(query, (found) => this.post(query, [...items, ...found]));
  }

  /** Forgets every query asked so far (the list closed: a mention was chosen or the prompt sent). */
  cancel(): void {
    this.newest++;
    this.symbols.cancel();
  }
}
