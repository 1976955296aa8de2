//! `tool_search`: finds tools by what they do (BM25 over names, aliases, keywords and
//! descriptions), or picks them by name with `select:a,b`; found tools join the tool list the
//! model is offered.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tandem_protocol::ToolGroup;

use tandem_tool_api::{Decl, Service, ToolContext, ToolError, ToolOutput, ToolSpec, TypedTool, tool};

const DESCRIPTION: &str = "Find tools by what they do, when the one you need is not in your tool list. \
    `query` is keywords (\"rename symbol\", \"fetch web page\"); `select:name1,name2` returns those tools' full \
    definitions. Found tools become callable for the rest of the session.";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// Keywords, or `select:a,b` to pick tools by name.
    query: String,
    /// Most tools to return (default 5).
    #[serde(default)]
    max_results: Option<usize>,
}

fn describe(spec: &ToolSpec) -> Value {
    json!({ "name": spec.name, "description": spec.description, "parameters": spec.parameters })
}

tool!(pub(crate) ToolSearch(Args) = Decl::new("tool_search", ToolGroup::Search, DESCRIPTION)
    .aliases(&["search_tools", "find_tool"])
    .keywords(&["tools", "discover", "capability", "function"])
    .always_load()
    .needs(&[Service::Registry]));

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let registry = ctx
        .registry
        .as_ref()
        .ok_or_else(|| ToolError::new(Service::Registry.missing(ToolSearch::DECL.name(), "this call")))?;
    let limit = args.max_results.unwrap_or(5).clamp(1, 25);
    // Owned handles first: the registry's dynamic tools (MCP) can change while this runs.
    let tools: Vec<_> = registry.enabled().collect();
    let specs: Vec<&ToolSpec> = tools.iter().map(|t| t.spec()).filter(|s| s.name != "tool_search").collect();
    let found: Vec<&ToolSpec> = if let Some(names) = args.query.trim().strip_prefix("select:") {
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match specs.iter().find(|s| s.name == name || s.aliases.contains(&name)) {
                Some(spec) => found.push(*spec),
                None => missing.push(name.to_owned()),
            }
        }
        if !missing.is_empty() {
            return Err(ToolError::new(format!(
                "no enabled tool named {}; search by keywords to find the right names",
                missing.join(", ")
            )));
        }
        found
    } else {
        if args.query.trim().is_empty() {
            return Err(ToolError::new("`query` is empty: give keywords, or `select:name1,name2`"));
        }
        let documents: Vec<String> =
            specs.iter().map(|s| tandem_rank::document(s.name, s.aliases, s.keywords, s.description)).collect();
        tandem_rank::top(&documents, &args.query, limit).into_iter().filter_map(|i| specs.get(i).copied()).collect()
    };
    if found.is_empty() {
        return Err(ToolError::new(format!(
            "no tool matches `{}`; try other words (what the tool does, not how)",
            args.query
        )));
    }
    let names: Vec<String> = found.iter().map(|s| s.name.to_owned()).collect();
    if let Some(host) = &ctx.host {
        host.load_tools(&names);
    }
    let definitions: Vec<Value> = found.iter().map(|s| describe(s)).collect();
    let output = serde_json::to_string_pretty(&definitions).unwrap_or_default();
    Ok(ToolOutput::new(format!("Found {}", names.join(", ")), output).with("tools", names))
}
