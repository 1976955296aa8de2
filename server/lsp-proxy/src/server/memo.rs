//! Diagnostics remembered by document text. What a server published for a document's text
//! stays true while nothing else it analyses has changed: the other documents it has open (by
//! content) and the files on disk it was told of. A preview that follows a rejected change finds
//! the current text's diagnostics here, instead of waiting for the server to analyse the
//! restored text again.
//!
//! The one thing this cannot see is a file the server notices changing on disk by itself,
//! between a rejection and the next preview, before it has republished for the document: the
//! server's own publish for the document's current version, when there is one, is preferred.

use std::collections::HashMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use async_lsp::lsp_types::{self as lsp, Url};
use tandem_text::ContentHash;

use super::{SentDoc, Server, lock};

/// Texts remembered per document: a preview sends two (the current and the proposed), and a
/// rejection brings back the first.
const PER_DOCUMENT: usize = 4;

/// The diagnostics of one text of a document, and the state of everything else they were
/// computed against.
pub(super) struct Memo {
    hash: ContentHash,
    world: u64,
    items: Vec<lsp::Diagnostic>,
}

/// A fingerprint of what `path`'s diagnostics depend on besides its own text: every other open
/// document's content, and how many times the server was told of changes to files it does not
/// have open.
pub(super) fn world_except(docs: &HashMap<PathBuf, SentDoc>, path: &Path, disk_epoch: u64) -> u64 {
    let mut world = ContentHash::of(&disk_epoch.to_le_bytes()).0;
    for (other, doc) in docs {
        if other != path {
            world ^= ContentHash::of_parts(&[other.as_os_str().as_bytes(), &doc.hash.0.to_le_bytes()]).0;
        }
    }
    world
}

impl Server {
    /// Remembers what the server published for `uri`, when it is about `version` of `path` and
    /// nothing else changed between sending that version and now.
    pub(super) fn remember(&self, path: &Path, uri: &Url, version: i32) {
        let docs = lock(&self.docs);
        let Some(doc) = docs.get(path).filter(|doc| doc.version == version) else { return };
        let world = world_except(&docs, path, self.disk_epoch.load(Ordering::SeqCst));
        if world != doc.world_at_send {
            return;
        }
        let memo = Memo { hash: doc.hash, world, items: self.published(uri) };
        let mut memos = lock(&self.memo);
        let texts = memos.entry(path.to_path_buf()).or_default();
        texts.retain(|old| old.hash != memo.hash);
        if texts.len() >= PER_DOCUMENT {
            texts.remove(0);
        }
        texts.push(memo);
    }

    /// The diagnostics the server published for the text of `path` it now holds, at an earlier
    /// version, if everything else it analyses is as it was then.
    pub fn remembered(&self, path: &Path) -> Option<Vec<lsp::Diagnostic>> {
        let docs = lock(&self.docs);
        let hash = docs.get(path)?.hash;
        let world = world_except(&docs, path, self.disk_epoch.load(Ordering::SeqCst));
        drop(docs);
        let memos = lock(&self.memo);
        let memo = memos.get(path)?.iter().find(|memo| memo.hash == hash && memo.world == world)?;
        Some(memo.items.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tandem_text::Rope;

    fn doc(text: &str) -> SentDoc {
        SentDoc {
            version: 1,
            hash: ContentHash::of(text.as_bytes()),
            rope: Rope::from_str(text),
            sent_seq: 0,
            saved_flychecks: None,
            world_at_send: 0,
        }
    }

    #[test]
    fn the_world_of_a_document_is_everything_but_its_own_text() {
        let (a, b, c) = (PathBuf::from("/p/a.py"), PathBuf::from("/p/b.py"), PathBuf::from("/p/c.py"));
        let mut docs = HashMap::from([(a.clone(), doc("x = 1\n")), (b.clone(), doc("y = 2\n"))]);
        let before = world_except(&docs, &a, 0);
        docs.insert(a.clone(), doc("x = 'changed'\n"));
        assert_eq!(world_except(&docs, &a, 0), before, "its own text is not part of its world");
        docs.insert(b.clone(), doc("y = 3\n"));
        assert_ne!(world_except(&docs, &a, 0), before, "another document's text is");
        docs.insert(b.clone(), doc("y = 2\n"));
        assert_eq!(world_except(&docs, &a, 0), before, "and restoring it restores the world");
        docs.insert(c.clone(), doc(""));
        assert_ne!(world_except(&docs, &a, 0), before, "opening a document changes it");
        docs.remove(&c);
        assert_ne!(world_except(&docs, &a, 1), before, "so does a change on disk the server was told of");
        // Two documents swapping texts is a different world.
        let swapped = HashMap::from([(a.clone(), doc("y = 2\n")), (b.clone(), doc("x = 1\n")), (c, doc("x = 1\n"))]);
        let same = HashMap::from([
            (a.clone(), doc("x = 1\n")),
            (b, doc("x = 1\n")),
            (PathBuf::from("/p/c.py"), doc("y = 2\n")),
        ]);
        assert_ne!(world_except(&swapped, &a, 0), world_except(&same, &a, 0));
    }
}
