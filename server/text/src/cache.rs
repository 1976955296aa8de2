//! The buffer cache: the editor's open documents as versioned ropes, and what each agent
//! session last read of each file.
//!
//! The editor's content wins over the disk: a file open in the editor is read from here,
//! unsaved changes included. Staleness is decided by content hash of the text (BOM excluded),
//! so a read from the editor and a later read from disk compare equal when the text is equal.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

use ropey::Rope;

use crate::{ContentHash, Position, PositionEncoding, TextError, position_to_char};

/// A document open in the editor.
#[derive(Clone, Debug)]
pub struct EditorDocument {
    /// Its text, as the editor has it (line endings included).
    pub rope: Rope,
    /// The editor's version number.
    pub version: i32,
    /// The editor's language id.
    pub language_id: String,
}

impl EditorDocument {
    /// Hash of the text.
    pub fn hash(&self) -> ContentHash {
        ContentHash::of_rope(&self.rope)
    }
}

/// One change of `textDocument/didChange`: a range replacement, or the whole text when `range`
/// is `None`.
#[derive(Clone, Debug)]
pub struct ContentChange {
    /// Start and end, in the negotiated encoding.
    pub range: Option<(Position, Position)>,
    /// Replacement text.
    pub text: String,
}

/// The cache. Cheap to share behind an `Arc`; every method takes `&self`.
#[derive(Debug, Default)]
pub struct BufferCache {
    docs: Mutex<HashMap<PathBuf, EditorDocument>>,
    reads: Mutex<HashMap<(String, PathBuf), ContentHash>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding the lock cannot leave a half-applied change: every mutation below
    // is a single assignment after all fallible work. So a poisoned lock is still consistent.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl BufferCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// `textDocument/didOpen`.
    pub fn open(&self, path: PathBuf, version: i32, language_id: String, text: &str) {
        let doc = EditorDocument { rope: Rope::from_str(text), version, language_id };
        lock(&self.docs).insert(path, doc);
    }

    /// `textDocument/didChange`: applies the changes in order. On error nothing is applied.
    pub fn change(
        &self,
        path: &Path,
        version: i32,
        changes: &[ContentChange],
        encoding: PositionEncoding,
    ) -> Result<(), TextError> {
        let mut docs = lock(&self.docs);
        let doc = docs.get_mut(path).ok_or_else(|| TextError::NotOpen(path.to_path_buf()))?;
        let mut rope = doc.rope.clone();
        for change in changes {
            match change.range {
                None => rope = Rope::from_str(&change.text),
                Some((start, end)) => {
                    let start = position_to_char(&rope, start, encoding)?;
                    let end = position_to_char(&rope, end, encoding)?.max(start);
                    rope.remove(start..end);
                    rope.insert(start, &change.text);
                }
            }
        }
        doc.rope = rope;
        doc.version = version;
        drop(docs);
        Ok(())
    }

    /// `textDocument/didClose`: the disk is the truth again.
    pub fn close(&self, path: &Path) {
        lock(&self.docs).remove(path);
    }

    /// Every open document with its text (what the person sees, unsaved changes included).
    pub fn documents(&self) -> Vec<(PathBuf, String)> {
        lock(&self.docs).iter().map(|(p, d)| (p.clone(), d.rope.to_string())).collect()
    }

    /// The open document at `path`, if any (a cheap clone: ropes share their nodes).
    pub fn get(&self, path: &Path) -> Option<EditorDocument> {
        lock(&self.docs).get(path).cloned()
    }

    /// Records that `session` read (or wrote) `path` when its text had `hash`.
    pub fn record_read(&self, session: &str, path: &Path, hash: ContentHash) {
        lock(&self.reads).insert((session.to_owned(), path.to_path_buf()), hash);
    }

    /// The text hash `session` last saw of `path`.
    pub fn last_read(&self, session: &str, path: &Path) -> Option<ContentHash> {
        lock(&self.reads).get(&(session.to_owned(), path.to_path_buf())).copied()
    }

    /// Every file `session` read or wrote (and has not deleted since), by path.
    pub fn read_by(&self, session: &str) -> Vec<PathBuf> {
        let mut paths: Vec<PathBuf> =
            lock(&self.reads).keys().filter(|(s, _)| s == session).map(|(_, p)| p.clone()).collect();
        paths.sort();
        paths
    }

    /// Forgets what `session` read of `path` (after it deleted the file).
    pub fn forget_read(&self, session: &str, path: &Path) {
        lock(&self.reads).remove(&(session.to_owned(), path.to_path_buf()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(sl: u32, sc: u32, el: u32, ec: u32, text: &str) -> ContentChange {
        let range = Some((Position { line: sl, character: sc }, Position { line: el, character: ec }));
        ContentChange { range, text: text.to_owned() }
    }

    #[test]
    fn incremental_changes_apply_in_order() -> Result<(), TextError> {
        let cache = BufferCache::new();
        let path = PathBuf::from("/w/a.rs");
        cache.open(path.clone(), 1, "rust".into(), "fn main() {\n    let x = 1;\n}\n");
        cache.change(
            &path,
            2,
            &[change(1, 12, 1, 13, "42"), change(0, 3, 0, 7, "start"), change(3, 0, 3, 0, "// 😀 end\n")],
            PositionEncoding::Utf16,
        )?;
        let doc = cache.get(&path).ok_or(TextError::NotOpen(path.clone()))?;
        assert_eq!(doc.rope.to_string(), "fn start() {\n    let x = 42;\n}\n// 😀 end\n");
        assert_eq!(doc.version, 2);
        // An insertion after the astral char, addressed in UTF-16 units.
        cache.change(&path, 3, &[change(3, 5, 3, 5, "!")], PositionEncoding::Utf16)?;
        assert!(cache.get(&path).is_some_and(|d| d.rope.to_string().ends_with("// 😀! end\n")));
        // A bad change leaves the document as it was.
        assert!(
            cache
                .change(&path, 4, &[change(0, 0, 0, 1, "X"), change(99, 0, 99, 0, "")], PositionEncoding::Utf16)
                .is_err()
        );
        assert!(cache.get(&path).is_some_and(|d| d.version == 3 && d.rope.to_string().starts_with("fn start")));
        Ok(())
    }
}
