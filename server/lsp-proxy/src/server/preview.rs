//! What a preview needs of one server beyond document sync: which documents it has open, the
//! diagnostics it published since a moment, a quiet spell, and closing a document the preview
//! opened.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

use async_lsp::lsp_types::notification::DidCloseTextDocument;
use async_lsp::lsp_types::{self as lsp, Url};
use tandem_text::ContentHash;

use super::{Published, Server, lock};

impl Server {
    /// Whether the server has `path` open.
    pub fn is_open(&self, path: &Path) -> bool {
        lock(&self.docs).contains_key(path)
    }

    /// Whether the server's copy of `path` is the text hashing to `hash`.
    pub fn holds(&self, path: &Path, hash: ContentHash) -> bool {
        lock(&self.docs).get(path).is_some_and(|doc| doc.hash == hash)
    }

    /// The publish counter now, and what was last published for each document.
    pub fn published_now(&self) -> (u64, HashMap<Url, Published>) {
        let published = lock(&self.shared.diagnostics);
        let seq = self.shared.seq.load(Ordering::SeqCst);
        (seq, published.clone())
    }

    /// Puts back what was published for these documents before a preview (`None`: nothing),
    /// so that their diagnostics are not the preview's until the server publishes again.
    pub fn restore_published(&self, records: Vec<(Url, Option<Published>)>) {
        let mut published = lock(&self.shared.diagnostics);
        for (uri, record) in records {
            match record {
                Some(record) => published.insert(uri, record),
                None => published.remove(&uri),
            };
        }
        drop(published);
        self.shared.bump();
    }

    /// The documents published for after the publish counter was `seq`, with their latest
    /// diagnostics.
    pub fn published_since(&self, seq: u64) -> Vec<(Url, Vec<lsp::Diagnostic>)> {
        let published = lock(&self.shared.diagnostics);
        published.iter().filter(|(_, p)| p.seq > seq).map(|(uri, p)| (uri.clone(), p.items.clone())).collect()
    }

    /// Waits until the server has published nothing for `quiet` (other documents' diagnostics
    /// follow the changed one's), at most until `deadline`.
    pub async fn settle(&self, quiet: Duration, deadline: tokio::time::Instant) {
        loop {
            let seen = self.shared.seq.load(Ordering::SeqCst);
            let until = (tokio::time::Instant::now() + quiet).min(deadline);
            let more = self.wait_until(until, |s| s.seq.load(Ordering::SeqCst) > seen).await;
            if !more || tokio::time::Instant::now() >= deadline {
                return;
            }
        }
    }

    /// `didClose`: the server forgets `path` (a document only a preview had opened), and so do
    /// we, its diagnostics included.
    pub fn close(&self, path: &Path) {
        if lock(&self.docs).remove(path).is_none() {
            return;
        }
        let Ok(uri) = Url::from_file_path(path) else { return };
        lock(&self.shared.diagnostics).remove(&uri);
        tracing::debug!(server = %self.spec.name, path = %path.display(), "didClose");
        if let Err(err) = self.notify::<DidCloseTextDocument>(lsp::DidCloseTextDocumentParams {
            text_document: lsp::TextDocumentIdentifier { uri },
        }) {
            tracing::debug!(server = %self.spec.name, "didClose not sent: {err}");
        }
    }
}
