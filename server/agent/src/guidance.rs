//! The agent's side of `tandem-guidance`: the instruction budget from the model profile; what
//! comes into force when the model first reads or edits a file (added to the conversation once,
//! and put back word for word after a compaction); custom slash commands, `/init` and
//! `/context`; and the notices the person gets about cut or malformed guidance.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::Value;
use tandem_guidance::{Places, Severity, SystemBlock};
use tandem_llm::{Message, Part};
use tandem_protocol::{
    AvailableCommand, AvailableCommandInput, ContentBlock, ModeId, SessionUpdate, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolKind,
};

use crate::config::AgentError;
use crate::env::Env;
use crate::session::PlannedCall;
use crate::session::Session;

/// How the model's message for a custom command starts (how loading knows not to replay it as
/// typed: the command itself is replayed instead).
const COMMAND_MARK: &str = "[Command /";

/// The budget of instruction files and always-on rules for `model`, in bytes.
pub(crate) fn budget(env: &Env, model: &str) -> usize {
    let resolved = tandem_llm::profile::resolve(&env.config.provider, model);
    resolved.instruction_budget() as usize * tandem_guidance::BYTES_PER_TOKEN
}

/// The places of `session`.
pub(crate) fn places(env: &Env, session: &Session) -> Places {
    Places::new(env.workspace.root(), &session.cwd)
}

/// Tells the person, once per session and whenever it changes, what the budget cut, which
/// guidance files are malformed, and which custom commands a built-in one shadows (as a finished
/// card, which every front door shows).
pub(crate) async fn notify(env: &Env, session: &Session, block: &SystemBlock, budget: usize) {
    let mut lines: Vec<String> = block.cut_notice(budget).into_iter().collect();
    lines.extend(block.problems.iter().filter(|p| p.severity == Severity::Error).map(ToString::to_string));
    let (_, command_problems) = tandem_guidance::commands(&places(env, session));
    lines.extend(command_problems.iter().map(ToString::to_string));
    let text = lines.join("\n");
    {
        let mut last = session.guidance_notice.lock();
        if *last == text {
            return;
        }
        *last = text.clone();
    }
    if text.is_empty() {
        return;
    }
    let title = match (block.cut.is_empty(), block.problems.iter().find(|p| p.severity == Severity::Error)) {
        (false, _) => {
            let files: Vec<&str> = block.cut.iter().map(|c| c.file.as_str()).collect();
            format!("Instructions over budget: cut {}", files.join(", "))
        }
        (true, Some(problem)) => format!("Guidance not used: {problem}"),
        (true, None) => match command_problems.first() {
            Some(problem) => format!("Commands: {}", problem.message),
            None => "Guidance".to_owned(),
        },
    };
    card(session, title, text, Vec::new()).await;
}

/// A finished card of the agent's own (not a tool call of the model).
async fn card(session: &Session, title: String, text: String, locations: Vec<ToolCallLocation>) {
    let id = format!("{}g{}", session.call_prefix, session.next_call.fetch_add(1, Ordering::Relaxed));
    // Announced, then finished: the shape of every card, which each front door shows.
    let content = vec![ToolCallContent::Content { content: ContentBlock::text(text) }];
    let start = SessionUpdate::ToolCall(ToolCall {
        tool_call_id: id.clone(),
        title: title.clone(),
        kind: ToolKind::Read,
        status: ToolCallStatus::InProgress,
        content: Vec::new(),
        locations,
        raw_input: None,
        tool_name: None,
    });
    session.client.update(&session.id, start).await;
    let done = ToolCallUpdate {
        tool_call_id: id,
        status: Some(ToolCallStatus::Completed),
        title: Some(title),
        content: Some(content),
        ..Default::default()
    };
    session.client.update(&session.id, SessionUpdate::ToolCallUpdate(done)).await;
}

/// The files the calls that succeeded read or edited (file tools only), resolved.
fn touched(env: &Env, session: &Session, calls: &[PlannedCall], results: &[Part]) -> Vec<PathBuf> {
    let mut raw: Vec<String> = Vec::new();
    for call in calls {
        let ok = results.iter().any(
            |part| matches!(part, Part::ToolResult { call_id, is_error: false, .. } if *call_id == call.provider_id),
        );
        let Some(tool) = session.registry.find(&call.name) else { continue };
        if !ok {
            continue;
        }
        let args = &call.arguments;
        match tool.spec().name {
            "read" | "write" | "edit" | "append" | "multiedit" => {
                raw.extend(args.get("file_path").and_then(Value::as_str).map(str::to_owned));
                for edit in args.get("edits").and_then(Value::as_array).into_iter().flatten() {
                    raw.extend(edit.get("file_path").and_then(Value::as_str).map(str::to_owned));
                }
            }
            "apply_patch" => {
                let patch = args.get("patch").and_then(Value::as_str).unwrap_or_default();
                for line in patch.lines() {
                    let path = line
                        .strip_prefix("+++ ")
                        .map(|p| p.split('\t').next().unwrap_or(p).trim())
                        .map(|p| p.strip_prefix("b/").unwrap_or(p))
                        .filter(|p| *p != "/dev/null")
                        .or_else(|| line.strip_prefix("*** Update File: "))
                        .or_else(|| line.strip_prefix("*** Add File: "));
                    raw.extend(path.map(|p| p.trim().to_owned()));
                }
            }
            _ => {}
        }
    }
    let mut paths: Vec<PathBuf> =
        raw.iter().filter_map(|path| env.workspace.resolve(path, &session.cwd).ok()).collect();
    paths.dedup();
    paths
}

/// What comes into force because of the calls of one model turn (nested instruction files and
/// scoped rules, each once per session): texts to add to the message of their results. The
/// person sees a card for each.
pub(crate) async fn arrivals(env: &Env, session: &Session, calls: &[PlannedCall], results: &[Part]) -> Vec<Part> {
    let paths = touched(env, session, calls, results);
    if paths.is_empty() {
        return Vec::new();
    }
    let places = places(env, session);
    let (rules, _) = tandem_guidance::rules(&places);
    let mut arrived = Vec::new();
    for path in &paths {
        let (arrivals, problems) = session.guidance.lock().touch(&places, &rules, path);
        for problem in problems {
            tracing::warn!(session = session.id, "{problem}");
        }
        arrived.extend(arrivals);
    }
    let mut parts = Vec::new();
    for arrival in arrived {
        let what = match arrival.kind {
            tandem_guidance::ArrivalKind::Instructions => "Instructions",
            tandem_guidance::ArrivalKind::Rule => "Rule",
        };
        let location =
            ToolCallLocation { path: env.workspace.root().join(&arrival.file).display().to_string(), line: None };
        let title = format!("{what} {} in force (for {})", arrival.file, arrival.trigger);
        card(session, title, arrival.text.clone(), vec![location]).await;
        parts.push(Part::Text { text: arrival.text });
    }
    parts
}

/// After older turns were replaced by a summary: every arrival in force that the kept messages
/// do not hold word for word goes into the summary's message, unchanged.
pub(crate) fn keep_in_force(session: &Session, messages: &mut [Arc<Message>]) {
    let in_force: Vec<String> = session.guidance.lock().in_force().iter().map(|a| a.text.clone()).collect();
    let present = |text: &str| {
        messages.iter().any(|m| m.content.iter().any(|p| matches!(p, Part::Text { text: t } if t == text)))
    };
    let missing: Vec<String> = in_force.into_iter().filter(|text| !present(text)).collect();
    if let Some(first) = messages.first_mut()
        && !missing.is_empty()
    {
        Arc::make_mut(first).content.extend(missing.into_iter().map(|text| Part::Text { text }));
    }
}

/// Whether `text` must survive every compaction stage as it is.
pub(crate) fn is_in_force(text: &str) -> bool {
    tandem_guidance::is_arrival(text)
}

/// A loaded session's history: what was in force stays in force.
pub(crate) fn remember(env: &Env, session: &Session, messages: &[Arc<Message>]) {
    let mut tracker = session.guidance.lock();
    for part in messages.iter().flat_map(|m| m.content.iter()) {
        if let Part::Text { text } = part {
            tracker.remember(env.workspace.root(), text);
        }
    }
}

/// Whether a stored user message is a command's expansion (replayed as the command typed).
pub(crate) fn is_command_message(message: &Message) -> bool {
    matches!(message.content.first(), Some(Part::Text { text }) if text.starts_with(COMMAND_MARK))
}

/// What a prompt turns into.
pub(crate) enum Prepared {
    /// Not a command of the agent's: sent as it is.
    Plain(Vec<ContentBlock>),
    /// Answered without the model (`/context`).
    Reply {
        /// The command as typed (stored, so loading replays it).
        typed: String,
        /// The answer.
        text: String,
    },
    /// A command's expansion, with the model and mode it asks for.
    Command {
        /// The command as typed (stored, so loading replays it).
        typed: String,
        /// What the model gets.
        prompt: Vec<ContentBlock>,
        /// The model of this turn.
        model: Option<String>,
        /// The mode the session switches to first.
        mode: Option<ModeId>,
        /// The card the person sees: title and the expanded text.
        card: (String, String),
    },
}

/// Expands `/init`, `/context` and custom commands (a prompt whose first block is the command's
/// text; the blocks after it go along); anything else is [`Prepared::Plain`].
pub(crate) fn prepare(env: &Env, session: &Session, prompt: Vec<ContentBlock>) -> Result<Prepared, AgentError> {
    // The command is the first text; what the editor attached (files, a selection) goes along.
    let Some(ContentBlock::Text { text }) = prompt.first() else { return Ok(Prepared::Plain(prompt)) };
    let Some(invocation) = tandem_guidance::invocation(text) else { return Ok(Prepared::Plain(prompt)) };
    let attached = &prompt[1..];
    let with = |message: String| {
        let mut blocks = vec![ContentBlock::text(message)];
        blocks.extend(attached.iter().cloned());
        blocks
    };
    let typed = text.trim().to_owned();
    let places = places(env, session);
    match invocation.name {
        "context" => return Ok(Prepared::Reply { typed, text: report(env, Some(session)) }),
        "init" => {
            let body = tandem_guidance::expand(tandem_guidance::BUILTIN_INIT, invocation.arguments);
            let message = format!("{COMMAND_MARK}init, built in]\n{body}");
            return Ok(Prepared::Command {
                card: (typed.clone(), body),
                typed,
                prompt: with(message),
                model: None,
                mode: None,
            });
        }
        _ => {}
    }
    let (commands, _) = tandem_guidance::commands(&places);
    let Some(command) = commands.into_iter().find(|c| c.name == invocation.name) else {
        return Ok(Prepared::Plain(prompt));
    };
    let mode = match &command.mode {
        None => None,
        Some(raw) => Some(serde_json::from_value::<ModeId>(Value::String(raw.clone())).map_err(|_| {
            AgentError::Invalid(format!(
                "{}: `mode: {raw}` is not a mode (default, auto-edit, plan or yolo)",
                command.file
            ))
        })?),
    };
    // A repository's command may make the session stricter, never laxer.
    let current = session.gate.mode();
    let mode = mode.filter(|m| command.origin == tandem_guidance::Origin::User || m.laxness() <= current.laxness());
    let body = tandem_guidance::expand(&command.body, invocation.arguments);
    let message = format!("{COMMAND_MARK}{}, from {}]\n{body}", typed.trim_start_matches('/'), command.file);
    Ok(Prepared::Command {
        card: (format!("{typed} ({})", command.file), body),
        typed,
        prompt: with(message),
        model: command.model.clone(),
        mode,
    })
}

/// Shows the person what a command expanded to.
pub(crate) async fn show_command(session: &Session, title: String, body: String) {
    card(session, title, body, Vec::new()).await;
}

/// The commands the agent answers, for `/` completion and ACP's `available_commands_update`:
/// `/context`, `/init`, then the custom ones of `cwd` (built-in names win).
pub(crate) fn commands(places: &Places) -> Vec<AvailableCommand> {
    let mut list = vec![
        AvailableCommand {
            name: "context".into(),
            description:
                "List what the agent is told here: instruction files, rules, commands, skills, with their token costs"
                    .into(),
            input: None,
        },
        AvailableCommand {
            name: "init".into(),
            description: "Have the agent write a first AGENTS.md for this project (you review it like any change)"
                .into(),
            input: None,
        },
    ];
    let (custom, _) = tandem_guidance::commands(places);
    list.extend(custom.into_iter().map(|command| AvailableCommand {
        name: command.name,
        description: command.description,
        input: command.argument_hint.map(|hint| AvailableCommandInput { hint }),
    }));
    list
}

/// `/context` and `tandem context`: what is in force, with token costs.
pub(crate) fn report(env: &Env, session: Option<&Session>) -> String {
    let (places, model) = match session {
        Some(session) => (places(env, session), session.model()),
        None => (Places::new(env.workspace.root(), env.workspace.root()), env.config.provider.model.clone()),
    };
    let tracker = session.map(|s| s.guidance.lock().clone());
    tandem_guidance::report(&places, budget(env, &model), tracker.as_ref()).0
}
