//! The terminal as a session client: the answer streams to stdout, tool calls show as cards
//! (a command's with its exit status and the tail of its output), a spinner on stderr while
//! the model or a tool is busy, and approvals with one key.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::io::IsTerminal as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tandem_agent::{ClientError, SessionClient};
use tandem_protocol::{
    AskUserParams, AskUserResult, ContentBlock, PermissionOptionKind, PermissionOutcome, RequestPermissionParams,
    RequestPermissionResult, SessionUpdate, ToolCallContent, ToolCallStatus, ToolCallUpdate, Usage,
};

use super::keys;

/// Lines of a command's output shown under its card.
const TAIL_LINES: usize = 8;

/// ANSI styling, on only for a terminal and without `NO_COLOR`.
pub(super) struct Style {
    color: bool,
}

impl Style {
    /// Styling for a stream that is (or is not) a terminal.
    pub(super) fn for_stream(is_terminal: bool) -> Self {
        Self { color: is_terminal && std::env::var_os("NO_COLOR").is_none() }
    }

    pub(super) fn paint(&self, code: &str, text: &str) -> String {
        if self.color { format!("\x1b[{code}m{text}\x1b[0m") } else { text.to_owned() }
    }
}

/// `12345` as `12.3k`.
fn tokens(n: u64) -> String {
    if n < 1_000 { n.to_string() } else { format!("{:.1}k", n as f64 / 1_000.0) }
}

/// The summary line's token part: the session's totals and how full the window was last.
pub(super) fn usage_line(usage: &Usage) -> String {
    let totals = usage.session;
    let mut line = format!("{} tokens in", tokens(totals.input_tokens));
    if totals.cache_read_tokens > 0 {
        line.push_str(&format!(" ({} cached)", tokens(totals.cache_read_tokens)));
    }
    line.push_str(&format!(", {} out", tokens(totals.output_tokens)));
    if totals.reasoning_tokens > 0 {
        line.push_str(&format!(" ({} reasoning)", tokens(totals.reasoning_tokens)));
    }
    if usage.context_window > 0 {
        line.push_str(&format!(
            "; context {} of {}",
            tokens(usage.input_tokens + usage.output_tokens),
            tokens(usage.context_window)
        ));
    }
    if let Some(cost) = totals.cost_usd {
        line.push_str(&format!("; about ${cost:.2} at list prices"));
    }
    line
}

/// Writes `text` to stdout at once.
pub(super) fn out(text: &str) {
    crate::stdout::text(text);
}

/// The terminal as a session client.
pub(super) struct Terminal {
    /// Styling of stdout (the answer, cards, diffs) and of stderr (thinking, notes).
    pub(super) style: Style,
    pub(super) err_style: Style,
    /// `--yes`: every approval is given.
    yes: bool,
    /// Titles of tool calls by id, for their final line.
    titles: Mutex<HashMap<String, String>>,
    /// Serialises questions with output.
    asking: tokio::sync::Mutex<()>,
    /// The session's latest token counts, for the summary line.
    pub(super) usage: Mutex<Option<Usage>>,
    /// Something came from the model during the current turn.
    heard: AtomicBool,
    /// An approval or a question was needed and nobody could answer it.
    unanswered: AtomicBool,
    /// The spinner on stderr, while waiting (only when stderr is a terminal, and only during
    /// a turn: [`Terminal::begin_turn`] to [`Terminal::end_turn`]).
    spinner: Mutex<Option<indicatif::ProgressBar>>,
    spins: bool,
    in_turn: AtomicBool,
    /// The last thing written to stdout ended its line (a spinner starts on a line of its own).
    at_line_start: AtomicBool,
    /// A stored session is being shown again (`--session`, `/sessions ID`).
    replaying: AtomicBool,
    /// stdout is a terminal: cards and questions go there; piped, only the answer does.
    stdout_tty: bool,
    /// A JSON run (`--output-format json|stream-json`): updates become events, and nothing
    /// else reaches stdout.
    pub(super) events: Option<super::events::Events>,
}

impl Terminal {
    pub(super) fn new(yes: bool, format: super::events::OutputFormat) -> Self {
        let events = (format != super::events::OutputFormat::Text).then(|| super::events::Events::new(format));
        Self {
            style: Style::for_stream(std::io::stdout().is_terminal()),
            err_style: Style::for_stream(std::io::stderr().is_terminal()),
            yes,
            titles: Mutex::new(HashMap::new()),
            asking: tokio::sync::Mutex::new(()),
            usage: Mutex::new(None),
            heard: AtomicBool::new(false),
            unanswered: AtomicBool::new(false),
            spinner: Mutex::new(None),
            spins: std::io::stderr().is_terminal() && events.is_none(),
            in_turn: AtomicBool::new(false),
            at_line_start: AtomicBool::new(true),
            replaying: AtomicBool::new(false),
            stdout_tty: std::io::stdout().is_terminal(),
            events,
        }
    }

    /// Starts a turn's bookkeeping: nothing heard, nothing unanswered yet.
    pub(super) fn begin_turn(&self) {
        self.heard.store(false, Ordering::Relaxed);
        self.unanswered.store(false, Ordering::Relaxed);
        if let Some(events) = &self.events {
            events.begin();
        }
        self.in_turn.store(true, Ordering::Relaxed);
        self.wait("thinking");
    }

    /// Ends a turn (or any command that showed progress): the spinner goes and stays gone
    /// until the next turn begins.
    pub(super) fn end_turn(&self) {
        self.in_turn.store(false, Ordering::Relaxed);
        self.quiet();
    }

    /// While `on`, updates are a stored session shown again: the person's prompts show, each
    /// message ends its line, nothing spins; piped or in a JSON run nothing is shown at all
    /// (the output is the new answer only).
    pub(super) fn replaying(&self, on: bool) {
        self.replaying.store(on, Ordering::Relaxed);
    }

    /// Whether the model answered anything this turn.
    pub(super) fn heard(&self) -> bool {
        self.heard.load(Ordering::Relaxed)
    }

    /// Whether an approval or question went unanswered for want of a terminal this turn.
    pub(super) fn unanswered(&self) -> bool {
        self.unanswered.load(Ordering::Relaxed)
    }

    /// Shows the spinner with `what` (replacing any other).
    pub(super) fn wait(&self, what: &str) {
        if !self.spins || !self.in_turn.load(Ordering::Relaxed) {
            return;
        }
        if !self.at_line_start.swap(true, Ordering::Relaxed) {
            // The spinner draws on a line of its own, never over streamed text.
            out("\n");
        }
        let mut current = self.spinner.lock();
        // The old one clears its own line before the new one draws there.
        if let Some(old) = current.take() {
            old.finish_and_clear();
        }
        let spinner = indicatif::ProgressBar::new_spinner();
        spinner.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        spinner.set_message(format!("{what}…"));
        spinner.enable_steady_tick(Duration::from_millis(100));
        *current = Some(spinner);
    }

    /// Takes the spinner off the screen before something is written.
    pub(super) fn quiet(&self) {
        if let Some(spinner) = self.spinner.lock().take() {
            spinner.finish_and_clear();
        }
    }

    /// Writes to stdout, the spinner gone first.
    pub(super) fn say(&self, text: &str) {
        self.quiet();
        out(text);
        if !text.is_empty() {
            self.at_line_start.store(text.ends_with('\n'), Ordering::Relaxed);
        }
    }

    /// Writes what is Tandem's rather than the answer (cards, questions): to stdout on a
    /// terminal, to stderr when stdout is piped, so a script reads only the answer there.
    fn note(&self, text: &str) {
        if self.stdout_tty {
            self.say(text);
        } else {
            self.quiet();
            eprint!("{text}");
        }
    }

    fn diff(&self, patch: &str) -> String {
        patch
            .lines()
            .map(|line| match line.as_bytes().first() {
                Some(b'+') => self.style.paint("32", line),
                Some(b'-') => self.style.paint("31", line),
                Some(b'@') => self.style.paint("36", line),
                _ => line.to_owned(),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The card of a finished tool call: ✓ or ✗ with its title; for a command, its exit status
    /// decides, and the last lines of its output follow, dimmed.
    fn card(&self, title: &str, update: &ToolCallUpdate) -> String {
        let raw = update.raw_output.as_ref();
        let metadata = raw.and_then(|raw| raw.get("metadata"));
        let command = metadata.is_some_and(|m| m.get("exitCode").is_some());
        let exit = metadata.and_then(|m| m.get("exitCode")).and_then(Value::as_i64);
        let timed_out = metadata.and_then(|m| m.get("timedOut")).and_then(Value::as_bool) == Some(true);
        let failed = update.status == Some(ToolCallStatus::Failed)
            || exit.is_some_and(|code| code != 0)
            || timed_out
            || (command && exit.is_none());
        let mark = if failed { self.style.paint("31", "✗") } else { self.style.paint("32", "✓") };
        let mut card = format!("\n{mark} {title}");
        if update.status == Some(ToolCallStatus::Failed) {
            let why = texts(update).next().and_then(|text| text.lines().next()).unwrap_or_default();
            if !why.is_empty() && !title.contains(why) {
                card.push_str(&format!(": {why}"));
            }
        }
        card.push('\n');
        if command {
            // A command's output is its last text.
            let output = texts(update).next_back().unwrap_or_default();
            for line in tail(output, TAIL_LINES) {
                card.push_str(&self.style.paint("2", &format!("  │ {line}")));
                card.push('\n');
            }
        }
        card
    }

    /// A question whose answers are its options (trusting a folder: "Trust this folder",
    /// "Not now"), each chosen by the first letter of its name that no earlier answer took.
    async fn own_answers(&self, params: &RequestPermissionParams) -> Result<RequestPermissionResult, ClientError> {
        let mut keys = String::new();
        let mut choices = Vec::new();
        let mut ids = Vec::new();
        for option in &params.options {
            let name = option.name.as_str();
            let Some((at, key)) = name
                .char_indices()
                .map(|(at, c)| (at, c.to_ascii_lowercase()))
                .find(|(_, c)| c.is_ascii_alphabetic() && !keys.contains(*c))
            else {
                continue;
            };
            keys.push(key);
            ids.push(option.option_id.clone());
            choices.push(format!("{}[{key}]{}", name[..at].to_lowercase(), &name[at + 1..]));
        }
        let decline = params.options.iter().find(|o| o.kind == PermissionOptionKind::RejectOnce);
        if self.yes {
            // `--yes` gives approvals; it never trusts a folder (a CI job runs on others' code).
            self.note(&self.style.paint("2", "(--yes answers no here: `tandem trust` trusts a folder)\n"));
            return Ok(selected(decline.map(|o| o.option_id.as_str()).unwrap_or("reject_once"), None));
        }
        let Some(answer) = keys::key(format!("{}? ", choices.join(" / ")), &keys).await else {
            return Err(self.nobody("this question"));
        };
        let chosen = keys.chars().position(|k| k == answer).and_then(|i| ids.get(i)).cloned();
        Ok(selected(&chosen.unwrap_or_default(), None))
    }

    /// One update of a stored session shown again: on a terminal, the person's prompts, the
    /// answers on lines of their own and the cards; piped, only the answers, on stderr.
    fn replay(&self, update: SessionUpdate) {
        if !self.stdout_tty {
            // Piped: stdout carries the new answer alone; what the session said before (and
            // notes about the load itself) goes to stderr.
            if let SessionUpdate::AgentMessageChunk { content: ContentBlock::Text { text } } = update {
                eprintln!("{}", text.trim_end());
            }
            return;
        }
        match update {
            SessionUpdate::UserMessageChunk { content: ContentBlock::Text { text }, .. } => {
                self.say(&format!("\n{}\n", self.style.paint("1", &format!("› {}", text.trim_end()))));
            }
            SessionUpdate::UserMessageChunk { content: ContentBlock::ResourceLink { name, .. }, .. } => {
                self.say(&format!("  (attached {name})\n"));
            }
            SessionUpdate::AgentMessageChunk { content: ContentBlock::Text { text } } => {
                let end = if text.ends_with('\n') { "" } else { "\n" };
                self.say(&format!("{text}{end}"));
            }
            SessionUpdate::ToolCall(call) => {
                self.titles.lock().insert(call.tool_call_id, call.title);
            }
            SessionUpdate::ToolCallUpdate(update)
                if matches!(update.status, Some(ToolCallStatus::Completed | ToolCallStatus::Failed)) =>
            {
                self.say(&self.card(&self.title_of(&update), &update));
            }
            SessionUpdate::UsageUpdate(usage) => *self.usage.lock() = Some(usage),
            _ => {}
        }
    }

    /// The title of a call's update: its own, else the one its call started with.
    fn title_of(&self, update: &ToolCallUpdate) -> String {
        update.title.clone().or_else(|| self.titles.lock().get(&update.tool_call_id).cloned()).unwrap_or_default()
    }

    /// Records that nobody could answer and says how to run so that someone can.
    fn nobody(&self, what: &str) -> ClientError {
        self.unanswered.store(true, Ordering::Relaxed);
        ClientError::Unavailable(format!(
            "no terminal to ask on for {what}: run `tandem run` in a terminal, with --yes, or in a mode that does \
             not ask (--mode auto-edit or yolo)"
        ))
    }
}

/// The text contents of a tool call update, in order.
fn texts(update: &ToolCallUpdate) -> impl DoubleEndedIterator<Item = &str> {
    update.content.iter().flatten().filter_map(|c| match c {
        ToolCallContent::Content { content: ContentBlock::Text { text } } => Some(text.as_str()),
        _ => None,
    })
}

/// The last `n` non-empty lines of `output` (none for "(no output)").
fn tail(output: &str, n: usize) -> Vec<&str> {
    if output.trim() == "(no output)" {
        return Vec::new();
    }
    let lines: Vec<&str> = output.lines().filter(|line| !line.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].to_vec()
}

fn selected(option_id: &str, accepted_hunks: Option<Vec<String>>) -> RequestPermissionResult {
    RequestPermissionResult {
        outcome: PermissionOutcome::Selected { option_id: option_id.to_owned(), accepted_hunks, message: None },
    }
}

/// `path` relative to the current directory when it is below it.
fn shown_path(path: &str) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| std::path::Path::new(path).strip_prefix(cwd).ok().map(|p| p.display().to_string()))
        .unwrap_or_else(|| path.to_owned())
}

#[async_trait]
impl SessionClient for Terminal {
    async fn update(&self, _session_id: &str, update: SessionUpdate) {
        if let Some(events) = &self.events {
            match &update {
                SessionUpdate::UsageUpdate(usage) => {
                    self.heard.store(true, Ordering::Relaxed);
                    *self.usage.lock() = Some(*usage);
                }
                SessionUpdate::AgentMessageChunk { .. }
                | SessionUpdate::AgentThoughtChunk { .. }
                | SessionUpdate::ToolCall(_) => self.heard.store(true, Ordering::Relaxed),
                _ => {}
            }
            if !self.replaying.load(Ordering::Relaxed) {
                events.update(update);
            }
            return;
        }
        if self.replaying.load(Ordering::Relaxed) {
            self.replay(update);
            return;
        }
        match update {
            SessionUpdate::AgentMessageChunk { content: ContentBlock::Text { text } } => {
                self.heard.store(true, Ordering::Relaxed);
                self.say(&text);
            }
            SessionUpdate::AgentThoughtChunk { content: ContentBlock::Text { text } } => {
                self.heard.store(true, Ordering::Relaxed);
                self.quiet();
                eprint!("{}", self.err_style.paint("2", &text));
            }
            SessionUpdate::ToolCall(call) => {
                self.heard.store(true, Ordering::Relaxed);
                self.wait(&call.title);
                self.titles.lock().insert(call.tool_call_id, call.title);
            }
            SessionUpdate::ToolCallUpdate(update) => {
                let title = self.title_of(&update);
                if matches!(update.status, Some(ToolCallStatus::Completed | ToolCallStatus::Failed)) {
                    let mut card = self.card(&title, &update);
                    if update.tool_call_id == tandem_agent::TRUST_CARD {
                        // What trusting did, and from when it applies (a refusal says why above).
                        let said = if update.status == Some(ToolCallStatus::Completed) {
                            texts(&update).collect()
                        } else {
                            Vec::new()
                        };
                        for text in said {
                            card.push_str(&self.style.paint("2", &format!("  {text}\n")));
                        }
                        self.note(&card);
                    } else {
                        self.say(&card);
                    }
                    self.wait("thinking");
                }
            }
            SessionUpdate::Plan { entries } => {
                let lines: Vec<String> = entries.iter().map(|e| format!("  [{}] {}", e.status, e.content)).collect();
                self.say(&format!("\nPlan:\n{}\n", lines.join("\n")));
            }
            SessionUpdate::CurrentModeUpdate { current_mode_id } => {
                self.say(&format!("\n(mode: {})\n", current_mode_id.as_str()));
            }
            SessionUpdate::UsageUpdate(usage) => {
                self.heard.store(true, Ordering::Relaxed);
                *self.usage.lock() = Some(usage);
            }
            _ => {}
        }
    }

    async fn ask_user(&self, params: AskUserParams) -> std::result::Result<AskUserResult, ClientError> {
        if let Some(events) = &self.events {
            let title = params.questions.first().map(|q| q.question.clone()).unwrap_or_default();
            events.denied(&title, "a JSON run asks no questions");
            return Err(self.nobody("a question"));
        }
        let _turn = self.asking.lock().await;
        self.quiet();
        let mut answers = Vec::new();
        for question in &params.questions {
            let mut shown = format!("\n{}\n", self.style.paint("1", &format!("? {}", question.question)));
            for (i, option) in question.options.iter().enumerate() {
                let description =
                    if option.description.is_empty() { String::new() } else { format!(" — {}", option.description) };
                shown.push_str(&format!("  {}. {}{description}\n", i + 1, option.label));
            }
            out(&shown);
            let hint = match (question.options.is_empty(), question.multi_select) {
                (true, _) => "answer".to_owned(),
                (false, true) => "numbers separated by commas".to_owned(),
                (false, false) => format!("1-{}", question.options.len()),
            };
            let Some(line) = keys::line(format!("{hint}> ")).await else {
                return Err(self.nobody("a question"));
            };
            if question.options.is_empty() {
                answers.push(vec![line]);
                continue;
            }
            let chosen: Vec<String> = line
                .split(',')
                .filter_map(|n| n.trim().parse::<usize>().ok())
                .filter_map(|n| question.options.get(n.wrapping_sub(1)).map(|o| o.label.clone()))
                .take(if question.multi_select { usize::MAX } else { 1 })
                .collect();
            if chosen.is_empty() {
                return Ok(AskUserResult { answers: None, cancelled: Some(true) });
            }
            answers.push(chosen);
        }
        self.wait("thinking");
        Ok(AskUserResult { answers: Some(answers), cancelled: None })
    }

    async fn request_permission(
        &self,
        params: RequestPermissionParams,
    ) -> std::result::Result<RequestPermissionResult, ClientError> {
        if let Some(events) = &self.events {
            let title = params.tool_call.title.clone().unwrap_or_default();
            let allow = params.options.iter().find(|o| o.kind == PermissionOptionKind::AllowOnce);
            return match allow {
                Some(allow) if self.yes => Ok(selected(&allow.option_id, None)),
                _ => {
                    events.denied(&title, "a JSON run asks nothing: approve with --yes, a mode or permission rules");
                    Err(self.nobody("this approval"))
                }
            };
        }
        let _turn = self.asking.lock().await;
        self.quiet();
        let title = params.tool_call.title.clone().unwrap_or_default();
        let content = params.tool_call.content.clone().unwrap_or_default();
        let mut shown = format!("\n{}\n", self.style.paint("1", &format!("? {title}")));
        let mut hunks = Vec::new();
        for item in &content {
            match item {
                ToolCallContent::Diff { path, hunks: file_hunks, .. } => {
                    shown.push_str(&format!("{}\n", self.style.paint("1", &shown_path(path))));
                    for hunk in file_hunks {
                        shown.push_str(&format!("{}\n", self.diff(&hunk.patch)));
                        hunks.push(hunk.clone());
                    }
                }
                ToolCallContent::Content { content: ContentBlock::Text { text } } => {
                    shown.push_str(text);
                    shown.push('\n');
                }
                _ => {}
            }
        }
        if let Some(preview) = &params.diagnostics {
            // What the language servers say the change would break (or that they could not say).
            let code = if preview.files.iter().any(|f| !f.introduced.is_empty()) { "33" } else { "2" };
            shown.push_str(&format!("{}\n", self.style.paint(code, &format!("diagnostics: {}", preview.summary))));
        }
        let has = |kind| params.options.iter().find(|o| o.kind == kind).map(|o| o.option_id.clone());
        if has(PermissionOptionKind::AllowOnce).is_none() {
            // Not a tool call (trusting a folder): its own answers, with their own keys.
            self.note(&shown);
            return self.own_answers(&params).await;
        }
        out(&shown);
        let allow = has(PermissionOptionKind::AllowOnce).unwrap_or_else(|| "allow_once".into());
        let reject = has(PermissionOptionKind::RejectOnce).unwrap_or_else(|| "reject_once".into());
        if self.yes {
            out(&self.style.paint("2", "(--yes: accepted)\n"));
            return Ok(selected(&allow, None));
        }
        let always = has(PermissionOptionKind::AllowAlways);
        let (choices, keys) = match (&always, hunks.len() > 1) {
            (Some(_), true) => ("[y]es / [n]o / [a]lways / [p]er hunk", "ynap"),
            (Some(_), false) => ("[y]es / [n]o / [a]lways", "yna"),
            (None, true) => ("[y]es / [n]o / [p]er hunk", "ynp"),
            (None, false) => ("[y]es / [n]o", "yn"),
        };
        let Some(answer) = keys::key(format!("{choices}? "), keys).await else {
            return Err(self.nobody("this approval"));
        };
        let result = match answer {
            'y' => selected(&allow, None),
            'a' => selected(always.as_deref().unwrap_or("allow_always"), None),
            'p' => {
                let mut accepted = Vec::new();
                for hunk in &hunks {
                    out(&format!("\n{}\n", self.diff(&hunk.patch)));
                    if keys::key(format!("apply {}? [y/n] ", hunk.id), "yn").await == Some('y') {
                        accepted.push(hunk.id.clone());
                    }
                }
                selected(&allow, Some(accepted))
            }
            _ => selected(&reject, None),
        };
        self.wait("working");
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A finished call whose card shows `raw["output"]` as its text content.
    fn finished(status: ToolCallStatus, raw: Value) -> ToolCallUpdate {
        let output = raw["output"].as_str().unwrap_or_default().to_owned();
        ToolCallUpdate {
            tool_call_id: "c1".into(),
            title: None,
            kind: None,
            status: Some(status),
            content: Some(vec![ToolCallContent::Content { content: ContentBlock::text(output) }]),
            locations: None,
            raw_input: None,
            raw_output: Some(raw),
        }
    }

    #[test]
    fn the_summary_line_tells_the_estimated_cost_only_where_the_price_is_known() {
        let mut usage = Usage { input_tokens: 1_000, output_tokens: 100, total_tokens: 1_100, ..Usage::default() };
        usage.session.input_tokens = 1_000;
        usage.session.output_tokens = 100;
        assert_eq!(usage_line(&usage), "1.0k tokens in, 100 out");
        usage.session.cost_usd = Some(0.0123);
        assert!(usage_line(&usage).ends_with("; about $0.01 at list prices"), "{}", usage_line(&usage));
    }

    fn plain() -> Terminal {
        let mut terminal = Terminal::new(false, super::super::events::OutputFormat::Text);
        terminal.style = Style { color: false };
        terminal.spins = false;
        terminal
    }

    #[test]
    fn a_failed_command_gets_a_cross_and_the_tail_of_its_output() {
        let output: String = (1..=20).map(|i| format!("line {i}\n")).collect();
        let raw = json!({ "output": output, "metadata": { "exitCode": 1 } });
        let card = plain().card("Exit 1: pytest", &finished(ToolCallStatus::Completed, raw));
        assert!(card.starts_with("\n✗ Exit 1: pytest\n"), "{card}");
        assert!(card.contains("  │ line 20\n") && card.contains("  │ line 13\n"), "{card}");
        assert!(!card.contains("line 12\n"), "only the last {TAIL_LINES} lines: {card}");
    }

    #[test]
    fn a_command_that_succeeded_gets_a_tick_and_a_quiet_one_no_tail() {
        let raw = json!({ "output": "ok\n", "metadata": { "exitCode": 0 } });
        let card = plain().card("Ran: true", &finished(ToolCallStatus::Completed, raw));
        assert_eq!(card, "\n✓ Ran: true\n  │ ok\n");
        let raw = json!({ "output": "(no output)", "metadata": { "exitCode": 0 } });
        assert_eq!(plain().card("Ran: true", &finished(ToolCallStatus::Completed, raw)), "\n✓ Ran: true\n");
        // Killed by a signal or timed out: no exit status, a failure.
        let raw = json!({ "output": "", "metadata": { "exitCode": null, "timedOut": true } });
        assert!(plain().card("Timed out", &finished(ToolCallStatus::Completed, raw)).starts_with("\n✗"));
    }

    #[test]
    fn other_tools_show_only_their_title() {
        let raw = json!({ "output": "     1\tone\n", "metadata": { "strategy": "exact" } });
        assert_eq!(plain().card("Edited a.txt", &finished(ToolCallStatus::Completed, raw)), "\n✓ Edited a.txt\n");
    }
}
