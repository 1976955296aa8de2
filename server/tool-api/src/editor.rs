//! What the tools need from the editor: applying an edit to an open document and saving it;
//! for editors that serve them (the ACP front door), whole-file reads and writes and terminals.
//! The LSP front door implements the first two with `workspace/applyEdit` and
//! `tandem/document/save`; the ACP front door adds `fs/*` and `terminal/*`.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use tandem_text::{Position, PositionEncoding};

/// One replacement in a document open in the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentEdit {
    /// The document.
    pub path: PathBuf,
    /// The version the edit was computed against; the editor refuses it if the buffer moved on.
    pub version: i32,
    /// Start of the replaced range, in the editor's position encoding.
    pub start: Position,
    /// End of the replaced range.
    pub end: Position,
    /// The replacement.
    pub new_text: String,
}

/// Why the editor did not do what a tool asked. The message is the model's (callers add what
/// they were doing); the variants are what a caller can handle.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EditorError {
    /// The editor did not answer in time.
    #[error("the {peer} did not answer {method} within {seconds}s")]
    Timeout {
        /// Who was asked: "editor", or "client" (ACP).
        peer: &'static str,
        /// The request.
        method: String,
        /// How long it was waited for.
        seconds: u64,
    },
    /// The connection to the editor is gone: nothing more can be asked.
    #[error("the editor disconnected before it answered {method}")]
    StreamClosed {
        /// The request.
        method: String,
    },
    /// The editor does not implement the request.
    #[error("the client does not implement {method}")]
    NotImplemented {
        /// The request.
        method: String,
    },
    /// The editor answered with an error.
    #[error("{message}")]
    Rejected {
        /// The request.
        method: String,
        /// What it said.
        message: String,
    },
    /// The editor does not serve this at all (its capabilities say so).
    #[error("{0}")]
    Unsupported(String),
    /// The request needs an agent session (ACP scopes files and terminals by session).
    #[error("a {what} outside a session")]
    NoSession {
        /// "file read", "file write", "command".
        what: &'static str,
    },
    /// A path the editor cannot be told about.
    #[error("cannot make a URI of {}", .0.display())]
    NotOpen(PathBuf),
    /// The editor's answer lacks what the request needs.
    #[error("{method} answered without `{field}`")]
    InvalidAnswer {
        /// The request.
        method: String,
        /// The missing field.
        field: &'static str,
    },
}

/// The editor, as seen by tools.
#[async_trait]
pub trait EditorClient: Send + Sync {
    /// The position encoding negotiated with the editor.
    fn position_encoding(&self) -> PositionEncoding;
    /// Asks the editor to apply `edit` to its buffer (undoable there). `Ok(false)`: refused.
    async fn apply_edit(&self, edit: DocumentEdit) -> Result<bool, EditorError>;
    /// Asks the editor to save the document. `Ok(false)`: it cannot; the server writes instead.
    async fn save(&self, path: &Path) -> Result<bool, EditorError>;

    /// Whether files that are not in the buffer cache are read through [`read_file`]
    /// (so unsaved changes in the editor are seen). Default: no.
    ///
    /// [`read_file`]: EditorClient::read_file
    fn reads_files(&self) -> bool {
        false
    }
    /// The editor's text of `path` (its unsaved buffer when open, else the file), for the
    /// agent session `session_id` (ACP scopes file access by session).
    async fn read_file(&self, session_id: Option<&str>, path: &Path) -> Result<String, EditorError> {
        let _ = session_id;
        Err(EditorError::Unsupported(format!("the editor does not serve reads of {}", path.display())))
    }
    /// Whether every write of a file that is not in the buffer cache goes through
    /// [`write_file`] (so the editor's review records it). Default: no.
    ///
    /// [`write_file`]: EditorClient::write_file
    fn writes_files(&self) -> bool {
        false
    }
    /// Replaces the whole text of `path` (creating it), in the editor and on disk.
    async fn write_file(&self, session_id: Option<&str>, path: &Path, text: &str) -> Result<(), EditorError> {
        let _ = (session_id, text);
        Err(EditorError::Unsupported(format!("the editor does not serve writes of {}", path.display())))
    }
    /// Whether `bash` runs its foreground commands in the editor's terminals ([`run_command`]).
    ///
    /// [`run_command`]: EditorClient::run_command
    fn runs_commands(&self) -> bool {
        false
    }
    /// Runs a command in a terminal of the editor, to its end or `timeout` (then it is killed).
    async fn run_command(&self, run: CommandRun) -> Result<CommandOutcome, EditorError> {
        Err(EditorError::Unsupported(format!("the editor cannot run `{}`", run.command)))
    }
}

/// A command for the editor's terminal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandRun {
    /// The agent session it runs for.
    pub session_id: Option<String>,
    /// The tool call that runs it (the editor shows the terminal in its card).
    pub tool_call_id: Option<String>,
    /// The shell command line (run with `bash -c`).
    pub command: String,
    /// A program and its arguments to run `bash -c` under (the sandbox launcher, ending in
    /// `--`), or empty: a command that runs without asking must run sandboxed there too.
    pub wrapper: Vec<String>,
    /// Working directory (absolute).
    pub cwd: PathBuf,
    /// Killed after this long.
    pub timeout: std::time::Duration,
    /// Output kept by the editor (the tail when longer).
    pub output_byte_limit: u64,
}

/// How a command in the editor's terminal ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Its output (stdout and stderr as the terminal saw them).
    pub output: String,
    /// Whether the editor cut the output to `output_byte_limit`.
    pub truncated: bool,
    /// Exit code; `None` when killed by a signal or timed out.
    pub exit_code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<String>,
    /// Whether it was killed at the timeout.
    pub timed_out: bool,
    /// The editor's terminal id.
    pub terminal_id: String,
}
