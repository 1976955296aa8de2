//! `tandem mcp`: Tandem's tools as an MCP server over stdio for other agents (writes and
//! non-read-only commands refused unless `--allow-writes`).

use std::process::ExitCode;
use std::sync::Arc;

use tandem_text::BufferCache;
use tandem_tools::ToolContext;

/// `tandem mcp [--allow-writes]` in the current directory's workspace.
pub async fn serve(allow_writes: bool) -> ExitCode {
    let (workspace, registry) = match crate::tool_cmd::setup() {
        Ok(setup) => setup,
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("tandem: {err:#}");
            return ExitCode::from(2);
        }
    };
    let mut ctx = ToolContext::new(Arc::clone(&workspace), Arc::new(BufferCache::new()));
    // An outside agent is not the person: it must read a file before changing it.
    ctx.session_id = Some(format!("mcp-{}", std::process::id()));
    ctx.user_confirmed = false;
    tracing::info!(root = %workspace.root().display(), allow_writes, "tandem mcp");
    match tandem_mcp::TandemServer::new(Arc::new(registry), ctx, allow_writes).serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tandem: {err}");
            ExitCode::FAILURE
        }
    }
}
