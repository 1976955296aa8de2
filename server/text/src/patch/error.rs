//! Why a patch cannot be parsed or applied. Messages are written for the model: each says what
//! is wrong, where, and what to do next.

/// A patch that cannot be parsed, or a file patch that cannot be applied.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The text holds no patch at all.
    #[error(
        "no patch found: expected a unified diff (`diff --git a/<path> b/<path>` or `--- a/<path>` and \
         `+++ b/<path>` headers, each followed by `@@ -<line>,<count> +<line>,<count> @@` hunks) or a \
         `*** Begin Patch` block"
    )]
    NoPatch,
    /// The patch text is malformed.
    #[error("line {line} of the patch: {message}")]
    Parse {
        /// 1-based line of the patch text.
        line: usize,
        /// What is wrong there and how to write it instead.
        message: String,
    },
    /// The patch changes a binary file: there is no text to apply.
    #[error(
        "`{path}` is changed as a binary file (`Binary files … differ` / `GIT binary patch`): the patch does \
         not carry its content as text, so it cannot be applied; leave the file out of the patch and change it \
         another way"
    )]
    Binary {
        /// The file.
        path: String,
    },
    /// A hunk's context and removed lines are not in the file (where the patch says, nor
    /// anywhere it could safely be moved to).
    #[error("{message}")]
    HunkFailed {
        /// The file.
        path: String,
        /// 1-based number of the hunk in its file.
        hunk: usize,
        /// 1-based line where the hunk was expected (its header's line moved by the offset of
        /// earlier hunks; for a hunk without line numbers, the line the search started at).
        expected_line: Option<usize>,
        /// The text of the file that resembles the hunk most, if any does.
        closest: Option<Box<Closest>>,
        /// The whole message.
        message: String,
    },
    /// A hunk fits more than one place equally well.
    #[error("{message}")]
    Ambiguous {
        /// The file.
        path: String,
        /// 1-based number of the hunk in its file.
        hunk: usize,
        /// 1-based lines where the hunk's old lines start, at each place it fits.
        candidates: Vec<usize>,
        /// The whole message.
        message: String,
    },
    /// A `@@ <line>` header of a hunk without line numbers is not in the file.
    #[error("{message}")]
    AnchorNotFound {
        /// The file.
        path: String,
        /// 1-based number of the hunk in its file.
        hunk: usize,
        /// The header's text.
        anchor: String,
        /// The whole message.
        message: String,
    },
    /// A patch that deletes a file does not remove all of it: the file has changed.
    #[error(
        "the patch deletes `{path}`, but {remaining} line(s) of the file are not in the patch: the file changed \
         since the patch was made; read it again and regenerate the patch"
    )]
    DeleteMismatch {
        /// The file.
        path: String,
        /// Lines left after removing what the patch removes.
        remaining: usize,
    },
}

/// Where the file's text resembles a failed hunk most.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Closest {
    /// 1-based line where that text starts.
    pub line: usize,
    /// How many of the hunk's old lines match there (whitespace ignored).
    pub matching: usize,
    /// How many old lines the hunk has.
    pub total: usize,
    /// The first line that differs, if any differs beyond whitespace inside lines.
    pub mismatch: Option<Mismatch>,
}

/// A line where the file and a hunk disagree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// 1-based line of the file.
    pub line: usize,
    /// What the file has there.
    pub file: String,
    /// What the hunk expects there.
    pub patch: String,
}
