//! Redaction of output that arrives in pieces (a background command's log): whole lines are
//! redacted as they complete; an open private key block is held back until its END line, so a
//! secret is never written to the log in the clear because it was split across reads.

use super::redact;

/// Longest text held back waiting for a line end or a key block's END line.
const MAX_PENDING: usize = 1024 * 1024;

/// Redacts a stream of output chunk by chunk.
#[derive(Default)]
pub struct StreamRedactor {
    pending: Vec<u8>,
    /// Secrets replaced so far.
    pub count: usize,
}

impl StreamRedactor {
    /// Takes `bytes`, returns the redacted text that is complete so far.
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let Some(last_newline) = self.pending.iter().rposition(|b| *b == b'\n') else {
            return if self.pending.len() > MAX_PENDING { self.finish() } else { String::new() };
        };
        let mut ready = last_newline + 1;
        if let Some(open) = open_key_block(&self.pending[..ready])
            && self.pending.len() <= MAX_PENDING
        {
            ready = open;
        }
        let rest = self.pending.split_off(ready);
        let done = std::mem::replace(&mut self.pending, rest);
        self.emit(&done)
    }

    /// Everything still held, redacted (the stream ended).
    pub fn finish(&mut self) -> String {
        let done = std::mem::take(&mut self.pending);
        self.emit(&done)
    }

    fn emit(&mut self, bytes: &[u8]) -> String {
        if bytes.is_empty() {
            return String::new();
        }
        let redacted = redact(&String::from_utf8_lossy(bytes));
        self.count += redacted.count;
        redacted.text
    }
}

/// Where a private key block that has no END line yet starts in `text`.
fn open_key_block(text: &[u8]) -> Option<usize> {
    let text = String::from_utf8_lossy(text);
    let begin = text.rfind("-----BEGIN")?;
    let after = &text[begin..];
    let is_key = after.lines().next().is_some_and(|line| line.contains("PRIVATE KEY"));
    (is_key && !after.contains("-----END")).then(|| text[..begin].rfind('\n').map_or(0, |n| n + 1))
}
