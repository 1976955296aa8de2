//! The MCP layer's errors.

/// A request of the MCP layer that failed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum McpError {
    /// The server did not connect or list its tools (the message says why, without secrets).
    #[error("{message}")]
    Unavailable {
        /// The server's name.
        server: String,
        /// What happened.
        message: String,
    },
}
