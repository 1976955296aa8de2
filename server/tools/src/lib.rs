//! Tandem's tools, assembled: [`builtin`] puts every family's tools into one [`Registry`], and
//! this crate re-exports the framework (`tandem-tool-api`) and the families' public items under
//! the paths the rest of the workspace uses (`tandem_tools::Tool`, `tandem_tools::exec::sandbox`,
//! `tandem_tools::memory::session_brief`, ...).
//!
//! The families, each a crate over `tandem-tool-api`: `tandem-tool-fs` (files and the commit
//! path), `tandem-tool-search`, `tandem-tool-exec` (commands), `tandem-tool-web`,
//! `tandem-tool-session`, `tandem-tool-memory`, `tandem-tool-intel` (language servers),
//! `tandem-tool-readme` and `tandem-tool-skill`. `gate_tests.rs`, which needs every tool, lives here.
//!
//! API boundary: the tools know the editor, language servers and MCP only through traits
//! (see [`EditorClient`]); the front doors in the `tandem` binary implement them.

#[cfg(test)]
mod gate_tests;
#[cfg(test)]
mod registry_tests;

pub use tandem_tool_api::{
    AgentType, Approver, AskOutcome, CallError, ChangeDecision, CodeIntel, CommandCheck, CommandDecision,
    CommandOutcome, CommandRun, Decl, DocumentEdit, EditorClient, EditorError, Effect, HostError, PathError,
    PlanDecision, PlanState, Profile, Question, QuestionOption, Registry, SessionHost, StagedFile, SubAgentRequest,
    SubAgentState, SubAgentStatus, Todo, TodoStatus, Tool, ToolCheck, ToolConfig, ToolContext, ToolError, ToolOutput,
    ToolSpec, TypedTool, WebConfig, Workspace, WriteLog, Written, approval, binaries, intel, schema_for, session,
    shared, state, trust, typed, validate_arguments,
};
pub use tandem_tool_exec as exec;
pub use tandem_tool_fs::{BroughtOver, Incoming, RestoreFile, bring_over, restore_files};
pub use tandem_tool_memory as memory;

/// Every built-in tool, under `config`, in the order they are offered: files, README
/// generation, search, commands, language servers, the web, the session, memories, skills.
pub fn builtin(config: ToolConfig) -> Registry {
    let tools = tandem_tool_fs::all()
        .into_iter()
        .chain(tandem_tool_readme::all())
        .chain(tandem_tool_search::all())
        .chain(tandem_tool_exec::all())
        .chain(tandem_tool_intel::all())
        .chain(tandem_tool_web::all(&config.web))
        .chain(tandem_tool_session::all())
        .chain(tandem_tool_memory::all())
        .chain(tandem_tool_skill::all())
        .collect();
    Registry::new(tools, config)
}
