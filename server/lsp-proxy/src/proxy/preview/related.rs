//! The files a preview looks at besides the changed ones: those that reference what a change
//! touches. A server reports diagnostics only for the documents it has open (pyright by
//! default, typescript-language-server always), so a caller that a change breaks shows up only
//! when the preview opens it too.
//!
//! Found through the server: the symbols of the changed file whose ranges meet the changed
//! lines (`textDocument/documentSymbol` of the current text), then their references
//! (`textDocument/references`). When the server offers neither, or finds nothing, the importers
//! of the changed module: the project's files of the same language that name its file stem as a
//! word.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use async_lsp::lsp_types::Url;
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::server::{Server, raw};

/// Symbols of one changed file whose references are asked for, innermost first.
const MAX_SYMBOLS: usize = 8;
/// Files looked at when searching for importers by name.
const MAX_SCANNED: usize = 5_000;
/// Larger files are not searched for importers.
const MAX_SCANNED_BYTES: u64 = 512 * 1024;
/// Folders never searched for importers (dependencies, builds, caches).
const SKIPPED_DIRS: &[&str] = &["node_modules", "target", "__pycache__", "venv", "dist", "build", "out"];

/// The lines of `old` that `new` changes, as an inclusive range of line numbers of `old` (an
/// insertion: the line it goes before). `None` when the texts are the same.
pub(super) fn changed_lines(old: &str, new: &str) -> Option<(u32, u32)> {
    if old == new {
        return None;
    }
    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
    let prefix = old_lines.iter().zip(&new_lines).take_while(|(a, b)| a == b).count();
    let room = old_lines.len().min(new_lines.len()) - prefix;
    let suffix = old_lines.iter().rev().zip(new_lines.iter().rev()).take(room).take_while(|(a, b)| a == b).count();
    let first = prefix;
    let last = (old_lines.len() - suffix).saturating_sub(1).max(first);
    let line = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
    Some((line(first), line(last)))
}

/// The selection starts of the symbols in a `documentSymbol` answer (hierarchical
/// `DocumentSymbol[]` or flat `SymbolInformation[]`) whose ranges meet lines `lines`, the most
/// deeply nested first; a symbol spanning the whole file (a module) is left out.
pub(super) fn touched_symbols(answer: &Value, lines: (u32, u32), file_lines: u32) -> Vec<Value> {
    let mut found: Vec<(usize, Value)> = Vec::new();
    collect(answer, lines, file_lines, 0, &mut found);
    found.sort_by_key(|(depth, _)| std::cmp::Reverse(*depth));
    found.into_iter().map(|(_, position)| position).take(MAX_SYMBOLS).collect()
}

fn collect(items: &Value, (first, last): (u32, u32), file_lines: u32, depth: usize, out: &mut Vec<(usize, Value)>) {
    let Some(items) = items.as_array() else { return };
    for item in items {
        let range = item.get("range").or_else(|| item.pointer("/location/range"));
        let Some(range) = range else { continue };
        let line = |at: &str| range.pointer(at).and_then(Value::as_u64).map(|n| u32::try_from(n).unwrap_or(u32::MAX));
        let (Some(start), Some(end)) = (line("/start/line"), line("/end/line")) else { continue };
        let whole_file = start == 0 && end + 1 >= file_lines;
        if start <= last && end >= first && !whole_file {
            let selection = item.get("selectionRange").unwrap_or(range);
            if let Some(position) = selection.get("start") {
                out.push((depth, position.clone()));
            }
        }
        if let Some(children) = item.get("children") {
            collect(children, (first, last), file_lines, depth + 1, out);
        }
    }
}

/// The files in `root` other than `skip` that reference the symbols at `positions` of `uri`
/// (as the server holds it), at most `limit`, asked until `deadline`. `None`: the server could
/// not say (no such capability, or every request failed).
pub(super) async fn references(
    server: &Server,
    uri: &Url,
    positions: &[Value],
    root: &Path,
    skip: &HashSet<PathBuf>,
    limit: usize,
    deadline: Instant,
) -> Option<Vec<PathBuf>> {
    if !server.supports("textDocument/references") {
        return None;
    }
    let mut answered = false;
    let mut found = Vec::new();
    for position in positions {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || found.len() >= limit {
            break;
        }
        let params = json!({
            "textDocument": { "uri": uri },
            "position": position,
            "context": { "includeDeclaration": false },
        });
        let Ok(answer) = server.request::<raw::References>(params, left).await else { continue };
        answered = true;
        for location in answer.as_array().into_iter().flatten() {
            let Some(path) =
                location["uri"].as_str().and_then(|u| Url::parse(u).ok()).and_then(|u| u.to_file_path().ok())
            else {
                continue;
            };
            if found.len() < limit && path.starts_with(root) && !skip.contains(&path) && !found.contains(&path) {
                found.push(path);
            }
        }
    }
    answered.then_some(found)
}

/// The files under `root` (not in `skip`, of the `extensions`) whose text names `stem` as a
/// word: the likely importers of the module `stem`, at most `limit`, searched until `deadline`.
/// Hidden folders, dependency and build folders, and large files are not searched.
pub(super) fn importers(
    root: &Path,
    stem: &str,
    extensions: &[String],
    skip: &HashSet<PathBuf>,
    limit: usize,
    deadline: Instant,
) -> Vec<PathBuf> {
    let mut found = Vec::new();
    if stem.is_empty() || limit == 0 {
        return found;
    }
    let mut pending = vec![root.to_path_buf()];
    let mut scanned = 0;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            if found.len() >= limit || scanned >= MAX_SCANNED || Instant::now() >= deadline {
                return found;
            }
            let name = entry.file_name();
            let name = name.to_string_lossy();
            // Never followed: a symlink may lead out of the project.
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_ref()) {
                    pending.push(entry.path());
                }
                continue;
            }
            let path = entry.path();
            let served = path.extension().and_then(|e| e.to_str()).is_some_and(|e| extensions.iter().any(|x| x == e));
            if !kind.is_file() || !served || skip.contains(&path) {
                continue;
            }
            scanned += 1;
            if entry.metadata().is_ok_and(|m| m.len() <= MAX_SCANNED_BYTES)
                && std::fs::read_to_string(&path).is_ok_and(|text| names_word(&text, stem))
            {
                found.push(path);
            }
        }
    }
    found
}

/// Whether `text` has `word` with no identifier character on either side.
fn names_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_' || c == '$';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(ident) && !after.is_some_and(ident)
    })
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    #[test]
    fn changed_lines_cover_replacements_insertions_and_deletions() {
        assert_eq!(changed_lines("a\nb\nc\n", "a\nB\nc\n"), Some((1, 1)));
        assert_eq!(changed_lines("a\nb\nc\n", "a\nb\nx\nc\n"), Some((2, 2)));
        assert_eq!(changed_lines("a\nb\nc\n", "a\nc\n"), Some((1, 1)));
        assert_eq!(changed_lines("a\nb\n", "a\nb\n"), None);
        assert_eq!(changed_lines("", "x\n"), Some((0, 0)));
        assert_eq!(changed_lines("a\n", ""), Some((0, 0)));
    }

    proptest! {
        /// Every line outside the range is the same in both texts, before and after it.
        #[test]
        fn lines_outside_the_changed_range_are_unchanged(
            common in prop::collection::vec("[a-c]{0,2}\n", 0..8),
            at in 0usize..8,
            removed in prop::collection::vec("[a-c]{0,2}\n", 0..3),
            added in prop::collection::vec("[a-c]{0,2}\n", 0..3),
        ) {
            let at = at.min(common.len());
            let old: String = common[..at].iter().chain(&removed).chain(&common[at..]).cloned().collect();
            let new: String = common[..at].iter().chain(&added).chain(&common[at..]).cloned().collect();
            match changed_lines(&old, &new) {
                None => prop_assert_eq!(&old, &new),
                Some((first, last)) => {
                    let old_lines: Vec<&str> = old.split_inclusive('\n').collect();
                    let new_lines: Vec<&str> = new.split_inclusive('\n').collect();
                    let (first, last) = (first as usize, last as usize);
                    prop_assert!(first <= last);
                    prop_assert_eq!(&old_lines[..first.min(old_lines.len())], &new_lines[..first.min(new_lines.len())]);
                    let tail = old_lines.len().saturating_sub(last + 1);
                    prop_assert!(tail <= new_lines.len());
                    prop_assert_eq!(&old_lines[old_lines.len() - tail..], &new_lines[new_lines.len() - tail..]);
                    // The range holds every line that differs.
                    let reordered: Vec<&str> = old_lines[..first.min(old_lines.len())]
                        .iter()
                        .chain(&new_lines[first.min(new_lines.len())..new_lines.len() - tail])
                        .chain(&old_lines[old_lines.len() - tail..])
                        .copied()
                        .collect();
                    prop_assert_eq!(reordered.concat(), new.clone());
                }
            }
        }
    }

    #[test]
    fn the_innermost_symbols_on_the_changed_lines_come_first_and_the_module_never() {
        let range =
            |a: u32, b: u32| json!({ "start": { "line": a, "character": 0 }, "end": { "line": b, "character": 0 } });
        let answer = json!([
            { "name": "module", "range": range(0, 40), "selectionRange": range(0, 0) },
            { "name": "Counter", "range": range(2, 10), "selectionRange": range(2, 2), "children": [
                { "name": "increment", "range": range(5, 6), "selectionRange": { "start": { "line": 5, "character": 8 }, "end": { "line": 5, "character": 17 } } },
                { "name": "reset", "range": range(8, 9), "selectionRange": range(8, 8) },
            ] },
            { "name": "total", "range": range(12, 14), "selectionRange": range(12, 12) },
        ]);
        let found = touched_symbols(&answer, (5, 5), 41);
        assert_eq!(found, vec![json!({ "line": 5, "character": 8 }), json!({ "line": 2, "character": 0 })]);
        assert_eq!(touched_symbols(&answer, (11, 11), 41), Vec::<Value>::new());
        // Flat SymbolInformation.
        let flat = json!([{ "name": "total", "location": { "uri": "file:///x", "range": range(12, 14) } }]);
        assert_eq!(touched_symbols(&flat, (13, 13), 41), vec![json!({ "line": 12, "character": 0 })]);
    }

    #[test]
    fn importers_are_files_of_the_language_naming_the_stem_as_a_word() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let root = dir.path();
        std::fs::create_dir_all(root.join("pkg"))?;
        std::fs::create_dir_all(root.join("node_modules/dep"))?;
        std::fs::create_dir_all(root.join(".hidden"))?;
        std::fs::write(root.join("calc.py"), "def total(): ...\n")?;
        std::fs::write(root.join("main.py"), "from calc import total\n")?;
        std::fs::write(root.join("pkg/use.py"), "import calc\n")?;
        std::fs::write(root.join("other.py"), "calculator = 1\n")?;
        std::fs::write(root.join("notes.txt"), "calc\n")?;
        std::fs::write(root.join("node_modules/dep/x.py"), "import calc\n")?;
        std::fs::write(root.join(".hidden/x.py"), "import calc\n")?;
        let skip = HashSet::from([root.join("calc.py")]);
        let far = Instant::now() + std::time::Duration::from_secs(60);
        let mut found = importers(root, "calc", &["py".to_owned()], &skip, 10, far);
        found.sort();
        assert_eq!(found, vec![root.join("main.py"), root.join("pkg/use.py")]);
        assert_eq!(importers(root, "calc", &["py".to_owned()], &skip, 1, far).len(), 1);
        Ok(())
    }

    #[test]
    fn a_word_is_not_part_of_a_longer_name() {
        assert!(names_word("from calc import x", "calc"));
        assert!(names_word("require('./calc')", "calc"));
        assert!(!names_word("calculator", "calc"));
        assert!(!names_word("my_calc", "calc"));
        assert!(!names_word("", "calc"));
    }
}
