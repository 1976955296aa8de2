//! An MCP server's tool as a Tandem [`Tool`]: `mcp__<server>__<tool>`, group `mcp`, the server's
//! JSON Schema; calls go through [`McpManager::call`].

use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::Weak;

use async_trait::async_trait;
use serde_json::Value;
use tandem_protocol::ToolGroup;
use tandem_tools::{Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::manager::McpManager;
use crate::server::RemoteTool;

/// `ToolSpec` holds `&'static str`s: names and descriptions of MCP tools are interned once per
/// distinct text (bounded by what the configured servers declare).
pub(crate) fn intern(text: &str) -> &'static str {
    static STRINGS: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
    let mut strings = STRINGS.lock();
    let set = strings.get_or_insert_with(HashSet::new);
    if let Some(found) = set.get(text) {
        return found;
    }
    let leaked: &'static str = Box::leak(text.to_owned().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// One tool of one server.
pub struct McpTool {
    spec: ToolSpec,
    server: String,
    remote: RemoteTool,
    manager: Weak<McpManager>,
}

impl McpTool {
    /// The tool `remote` of `server`.
    pub fn new(manager: Weak<McpManager>, server: &str, remote: RemoteTool) -> Self {
        let description = format!(
            "{} (MCP server `{server}`{})",
            if remote.description.is_empty() { remote.name.as_str() } else { remote.description.as_str() },
            if remote.read_only { ", read-only" } else { "" }
        );
        let mut parameters = remote.schema.clone();
        if let Value::Object(map) = &mut parameters {
            map.entry("type").or_insert_with(|| Value::String("object".into()));
            map.entry("properties").or_insert_with(|| Value::Object(Default::default()));
        }
        let mut spec = ToolSpec::new(intern(&remote.exposed), ToolGroup::Mcp, intern(&description), parameters);
        if !remote.read_only {
            spec = spec.external();
        }
        Self { spec, server: server.to_owned(), remote, manager }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(manager) = self.manager.upgrade() else {
            return Err(ToolError::new("the MCP client has shut down"));
        };
        let Some(server) = manager.server(&self.server) else {
            return Err(ToolError::new(format!(
                "MCP server `{}` was removed; mcp_discover lists the servers there are",
                self.server
            )));
        };
        manager.call(&server, &self.remote, args, &ctx).await
    }
}
