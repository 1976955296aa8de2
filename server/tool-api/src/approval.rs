//! Approvals: how a session's person is asked before a change reaches a file or a command runs.
//!
//! The tools stage their work and ask an [`Approver`] (set on [`ToolContext`](crate::ToolContext)
//! by the agent loop) right before committing: every writing tool goes through the commit path,
//! which calls [`Approver::review_changes`] (after asking the language servers what the change
//! would break, when the approver will ask the person); `bash` calls [`Approver::confirm_command`]; a tool of
//! an outside server (MCP) calls [`Approver::confirm_tool`]. Without an
//! approver (a call made by the person through `tandem/tools/call` or `tandem tool`) nothing asks.

use std::path::PathBuf;

use async_trait::async_trait;
use tandem_protocol::DiagnosticsPreview;
use tandem_text::hunks::Hunk;

/// One file of a staged change, as the person reviews it.
#[derive(Clone, Debug)]
pub struct StagedFile {
    /// Absolute path (for a move: the source).
    pub path: PathBuf,
    /// Workspace-relative path for display.
    pub display: String,
    /// For a move: the destination.
    pub moved_to: Option<PathBuf>,
    /// Text before the change; `None` when the file is created.
    pub old_text: Option<String>,
    /// Text after the change; `None` when the file is deleted.
    pub new_text: Option<String>,
    /// Hunks of the change with ids unique within the whole review (`h1`, `h2`, … across files).
    pub hunks: Vec<Hunk>,
}

impl StagedFile {
    /// Which of this file's hunks `accepted` (review-wide ids) names, as the file-local ids that
    /// [`tandem_text::hunks::diff`] of its old and new text gives them (`h1`, `h2`, … in order):
    /// the ids [`tandem_text::hunks::apply_subset`] takes.
    pub fn accepted_local_ids(&self, accepted: &[String]) -> Vec<String> {
        (self.hunks.iter().enumerate())
            .filter(|(_, hunk)| accepted.contains(&hunk.id))
            .map(|(i, _)| format!("h{}", i + 1))
            .collect()
    }
}

/// The person's answer to a staged change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ChangeDecision {
    /// Apply the hunks named (ids of the review), or all of them when `None`.
    Accept {
        /// Accepted hunk ids; `None` means all.
        hunks: Option<Vec<String>>,
    },
    /// Apply nothing.
    Reject {
        /// What the person said, if anything.
        reason: Option<String>,
    },
    /// The turn was cancelled while waiting.
    Cancelled,
}

/// A command waiting for approval.
#[derive(Clone, Debug)]
pub struct CommandCheck {
    /// The command line.
    pub command: String,
    /// Where it runs (workspace-relative for display).
    pub working_dir: String,
    /// `None` for a command the classifier knows is read-only; else why it needs approval.
    pub needs_approval: Option<String>,
    /// It destroys data (`git reset --hard`, `git clean -f`, `rm -r`): asked in every mode but
    /// yolo, whatever "always" rules say.
    pub destroys_data: bool,
    /// Whether it would run in the background.
    pub background: bool,
    /// It may run in the `workspace-write` sandbox instead of asking (the sandbox is available
    /// and the model did not ask to leave it); an approver may then answer
    /// [`CommandDecision::RunSandboxed`].
    pub sandboxable: bool,
}

/// The person's answer to a command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CommandDecision {
    /// Run it.
    Allow,
    /// Run it without asking, but in the `workspace-write` sandbox (only for a command whose
    /// check was `sandboxable`).
    RunSandboxed,
    /// Do not run it.
    Reject {
        /// What the person said, if anything.
        reason: Option<String>,
    },
    /// The turn was cancelled while waiting.
    Cancelled,
}

/// A call waiting for approval as a whole: a tool of an outside server (MCP), or one of
/// Tandem's own whose change has no diff to review (memories).
#[derive(Clone, Debug)]
pub struct ToolCheck {
    /// The tool's name as the model sees it (`mcp__<server>__<tool>`): what an "always" rule covers.
    pub tool: String,
    /// The outside server it belongs to; `None` for one of Tandem's own tools.
    pub server: Option<String>,
    /// The arguments, as sent.
    pub arguments: serde_json::Value,
    /// Why it needs approval (e.g. "the server does not mark it read-only").
    pub reason: String,
}

/// Decides, asking the person when the session's mode says so.
#[async_trait]
pub trait Approver: Send + Sync {
    /// Reviews a staged change (one or more files) of the call this approver belongs to, with
    /// what the change would do to the language servers' diagnostics when they were asked.
    async fn review_changes(&self, files: &[StagedFile], preview: Option<&DiagnosticsPreview>) -> ChangeDecision;
    /// Whether [`Approver::review_changes`] would ask the person about `files` (the commit path
    /// then asks the language servers for a preview first). The default, for approvers that
    /// never ask, says no: a preview nobody sees would only cost time.
    fn asks_about(&self, _files: &[StagedFile]) -> bool {
        false
    }
    /// Whether a change to `files` that the language servers say introduces errors goes back to
    /// the model to fix before the person sees it (`[review] precheck = "fix-first"`). Called
    /// only for such a change; an approver that says yes remembers it, so that the next
    /// proposal for the same files goes to the person. The default: never.
    fn send_back_first(&self, _files: &[StagedFile]) -> bool {
        false
    }
    /// Confirms a command before `bash` runs it (refused commands never get here).
    async fn confirm_command(&self, check: &CommandCheck) -> CommandDecision;
    /// Confirms a call to a tool of an outside server that may change state. The default asks
    /// as for a command whose text is the tool name and its arguments.
    async fn confirm_tool(&self, check: &ToolCheck) -> CommandDecision {
        let command = CommandCheck {
            command: format!("{} {}", check.tool, check.arguments),
            working_dir: match &check.server {
                Some(server) => format!("MCP server `{server}`"),
                None => "tandem".to_owned(),
            },
            needs_approval: Some(check.reason.clone()),
            destroys_data: false,
            background: false,
            sandboxable: false,
        };
        self.confirm_command(&command).await
    }
}

/// What the model is told when [`confirm_whole`] does not let a change go ahead. Public for the
/// tool crates whose changes have no diff to review (`delete` of a link, memories).
pub struct Declined<'a> {
    /// When the person said no ("`x` was not allowed to run (…); nothing was changed.").
    pub rejected: &'a str,
    /// Added after what the person said, if anything ("Do not retry it unchanged").
    pub hint: &'a str,
    /// What stayed as it was, for a cancelled turn ("nothing was changed").
    pub untouched: &'a str,
}

/// Asks the call's approver (if any) about a change that has no diff to review (a memory, a
/// deleted link): `Ok` when it may go ahead, else the error for the model. Public for the tool
/// crates; the registry's gate uses it for [`Effect::State`](crate::Effect::State).
pub async fn confirm_whole(
    approver: Option<&dyn Approver>,
    check: &ToolCheck,
    declined: Declined<'_>,
) -> Result<(), crate::output::ToolError> {
    let Some(approver) = approver else { return Ok(()) };
    match approver.confirm_tool(check).await {
        CommandDecision::Allow => Ok(()),
        CommandDecision::Reject { reason } => {
            let said = reason.map(|r| format!(" They said: {r}")).unwrap_or_default();
            let hint = if declined.hint.is_empty() { String::new() } else { format!(" {}", declined.hint) };
            Err(crate::output::ToolError::new(format!("{}{said}{hint}", declined.rejected)).with("rejected", true))
        }
        // Only a command can run in a sandbox: fail closed if an approver offers it here.
        CommandDecision::RunSandboxed => Err(crate::output::ToolError::new(format!(
            "this call cannot run in a sandbox and was not approved; {}",
            declined.untouched
        ))),
        CommandDecision::Cancelled => Err(crate::output::ToolError::new(format!(
            "cancelled: the turn ended before the person answered; {}",
            declined.untouched
        ))
        .with("cancelled", true)),
    }
}
