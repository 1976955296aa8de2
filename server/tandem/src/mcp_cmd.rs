//! `tandem mcp`: Tandem's tools as an MCP server over stdio for other agents (writes and
//! non-read-only commands refused unless `--allow-writes`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use tandem_tools::Door;

use crate::workbench::{Options, Root, Workbench};

/// `tandem mcp [--allow-writes]` in the project around the current directory (or `--root`).
pub async fn serve(root: Option<PathBuf>, allow_writes: bool) -> ExitCode {
    let bench = match Root::from_cli(root)
        .and_then(|root| Workbench::open(&root, Options { door: Door::MCP, ..Options::default() }))
    {
        Ok(bench) => bench,
        Err(err) => {
            tracing::error!("{err}");
            eprintln!("tandem: {err}");
            return ExitCode::from(2);
        }
    };
    bench.log_warnings();
    let mut ctx = bench.tool_context();
    // An outside agent is not the person: it must read a file before changing it.
    ctx.session_id = Some(format!("mcp-{}", std::process::id()));
    ctx.user_confirmed = false;
    tracing::info!(root = %bench.workspace.root().display(), allow_writes, "tandem mcp");
    let served = tandem_mcp::TandemServer::new(Arc::clone(&bench.registry), ctx, allow_writes)
        .with_policy(Arc::clone(&bench.policy))
        .serve_stdio()
        .await;
    bench.close().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tandem: {err}");
            ExitCode::FAILURE
        }
    }
}
