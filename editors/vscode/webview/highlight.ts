// Syntax highlighting of an answer's code blocks: highlight.js, bundled into media/panel.js with a
// fixed set of common languages (no remote assets; the panel's CSP allows only its own files).
// highlight.js escapes the code it wraps in spans, so the HTML it returns is safe to insert.

import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import kotlin from "highlight.js/lib/languages/kotlin";
import lua from "highlight.js/lib/languages/lua";
import markdown from "highlight.js/lib/languages/markdown";
import php from "highlight.js/lib/languages/php";
import python from "highlight.js/lib/languages/python";
import ruby from "highlight.js/lib/languages/ruby";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import swift from "highlight.js/lib/languages/swift";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";

const languages = {
  bash, c, cpp, csharp, css, diff, go, ini, java, javascript, json, kotlin, lua, markdown, php, python, ruby,
  rust, shell, sql, swift, typescript, xml, yaml,
};
for (const [name, language] of Object.entries(languages)) hljs.registerLanguage(name, language);
hljs.registerAliases(["toml"], { languageName: "ini" });
hljs.registerAliases(["sh", "zsh"], { languageName: "bash" });

/** Guessing a block's language costs time; past this size an unnamed block stays plain. */
const MAX_AUTO_CHARS = 20_000;

/**
 * The highlighted HTML of `code` (its language from the fence's info string, else guessed), or
 * `""` to let markdown-it escape it plainly.
 */
export function highlight(code: string, info: string): string {
  const lang = info.trim().split(/\s+/)[0]?.toLowerCase() ?? "";
  try {
    if (lang && hljs.getLanguage(lang)) return hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
    if (!lang && code.length <= MAX_AUTO_CHARS) return hljs.highlightAuto(code).value;
  } catch {
    // A grammar that throws leaves the block plain.
  }
  return "";
}
