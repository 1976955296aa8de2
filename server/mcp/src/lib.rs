//! Tandem's MCP layer: a client for MCP servers (stdio child processes and streamable HTTP, on
//! the official `rmcp` SDK) whose tools join the registry as `mcp__<server>__<tool>`, with
//! resilience (timeouts, bulkheads, classified retries, circuit breakers, loop detection, a
//! degradation chain), ranking, tracking and meta-tools; and `tandem mcp`, which serves Tandem's
//! own tools to any MCP client.
//!
//! API boundary: `tandem-tools` does not know this crate; MCP tools enter the registry as
//! `Arc<dyn Tool>` through `Registry::set_dynamic`, and ask approval through
//! `Approver::confirm_tool`.

pub mod config;
mod dispatch;
mod error;
mod manager;
mod meta;
pub mod ranking;
pub mod resilience;
pub mod serve;
pub mod server;
mod tool;
pub mod tracking;

pub use config::{McpConfig, ServerConfig, Startup, Transport};
pub use error::McpError;
pub use manager::McpManager;
pub use serve::{ServeError, TandemServer};
pub use server::{Health, McpServer, RemoteTool, stdio_binaries};
pub use tool::McpTool;
pub use tracking::CallRecord;

/// reqwest is built without a default TLS provider (no aws-lc): install ring once.
pub(crate) fn install_crypto() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may win the race; either way a provider is installed.
        rustls::crypto::ring::default_provider().install_default().ok();
    }
}
