//! A source file's leading doc comment, by the comment conventions of its language. Its
//! symbols come from the syntax tree (`symbols_of` in `lib.rs`).

/// A language whose doc comments are known.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doc_comments_per_language() {
        let cases = [
            ("lib.rs", "//! Parses things.\n//! Fast.\n\nuse x;\n", "Parses things. Fast."),
            (
                "tool.py",
                "#!/usr/bin/env python3\n\"\"\"Command-line helper.\n\nMore text.\n\"\"\"\n",
                "Command-line helper.",
            ),
            ("index.ts", "/**\n * Client for the API.\n */\nexport interface Options {}\n", "Client for the API."),
            ("server.go", "// Package server serves HTTP.\npackage server\n", "Package server serves HTTP."),
            ("buf.c", "/* A growable byte buffer. */\n#include <stdlib.h>\n", "A growable byte buffer."),
            ("deploy.sh", "#!/bin/sh\n# Deploys the site.\nset -e\n", "Deploys the site."),
            ("NOTES.md", "# Design notes\n\ntext\n", "Design notes"),
        ];
        for (file, text, want) in cases {
            let language = Language::of(file).unwrap_or_else(|| panic!("{file}"));
            assert_eq!(doc_comment(language, text).as_deref(), Some(want), "{file}");
        }
    }

    #[test]
    fn license_banners_are_not_docs() {
        assert_eq!(doc_comment(Language::C, "/* Copyright 2024 Someone */\nint x;\n"), None);
        assert_eq!(doc_comment(Language::JavaScript, "// SPDX-License-Identifier: MIT\nexport const a = 1;\n"), None);
    }
}
