//! The modules inside each crate form layers too: no import circle of four or more files.
//!
//! For every crate under `server/` this test reads each source file of its library (or binary)
//! tree, finds the modules it names (`use crate::…`, `use super::…`, `self::`, a child module,
//! and the same prefixes in paths written inline), resolves re-exports (`pub use`) to the file
//! that defines the item, and fails on any strongly connected component of the resulting file
//! graph that holds four files or more. A circle that large means no file of it can be read,
//! changed or tested without the others; break it by handing a helper what it reads instead of
//! the value that owns it, or by moving the shared type down into a module of its own.
//! Unit-test modules (`#[cfg(test)] mod tests { … }`) are left out: they import their parent.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type Res<T> = Result<T, String>;

/// The largest circle allowed: a file with its helper and a shared type.
const MAX_CIRCLE: usize = 3;

/// A module path inside a crate (`["agent", "turn"]`); the root is empty.
type ModPath = Vec<String>;

/// One crate's source tree: module path → file, and each file's text with tests, comments and
/// literals removed.
struct Tree {
    files: BTreeMap<ModPath, PathBuf>,
    code: BTreeMap<ModPath, String>,
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Code without comments, string and char literals (replaced by spaces), so that a path in a
/// doc comment or a message is not an import.
fn strip(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            i += end;
        } else if rest.starts_with("/*") {
            let mut depth = 0;
            let mut j = 0;
            while j < rest.len() {
                if rest[j..].starts_with("/*") {
                    depth += 1;
                    j += 2;
                } else if rest[j..].starts_with("*/") {
                    depth -= 1;
                    j += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    j += 1;
                }
            }
            i += j;
            out.push(' ');
        } else if let Some(len) = raw_string(rest) {
            i += len;
            out.push_str("\"\"");
        } else if bytes[i] == b'"' {
            let mut j = 1;
            while j < rest.len() && bytes[i + j] != b'"' {
                j += if bytes[i + j] == b'\\' { 2 } else { 1 };
            }
            i += (j + 1).min(rest.len());
            out.push_str("\"\"");
        } else if bytes[i] == b'\'' {
            // A char literal ('x', '\n', '\u{1F600}', '"'), else a lifetime.
            let len = if rest[1..].starts_with('\\') {
                rest[2..].find('\'').map(|end| end + 3)
            } else {
                rest[1..]
                    .chars()
                    .next()
                    .filter(|c| rest[1 + c.len_utf8()..].starts_with('\''))
                    .map(|c| c.len_utf8() + 2)
            };
            match len {
                Some(len) => {
                    i += len;
                    out.push_str("' '");
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The length of a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) at the start of `text`.
fn raw_string(text: &str) -> Option<usize> {
    let body = text.strip_prefix("br").or_else(|| text.strip_prefix('r'))?;
    let hashes = body.len() - body.trim_start_matches('#').len();
    let after = body[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = after.find(&close)?;
    Some(text.len() - after.len() + end + close.len())
}

/// `code` without its `#[cfg(test)] mod name { … }` blocks.
fn without_test_modules(code: &str) -> String {
    let mut out = code.to_owned();
    while let Some(at) = find_test_module(&out) {
        let open = at.1;
        let mut depth = 0;
        let mut end = out.len();
        for (i, b) in out.bytes().enumerate().skip(open) {
            match b {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        out.replace_range(at.0..end, "");
    }
    out
}

/// Where a `#[cfg(test)]` inline module starts, and its opening brace.
fn find_test_module(code: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(found) = code[from..].find("#[cfg(test)]") {
        let start = from + found;
        let after = &code[start + "#[cfg(test)]".len()..];
        let trimmed = after.trim_start();
        let rest = trimmed.strip_prefix("pub(crate) ").or_else(|| trimmed.strip_prefix("pub ")).unwrap_or(trimmed);
        if let Some(rest) = rest.strip_prefix("mod ") {
            let brace = rest.find('{');
            let semi = rest.find(';');
            if let (Some(brace), semi) = (brace, semi)
                && semi.is_none_or(|semi| brace < semi)
            {
                return Some((start, code.len() - rest.len() + brace));
            }
        }
        from = start + 1;
    }
    None
}

/// The module trees of a crate: one per root file (`lib.rs`, `main.rs`).
fn trees(src: &Path) -> Res<Vec<Tree>> {
    let mut trees = Vec::new();
    for root in ["lib.rs", "main.rs"] {
        if !src.join(root).is_file() {
            continue;
        }
        let mut tree = Tree { files: BTreeMap::new(), code: BTreeMap::new() };
        load(&mut tree, src, &src.join(root), Vec::new())?;
        trees.push(tree);
    }
    Ok(trees)
}

/// Reads the module at `file` and, recursively, the file modules it declares (`mod name;`).
fn load(tree: &mut Tree, src: &Path, file: &Path, path: ModPath) -> Res<()> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let code = without_test_modules(&strip(&text));
    // Children of `a.rs` or `a/mod.rs` live in `a/`; of the root, in `src/`.
    let dir = if path.is_empty() || file.file_name().is_some_and(|n| n == "mod.rs") {
        file.parent().map_or_else(|| src.to_owned(), Path::to_owned)
    } else {
        file.with_extension("")
    };
    for child in declared_modules(&code) {
        let candidates = [dir.join(format!("{child}.rs")), dir.join(&child).join("mod.rs")];
        let Some(found) = candidates.into_iter().find(|c| c.is_file()) else { continue };
        let mut child_path = path.clone();
        child_path.push(child);
        load(tree, src, &found, child_path)?;
    }
    tree.files.insert(path.clone(), file.to_owned());
    tree.code.insert(path, code);
    Ok(())
}

/// The names of `mod name;` declarations (file modules).
fn declared_modules(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for statement in code.split([';', '{', '}']) {
        let words: Vec<&str> = statement.split_whitespace().filter(|w| !w.starts_with("#[")).collect();
        let Some(at) = words.iter().position(|w| *w == "mod") else { continue };
        if at + 2 == words.len() && words[..at].iter().all(|w| w.starts_with("pub")) {
            found.push(words[at + 1].to_owned());
        }
    }
    found
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every path a file names, each expanded from its `use` tree, relative to the file's module:
/// (absolute module path prefix, remaining segments).
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    // `use` statements, with their brace trees.
    let mut from = 0;
    while let Some(at) = code[from..].find("use ") {
        let start = from + at;
        from = start + 4;
        if start > 0 && code[..start].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let Some(end) = code[start..].find(';') else { break };
        let mut paths = Vec::new();
        expand(&compact(&code[start + 4..start + end]), &mut Vec::new(), &mut paths);
        found.extend(paths.into_iter().map(|(path, _)| path));
    }
    // Inline paths starting with `crate::`, `super::` or `self::`.
    for prefix in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = code[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            if start > 0 && code[..start].chars().next_back().is_some_and(|c| is_ident(c) || c == ':') {
                continue;
            }
            let path: String = code[start..].chars().take_while(|c| is_ident(*c) || *c == ':').collect();
            if path.ends_with("::") {
                continue; // a `use` tree (`crate::{a, b}`), read above
            }
            found.push(path.split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect());
        }
    }
    found
}

/// A `use` tree without whitespace, a rename after `@` (`a::{b as c}` → `a::{b@c}`).
fn compact(tree: &str) -> String {
    let spaced = tree.replace('{', " { ").replace('}', " } ").replace(',', " , ");
    let mut words = spaced.split_whitespace();
    let mut out = String::new();
    while let Some(word) = words.next() {
        if word == "as" {
            // The alias, kept after `@` for re-exports (`pub use a::b as c;` exports `c`).
            out.push('@');
            out.push_str(words.next().unwrap_or_default());
        } else {
            out.push_str(word);
        }
    }
    out
}

/// Expands a `use` tree (`a::{b,c::d@e}`, as [`compact`] writes it) into its paths, each with
/// the name it is imported as when renamed.
fn expand(tree: &str, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, Option<String>)>) {
    let tree = tree.trim_start_matches("::");
    if let Some(brace) = tree.find('{') {
        let head: Vec<String> = tree[..brace].split("::").filter(|s| !s.is_empty()).map(str::to_owned).collect();
        let inner = tree[brace + 1..].strip_suffix('}').unwrap_or(&tree[brace + 1..]);
        let len = prefix.len();
        prefix.extend(head);
        let mut depth = 0;
        let mut part = String::new();
        for c in inner.chars().chain(std::iter::once(',')) {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    if !part.is_empty() {
                        expand(&part, prefix, out);
                    }
                    part.clear();
                    continue;
                }
                _ => {}
            }
            part.push(c);
        }
        prefix.truncate(len);
    } else {
        let (tree, alias) = tree.split_once('@').map_or((tree, None), |(t, a)| (t, Some(a.to_owned())));
        let mut path = prefix.clone();
        path.extend(tree.split("::").filter(|s| !s.is_empty()).map(str::to_owned));
        out.push((path, alias));
    }
}

/// The `pub use` re-exports of a module: name → the path it stands for (absolute).
fn reexports(tree: &Tree, module: &ModPath) -> BTreeMap<String, ModPath> {
    let mut found = BTreeMap::new();
    let Some(code) = tree.code.get(module) else { return found };
    for statement in code.split(';') {
        let statement = statement.trim();
        let Some(at) = statement.find("use ") else { continue };
        if !statement[..at].trim_start().starts_with("pub") {
            continue;
        }
        let mut paths = Vec::new();
        expand(&compact(&statement[at + 4..]), &mut Vec::new(), &mut paths);
        for (path, alias) in paths {
            let name = alias.or_else(|| path.last().cloned());
            if let (Some(name), Some(absolute)) = (name, absolute(tree, module, &path)) {
                found.insert(name, absolute);
            }
        }
    }
    found
}

/// A path named in `module` as an absolute path in the crate, or `None` for one outside it.
fn absolute(tree: &Tree, module: &ModPath, path: &[String]) -> Option<ModPath> {
    let mut base = module.clone();
    let mut rest = path;
    match rest.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &rest[1..];
        }
        Some("self") => rest = &rest[1..],
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        Some(first) => {
            let mut child = module.clone();
            child.push(first.to_owned());
            if !tree.files.contains_key(&child) {
                return None;
            }
        }
        None => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The file module an absolute path lands in, following re-exports.
fn resolve(tree: &Tree, path: &[String], depth: usize) -> Option<ModPath> {
    let mut module = Vec::new();
    for (i, segment) in path.iter().enumerate() {
        let mut child = module.clone();
        child.push(segment.clone());
        if tree.files.contains_key(&child) {
            module = child;
            continue;
        }
        if depth < 8
            && let Some(target) = reexports(tree, &module).get(segment)
            && target.as_slice() != &path[..=i]
        {
            let mut target = target.clone();
            target.extend(path[i + 1..].iter().cloned());
            return resolve(tree, &target, depth + 1);
        }
        break;
    }
    Some(module)
}

/// The file graph of a tree: module → the modules it imports from.
fn graph(tree: &Tree) -> BTreeMap<ModPath, BTreeSet<ModPath>> {
    let mut graph = BTreeMap::new();
    for (module, code) in &tree.code {
        let mut edges = BTreeSet::new();
        // The root's re-exports are the crate's API, not imports: the root declares every
        // module anyway. What the root itself defines and uses still counts.
        let exported = if module.is_empty() { reexports(tree, module) } else { BTreeMap::new() };
        for path in paths(code) {
            let Some(absolute) = absolute(tree, module, &path) else { continue };
            if exported.values().any(|target| *target == absolute) {
                continue;
            }
            if let Some(target) = resolve(tree, &absolute, 0)
                && &target != module
            {
                edges.insert(target);
            }
        }
        graph.insert(module.clone(), edges);
    }
    graph
}

/// The strongly connected components of `graph` (Tarjan), each sorted.
fn components(graph: &BTreeMap<ModPath, BTreeSet<ModPath>>) -> Vec<Vec<ModPath>> {
    struct State<'a> {
        graph: &'a BTreeMap<ModPath, BTreeSet<ModPath>>,
        index: BTreeMap<&'a ModPath, usize>,
        low: BTreeMap<&'a ModPath, usize>,
        stack: Vec<&'a ModPath>,
        on_stack: BTreeSet<&'a ModPath>,
        out: Vec<Vec<ModPath>>,
    }
    fn visit<'a>(s: &mut State<'a>, node: &'a ModPath) {
        let n = s.index.len();
        s.index.insert(node, n);
        s.low.insert(node, n);
        s.stack.push(node);
        s.on_stack.insert(node);
        for next in s.graph.get(node).into_iter().flatten() {
            let Some((next, _)) = s.graph.get_key_value(next) else { continue };
            if !s.index.contains_key(next) {
                visit(s, next);
                let low = s.low[node].min(s.low[next]);
                s.low.insert(node, low);
            } else if s.on_stack.contains(next) {
                let low = s.low[node].min(s.index[next]);
                s.low.insert(node, low);
            }
        }
        if s.low[node] == s.index[node] {
            let mut component = Vec::new();
            while let Some(top) = s.stack.pop() {
                s.on_stack.remove(top);
                component.push(top.clone());
                if top == node {
                    break;
                }
            }
            component.sort();
            s.out.push(component);
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for node in graph.keys() {
        if !state.index.contains_key(node) {
            visit(&mut state, node);
        }
    }
    state.out
}

/// The circles of more than [`MAX_CIRCLE`] files in the crates under `server`, named by file.
fn circles(server: &Path) -> Res<Vec<String>> {
    let mut found = Vec::new();
    let entries = std::fs::read_dir(server).map_err(|e| format!("{}: {e}", server.display()))?;
    let mut crates: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.join("Cargo.toml").is_file()).collect();
    crates.sort();
    for krate in crates {
        for tree in trees(&krate.join("src"))? {
            for component in components(&graph(&tree)) {
                if component.len() > MAX_CIRCLE {
                    let names: Vec<String> = component
                        .iter()
                        .filter_map(|m| tree.files.get(m))
                        .map(|f| f.strip_prefix(server).unwrap_or(f).display().to_string())
                        .collect();
                    found.push(format!("{} files import each other: {}", names.len(), names.join(", ")));
                }
            }
        }
    }
    Ok(found)
}

#[test]
fn no_crate_has_an_import_circle_of_four_files_or_more() -> Res<()> {
    let found = circles(&repo_root().join("server"))?;
    assert!(
        found.is_empty(),
        "import circles of more than {MAX_CIRCLE} files (hand helpers what they read, or move the shared \
         type into a module of its own; ARCHITECTURE.md, Layers):\n{}",
        found.join("\n")
    );
    Ok(())
}

#[test]
fn the_check_finds_a_circle_through_use_trees_super_and_reexports() -> Res<()> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let src = dir.path().join("src");
    std::fs::create_dir_all(src.join("b")).map_err(|e| e.to_string())?;
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\npub use c::Config;\n// use crate::a;\n"),
        ("a.rs", "use crate::{b::{inner::X}, Config};\n"),
        ("b.rs", "mod inner;\n"),
        ("b/inner.rs", "pub struct X;\nfn f() { let _ = super::super::d_free(); \"crate::a\"; }\n"),
        ("c.rs", "pub struct Config;\n#[cfg(test)]\nmod tests { use crate::a::Y; }\nfn g() { crate::a::h(); }\n"),
    ];
    for (name, text) in files {
        std::fs::write(src.join(name), text).map_err(|e| e.to_string())?;
    }
    let trees = trees(&src)?;
    let graph = graph(&trees[0]);
    let m = |s: &str| -> ModPath { s.split('/').filter(|s| !s.is_empty()).map(str::to_owned).collect() };
    assert_eq!(graph[&m("a")], BTreeSet::from([m("b/inner"), m("c")]));
    assert_eq!(graph[&m("b/inner")], BTreeSet::from([m("")]), "super::super is the root");
    assert_eq!(graph[&m("c")], BTreeSet::from([m("a")]), "the test module and strings are left out");
    let circle: Vec<_> = components(&graph).into_iter().filter(|c| c.len() > 1).collect();
    assert_eq!(circle, [vec![m("a"), m("c")]]);
    Ok(())
}
