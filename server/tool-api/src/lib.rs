//! The framework of Tandem's tools: the [`Tool`] trait, the [`Registry`] with profiles and
//! argument validation, the approval gate, workspace confinement and Tandem's state directory.
//! The tools themselves live in the family crates (`tandem-tool-fs`, `tandem-tool-exec`, ...),
//! which depend on this crate only (and on lower families); `tandem-tools` assembles them.
//!
//! API boundary: this crate knows the editor, language servers and the agent session only
//! through traits ([`EditorClient`], [`CodeIntel`], [`SessionHost`]); the front doors in the
//! `tandem` binary and the agent implement them.

pub mod approval;
pub mod binaries;
mod editor;
pub mod intel;
mod output;
mod profile;
mod registry;
mod schema;
mod service;
pub mod session;
pub mod shared;
mod spec;
pub mod state;
#[cfg(feature = "testing")]
pub mod testing;
mod tool;
pub mod trust;
mod walk;
mod workspace;
mod writes;

pub use approval::{Approver, ChangeDecision, CommandCheck, CommandDecision, StagedFile, ToolCheck};
pub use editor::{CommandOutcome, CommandRun, DocumentEdit, EditorClient, EditorError};
pub use intel::CodeIntel;
pub use output::{ToolError, ToolOutput};
pub use profile::{Profile, ToolConfig, WebConfig};
pub use registry::{CallError, Registry};
pub use schema::{InvalidArguments, schema_for, validate_arguments};
pub use service::{Door, Service};
pub use session::{
    AgentType, AskOutcome, HostError, PlanDecision, PlanState, Question, QuestionOption, SessionHost, SubAgentRequest,
    SubAgentState, SubAgentStatus, Todo, TodoStatus,
};
pub use spec::{Decl, Effect, Parameters, ToolSpec};
pub use tool::{Tool, ToolContext, TypedTool, parse_args, typed};
pub use walk::walker;
pub use workspace::{PathError, Workspace};
pub use writes::{WriteLog, Written};
