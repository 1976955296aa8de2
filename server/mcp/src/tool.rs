//! An MCP server's tool as a Tandem [`Tool`]: `mcp__<server>__<tool>`, group `mcp`, the server's
//! JSON Schema; calls go through the [`Dispatcher`] (the manager's resilience chain).

use parking_lot::Mutex;
use std::collections::HashSet;
use std::sync::{Arc, Weak};

use async_trait::async_trait;
use serde_json::Value;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};

use crate::server::{McpServer, RemoteTool};

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

/// What the model reads of a remote tool: its description (else its name), the server, whether
/// it only reads, and the server's tags (words it is found by).
pub(crate) fn description(server: &str, tags: &[String], remote: &RemoteTool) -> String {
    let text = if remote.description.is_empty() { remote.name.as_str() } else { remote.description.as_str() };
    let read_only = if remote.read_only { ", read-only" } else { "" };
    let tags = if tags.is_empty() { String::new() } else { format!("; tags: {}", tags.join(", ")) };
    format!("{text} (MCP server `{server}`{read_only}{tags})")
}

/// The text the tool is ranked by: exactly what `tool_search` ranks its spec by
/// ([`tandem_rank::document`] of its name and description), so both order tools alike.
pub(crate) fn rank_document(server: &str, tags: &[String], remote: &RemoteTool) -> String {
    tandem_rank::document(&remote.exposed, &[], &[], &description(server, tags, remote))
}

/// What an MCP tool needs of the client: its server by name, and what the resilience chain
/// ([`crate::dispatch::call`]) keeps. The manager implements it; tools hold it weakly (the
/// manager holds them).
pub(crate) trait Dispatcher: crate::dispatch::Ledger {
    /// The server named `name`, if it is still configured.
    fn server(&self, name: &str) -> Option<Arc<McpServer>>;
}

/// One tool of one server.
pub struct McpTool {
    spec: ToolSpec,
    server: String,
    remote: RemoteTool,
    dispatcher: Weak<dyn Dispatcher>,
}

impl McpTool {
    /// The tool `remote` of `server`, whose configuration gives it `tags`.
    pub(crate) fn new(dispatcher: Weak<dyn Dispatcher>, server: &str, tags: &[String], remote: RemoteTool) -> Self {
        let description = description(server, tags, &remote);
        let mut parameters = remote.schema.clone();
        if let Value::Object(map) = &mut parameters {
            map.entry("type").or_insert_with(|| Value::String("object".into()));
            map.entry("properties").or_insert_with(|| Value::Object(Default::default()));
        }
        let decl = Decl::new(intern(&remote.exposed), ToolGroup::Mcp, intern(&description));
        let spec = if remote.read_only { decl } else { decl.external() }.spec(parameters);
        Self { spec, server: server.to_owned(), remote, dispatcher }
    }
}

#[async_trait]
impl Tool for McpTool {
    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    async fn call(&self, args: Value, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(dispatcher) = self.dispatcher.upgrade() else {
            return Err(ToolError::new("the MCP client has shut down"));
        };
        let Some(server) = dispatcher.server(&self.server) else {
            return Err(ToolError::new(format!(
                "MCP server `{}` was removed; mcp_discover lists the servers there are",
                self.server
            )));
        };
        crate::dispatch::call(dispatcher.as_ref(), &server, &self.remote, args, &ctx).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;
    use tandem_text::BufferCache;
    use tandem_tool_api::{Registry, ToolConfig, Workspace};

    use super::*;
    use crate::ranking::{Doc, Ranker};

    fn remote(name: &str, description: &str) -> RemoteTool {
        RemoteTool {
            name: name.to_owned(),
            exposed: format!("mcp__fs__{name}"),
            description: description.to_owned(),
            schema: json!({ "type": "object" }),
            read_only: true,
            idempotent: true,
        }
    }

    fn fs_tools() -> Vec<RemoteTool> {
        vec![
            remote("list_directory", "Get a detailed listing of all files and directories in a specified path."),
            remote("write_file", "Create a new file or completely overwrite an existing file with new content."),
            remote("search_files", "Recursively search for files and directories matching a pattern."),
            remote("read_text_file", "Read the complete contents of a file from the file system as text."),
        ]
    }

    /// The MCP ranking for `query`, matching tools only: names and relevance, best first.
    fn mcp_ranking(query: &str, tags: &[String]) -> Vec<(String, f64)> {
        let docs: Vec<Doc> =
            fs_tools().iter().map(|t| Doc { name: t.exposed.clone(), text: rank_document("fs", tags, t) }).collect();
        let ranked = Ranker::default().rank(&docs, query).into_iter().filter(|r| r.relevance > 0.0);
        ranked.map(|r| (r.name, r.relevance)).collect()
    }

    /// `tool_search`'s order for `query` over the same MCP tools (the built-in tools switched
    /// off, so both rank the same set).
    async fn tool_search_order(query: &str, tags: &[String]) -> Result<Vec<String>, String> {
        let tool_search = tandem_tool_session::all().into_iter().filter(|t| t.spec().name == "tool_search");
        let registry = Arc::new(Registry::new(tool_search.collect(), ToolConfig::default()));
        let tools = fs_tools()
            .into_iter()
            .map(|t| Arc::new(McpTool::new(Weak::<crate::McpManager>::new(), "fs", tags, t)) as Arc<dyn Tool>);
        registry.set_dynamic("mcp:fs", tools.collect());
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let workspace = Arc::new(Workspace::new(dir.path(), &[]).map_err(|e| e.to_string())?);
        let mut ctx = ToolContext::new(workspace, Arc::new(BufferCache::new()));
        ctx.registry = Some(Arc::clone(&registry));
        let result = registry
            .call("tool_search", json!({ "query": query, "max_results": 25 }), ctx)
            .await
            .map_err(|e| e.to_string())?;
        if result.error.as_deref().is_some_and(|e| e.starts_with("no tool matches")) {
            return Ok(Vec::new());
        }
        let names = result.metadata.get("tools").cloned().unwrap_or_default();
        serde_json::from_value(names).map_err(|e| format!("{e}: {result:?}"))
    }

    /// Both find the same tools, and `tool_search` lists them in the MCP ranking's order (tools
    /// the ranking scores equally may come in either order: `tool_search` does not promise an
    /// order for ties).
    #[tokio::test]
    async fn mcp_ranking_and_tool_search_order_the_same_tools_alike() -> Result<(), Box<dyn std::error::Error>> {
        let tags = ["files".to_owned(), "disk".to_owned()];
        for query in ["reading files", "write a file", "list directory", "search pattern", "disk"] {
            for tags in [&[][..], &tags[..]] {
                let ranking = mcp_ranking(query, tags);
                let found = tool_search_order(query, tags).await?;
                let relevance = |name: &String| ranking.iter().find(|(n, _)| n == name).map(|(_, r)| *r);
                let scores: Vec<Option<f64>> = found.iter().map(relevance).collect();
                let what = format!("{query:?} with tags {tags:?}: ranking {ranking:?}, tool_search {found:?}");
                assert_eq!(found.len(), ranking.len(), "{what}");
                assert!(scores.iter().all(Option::is_some), "{what}");
                assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{what}");
            }
        }
        let best = mcp_ranking("reading files", &[]).first().map(|(name, _)| name.clone());
        assert_eq!(best.as_deref(), Some("mcp__fs__read_text_file"));
        Ok(())
    }
}
