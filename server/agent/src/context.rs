//! The context budget: how much of the model's window a request may use, token estimates
//! calibrated against the counts the provider reports, and compaction when the next request
//! would not fit.
//!
//! Compaction runs when the next request would go over the budget (window − output tokens − a
//! margin), and then aims well under it ([`LOW_WATER`]), so that the next several turns fit
//! without another one. It goes in stages, each only when the ones before did not do enough:
//! a tool output larger than its share of the room is cut, with a note saying how to get the
//! rest (an `offset` to read from, the saved log); old tool outputs become a stub saying how to
//! get them again, oldest first and only as many as needed (the latest turn's never); then,
//! only when even that would leave no room for another turn like the latest, the model
//! summarises the older turns (goals, decisions, files touched, open tasks) and the conversation
//! goes on from the summary and the recent turns; last, whatever is still too large is cut.
//! Each compaction is stored in the session file as the whole compacted conversation, so
//! loading the session resumes from it.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::Value;
use tandem_llm::{ErrorKind, Message, Part, Request, Role};
use tandem_protocol::{ContentBlock, SessionUpdate, ToolCall, ToolCallContent, ToolCallStatus, ToolKind};
use tokio_util::sync::CancellationToken;

use crate::env::Env;
use crate::session::{History, Session};
use crate::store::Record;
use crate::tokens::json_size;

/// Tool outputs of this many of the latest assistant turns are kept when a compaction is forced
/// (the provider refused a request, or the person asked).
const KEEP_TURNS: usize = 2;
/// A compaction aims at this share of the budget, so that the next turns fit without another.
const LOW_WATER: f64 = 0.5;
/// One tool output may take at most this share of what the budget leaves the messages (after
/// the system prompt and tools) once compaction runs; a longer one is cut, with a note saying
/// how to get the rest.
const OUTPUT_SHARE: f64 = 0.25;
/// Bytes set aside for the model's summary when choosing how many recent turns to keep.
const SUMMARY_RESERVE: usize = 2_000;
/// Tool outputs shorter than this are kept (a stub would save nothing).
const STUB_MIN: usize = 200;
/// Tool-call argument strings longer than this are elided in old turns (whole files written).
const ARGUMENT_MIN: usize = 1_000;
/// The recent turns kept verbatim after a summary take at most this share of the budget.
const TAIL_SHARE: f64 = 0.35;
/// Characters of one tool output quoted to the summariser.
const QUOTE_CHARS: usize = 1_500;

const SUMMARY_SYSTEM: &str = "You compact the conversation of a coding agent so it can go on within its context window. You are given the older part of the conversation as a transcript. Write a summary the agent can continue from without the transcript.";

const SUMMARY_INSTRUCTIONS: &str = "Summarise the conversation above for the agent that will continue it. Use these headings:\n\
## Goal\nWhat the person asked for, in their words where it matters.\n\
## Decisions\nWhat was decided or agreed, and why.\n\
## Files\nFiles read, created or changed, with what matters about each.\n\
## Done\nWhat is finished and how it was checked.\n\
## Open\nWhat is left to do, including unfinished todos and unanswered questions.\n\
Be concrete (paths, names, commands, errors); leave out pleasantries. Do not call tools.";

/// How much of the window a request may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Budget {
    /// The model's context window.
    pub window: u64,
    /// Tokens a request may take: the window less the answer's tokens and a margin.
    pub limit: u64,
}

/// The budget of `model` under the agent's provider settings, within the window the provider
/// stated (`stated`) when it said a request was too long.
pub(crate) fn budget(provider: &tandem_llm::ProviderSettings, model: &str, stated: Option<u64>) -> Budget {
    let resolved = tandem_llm::profile::resolve(provider, model);
    let profile = u64::from(resolved.profile.context_window);
    let window = stated.map_or(profile, |stated| stated.min(profile));
    let margin = (window / 20).max(256);
    let limit = window.saturating_sub(u64::from(resolved.max_output) + margin).max(window / 4);
    Budget { window, limit }
}

/// Words that name a limit next to its number in providers' "too long" errors.
const LIMIT_WORDS: &[&str] = &["maximum", "max", "limit", "allowed", "context", "size", "window"];

/// The context window a provider's "too long" error states, if it names one: the smallest
/// number of at least 256 next to a word for a limit ("maximum context length is 8192 tokens",
/// "9000 tokens > 8192 maximum", "tokens allowed (1048576)", "context size (8192 tokens)"), or
/// the only number there is.
pub(crate) fn stated_window(message: &str) -> Option<u64> {
    let words: Vec<String> = message
        .split(|c: char| c.is_whitespace() || "(),.:;>=<".contains(c))
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let numbers: Vec<(usize, u64)> = words
        .iter()
        .enumerate()
        .filter_map(|(i, w)| Some((i, w.parse::<u64>().ok()?)))
        .filter(|(_, n)| *n >= 256)
        .collect();
    let named = |i: usize| {
        let near = &words[i.saturating_sub(4)..(i + 3).min(words.len())];
        near.iter().any(|w| LIMIT_WORDS.contains(&w.as_str()))
    };
    let limits = numbers.iter().filter(|(i, _)| named(*i)).map(|(_, n)| *n).min();
    match (limits, numbers.as_slice()) {
        (Some(n), _) => Some(n),
        (None, [(_, only)]) => Some(*only),
        _ => None,
    }
}

impl History {
    /// Bytes of every message as JSON; each message is measured once.
    pub fn message_bytes(&mut self) -> usize {
        self.sizes.truncate(self.messages.len());
        while let Some(message) = self.messages.get(self.sizes.len()) {
            self.sizes.push(measure(message, self.image_kind));
        }
        self.sizes.iter().sum()
    }

    /// Sizes images by `kind`'s token estimate from now on.
    pub fn size_images_for(&mut self, kind: tandem_llm::ProviderKind) {
        if self.image_kind != Some(kind) {
            self.image_kind = Some(kind);
            self.sizes.clear();
        }
    }

    /// The last message changed in place: measure it again.
    pub fn remeasure_last(&mut self) {
        self.sizes.truncate(self.messages.len().saturating_sub(1));
    }

    /// Replaces the conversation (after a compaction).
    pub fn replace(&mut self, messages: Vec<Arc<Message>>) {
        self.messages = messages;
        self.sizes.clear();
    }

    /// Estimated tokens of a request of these messages and `fixed` bytes of system prompt and
    /// tool definitions.
    pub fn estimate(&mut self, fixed: usize) -> u64 {
        ((self.message_bytes() + fixed) as f64 / self.bytes_per_token).ceil() as u64
    }

    /// Learns from the provider's count for a request of `sent` bytes. A smaller ratio (more
    /// tokens than thought) is taken at once; a larger one slowly, as underestimating is what
    /// overflows the window.
    pub fn calibrate(&mut self, sent: usize, input_tokens: u64) {
        if input_tokens < 64 {
            return;
        }
        let observed = sent as f64 / input_tokens as f64;
        let next = if observed < self.bytes_per_token { observed } else { self.bytes_per_token * 0.7 + observed * 0.3 };
        self.bytes_per_token = next.clamp(1.0, 6.0);
    }
}

/// Bytes a token of an image counts as in the estimates (the text's bytes per token are learnt;
/// an image's tokens are the provider's documented estimate).
const IMAGE_BYTES_PER_TOKEN: u64 = 4;

/// The size of `message` for estimates: its JSON, where each image counts as the tokens the
/// provider (`kind`; unknown: the larger estimate) documents for it, not as its base64.
fn measure(message: &Message, kind: Option<tandem_llm::ProviderKind>) -> usize {
    let size = json_size(message);
    message.content.iter().fold(size, |size, part| match part {
        Part::Image(image) => size.saturating_sub(image.data.len()) + image_bytes(image, kind),
        _ => size,
    })
}

fn image_bytes(image: &tandem_llm::image::Image, kind: Option<tandem_llm::ProviderKind>) -> usize {
    use tandem_llm::ProviderKind::{Anthropic, OpenAi};
    let tokens = |kind| tandem_llm::image::tokens(kind, image.width, image.height);
    let tokens = kind.map_or_else(|| tokens(Anthropic).max(tokens(OpenAi)), tokens);
    (tokens * IMAGE_BYTES_PER_TOKEN) as usize
}

/// What a compaction did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Report {
    /// Estimated tokens before and after.
    pub before: u64,
    pub after: u64,
    /// Tool outputs (and long tool arguments) elided.
    pub elided: usize,
    /// Images dropped (the oldest go first, before any text).
    pub images: usize,
    /// Older turns were replaced by the model's summary.
    pub summarized: bool,
    /// Text had to be cut besides.
    pub cut: bool,
}

impl Report {
    fn changed(&self) -> bool {
        self.elided > 0 || self.images > 0 || self.summarized || self.cut
    }
}

/// Why a compaction runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Force {
    /// Only if the next request would not fit the budget.
    No,
    /// The provider said the request did not fit: elide and summarise, keeping the recent turns
    /// that fit the budget.
    Provider,
    /// The person asked (`/compact`): elide and summarise everything before the last answer.
    Person,
}

/// Makes the next request of `history` fit `budget` (with `fixed` bytes of system prompt and
/// tools): nothing when it fits already, unless forced, which elides and summarises whatever
/// can be. When it does not fit, compaction aims at [`LOW_WATER`] of the budget: oversized
/// outputs are cut, old outputs elided oldest first, and the model asked for a summary only when
/// what is left would not hold another turn like the latest. A summary no smaller than the
/// turns it would replace is not used. `None` when cancelled.
pub(crate) async fn fit(
    env: &Env,
    session: &Session,
    history: &mut History,
    fixed: usize,
    budget: Budget,
    force: Force,
    cancel: &CancellationToken,
) -> Option<Report> {
    let mut report = Report { before: history.estimate(fixed), ..Report::default() };
    if force == Force::No && report.before <= budget.limit {
        report.after = report.before;
        return Some(report);
    }
    let target = (budget.limit as f64 * LOW_WATER) as u64;
    // Images go first, oldest first: one costs as much as pages of text.
    report.images = drop_images(history, fixed, target, force);
    let summarise_now = if force == Force::No {
        report.cut = cut_oversized(history, fixed, budget) > 0;
        report.elided = elide_oldest(history, fixed, target);
        // What is left must hold one more turn like the latest (its call and outputs), or the
        // next request would compact again at once: only then is the model asked to summarise.
        let next = latest_turn_tokens(history);
        history.estimate(fixed) + next > budget.limit
    } else {
        let mut messages = std::mem::take(&mut history.messages);
        report.elided = elide(&mut messages, KEEP_TURNS);
        history.replace(messages);
        true
    };
    if summarise_now {
        let trigger = if matches!(force, Force::Person) { "manual" } else { "auto" };
        crate::policy::pre_compact(env, session, trigger, cancel).await;
        report.summarized = history.summarise(env, session, fixed, budget, force, cancel).await?;
    }
    if history.estimate(fixed) > budget.limit {
        report.cut |= squeeze(history, fixed, budget);
    }
    report.after = history.estimate(fixed);
    if report.changed() {
        tracing::info!(session = session.id, ?report, "compacted the conversation");
        session.record(&Record::Compaction {
            messages: history.messages.iter().map(|message| message.as_ref().clone()).collect(),
            tokens_before: report.before,
            tokens_after: report.after,
            summarized: report.summarized,
        });
        announce(session, &report, budget).await;
    }
    Some(report)
}

/// Estimated tokens of the latest assistant turn and what follows it (its tool outputs).
fn latest_turn_tokens(history: &mut History) -> u64 {
    history.message_bytes();
    let start = recent_start(&history.messages, 1);
    let bytes: usize = history.sizes[start.min(history.sizes.len())..].iter().sum();
    (bytes as f64 / history.bytes_per_token).ceil() as u64
}

/// Bytes one tool output may keep once compaction runs: [`OUTPUT_SHARE`] of what the budget
/// leaves after the system prompt and tools.
fn output_cap(history: &History, fixed: usize, budget: Budget) -> usize {
    let room = (budget.limit as f64 * history.bytes_per_token) as usize;
    ((room.saturating_sub(fixed) as f64 * OUTPUT_SHARE) as usize).max(STUB_MIN * 4)
}

/// Cuts every tool output longer than [`output_cap`] to it, with a note saying how to get the
/// rest; returns how many were cut.
fn cut_oversized(history: &mut History, fixed: usize, budget: Budget) -> usize {
    let cap = output_cap(history, fixed, budget);
    let oversized = |part: &Part| matches!(part, Part::ToolResult { content, .. } if content.len() > cap + CUT_SLACK);
    if !history.messages.iter().any(|m| m.content.iter().any(oversized)) {
        return 0;
    }
    let calls = calls_by_id(&history.messages);
    let mut count = 0;
    for (index, message) in history.messages.iter_mut().enumerate() {
        if !message.content.iter().any(oversized) {
            continue;
        }
        for part in &mut Arc::make_mut(message).content {
            if let Part::ToolResult { call_id, content, .. } = part
                && content.len() > cap + CUT_SLACK
            {
                *content = cut_output(content, cap, calls.get(call_id.as_str()));
                count += 1;
            }
        }
        history.sizes.truncate(index);
    }
    count
}

/// Room a cut output's note takes beyond its cap (an output only that much over is left whole).
const CUT_SLACK: usize = 400;

/// `text` cut to about `cap` bytes on a line boundary, with a note saying how to get the rest:
/// a `read` continues from the first line not shown; a command's saved log is named; anything
/// else is run again narrower.
fn cut_output(text: &str, cap: usize, call: Option<&(String, Value)>) -> String {
    let name = call.map_or("", |(name, _)| name.as_str());
    let mut end = cap.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    if let Some(newline) = text[..end].rfind('\n').filter(|&at| at > end / 2) {
        end = newline + 1;
    }
    let removed = text.len() - end;
    let kept = &text[..end];
    let how = if name == "read" {
        let path = call.and_then(|(_, args)| args.get("file_path")).and_then(Value::as_str).unwrap_or("the file");
        // `cat -n` lines: the number before the tab of the last line kept.
        let last = kept
            .lines()
            .rev()
            .find_map(|line| line.split_once('\t').and_then(|(number, _)| number.trim().parse::<usize>().ok()));
        match last {
            Some(last) => format!("read `{path}` with offset={} to see the lines after {last}", last + 1),
            None => format!("read `{path}` with offset and limit to see the rest"),
        }
    } else if let Some(at) = text.find("the full output is in ") {
        let log = text[at + "the full output is in ".len()..].split([':', ' ', '\n']).next().unwrap_or_default();
        format!("the full output is in {log}: read it with `read` and offset/limit, or `grep` it")
    } else if name.is_empty() {
        "run the call again with narrower arguments to see them".to_owned()
    } else {
        format!("run {name} again with narrower arguments (a more specific pattern or path, fewer lines) to see them")
    };
    format!("{kept}\n[… {removed} bytes cut to fit the context window; {how}]")
}

/// Elides old tool outputs (and long tool-call arguments), oldest first, until the request is
/// estimated at `target` tokens or only the latest turn's are left; returns how many.
fn elide_oldest(history: &mut History, fixed: usize, target: u64) -> usize {
    history.message_bytes();
    let end = recent_start(&history.messages, 1);
    let calls = calls_by_id(&history.messages);
    let mut count = 0;
    for index in 0..end {
        if history.estimate(fixed) <= target {
            break;
        }
        if !history.messages[index].content.iter().any(elidable) {
            continue;
        }
        count += elide_parts(Arc::make_mut(&mut history.messages[index]), &calls);
        history.sizes[index] = json_size(history.messages[index].as_ref());
    }
    count
}

/// Shows the compaction to the person as a finished "think" step.
async fn announce(session: &Session, report: &Report, budget: Budget) {
    let mut what = Vec::new();
    if report.images > 0 {
        what.push(format!("{} old images dropped", report.images));
    }
    if report.elided > 0 {
        what.push(format!("{} old tool outputs elided", report.elided));
    }
    if report.summarized {
        what.push("older turns summarised".to_owned());
    }
    if report.cut {
        what.push("long outputs cut".to_owned());
    }
    let text = format!(
        "Context: about {} → {} tokens (window {}): {}.",
        report.before,
        report.after,
        budget.window,
        what.join(", ")
    );
    let n = session.next_call.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let update = SessionUpdate::ToolCall(ToolCall {
        tool_call_id: format!("{}c{n}", session.call_prefix),
        title: "Compacted the conversation".to_owned(),
        kind: ToolKind::Think,
        status: ToolCallStatus::Completed,
        content: vec![ToolCallContent::Content { content: ContentBlock::text(text) }],
        locations: Vec::new(),
        raw_input: None,
        tool_name: None,
    });
    session.client.update(&session.id, update).await;
}

/// The name and arguments of every tool call, by call id.
fn calls_by_id(messages: &[Arc<Message>]) -> HashMap<String, (String, Value)> {
    messages
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|part| match part {
            Part::ToolCall { id, name, arguments, .. } => Some((id.clone(), (name.clone(), arguments.clone()))),
            _ => None,
        })
        .collect()
}

/// The stub that replaces an old tool output: what it was, and how to get it again.
fn stub(call: Option<&(String, Value)>) -> String {
    let Some((name, arguments)) = call else {
        return "[output elided to save context; run the call again if needed]".to_owned();
    };
    let arg = |key: &str| arguments.get(key).and_then(Value::as_str);
    let subject = match name.as_str() {
        "read" | "list" | "write" | "edit" | "multiedit" | "append" => arg("file_path").or_else(|| arg("path")),
        "grep" | "glob" => arg("pattern"),
        "bash" => arg("command"),
        "webfetch" => arg("url"),
        _ => None,
    };
    let subject = subject.map(|s| crate::limits::short(s, 80));
    let what = match subject {
        Some(subject) => format!("{name} {subject}"),
        None => name.clone(),
    };
    let again = if name == "read" { "read it again if needed" } else { "run it again if needed" };
    format!("[output of {what} elided; {again}]")
}

fn is_stub(text: &str) -> bool {
    text.starts_with("[output ") && text.ends_with(" if needed]")
}

/// The index from which messages are kept whole: the start of the `keep`-th assistant turn
/// from the end (0 keeps everything).
fn recent_start(messages: &[Arc<Message>], keep: usize) -> usize {
    if keep == 0 {
        return messages.len();
    }
    messages
        .iter()
        .enumerate()
        .rev()
        .filter(|(_, message)| message.role == Role::Assistant)
        .nth(keep - 1)
        .map_or(0, |(index, _)| index)
}

/// Elides tool outputs and long tool-call arguments before the last `keep` assistant turns;
/// returns how many.
fn elide(messages: &mut [Arc<Message>], keep: usize) -> usize {
    let end = recent_start(messages, keep);
    let calls = calls_by_id(messages);
    let mut count = 0;
    for message in messages.iter_mut().take(end) {
        if !message.content.iter().any(elidable) {
            continue;
        }
        // Copied only if a request still shares it.
        count += elide_parts(Arc::make_mut(message), &calls);
    }
    count
}

/// Elides the tool outputs and long tool-call arguments of one message; returns how many.
fn elide_parts(message: &mut Message, calls: &HashMap<String, (String, Value)>) -> usize {
    let mut count = 0;
    for part in &mut message.content {
        match part {
            Part::ToolResult { call_id, content, .. } if content.len() > STUB_MIN && !is_stub(content) => {
                *content = stub(calls.get(call_id.as_str()));
                count += 1;
            }
            Part::ToolCall { arguments: Value::Object(map), .. } => {
                let mut shortened = false;
                for value in map.values_mut() {
                    if let Value::String(text) = value
                        && text.len() > ARGUMENT_MIN
                    {
                        *text = format!("[{} characters elided to save context]", text.chars().count());
                        shortened = true;
                    }
                }
                count += usize::from(shortened);
            }
            _ => {}
        }
    }
    count
}

/// Replaces images with a note saying what they were, oldest first, until the request is down to
/// `target` tokens (forced: every image before the last assistant turn); the latest message's
/// images are kept. Returns how many were dropped.
fn drop_images(history: &mut History, fixed: usize, target: u64, force: Force) -> usize {
    let last = history.messages.len().saturating_sub(1);
    let end = match force {
        Force::No => last,
        Force::Provider | Force::Person => recent_start(&history.messages, 1).min(last),
    };
    let mut dropped = 0;
    for index in 0..end {
        if force == Force::No && history.estimate(fixed) <= target {
            break;
        }
        if !history.messages[index].content.iter().any(|part| matches!(part, Part::Image(_))) {
            continue;
        }
        for part in &mut Arc::make_mut(&mut history.messages[index]).content {
            if let Part::Image(image) = part {
                let text =
                    format!("[image dropped to save context: {}; attach or read it again if needed]", image.describe());
                *part = Part::Text { text };
                dropped += 1;
            }
        }
        history.sizes.truncate(index);
    }
    dropped
}

/// Whether `part` is a tool output or a tool call that [`elide`] shortens.
fn elidable(part: &Part) -> bool {
    match part {
        Part::ToolResult { content, .. } => content.len() > STUB_MIN && !is_stub(content),
        Part::ToolCall { arguments: Value::Object(map), .. } => {
            map.values().any(|value| value.as_str().is_some_and(|text| text.len() > ARGUMENT_MIN))
        }
        _ => false,
    }
}

/// Where the kept recent turns start after a summary: an assistant message (so every kept tool
/// result keeps its call), as early as fits a share of the budget and leaves the request (system
/// prompt, tools and the summary included) under [`LOW_WATER`] of it, never the first message.
/// The latest turn is kept whatever its size.
fn tail_start(history: &mut History, fixed: usize, budget: Budget) -> Option<usize> {
    history.message_bytes();
    let share = (budget.limit as f64 * TAIL_SHARE * history.bytes_per_token) as usize;
    let low = (budget.limit as f64 * LOW_WATER * history.bytes_per_token) as usize;
    let room = share.min(low.saturating_sub(fixed + SUMMARY_RESERVE));
    let mut best = None;
    let mut bytes = 0;
    for index in (1..history.messages.len()).rev() {
        bytes += history.sizes.get(index).copied().unwrap_or(0);
        if history.messages[index].role != Role::Assistant {
            continue;
        }
        if best.is_some() && bytes > room {
            break;
        }
        best = Some(index);
    }
    best
}

impl History {
    /// Replaces the turns before the recent ones with the model's summary of them. `Some(false)`
    /// when there was nothing to summarise, `None` when cancelled.
    async fn summarise(
        &mut self,
        env: &Env,
        session: &Session,
        fixed: usize,
        budget: Budget,
        force: Force,
        cancel: &CancellationToken,
    ) -> Option<bool> {
        let start = match force {
            Force::Person => last_answer(self),
            Force::No | Force::Provider => tail_start(self, fixed, budget),
        };
        let Some(start) = start else { return Some(false) };
        let head = &self.messages[..start];
        // The summariser's request must fit too: the transcript gets what the budget leaves.
        let room = ((budget.limit.saturating_sub(1_000)) as f64 * self.bytes_per_token) as usize;
        let transcript = transcript(head, room.saturating_sub(fixed.min(room / 2)));
        let latest = latest_request(head);
        let request = Request {
            system: SUMMARY_SYSTEM.to_owned(),
            messages: vec![Arc::new(Message {
                role: Role::User,
                content: vec![Part::Text {
                    text: format!("<transcript>\n{transcript}</transcript>\n\n{SUMMARY_INSTRUCTIONS}"),
                }],
            })],
            tools: Arc::default(),
            model: Some(session.model()),
            temperature: None,
        };
        let summary = match env.llm.stream(&request, cancel, &mut |_| {}).await {
            Ok(response) => {
                self.add_usage(&response.usage, env.price_of(&session.model()));
                tandem_llm::text_of(&response.message.content, "").trim().to_owned()
            }
            Err(err) if err.kind == ErrorKind::Cancelled => return None,
            Err(err) => {
                tracing::warn!(session = session.id, "the summary request failed, dropping older turns: {err}");
                String::new()
            }
        };
        let mut text = if summary.is_empty() {
            "[Earlier turns of this conversation were dropped: they no longer fit the model's context window. Ask the person if something from them is needed.]".to_owned()
        } else {
            format!(
                "[Summary of the earlier conversation, written when it no longer fit the model's context window]\n{summary}"
            )
        };
        if let Some(latest) = latest {
            let _ = write!(text, "\n\n[The person's latest request before this point, verbatim]\n{latest}");
        }
        let before = self.estimate(fixed);
        let mut messages = vec![Arc::new(Message { role: Role::User, content: vec![Part::Text { text }] })];
        messages.extend(self.messages[start..].iter().cloned());
        // Rules and instructions in force are never summarised: they stay word for word.
        crate::guidance::keep_in_force(session, &mut messages);
        let kept = std::mem::take(&mut self.messages);
        self.replace(messages);
        if self.estimate(fixed) >= before {
            // A summary no smaller than the turns it would replace only loses their detail.
            tracing::info!(session = session.id, "the summary is not smaller than the turns it summarises; kept them");
            self.replace(kept);
            return Some(false);
        }
        Some(true)
    }
}

/// Where the tail starts when the person compacts: the last answer of the model (with the calls
/// and results after it), never the first message.
fn last_answer(history: &History) -> Option<usize> {
    (1..history.messages.len()).rev().find(|&index| history.messages[index].role == Role::Assistant)
}

/// The text of the last message the person wrote in `messages` (not a tool result, not a note).
fn latest_request(messages: &[Arc<Message>]) -> Option<String> {
    messages.iter().rev().filter(|m| m.role == Role::User && !crate::session::is_interruption(m)).find_map(|m| {
        let text: Vec<&str> = m
            .content
            .iter()
            .filter_map(|part| match part {
                Part::Text { text } if !text.starts_with("[Summary of the earlier") => Some(text.as_str()),
                _ => None,
            })
            .collect();
        (!text.is_empty()).then(|| text.join("\n"))
    })
}

fn quote(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{} […]", &text[..cut]),
        None => text.to_owned(),
    }
}

/// `messages` as a plain transcript of at most `room` bytes (the oldest lines go first).
fn transcript(messages: &[Arc<Message>], room: usize) -> String {
    let calls = calls_by_id(messages);
    let mut lines = Vec::new();
    for message in messages {
        for part in &message.content {
            let line = match (message.role, part) {
                (Role::User, Part::Text { text }) => format!("PERSON: {text}"),
                (Role::Assistant, Part::Text { text }) => format!("AGENT: {text}"),
                (_, Part::ToolCall { name, arguments, .. }) => {
                    format!("AGENT CALLED {name} {}", quote(&arguments.to_string(), 300))
                }
                (_, Part::ToolResult { call_id, content, is_error }) => {
                    let name = calls.get(call_id.as_str()).map_or("a tool", |(name, _)| name.as_str());
                    let kind = if *is_error { "ERROR FROM" } else { "RESULT OF" };
                    format!("{kind} {name}: {}", quote(content, QUOTE_CHARS))
                }
                _ => continue,
            };
            lines.push(line);
        }
    }
    let mut total: usize = lines.iter().map(|line| line.len() + 1).sum();
    let mut first = 0;
    while total > room && first + 1 < lines.len() {
        total -= lines[first].len() + 1;
        first += 1;
    }
    let mut out = String::with_capacity(total);
    if first > 0 {
        out.push_str("[older lines left out]\n");
    }
    for line in &lines[first..] {
        out.push_str(&quote(line, room.max(1_000)));
        out.push('\n');
    }
    out
}

/// The last resort: elides every tool output but the latest turn's, then cuts the longest
/// texts until the request fits. Returns whether anything was cut.
fn squeeze(history: &mut History, fixed: usize, budget: Budget) -> bool {
    let mut messages = std::mem::take(&mut history.messages);
    let mut cut = elide(&mut messages, 1) > 0;
    history.replace(messages);
    while history.estimate(fixed) > budget.limit {
        let over = ((history.estimate(fixed) - budget.limit) as f64 * history.bytes_per_token) as usize;
        let Some(text) = longest_text(&mut history.messages) else { break };
        let keep = text.len().saturating_sub(over + 200).max(text.len() / 4);
        if keep + 100 >= text.len() {
            break;
        }
        let mut end = keep;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let removed = text.len() - end;
        text.truncate(end);
        let _ = write!(text, "\n[… {removed} bytes cut to fit the context window]");
        history.sizes.clear();
        cut = true;
    }
    cut
}

fn text_of(part: &mut Part) -> Option<&mut String> {
    match part {
        Part::ToolResult { content, .. } => Some(content),
        Part::Text { text } => Some(text),
        _ => None,
    }
}

/// The longest tool output or text part.
fn longest_text(messages: &mut [Arc<Message>]) -> Option<&mut String> {
    let mut longest: Option<(usize, usize, usize)> = None;
    for (m, message) in messages.iter().enumerate() {
        for (p, part) in message.content.iter().enumerate() {
            let len = match part {
                Part::ToolResult { content, .. } => content.len(),
                // Rules and instructions in force are never cut.
                Part::Text { text } if crate::guidance::is_in_force(text) => continue,
                Part::Text { text } => text.len(),
                _ => continue,
            };
            if longest.is_none_or(|(_, _, best)| len > best) {
                longest = Some((m, p, len));
            }
        }
    }
    let (m, p, _) = longest?;
    text_of(Arc::make_mut(messages.get_mut(m)?).content.get_mut(p)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tokens::DEFAULT_BYTES_PER_TOKEN;

    fn call(id: &str, path: &str) -> Arc<Message> {
        Arc::new(Message {
            role: Role::Assistant,
            content: vec![Part::ToolCall {
                id: id.into(),
                name: "read".into(),
                arguments: json!({"file_path": path}),
                extra: None,
            }],
        })
    }

    fn result(id: &str, text: &str) -> Arc<Message> {
        Arc::new(Message {
            role: Role::User,
            content: vec![Part::ToolResult { call_id: id.into(), content: text.into(), is_error: false }],
        })
    }

    #[test]
    fn the_window_a_provider_states_is_read_from_its_too_long_error() {
        let cases = [
            (
                "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens.",
                Some(8192),
            ),
            (
                "This model's maximum context length is 8192 tokens. However, you requested 9100 tokens (5004 in the messages, 4096 in the completion).",
                Some(8192),
            ),
            ("prompt is too long: 9000 tokens > 8192 maximum", Some(8192)),
            (
                "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576).",
                Some(1_048_576),
            ),
            ("the request exceeds the available context size (8192 tokens)", Some(8192)),
            (
                "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length",
                Some(32768),
            ),
            ("request entity too large", None),
            ("too long: 9000 and 12000 tokens", None),
        ];
        for (message, window) in cases {
            assert_eq!(stated_window(message), window, "{message}");
        }
    }

    #[test]
    fn old_outputs_become_stubs_that_say_how_to_get_them_again() {
        let big = "x".repeat(5_000);
        let mut messages = vec![
            Arc::new(Message { role: Role::User, content: vec![Part::Text { text: "go".into() }] }),
            call("c1", "src/a.rs"),
            result("c1", &big),
            call("c2", "src/b.rs"),
            result("c2", &big),
            call("c3", "src/c.rs"),
            result("c3", &big),
        ];
        assert_eq!(elide(&mut messages, KEEP_TURNS), 1);
        assert_eq!(
            messages[2].content[0],
            Part::ToolResult {
                call_id: "c1".into(),
                content: "[output of read src/a.rs elided; read it again if needed]".into(),
                is_error: false
            }
        );
        assert!(matches!(&messages[4].content[0], Part::ToolResult { content, .. } if content.len() == 5_000));
        // Stubs are not elided again.
        assert_eq!(elide(&mut messages, KEEP_TURNS), 0);
    }

    #[test]
    fn calibration_takes_a_smaller_ratio_at_once_and_a_larger_one_slowly() {
        let mut history = History::default();
        assert!((history.bytes_per_token - DEFAULT_BYTES_PER_TOKEN).abs() < f64::EPSILON);
        history.calibrate(4_000, 2_000);
        assert!((history.bytes_per_token - 2.0).abs() < 1e-9);
        history.calibrate(4_000, 1_000);
        assert!((history.bytes_per_token - 2.6).abs() < 1e-9);
        // Too few tokens to tell.
        history.calibrate(100, 10);
        assert!((history.bytes_per_token - 2.6).abs() < 1e-9);
    }

    #[test]
    fn the_transcript_keeps_the_latest_lines_within_its_room() {
        let messages: Vec<Arc<Message>> = (0..50)
            .flat_map(|i| [call(&format!("c{i}"), "a.rs"), result(&format!("c{i}"), &"y".repeat(500))])
            .collect();
        let text = transcript(&messages, 4_000);
        assert!(text.len() <= 4_100, "{}", text.len());
        assert!(text.starts_with("[older lines left out]"));
        assert!(text.trim_end().ends_with(&"y".repeat(20)), "{text}");
    }
}
