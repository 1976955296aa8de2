//! What a call returns: [`ToolOutput`], or a [`ToolError`] the model can act on.

use serde_json::{Map, Value};

/// A successful call.
#[derive(Clone, Debug, Default)]
pub struct ToolOutput {
    /// One line saying what happened.
    pub title: String,
    /// The text the model sees.
    pub output: String,
    /// Structured details.
    pub metadata: Map<String, Value>,
    /// Content beside the text, as the protocol's content blocks (an image a `read` returns:
    /// `{"type": "image", "data": base64, "mimeType": …}`); the agent sends images to a model
    /// that takes them.
    pub attachments: Vec<Value>,
}

impl ToolOutput {
    /// An output with a title and text.
    pub fn new(title: impl Into<String>, output: impl Into<String>) -> Self {
        Self { title: title.into(), output: output.into(), metadata: Map::new(), attachments: Vec::new() }
    }

    /// Adds an attachment (a protocol content block).
    pub fn attach(mut self, block: &tandem_protocol::ContentBlock) -> Self {
        self.attachments.extend(serde_json::to_value(block).ok());
        self
    }

    /// Adds a metadata entry.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }

    /// Adds several metadata entries.
    pub fn with_all(mut self, entries: Map<String, Value>) -> Self {
        self.metadata.extend(entries);
        self
    }
}

/// A failed call: a message the model can act on (what failed, why, what to do next).
#[derive(Clone, Debug, Default)]
pub struct ToolError {
    /// The message.
    pub message: String,
    /// Structured details.
    pub metadata: Map<String, Value>,
}

impl ToolError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self { message: message.into(), metadata: Map::new() }
    }

    /// Adds a metadata entry.
    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.to_owned(), value.into());
        self
    }
}

impl From<tandem_text::TextError> for ToolError {
    fn from(err: tandem_text::TextError) -> Self {
        Self::new(err.to_string())
    }
}

impl From<crate::PathError> for ToolError {
    fn from(err: crate::PathError) -> Self {
        Self::new(err.to_string())
    }
}

impl From<crate::editor::EditorError> for ToolError {
    fn from(err: crate::editor::EditorError) -> Self {
        Self::new(err.to_string())
    }
}

impl From<crate::session::HostError> for ToolError {
    fn from(err: crate::session::HostError) -> Self {
        Self::new(err.to_string())
    }
}
