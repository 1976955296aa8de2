//! The error type of the text layer.

use std::path::PathBuf;

/// What can go wrong in the text layer. Messages are written for the model: they say what to do.
#[derive(Debug, thiserror::Error)]
pub enum TextError {
    /// An IO error on a named path.
    #[error("{action} `{path}`: {source}")]
    Io {
        /// What we were doing ("cannot read", "cannot write", ...).
        action: &'static str,
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file changed (on disk or in the editor) since it was last read.
    #[error(
        "`{path}` changed since it was last read ({detail}); read it again and redo the change on the current content"
    )]
    Stale {
        /// The file.
        path: PathBuf,
        /// What changed.
        detail: String,
    },
    /// A named pipe, socket or device where a file was expected: only regular files are read
    /// or written (a pipe would block forever).
    #[error(
        "`{path}` is {what}, not a regular file; tandem reads and writes only regular files. Use `bash` if you really mean to talk to it"
    )]
    NotRegular {
        /// The path.
        path: PathBuf,
        /// What it is ("a named pipe (FIFO)", "a socket", ...).
        what: &'static str,
    },
    /// A position outside the document.
    #[error("position {line}:{character} is outside the document ({lines} lines)")]
    BadPosition {
        /// 0-based line.
        line: u32,
        /// 0-based column in the document's encoding.
        character: u32,
        /// Number of lines in the document.
        lines: usize,
    },
    /// A change for a document the cache does not hold.
    #[error("document `{0}` is not open")]
    NotOpen(PathBuf),
}
