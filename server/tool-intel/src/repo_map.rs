//! `repo_map`: a map of the codebase for a task — the files that matter most for the query, each
//! with its most relevant definitions as signature lines (aider's format), within a token budget.
//! The map itself is `tandem-repo-map`'s; this file gives it what the call knows: the session's
//! read and edited files and the documents open in the editor.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tandem_protocol::ToolGroup;
use tandem_repo_map::{DEFAULT_MAX_FILES, DEFAULT_MAX_TOKENS, Request};
use tandem_tool_api::{Decl, ToolContext, ToolError, ToolOutput, tool};
use tandem_tool_fs::blocking;

/// The largest budget a call may ask for.
const MAX_MAX_TOKENS: usize = 16_384;
/// The most files a call may ask for.
const MAX_MAX_FILES: usize = 500;

const DESCRIPTION: &str = "A map of the codebase: the files most relevant to `query` (a task, a question or \
    names), each with its most relevant definitions (functions, types, classes, ...) as signature lines, best \
    first, within `max_tokens`. Files are ranked by a graph of which file uses names another defines \
    (PageRank, personalized by the query's words, the files this session read or edited and the files open \
    in the editor) together with a lexical match of paths and identifiers. Use it first to find where \
    something lives, then `read` the files it names. Without a query it shows the project's most central \
    files. `paths` limits it to files matching globs (e.g. `server/**`).";

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Args {
    /// What the map is for: a task, a question or names (e.g. "retry failed uploads"). Optional.
    query: Option<String>,
    /// Only files whose path (relative to the workspace root) matches one of these globs, e.g. `src/**/*.ts`.
    paths: Option<Vec<String>>,
    /// The map's budget in tokens (default 1024, at most 16384).
    max_tokens: Option<usize>,
    /// Files shown at most (default 30).
    max_files: Option<usize>,
}

tool!(pub(crate) RepoMap(Args) = Decl::new("repo_map", ToolGroup::Search, DESCRIPTION)
    .aliases(&["repomap", "codebase_map", "map"])
    .keywords(&["map", "overview", "codebase", "structure", "where", "files", "symbols", "definitions", "rank"]));

async fn run(args: Args, ctx: ToolContext) -> Result<ToolOutput, ToolError> {
    let root = ctx.workspace.root().to_path_buf();
    let session = match &ctx.session_id {
        Some(id) => ctx.cache.read_by(id),
        None => Vec::new(),
    };
    let open = ctx.cache.documents().into_iter().filter(|(p, _)| p.starts_with(&root)).collect();
    let request = Request {
        query: args.query.unwrap_or_default(),
        paths: args.paths.unwrap_or_default(),
        max_tokens: args.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).clamp(1, MAX_MAX_TOKENS),
        max_files: args.max_files.unwrap_or(DEFAULT_MAX_FILES).clamp(1, MAX_MAX_FILES),
        session,
        open,
        ..Request::default()
    };
    let map =
        blocking(move || tandem_repo_map::map(&root, &request).map_err(|e| ToolError::new(e.to_string()))).await?;
    let stats = map.stats;
    let mut output = if map.text.is_empty() {
        "No source files to map (the map outlines Rust, Python, JavaScript, TypeScript, Go, C, C++, Java and Ruby)."
            .to_owned()
    } else {
        map.text.clone()
    };
    let skipped = stats.too_big + stats.binary + stats.unreadable;
    if map.shown.len() < map.ranked.len() {
        output.push_str(&format!(
            "\n({} of {} source files shown; raise max_tokens or max_files, or narrow with query or paths.)",
            map.shown.len(),
            map.ranked.len()
        ));
    }
    if skipped > 0 {
        output.push_str(&format!(
            "\n({} too big, {} binary, {} unreadable: not mapped.)",
            stats.too_big, stats.binary, stats.unreadable
        ));
    }
    let files: Vec<serde_json::Value> = map.shown.iter().map(|r| json!({"path": r.path, "score": r.score})).collect();
    Ok(ToolOutput::new(format!("Mapped {} file(s)", map.shown.len()), output)
        .with("files", files)
        .with("tokens", tandem_repo_map::tokens(&map.text))
        .with("stats", serde_json::to_value(stats).unwrap_or_default()))
}
