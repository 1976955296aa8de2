//! A generated source tree of fixed shape: the same files with the same bytes on every machine
//! and every run (a seeded generator), so grep and glob are measured on a tree that does not
//! change as crates are downloaded, beside the cargo registry, which is real but grows.
//!
//! Shape: `dirs` top-level directories of three levels, files of four languages and a few
//! kinds of text, sizes from 200 bytes to 40 KB, a `.gitignore` per top-level directory that
//! hides its `target/`, and a hidden directory per top-level one (both skipped by tandem and rg).

use std::fs;
use std::path::Path;

use super::Res;

/// xorshift64*: small, fast and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const WORDS: &[&str] = &[
    "let",
    "value",
    "config",
    "return",
    "match",
    "error",
    "result",
    "buffer",
    "index",
    "parse",
    "self",
    "impl",
    "struct",
    "handle",
    "request",
    "response",
    "token",
    "stream",
    "deprecated",
    "TODO",
    "fixme",
    "render",
    "cache",
    "options",
    "context",
    "state",
    "update",
    "the",
    "of",
    "and",
    "for",
    "with",
    "main",
    "path",
    "file",
    "line",
];

const KINDS: &[(&str, &str, &str)] = &[
    ("rs", "fn {w}_{n}(x: u32) -> u32 {{", "impl {W} for Item{n} {{"),
    ("py", "def {w}_{n}(self, x):", "class {W}{n}(Base):"),
    ("js", "function {w}{n}(x) {{", "export const {w}{n} = () => {{"),
    ("md", "# {W} {n}", "- {w} {n}"),
];

fn capitalised(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| first.to_uppercase().chain(chars).collect())
}

/// One file of `size` bytes or a little more, in the style of `kind`.
fn file_text(rng: &mut Rng, kind: usize, size: usize) -> String {
    let (_, head, other) = KINDS[kind];
    let mut text = String::with_capacity(size + 128);
    let mut n = 0u64;
    while text.len() < size {
        let word = WORDS[rng.below(WORDS.len() as u64) as usize];
        let template = match rng.below(10) {
            0 => head,
            1 => other,
            _ => "",
        };
        if template.is_empty() {
            let indent = "    ".repeat(rng.below(3) as usize);
            text.push_str(&indent);
            for _ in 0..3 + rng.below(8) {
                text.push_str(WORDS[rng.below(WORDS.len() as u64) as usize]);
                text.push(' ');
            }
        } else {
            text.push_str(
                &template.replace("{w}", word).replace("{W}", &capitalised(word)).replace("{n}", &n.to_string()),
            );
        }
        text.push('\n');
        n += 1;
    }
    text
}

/// Writes the tree of `files` files under `root` (which must exist and be empty).
pub fn generate(root: &Path, files: usize, seed: u64) -> Res<()> {
    let mut rng = Rng(seed | 1);
    let dirs = (files / 500).max(2);
    for d in 0..dirs {
        let top = root.join(format!("pkg{d:03}"));
        fs::create_dir_all(top.join("target")).map_err(|e| e.to_string())?;
        fs::create_dir_all(top.join(".cache")).map_err(|e| e.to_string())?;
        fs::write(top.join(".gitignore"), "target/\n").map_err(|e| e.to_string())?;
        fs::write(top.join("target/build.rs"), "fn main() {}\n").map_err(|e| e.to_string())?;
        fs::write(top.join(".cache/hidden.rs"), "fn main() {}\n").map_err(|e| e.to_string())?;
    }
    for i in 0..files {
        let d = i % dirs;
        let sub = format!("pkg{d:03}/m{}/s{}", rng.below(8), rng.below(6));
        let kind = rng.below(KINDS.len() as u64) as usize;
        // Mostly small files, some large, as in real trees.
        let size = match rng.below(20) {
            0 => 20_000 + rng.below(20_000),
            1..=4 => 4_000 + rng.below(8_000),
            _ => 200 + rng.below(3_800),
        } as usize;
        let dir = root.join(sub);
        fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
        let name = format!("f{i:05}.{}", KINDS[kind].0);
        fs::write(dir.join(name), file_text(&mut rng, kind, size)).map_err(|e| e.to_string())?;
    }
    Ok(())
}
