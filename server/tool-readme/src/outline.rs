//! The plain-text outline of a source file: its leading doc comment and its main top-level
//! symbols, found with per-language patterns. This is the fallback of `generate_readme` for any
//! file a language server cannot describe (see `symbols_of` in `readme/mod.rs`).

use std::sync::LazyLock;

use regex::Regex;

/// A language the outline knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Language {
    Rust,
    Python,
    JavaScript,
    Go,
    C,
    Java,
    Ruby,
    Shell,
    Markdown,
}

impl Language {
    /// By file extension.
    pub(crate) fn of(file_name: &str) -> Option<Self> {
        let ext = file_name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        Some(match ext.as_str() {
            "rs" => Self::Rust,
            "py" | "pyi" => Self::Python,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Self::JavaScript,
            "go" => Self::Go,
            "c" | "h" | "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => Self::C,
            "java" | "kt" | "kts" | "cs" | "scala" => Self::Java,
            "rb" => Self::Ruby,
            "sh" | "bash" | "zsh" => Self::Shell,
            "md" | "markdown" => Self::Markdown,
            _ => return None,
        })
    }
}

/// A top-level symbol: its kind as the language spells it (`fn`, `class`, `impl`, ...) and name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Symbol {
    pub kind: String,
    pub name: String,
}

/// The first paragraph of the file's leading doc comment, as one line.
pub(crate) fn doc_comment(language: Language, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut body: Vec<String> = Vec::new();
    let mut i = 0;
    // Shebangs, `"use strict"`, encoding lines and blank lines come before the doc.
    let skippable = |l: &str| {
        l.is_empty()
            || l.starts_with("#!")
            || l.starts_with("# -*-")
            || l.starts_with("# vim:")
            || matches!(l, "'use strict';" | "\"use strict\";")
    };
    while i < lines.len() && skippable(lines[i]) {
        i += 1;
    }
    let rest = &lines[i..];
    let first = rest.first().copied().unwrap_or_default();
    match language {
        Language::Rust => {
            if first.starts_with("/*!") {
                body = block(rest, "/*!");
            } else {
                body = rest.iter().map_while(|l| l.strip_prefix("//!")).map(|l| l.trim().to_owned()).collect();
            }
        }
        Language::Python => {
            let quote = ["\"\"\"", "'''", "r\"\"\"", "\"", "'"].into_iter().find(|q| first.starts_with(q))?;
            let close = quote.trim_start_matches('r');
            let after = &first[quote.len()..];
            if let Some(end) = after.find(close) {
                body.push(after[..end].to_owned());
            } else {
                body.push(after.to_owned());
                for line in &rest[1..] {
                    if let Some(end) = line.find(close) {
                        body.push(line[..end].to_owned());
                        break;
                    }
                    body.push((*line).to_owned());
                }
            }
        }
        Language::Go => {
            // The comment right above `package`.
            let package = rest.iter().position(|l| l.starts_with("package "))?;
            let above = &rest[..package];
            let start = above.iter().rposition(|l| !l.starts_with("//")).map_or(0, |p| p + 1);
            if start < package {
                body = above[start..].iter().map(|l| l.trim_start_matches("//").trim().to_owned()).collect();
            } else if above.last().is_some_and(|l| l.ends_with("*/")) {
                let open = above.iter().rposition(|l| l.starts_with("/*"))?;
                body = block(&above[open..], "/*");
            }
        }
        Language::JavaScript | Language::C | Language::Java => {
            if first.starts_with("/*") {
                body = block(rest, if first.starts_with("/**") { "/**" } else { "/*" });
            } else {
                body = rest
                    .iter()
                    .map_while(|l| l.strip_prefix("//"))
                    .map(|l| l.trim_start_matches('/').trim().to_owned())
                    .collect();
            }
        }
        Language::Ruby | Language::Shell => {
            body = rest.iter().map_while(|l| l.strip_prefix('#')).map(|l| l.trim().to_owned()).collect();
        }
        Language::Markdown => {
            let heading = rest.iter().find_map(|l| l.strip_prefix('#'))?;
            body.push(heading.trim_start_matches('#').trim().to_owned());
        }
    }
    let paragraph: Vec<&str> =
        body.iter().map(|l| l.trim()).skip_while(|l| l.is_empty()).take_while(|l| !l.is_empty()).collect();
    let joined = paragraph.join(" ");
    // License banners are not documentation.
    let lower = joined.to_ascii_lowercase();
    if joined.is_empty() || lower.starts_with("copyright") || lower.contains("spdx-license-identifier") {
        return None;
    }
    Some(joined)
}

/// The lines of a `/* ... */` block that starts `lines`, without the markers and leading `*`.
fn block(lines: &[&str], open: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let line = if i == 0 { line.strip_prefix(open).unwrap_or(line) } else { line };
        if let Some(end) = line.find("*/") {
            out.push(line[..end].trim_start_matches('*').trim().to_owned());
            break;
        }
        out.push(line.trim_start_matches('*').trim().to_owned());
    }
    out
}

fn patterns(language: Language) -> &'static [Regex] {
    static RUST: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compile(&[
            r#"^(?:pub(?:\([^)]*\))?\s+)?(?:(?:async|const|unsafe|extern\s+"[^"]*")\s+)*(fn|struct|enum|trait|type|union|const|static|mod)\s+([A-Za-z_][A-Za-z0-9_]*)"#,
            r"^(macro_rules)!\s*([A-Za-z_][A-Za-z0-9_]*)",
            r"^(?:unsafe\s+)?(impl)(?:<[^{]*?>)?\s+([^{]+?)\s*(?:where\b.*)?\{?\s*$",
        ])
    });
    static PYTHON: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compile(&[r"^(?:async\s+)?(def|class)\s+([A-Za-z][A-Za-z0-9_]*)", r"^()([A-Z][A-Z0-9_]+)\s*(?::[^=]*)?="])
    });
    static JS: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compile(&[
            r"^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(function\*?|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)",
            r"^export\s+(const|let|var)\s+([A-Za-z_$][\w$]*)",
        ])
    });
    static GO: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compile(&[
            r"^(func)\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)",
            r"^(type)\s+([A-Za-z_]\w*)",
            r"^(const|var)\s+([A-Za-z_]\w*)",
        ])
    });
    static C: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compile(&[
            r"^(?:typedef\s+)?(struct|class|enum|union|namespace)\s+([A-Za-z_]\w*)\s*(?:[:{].*)?$",
            r"^#(define)\s+([A-Za-z_]\w*)",
            r"^(?:(?:static|inline|extern|const|unsigned|signed|virtual)\s+)*[A-Za-z_][\w:<>,]*[\s\*&]+\**()([A-Za-z_][\w:~]*)\s*\([^;]*$",
        ])
    });
    static JAVA: LazyLock<Vec<Regex>> = LazyLock::new(|| {
        compile(&[
            r"^(?:(?:public|private|protected|internal|abstract|final|sealed|static|data|open|partial)\s+)*(class|interface|enum|record|object|struct|fun)\s+([A-Za-z_]\w*)",
        ])
    });
    static RUBY: LazyLock<Vec<Regex>> = LazyLock::new(|| compile(&[r"^(class|module|def)\s+([A-Za-z_][\w:.?!]*)"]));
    static SHELL: LazyLock<Vec<Regex>> =
        LazyLock::new(|| compile(&[r"^(?:(function)\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?"]));
    match language {
        Language::Rust => &RUST,
        Language::Python => &PYTHON,
        Language::JavaScript => &JS,
        Language::Go => &GO,
        Language::C => &C,
        Language::Java => &JAVA,
        Language::Ruby => &RUBY,
        Language::Shell => &SHELL,
        Language::Markdown => &[],
    }
}

fn compile(sources: &[&str]) -> Vec<Regex> {
    sources.iter().filter_map(|s| Regex::new(s).ok()).collect()
}

/// The top-level symbols of `text`: declarations that start at column 0 (so methods and nested
/// items are left out), private Python names too.
pub(crate) fn symbols(language: Language, text: &str) -> Vec<Symbol> {
    let patterns = patterns(language);
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let Some(caps) = patterns.iter().find_map(|p| p.captures(line)) else { continue };
        let kind = caps.get(1).map_or("", |m| m.as_str());
        let name = caps.get(2).map_or("", |m| m.as_str()).trim();
        if name.is_empty() || matches!(name, "tests" | "main" if kind == "mod") || name.starts_with('_') {
            continue;
        }
        let kind = match (language, kind) {
            (Language::Python, "") => "const",
            (Language::C, "") | (Language::Shell, "") => "function",
            (_, kind) => kind,
        };
        out.push(Symbol { kind: kind.to_owned(), name: name.to_owned() });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline(file: &str, text: &str) -> String {
        let language = Language::of(file).unwrap_or_else(|| panic!("{file}"));
        let doc = doc_comment(language, text).unwrap_or_default();
        let symbols: Vec<String> = symbols(language, text).iter().map(|s| format!("{} {}", s.kind, s.name)).collect();
        format!("{doc} | {}", symbols.join(", "))
    }

    #[test]
    fn outlines_per_language() {
        let cases = [
            (
                "lib.rs",
                "//! Parses things.\n//! Fast.\n\nuse x;\npub struct Ast;\npub(crate) async fn parse() {}\nimpl<T: Clone> Display for Ast<T> {\n    fn fmt() {}\n}\nmacro_rules! m {}\n#[cfg(test)]\nmod tests;\n",
                "Parses things. Fast. | struct Ast, fn parse, impl Display for Ast<T>, macro_rules m",
            ),
            (
                "tool.py",
                "#!/usr/bin/env python3\n\"\"\"Command-line helper.\n\nMore text.\n\"\"\"\nMAX_SIZE: int = 3\nclass Runner:\n    def run(self):\n        pass\ndef _private():\n    pass\nasync def main():\n    pass\n",
                "Command-line helper. | const MAX_SIZE, class Runner, def main",
            ),
            (
                "index.ts",
                "/**\n * Client for the API.\n */\nexport interface Options {}\nexport default class Client {}\nexport const VERSION = 1;\nfunction helper() {}\nconst local = 2;\n",
                "Client for the API. | interface Options, class Client, const VERSION, function helper",
            ),
            (
                "server.go",
                "// Package server serves HTTP.\npackage server\n\ntype Server struct{}\nfunc (s *Server) Start() error {}\nfunc New() *Server {}\nconst Port = 80\n",
                "Package server serves HTTP. | type Server, func Start, func New, const Port",
            ),
            (
                "buf.c",
                "/* A growable byte buffer. */\n#include <stdlib.h>\n#define BUF_MIN 16\nstruct buf {\n  char *data;\n};\nstatic int grow(struct buf *b, size_t n) {\n  return 0;\n}\nint buf_len(const struct buf *b);\n",
                "A growable byte buffer. | define BUF_MIN, struct buf, function grow",
            ),
            (
                "deploy.sh",
                "#!/bin/sh\n# Deploys the site.\nset -e\nbuild() {\n  make\n}\n",
                "Deploys the site. | function build",
            ),
            ("NOTES.md", "# Design notes\n\ntext\n", "Design notes | "),
        ];
        for (file, text, want) in cases {
            assert_eq!(outline(file, text), want, "{file}");
        }
    }

    #[test]
    fn license_banners_are_not_docs() {
        assert_eq!(doc_comment(Language::C, "/* Copyright 2024 Someone */\nint x;\n"), None);
        assert_eq!(doc_comment(Language::JavaScript, "// SPDX-License-Identifier: MIT\nexport const a = 1;\n"), None);
    }
}
