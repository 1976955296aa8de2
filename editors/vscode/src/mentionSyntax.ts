// What `@` means in the prompt's text, shared by the panel's script and the extension (no `vscode`
// import): the mention being typed at the caret, and the web addresses (`@https://…`) in a prompt.

/** Characters that end a URL typed in a sentence rather than belong to it. */
const TRAILING_PUNCTUATION = /[.,;:!?)\]}'"]+$/;

/**
 * The mention typed just before the caret: the text after its `@` (up to the caret) and where the
 * `@` is. An `@` inside a word (`me@example.com`) is not one.
 */
export function mentionAt(before: string): { query: string; start: number } | undefined {
  const match = /(^|\s)@([^\s@]*)$/.exec(before);
  return match ? { query: match[2]!, start: before.length - match[2]!.length - 1 } : undefined;
}

/** `query` as a web address to attach (`http` or `https` with a host), or `undefined`. */
export function webUrl(query: string): string | undefined {
  if (!/^https?:\/\//i.test(query)) return undefined;
  const text = query.replace(TRAILING_PUNCTUATION, "");
  try {
    const url = new URL(text);
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") return undefined;
    return text;
  } catch {
    return undefined;
  }
}

/** The web addresses mentioned in a prompt (`@https://…`), each once, in the order written. */
export function typedUrls(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?:^|\s)@(https?:\/\/\S+)/gi)) {
    const url = webUrl(match[1]!);
    if (url && !found.includes(url)) found.push(url);
  }
  return found;
}
