//! Tandem's tools: the [`Tool`] trait, the [`Registry`] with profiles and argument validation,
//! workspace confinement, and the tools themselves (one file per tool).
//!
//! API boundary: this crate knows the editor, language servers and MCP only through traits
//! (see [`EditorClient`]); the front doors in the `tandem` binary implement them.

pub mod approval;
mod editor;
pub mod exec;
mod fs;
#[cfg(test)]
mod gate_tests;
pub mod intel;
pub mod memory;
mod profile;
mod readme;
mod registry;
mod schema;
mod search;
pub mod session;
pub mod state;
#[cfg(test)]
mod testing;
mod tool;
pub mod trust;
mod web;
mod workspace;

pub use approval::{Approver, ChangeDecision, CommandCheck, CommandDecision, StagedFile, ToolCheck};
pub use editor::{CommandOutcome, CommandRun, DocumentEdit, EditorClient};
pub use fs::{RestoreFile, restore_files};
pub use intel::CodeIntel;
pub use profile::{Profile, ToolConfig};
pub use registry::{CallError, Registry};
pub use schema::{schema_for, validate_arguments};
pub use session::{
    AgentType, AskOutcome, PlanDecision, PlanState, Question, QuestionOption, SessionHost, SubAgentRequest,
    SubAgentState, SubAgentStatus, Todo, TodoStatus,
};
pub use tool::{Effect, Tool, ToolContext, ToolError, ToolOutput, ToolSpec};
pub use web::WebConfig;
pub use workspace::{PathError, Workspace};
