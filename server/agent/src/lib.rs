//! Agent sessions: the loop between a model provider and the tools.
//!
//! An [`Agent`] holds the sessions of one workspace. A front door (the LSP server, `tandem run`)
//! gives it a [`SessionClient`] to stream [`SessionUpdate`](tandem_protocol::SessionUpdate)s to
//! and to ask the person for permission; [`Agent::prompt`] runs one turn: model → tool calls →
//! approvals → results → model, until the model stops, the turn limit, or a cancel.
//!
//! Nothing reaches a file the person did not approve: every tool call gets a per-call
//! [`Approver`](tandem_tool_api::Approver) that applies the session's mode and rules and asks through
//! the client ([`approver`]).

mod agent;
pub mod approver;
mod call;
mod checkpoints;
mod client;
mod config;
mod context;
mod env;
mod export;
mod guidance;
mod host;
mod images;
mod limits;
mod modes;
mod offer;
mod options;
pub mod otel;
pub mod policy;
mod prompt;
mod repo_map;
mod restore;
mod session;
mod store;
mod tokens;
mod trust;
mod turn;

pub use agent::Agent;
pub use client::{ClientError, SessionClient};
pub use config::{AgentConfig, AgentError, Reload};
pub use export::{EXPORT_FORMAT, ExportError, markdown as export_markdown};
pub use limits::{OutputKind, cap_output};
pub use modes::{mode_infos, modes_of};
pub use options::options as config_options;
pub use restore::describe_restore;
pub use store::Store;
pub use trust::TRUST_CARD;
