//! The per-call approver: applies the session's mode and "always" rules, and asks the person
//! through the [`SessionClient`] when they say so.
//!
//! | mode | edits | commands (not read-only) |
//! |---|---|---|
//! | default | ask | ask |
//! | auto-edit | apply | ask |
//! | plan | blocked before the call | blocked before the call |
//! | yolo | apply | run |
//!
//! A tool of an MCP server that does not declare itself read-only asks like a command (default
//! and auto-edit modes; yolo runs it; plan mode blocks it before the call); "always" covers that
//! tool for the rest of the session.
//!
//! Commands the classifier knows are read-only never ask; refused ones never run (the tool
//! refuses them before asking).
//!
//! A change that would overwrite or delete a file checkpoints leave out (over the size cap,
//! ignored) cannot be undone: it asks in every mode but yolo, even under an "always" rule, and
//! the request says "not covered by undo" and names the files. So does a command that names
//! such a file or directory. Once the person allows a command, its checkpoint window opens again:
//! what they changed while they were asked is theirs, not the command's.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use serde_json::Value;
use tandem_protocol::{
    ContentBlock, DiagnosticsPreview, HunkInfo, ModeId, PermissionOption, PermissionOptionKind, PermissionOutcome,
    RequestPermissionParams, ToolCallContent, ToolCallStatus, ToolCallUpdate, ToolKind,
};
use tandem_tool_api::{Approver, ChangeDecision, CommandCheck, CommandDecision, StagedFile, ToolCheck};
use tokio_util::sync::CancellationToken;

use crate::SessionClient;
use tandem_policy::Verdict;

/// How long a permission request may wait for the person before it counts as rejected.
const PERSON_TIMEOUT: Duration = Duration::from_secs(3600);

/// "Always" answers, kept for the rest of the session.
#[derive(Debug, Default)]
pub struct Rules {
    /// Edits apply without asking.
    pub allow_edits: bool,
    /// Edits are rejected without asking.
    pub reject_edits: bool,
    /// Command prefixes that are rejected without asking.
    pub reject_commands: Vec<String>,
    /// Command prefixes that run without asking (`cargo test`, `npm run`, `ls`).
    pub allow_commands: Vec<String>,
    /// Tools of MCP servers that run without asking (`mcp__<server>__<tool>`).
    pub allow_tools: Vec<String>,
}

/// A session's state that approvals read and change.
#[derive(Debug)]
pub struct SessionGate {
    /// Session id.
    pub session_id: String,
    /// Current mode.
    pub mode: Mutex<ModeId>,
    /// "Always" rules.
    pub rules: Mutex<Rules>,
    /// Plan mode entered with `plan_enter` (its plan file may be written).
    pub plan: Mutex<Option<tandem_tool_api::PlanState>>,
    /// With `[review] precheck = "fix-first"`: the sets of files whose change went back to the
    /// model once already (`None`: changes go to the person at once).
    pub sent_back: Mutex<Option<std::collections::HashSet<String>>>,
}

impl SessionGate {
    /// A gate in `mode` with no rules.
    pub fn new(session_id: String, mode: ModeId) -> Self {
        Self {
            session_id,
            mode: Mutex::new(mode),
            rules: Mutex::new(Rules::default()),
            plan: Mutex::new(None),
            sent_back: Mutex::new(None),
        }
    }

    /// From now on a change the language servers say introduces errors goes back to the model
    /// once before the person sees it.
    pub fn fix_first(&self) {
        self.sent_back.lock().get_or_insert_with(Default::default);
    }

    /// Whether a change to the files named by `key` goes back to the model first; true once per
    /// key (the next proposal goes to the person whatever it introduces).
    pub fn send_back(&self, key: String) -> bool {
        self.sent_back.lock().as_mut().is_some_and(|sent| sent.insert(key))
    }

    /// Sets the mode.
    pub fn set_mode(&self, mode: ModeId) {
        *self.mode.lock() = mode;
    }

    /// The plan state of `plan_enter`.
    pub fn plan_state(&self) -> Option<tandem_tool_api::PlanState> {
        self.plan.lock().clone()
    }

    /// Whether `path` is the plan file of the current plan mode (writable while planning).
    pub fn is_plan_file(&self, path: &std::path::Path) -> bool {
        self.mode() == ModeId::Plan && self.plan_state().is_some_and(|p| p.plan_file == path)
    }

    /// The current mode.
    pub fn mode(&self) -> ModeId {
        *self.mode.lock()
    }

    fn rules(&self) -> parking_lot::MutexGuard<'_, Rules> {
        self.rules.lock()
    }
}

/// Programs whose first argument is a subcommand: an "always" rule covers the subcommand
/// (`cargo test`), not every use of the program.
const SUBCOMMAND_PROGRAMS: &[&str] =
    &["git", "cargo", "npm", "npx", "pnpm", "yarn", "go", "docker", "kubectl", "make", "pip", "uv", "poetry", "dotnet"];

/// The prefix an "always allow" answer for `command` covers.
pub fn command_prefix(command: &str) -> String {
    let words: Vec<&str> = command.split_whitespace().take(2).collect();
    match words.as_slice() {
        [program, sub, ..] if SUBCOMMAND_PROGRAMS.contains(program) && !sub.starts_with('-') => {
            format!("{program} {sub}")
        }
        [program, ..] => (*program).to_owned(),
        [] => String::new(),
    }
}

fn covered(prefix: &str, command: &str) -> bool {
    // Only simple commands: a rule for `ls` must not let `ls; rm -rf x` through.
    let simple = !command.contains([';', '&', '|', '`', '$', '>', '<', '\n']);
    simple && (command == prefix || command.starts_with(&format!("{prefix} ")))
}

mod undo;

use undo::{not_covered_text, titled};

/// Starts a call's checkpoint window again (a new snapshot before it runs).
pub(crate) type Reopen = Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>;

/// The approver of one tool call.
pub struct CallApprover {
    gate: Arc<SessionGate>,
    client: Arc<dyn SessionClient>,
    cancel: CancellationToken,
    tool_call_id: String,
    title: String,
    kind: ToolKind,
    raw_input: Value,
    /// The diffs that were applied, for the call's final update.
    applied: Mutex<Vec<ToolCallContent>>,
    /// The session's checkpoint store and the workspace root: which files undo leaves out.
    undo: Option<(Arc<tandem_checkpoint::Store>, PathBuf)>,
    /// For a call whose effects are unknown (a command): run once the person allowed it.
    reopen: Option<Reopen>,
    /// The person's rules, and the tool this call is of (its canonical name).
    policy: Option<(Arc<tandem_policy::Policy>, String)>,
    /// What a `PreToolUse` hook decided (allow: no asking; ask: asking whatever the mode).
    hook: Mutex<Option<(tandem_policy::Action, String)>>,
    /// The review offers "always" answers (not for a restore: there is no "always" to it).
    offers_always: bool,
}

impl CallApprover {
    /// An approver for the call `tool_call_id` of the session behind `gate`.
    pub fn new(
        gate: Arc<SessionGate>,
        client: Arc<dyn SessionClient>,
        cancel: CancellationToken,
        tool_call_id: String,
        title: String,
        kind: ToolKind,
        raw_input: Value,
    ) -> Self {
        Self {
            gate,
            client,
            cancel,
            tool_call_id,
            title,
            kind,
            raw_input,
            applied: Mutex::new(Vec::new()),
            undo: None,
            reopen: None,
            policy: None,
            hook: Mutex::new(None),
            offers_always: true,
        }
    }

    /// The review offers only "accept" and "reject" (a restore, a worktree brought over:
    /// nothing to always allow).
    pub fn once_only(mut self) -> Self {
        self.offers_always = false;
        self
    }

    /// Applies the person's rules to this call of `tool`.
    pub(crate) fn with_policy(mut self, policy: Arc<tandem_policy::Policy>, tool: &str) -> Self {
        self.policy = Some((policy, tool.to_owned()));
        self
    }

    /// A `PreToolUse` hook's decision for this call: `Allow` answers without asking (a deny
    /// rule still holds), `Ask` asks in every mode; `why` is shown.
    pub(crate) fn hook_decided(&self, action: tandem_policy::Action, why: String) {
        *self.hook.lock() = Some((action, why));
    }

    /// What the rules (and a hook) say about this call, given the rules' verdict.
    fn ruled(&self, verdict: impl FnOnce(&tandem_policy::Rules, &str) -> Verdict) -> Verdict {
        let ruled = match &self.policy {
            Some((policy, tool)) => verdict(&policy.rules(), tool),
            None => Verdict::Unruled,
        };
        match (ruled, self.hook.lock().clone()) {
            (deny @ Verdict::Deny { .. }, _) => deny,
            (_, Some((tandem_policy::Action::Ask, why))) => Verdict::Ask { reason: why },
            (ask @ Verdict::Ask { .. }, _) => ask,
            (_, Some((tandem_policy::Action::Allow, why))) => Verdict::Allow { rules: vec![why] },
            (other, _) => other,
        }
    }

    /// The project's root (where file rules are relative to).
    fn root(&self) -> Option<PathBuf> {
        self.policy.as_ref().map(|(policy, _)| policy.rules().root().to_path_buf())
    }

    /// Records "always allow" rules in the person's configuration; false when there is no
    /// policy (the session's own rules are used then).
    fn allow_always(&self, rules: &[String]) -> bool {
        let Some((policy, _)) = &self.policy else { return false };
        for rule in rules {
            match policy.allow_always(rule) {
                Ok(Some(file)) => tracing::info!(rule, file = %file.display(), "always allowed"),
                Ok(None) => {}
                Err(err) => tracing::warn!(rule, "the rule holds for this process only: {err}"),
            }
        }
        true
    }

    /// Checks changes against the checkpoint `store` of the workspace at `root`: a file it
    /// leaves out is named, and always asked about (yolo aside).
    pub(crate) fn with_undo(mut self, store: Option<Arc<tandem_checkpoint::Store>>, root: PathBuf) -> Self {
        self.undo = store.map(|store| (store, root));
        self
    }

    /// Runs `reopen` once the person allowed the call.
    pub(crate) fn with_reopen(mut self, reopen: Reopen) -> Self {
        self.reopen = Some(reopen);
        self
    }

    async fn allowed(&self) {
        if let Some(reopen) = &self.reopen {
            reopen().await;
        }
    }

    /// The diffs this call applied (after the review: only accepted hunks).
    pub fn take_applied(&self) -> Vec<ToolCallContent> {
        std::mem::take(&mut *self.applied.lock())
    }

    fn record(&self, files: &[StagedFile], accepted: Option<&[String]>) {
        let mut applied = self.applied.lock();
        for file in files {
            let proposed = file.new_text.clone().unwrap_or_default();
            let new_text = match accepted {
                None => proposed,
                Some(accepted) => {
                    let take = file.accepted_local_ids(accepted);
                    if take.is_empty() && !file.hunks.is_empty() {
                        continue;
                    }
                    if take.len() == file.hunks.len() {
                        proposed
                    } else {
                        let take: Vec<&str> = take.iter().map(String::as_str).collect();
                        let old = file.old_text.as_deref().unwrap_or_default();
                        tandem_text::hunks::apply_subset(old, &proposed, &take).unwrap_or(proposed)
                    }
                }
            };
            applied.push(diff_content(file, new_text, false));
        }
    }

    /// The answer the mode and the session's rules give to a change without asking; `None`:
    /// ask the person.
    fn answer_without_asking(&self, files: &[StagedFile]) -> Option<ChangeDecision> {
        let accept = Some(ChangeDecision::Accept { hunks: None });
        match self.gate.mode() {
            ModeId::Yolo | ModeId::AutoEdit => accept,
            // The loop blocks writing tools in plan mode; this is the second lock on the door.
            // Only the plan file may change, without asking.
            ModeId::Plan if files.iter().all(|f| f.moved_to.is_none() && self.gate.is_plan_file(&f.path)) => accept,
            ModeId::Plan => {
                Some(ChangeDecision::Reject { reason: Some("the session is in plan mode (read-only)".into()) })
            }
            ModeId::Default if self.gate.rules().reject_edits => Some(ChangeDecision::Reject {
                reason: Some("the person chose to reject every edit in this session".into()),
            }),
            ModeId::Default if self.gate.rules().allow_edits => accept,
            ModeId::Default => None,
        }
    }

    async fn ask(
        &self,
        title: String,
        content: Vec<ToolCallContent>,
        options: Vec<PermissionOption>,
        diagnostics: Option<DiagnosticsPreview>,
    ) -> Option<PermissionOutcome> {
        let params = RequestPermissionParams {
            session_id: self.gate.session_id.clone(),
            tool_call: ToolCallUpdate {
                tool_call_id: self.tool_call_id.clone(),
                title: Some(title),
                kind: Some(self.kind),
                status: Some(ToolCallStatus::Pending),
                locations: locations_of(&content),
                content: Some(content),
                raw_input: Some(self.raw_input.clone()),
                ..Default::default()
            },
            options,
            diagnostics,
        };
        let request = self.client.request_permission(params);
        tokio::select! {
            () = self.cancel.cancelled() => None,
            answer = tokio::time::timeout(PERSON_TIMEOUT, request) => Some(match answer {
                Err(_) => PermissionOutcome::Selected {
                    option_id: "reject_once".into(),
                    accepted_hunks: None,
                    message: Some(format!("nobody answered within {} minutes", PERSON_TIMEOUT.as_secs() / 60)),
                },
                Ok(Err(err)) => PermissionOutcome::Selected {
                    option_id: "reject_once".into(),
                    accepted_hunks: None,
                    message: Some(format!("the editor could not ask the person ({err})")),
                },
                Ok(Ok(result)) => {
                    // ACP: the editor answers `cancelled` when the person cancelled the turn; its
                    // `session/cancel` may arrive after this answer, so the turn ends here and
                    // does not ask the model again.
                    if matches!(result.outcome, PermissionOutcome::Cancelled) {
                        self.cancel.cancel();
                    }
                    result.outcome
                }
            }),
        }
    }
}

fn option(id: &str, name: impl Into<String>, kind: PermissionOptionKind) -> PermissionOption {
    PermissionOption { option_id: id.to_owned(), name: name.into(), kind }
}

/// The diff content of one staged file (`hunks` only for a permission request).
fn diff_content(file: &StagedFile, new_text: String, with_hunks: bool) -> ToolCallContent {
    let path = file.moved_to.as_ref().unwrap_or(&file.path).display().to_string();
    let hunks = if with_hunks {
        file.hunks
            .iter()
            .map(|h| HunkInfo {
                id: h.id.clone(),
                old_start: h.old_start,
                old_lines: h.old_lines,
                new_start: h.new_start,
                new_lines: h.new_lines,
                patch: h.patch.clone(),
                fuzz: (h.fuzz > 0).then_some(h.fuzz),
            })
            .collect()
    } else {
        Vec::new()
    };
    ToolCallContent::Diff { path, old_text: file.old_text.clone(), new_text, hunks }
}

#[async_trait]
impl Approver for CallApprover {
    fn asks_about(&self, files: &[StagedFile]) -> bool {
        self.answer_without_asking(files).is_none()
    }

    fn send_back_first(&self, files: &[StagedFile]) -> bool {
        let mut names: Vec<&str> = files.iter().map(|f| f.display.as_str()).collect();
        names.sort_unstable();
        self.asks_about(files) && self.gate.send_back(names.join("\n"))
    }

    async fn review_changes(&self, files: &[StagedFile], preview: Option<&DiagnosticsPreview>) -> ChangeDecision {
        let paths: Vec<PathBuf> =
            files.iter().flat_map(|f| std::iter::once(f.path.clone()).chain(f.moved_to.clone())).collect();
        let ruled = self.ruled(|rules, tool| rules.decide_paths(tool, &paths));
        if let Verdict::Deny { reason } = &ruled {
            return ChangeDecision::Reject { reason: Some(reason.clone()) };
        }
        // What this change would overwrite or delete beyond undo's reach (yolo never asks;
        // plan mode changes only its plan file).
        let not_covered = match self.gate.mode() {
            ModeId::Yolo | ModeId::Plan => Vec::new(),
            ModeId::Default | ModeId::AutoEdit => {
                self.not_covered(files.iter().filter(|f| f.old_text.is_some()).map(|f| f.path.clone()).collect()).await
            }
        };
        // A change to the project's own policy (its rules, hooks, MCP servers) asks in default
        // and auto-edit mode whatever the rules allow: the agent must not widen, for the next
        // session, what runs without asking.
        let ruled = match (&ruled, self.gate.mode(), self.root()) {
            (Verdict::Deny { .. }, _, _) | (_, ModeId::Yolo | ModeId::Plan, _) | (_, _, None) => ruled,
            (_, ModeId::Default | ModeId::AutoEdit, Some(root)) => {
                let policy_files = [".tandem/config.toml", ".tandem/mcp.json", ".mcp.json"].map(|f| root.join(f));
                if paths.iter().any(|p| policy_files.contains(p)) {
                    Verdict::Ask {
                        reason: "it changes the project's configuration, whose rules, hooks and servers apply to later sessions"
                            .to_owned(),
                    }
                } else {
                    ruled
                }
            }
        };
        let plan = self.gate.mode() == ModeId::Plan;
        let without_asking = match &ruled {
            Verdict::Ask { .. } if !plan => None,
            Verdict::Allow { .. } if !plan && self.gate.mode() == ModeId::Default => {
                Some(ChangeDecision::Accept { hunks: None })
            }
            _ => self.answer_without_asking(files),
        };
        if let Some(decision) = without_asking {
            let accept = matches!(decision, ChangeDecision::Accept { .. });
            if !accept || not_covered.is_empty() {
                if accept {
                    self.record(files, None);
                }
                return decision;
            }
        }
        let mut content = Vec::new();
        if !not_covered.is_empty() {
            content.push(ToolCallContent::Content { content: ContentBlock::text(not_covered_text(&not_covered)) });
        }
        if let Verdict::Ask { reason } = &ruled {
            content.push(ToolCallContent::Content { content: ContentBlock::text(format!("Asked because {reason}.")) });
        }
        content.extend(files.iter().map(|f| diff_content(f, f.new_text.clone().unwrap_or_default(), true)));
        let mut options = vec![
            option("allow_once", "Accept", PermissionOptionKind::AllowOnce),
            option("allow_always", "Always allow edits this session", PermissionOptionKind::AllowAlways),
            option("reject_once", "Reject", PermissionOptionKind::RejectOnce),
            option("reject_always", "Reject all edits this session", PermissionOptionKind::RejectAlways),
        ];
        if !self.offers_always {
            options.retain(|o| matches!(o.kind, PermissionOptionKind::AllowOnce | PermissionOptionKind::RejectOnce));
        }
        match self.ask(titled(&self.title, &not_covered), content, options, preview.cloned()).await {
            None | Some(PermissionOutcome::Cancelled) => ChangeDecision::Cancelled,
            Some(PermissionOutcome::Selected { option_id, accepted_hunks, message }) => match option_id.as_str() {
                "allow_once" | "allow_always" => {
                    if option_id == "allow_always" && self.offers_always {
                        self.gate.rules().allow_edits = true;
                    }
                    if accepted_hunks.as_ref().is_some_and(Vec::is_empty) {
                        return ChangeDecision::Reject { reason: message };
                    }
                    self.record(files, accepted_hunks.as_deref());
                    ChangeDecision::Accept { hunks: accepted_hunks }
                }
                "reject_always" if self.offers_always => {
                    self.gate.rules().reject_edits = true;
                    ChangeDecision::Reject { reason: message }
                }
                _ => ChangeDecision::Reject { reason: message },
            },
        }
    }

    async fn confirm_command(&self, check: &CommandCheck) -> CommandDecision {
        let command = check.command.trim();
        let parts = tandem_tool_exec::safety::parts(command);
        let cwd = self.root().map(|root| root.join(&check.working_dir)).unwrap_or_default();
        let ruled = self.ruled(|rules, tool| rules.decide_command(tool, parts.as_deref(), &cwd));
        if let Verdict::Deny { reason } = &ruled {
            return CommandDecision::Reject { reason: Some(reason.clone()) };
        }
        let rule_asks = matches!(ruled, Verdict::Ask { .. });
        let why = match (&check.needs_approval, &ruled) {
            (_, Verdict::Ask { reason }) => reason.clone(),
            (Some(why), _) => why.clone(),
            (None, _) => return CommandDecision::Allow,
        };
        let why = &why;
        if self.gate.mode() == ModeId::Plan {
            return CommandDecision::Reject { reason: Some("the session is in plan mode (read-only)".into()) };
        }
        if self.gate.mode() == ModeId::Yolo && !rule_asks {
            return CommandDecision::Allow;
        }
        let not_covered = self.not_covered(self.named_paths(command, &check.working_dir)).await;
        let loses = check.destroys_data || !not_covered.is_empty();
        if !loses && matches!(ruled, Verdict::Allow { .. }) {
            return CommandDecision::Allow;
        }
        if !loses && !rule_asks && self.gate.rules().allow_commands.iter().any(|prefix| covered(prefix, command)) {
            return CommandDecision::Allow;
        }
        if self.gate.rules().reject_commands.iter().any(|prefix| covered(prefix, command)) {
            return CommandDecision::Reject {
                reason: Some("the person chose to reject this command for the rest of the session".into()),
            };
        }
        // Auto-edit runs what would ask in the workspace-write sandbox, as the person chose a
        // mode that lets the agent change the workspace; data loss still asks.
        if self.gate.mode() == ModeId::AutoEdit && check.sandboxable && not_covered.is_empty() && !rule_asks {
            return CommandDecision::RunSandboxed;
        }
        let prefix = command_prefix(command);
        // "Always" records one rule per part that needs one (`npm test:*`), never the line.
        let always: Vec<String> = match (&parts, &self.policy) {
            (Some(parts), Some((policy, tool))) => {
                // Only the parts that needed the approval: not read-only, not allowed already.
                let rules = policy.rules();
                let allowed = |p: &tandem_policy::CommandPart| {
                    let alone = rules.decide_command(tool, Some(std::slice::from_ref(p)), &cwd);
                    matches!(alone, Verdict::Allow { .. })
                };
                let needed: Vec<Option<String>> =
                    parts.iter().filter(|p| !p.read_only && !allowed(p)).map(tandem_policy::always_rule).collect();
                needed.into_iter().collect::<Option<Vec<String>>>().unwrap_or_default()
            }
            _ => Vec::new(),
        };
        let always = {
            let mut unique = always;
            unique.dedup();
            unique
        };
        let background = if check.background { " (in the background)" } else { "" };
        let mut text = format!("$ {command}\n\nin `{}`{background}\nneeds approval: {why}", check.working_dir);
        if !not_covered.is_empty() {
            text.push_str(&format!("\n\n{}", not_covered_text(&not_covered)));
        }
        let content = vec![ToolCallContent::Content { content: ContentBlock::text(text) }];
        let mut options = vec![option("allow_once", "Run", PermissionOptionKind::AllowOnce)];
        // Data loss is confirmed each time, and a rule's "ask" each time too: no "always".
        if loses || rule_asks {
        } else if !always.is_empty() {
            let shown: Vec<String> = always.iter().map(|r| format!("`{r}`")).collect();
            options.push(option(
                "allow_always",
                format!("Always allow {} (saved in your config)", shown.join(", ")),
                PermissionOptionKind::AllowAlways,
            ));
        } else if self.policy.is_none() && !prefix.is_empty() && covered(&prefix, command) {
            options.push(option(
                "allow_always",
                format!("Always allow `{prefix}` this session"),
                PermissionOptionKind::AllowAlways,
            ));
        }
        // An answer may name an option that was not offered (a client's bug, or a hostile one):
        // "always" is kept only where it was offered.
        let always_offered = options.iter().any(|o| o.kind == PermissionOptionKind::AllowAlways);
        options.push(option("reject_once", "Don't run", PermissionOptionKind::RejectOnce));
        if !prefix.is_empty() && covered(&prefix, command) {
            options.push(option(
                "reject_always",
                format!("Never run `{prefix}` this session"),
                PermissionOptionKind::RejectAlways,
            ));
        }
        let decision = match self.ask(titled(&self.title, &not_covered), content, options, None).await {
            None | Some(PermissionOutcome::Cancelled) => CommandDecision::Cancelled,
            Some(PermissionOutcome::Selected { option_id, message, .. }) => match option_id.as_str() {
                "allow_once" => CommandDecision::Allow,
                "allow_always" if always_offered => {
                    if !self.allow_always(&always) {
                        self.gate.rules().allow_commands.push(prefix);
                    }
                    CommandDecision::Allow
                }
                "allow_always" => CommandDecision::Allow,
                "reject_always" => {
                    self.gate.rules().reject_commands.push(prefix);
                    CommandDecision::Reject { reason: message }
                }
                _ => CommandDecision::Reject { reason: message },
            },
        };
        if decision == CommandDecision::Allow {
            self.allowed().await;
        }
        decision
    }

    async fn confirm_tool(&self, check: &ToolCheck) -> CommandDecision {
        let ruled = self.ruled(|rules, _| rules.decide_tool(&check.tool));
        if let Verdict::Deny { reason } = &ruled {
            return CommandDecision::Reject { reason: Some(reason.clone()) };
        }
        let rule_asks = matches!(ruled, Verdict::Ask { .. });
        match self.gate.mode() {
            ModeId::Yolo if !rule_asks => return CommandDecision::Allow,
            ModeId::Plan => {
                return CommandDecision::Reject { reason: Some("the session is in plan mode (read-only)".into()) };
            }
            ModeId::Yolo | ModeId::Default | ModeId::AutoEdit => {}
        }
        if !rule_asks && (matches!(ruled, Verdict::Allow { .. }) || self.gate.rules().allow_tools.contains(&check.tool))
        {
            return CommandDecision::Allow;
        }
        let arguments = serde_json::to_string_pretty(&check.arguments).unwrap_or_else(|_| check.arguments.to_string());
        let text = match &check.server {
            Some(server) => format!(
                "MCP tool `{}` of server `{server}`\n\n{arguments}\n\nneeds approval: {}",
                check.tool, check.reason
            ),
            None => format!("`{}`\n\n{arguments}\n\nneeds approval: it {}", check.tool, check.reason),
        };
        let text = match &ruled {
            Verdict::Ask { reason } => format!("{text}\n\nAsked because {reason}."),
            _ => text,
        };
        let content = vec![ToolCallContent::Content { content: ContentBlock::text(text) }];
        let mut options = vec![option("allow_once", "Run", PermissionOptionKind::AllowOnce)];
        if !rule_asks {
            let lasts = if self.policy.is_some() { "(saved in your config)" } else { "this session" };
            options.push(option(
                "allow_always",
                format!("Always allow `{}` {lasts}", check.tool),
                PermissionOptionKind::AllowAlways,
            ));
        }
        options.push(option("reject_once", "Don't run", PermissionOptionKind::RejectOnce));
        let decision = match self.ask(self.title.clone(), content, options, None).await {
            None | Some(PermissionOutcome::Cancelled) => CommandDecision::Cancelled,
            Some(PermissionOutcome::Selected { option_id, message, .. }) => match option_id.as_str() {
                "allow_once" => CommandDecision::Allow,
                "allow_always" => {
                    if !self.allow_always(std::slice::from_ref(&check.tool)) {
                        self.gate.rules().allow_tools.push(check.tool.clone());
                    }
                    CommandDecision::Allow
                }
                _ => CommandDecision::Reject { reason: message },
            },
        };
        if decision == CommandDecision::Allow {
            self.allowed().await;
        }
        decision
    }
}

/// Where a permission request's changes are: each diff's file, at its first changed line.
/// Clients show the request's file from these (a diff's path alone may be joined wrongly).
fn locations_of(content: &[ToolCallContent]) -> Option<Vec<tandem_protocol::ToolCallLocation>> {
    let locations: Vec<tandem_protocol::ToolCallLocation> = content
        .iter()
        .filter_map(|item| match item {
            ToolCallContent::Diff { path, hunks, .. } => Some(tandem_protocol::ToolCallLocation {
                path: path.clone(),
                line: hunks.first().map(|hunk| hunk.new_start.max(1) as u32),
            }),
            _ => None,
        })
        .collect();
    (!locations.is_empty()).then_some(locations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_rules_cover_the_subcommand_and_only_simple_commands() {
        assert_eq!(command_prefix("cargo test -p x"), "cargo test");
        assert_eq!(command_prefix("git --no-pager log"), "git");
        assert_eq!(command_prefix("python3 script.py"), "python3");
        assert!(covered("cargo test", "cargo test -p x"));
        assert!(!covered("cargo test", "cargo testx"));
        assert!(!covered("cargo test", "cargo build"));
        assert!(!covered("ls", "ls; rm -rf x"));
        assert!(!covered("echo", "echo $(rm -rf x)"));
    }
}
