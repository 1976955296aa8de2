//! `memory_read`: lists or searches the memories.

use schemars::JsonSchema;
use serde::Deserialize;
use tandem_protocol::ToolGroup;
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};

use super::{MemoryType, load_all, score};

const DESCRIPTION: &str = "Read the memories kept across sessions: without `query`, a list of all (id, type, \
    title, first line); with `query`, the full text of the best matches. `type_filter` limits to one type \
    (user, feedback, project, reference).";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Keywords to search for.
    #[serde(default)]
    query: Option<String>,
    /// Only memories of this type.
    #[serde(default)]
    type_filter: Option<MemoryType>,
}

tool!(pub(crate) MemoryRead(Args) = Decl::new("memory_read", ToolGroup::Memory, DESCRIPTION)
    .aliases(&["recall", "read_memory", "search_memory"])
    .keywords(&["memory", "remember", "recall", "notes"]));

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let mut all = load_all(ctx.workspace.root());
    if let Some(kind) = args.type_filter {
        all.retain(|m| m.kind == kind);
    }
    if all.is_empty() {
        return Ok(
            ToolOutput::new("No memories", "There are no memories yet (`memory_write` keeps one).").with("count", 0)
        );
    }
    let Some(query) = args.query.filter(|q| !q.trim().is_empty()) else {
        let lines: Vec<String> = all
            .iter()
            .map(|m| {
                let first = m.content.lines().next().unwrap_or_default();
                format!("{} [{}] {} — {first}", m.id, m.kind.as_str(), m.title)
            })
            .collect();
        return Ok(ToolOutput::new(format!("{} memories", all.len()), lines.join("\n")).with("count", all.len()));
    };
    let mut ranked: Vec<(usize, &super::Memory)> = all.iter().map(|m| (score(m, &query), m)).collect();
    ranked.retain(|(s, _)| *s > 0);
    ranked.sort_by_key(|b| std::cmp::Reverse(b.0));
    if ranked.is_empty() {
        return Err(ToolError::new(format!(
            "no memory matches `{query}` ({} memories; call without `query` to list them)",
            all.len()
        )));
    }
    let shown: Vec<String> = ranked
        .iter()
        .take(5)
        .map(|(_, m)| {
            let tags = if m.tags.is_empty() { String::new() } else { format!(" tags: {}", m.tags.join(", ")) };
            format!("## {} ({}, {}){tags}\n{}", m.title, m.kind.as_str(), m.id, m.content)
        })
        .collect();
    Ok(ToolOutput::new(format!("{} matching memories", ranked.len()), shown.join("\n\n")).with("count", ranked.len()))
}
