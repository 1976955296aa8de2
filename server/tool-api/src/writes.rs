//! What Tandem's own commits wrote during one tool call: each file, the hash of the content the
//! write replaced and of the content it left. Checkpoints read it to tell the agent's changes
//! from the person's: a change the log does not explain happened beside the call, not by it.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use tandem_text::ContentHash;

/// One file a commit wrote or removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Written {
    /// Absolute path (resolved, inside the workspace).
    pub path: PathBuf,
    /// Hash of the bytes it replaced (as a snapshot would hold them: the editor's text for an
    /// open document); `None`: nothing was there.
    pub before: Option<ContentHash>,
    /// Hash of the bytes it left; `None`: the file was removed.
    pub after: Option<ContentHash>,
}

/// The writes of one call, in the order they were made. The commit path records into it when
/// the call's [`ToolContext::writes`](crate::ToolContext::writes) has one.
#[derive(Debug, Default)]
pub struct WriteLog(Mutex<Vec<Written>>);

impl WriteLog {
    /// Records a write.
    pub fn record(&self, written: Written) {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(written);
    }

    /// The writes so far, in order; the log is then empty.
    pub fn take(&self) -> Vec<Written> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
