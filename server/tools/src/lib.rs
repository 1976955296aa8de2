//! Tandem's tools: the built-in tools assembled into one [`Registry`] ([`builtin`]), and the
//! framework they are built on (`tandem-tool-api`), re-exported under the paths the rest of the
//! workspace uses.
//!
//! API boundary: the tools know the editor, language servers and MCP only through traits
//! (see [`EditorClient`]); the front doors in the `tandem` binary implement them.

pub mod exec;
#[cfg(test)]
mod gate_tests;
pub mod intel;
pub mod memory;
mod readme;
#[cfg(test)]
mod registry_tests;
mod search;
pub mod session;
mod web;

pub use tandem_tool_api::{
    AgentType, Approver, AskOutcome, CallError, ChangeDecision, CodeIntel, CommandCheck, CommandDecision,
    CommandOutcome, CommandRun, DocumentEdit, EditorClient, Effect, PathError, PlanDecision, PlanState, Profile,
    Question, QuestionOption, Registry, SessionHost, StagedFile, SubAgentRequest, SubAgentState, SubAgentStatus, Todo,
    TodoStatus, Tool, ToolCheck, ToolConfig, ToolContext, ToolError, ToolOutput, ToolSpec, WebConfig, Workspace,
    approval, schema_for, state, trust, validate_arguments,
};
pub use tandem_tool_fs::{RestoreFile, restore_files};

/// Every built-in tool, under `config`, in the order they are offered: files, README
/// generation, search, commands, language servers, the web, the session, memories.
pub fn builtin(config: ToolConfig) -> Registry {
    let tools = tandem_tool_fs::all()
        .into_iter()
        .chain(readme::all())
        .chain(search::all())
        .chain(exec::all())
        .chain(intel::all())
        .chain(web::all(&config.web))
        .chain(session::all())
        .chain(memory::all())
        .collect();
    Registry::new(tools, config)
}
