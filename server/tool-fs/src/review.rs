//! The person's review of a staged change: one request for every file of a call (hunk ids
//! numbered across files), preceded by the language servers' preview of what the change would
//! break; then only the accepted hunks are kept, with what to tell the model about the rest.

use tandem_tool_api::approval::{ChangeDecision, StagedFile};
use tandem_tool_api::{ToolContext, ToolError};

use super::Loaded;
use super::commit::{Change, PartialApply};
use super::preview::Foresight;

/// The changes the person let through, and what to tell the model about the rest.
pub(super) struct Reviewed {
    pub(super) kept: Vec<(Loaded, Change)>,
    pub(super) notes: Vec<String>,
    /// How many hunks the person rejected.
    pub(super) rejected: usize,
    /// What was applied to the files accepted in part.
    pub(super) partial: Vec<PartialApply>,
    /// The language servers' preview of the change, to end once it is committed (or not).
    pub(super) foresight: Option<Foresight>,
    /// Whether an approver was asked. Only then may the files have moved on while the change
    /// waited: without one, the check right before the write is the only one needed.
    pub(super) asked: bool,
}

impl Reviewed {
    /// Every change as proposed (no approver, or everything accepted).
    fn as_proposed(kept: Vec<(Loaded, Change)>) -> Self {
        Self { kept, notes: Vec::new(), rejected: 0, partial: Vec::new(), foresight: None, asked: false }
    }
}

/// Longest rejected-hunk text quoted back to the model.
const MAX_REJECTED_QUOTE: usize = 4000;

/// Asks the context's approver (if any) about `changes`. Returns the changes to commit, with
/// only the accepted hunks applied, or an error when nothing was accepted.
pub(super) async fn review(ctx: &ToolContext, changes: Vec<(Loaded, Change)>) -> Result<Reviewed, ToolError> {
    let Some(approver) = ctx.approver.clone() else {
        return Ok(Reviewed::as_proposed(changes));
    };
    // One review for every file, with hunk ids numbered across files; `local` maps them back.
    let mut files = Vec::new();
    let mut next = 1;
    for (loaded, change) in &changes {
        let old_text = loaded.exists().then(|| loaded.text.clone());
        let (new_text, moved_to) = match change {
            Change::Write(text) => (Some(text.clone()), None),
            Change::Delete => (None, None),
            Change::Move { to, text } => (Some(text.clone()), Some(to.clone())),
        };
        let display = ctx.workspace.display(&loaded.path);
        let diff =
            tandem_text::hunks::diff(&display, old_text.as_deref().unwrap_or(""), new_text.as_deref().unwrap_or(""));
        let hunks = diff
            .hunks
            .into_iter()
            .map(|mut hunk| {
                hunk.id = format!("h{next}");
                next += 1;
                let fuzzed = loaded.fuzzed.iter().filter(|(first, count, _)| hunk.overlaps(*first, *count));
                hunk.fuzz = fuzzed.map(|(_, _, fuzz)| *fuzz).max().unwrap_or(0);
                hunk
            })
            .collect();
        files.push(StagedFile { path: loaded.path.clone(), display, moved_to, old_text, new_text, hunks });
    }
    let foresight = Foresight::ask(ctx, approver.as_ref(), &files).await;
    let report = foresight.as_ref().and_then(Foresight::report);
    let send_back = report.filter(|report| introduces_errors(report) && approver.send_back_first(&files));
    let error = match send_back {
        Some(report) => sent_back(report),
        None => match approver.review_changes(&files, report).await {
            ChangeDecision::Accept { hunks } => return accepted(ctx, changes, &files, hunks, foresight),
            ChangeDecision::Reject { reason } => {
                let said = reason.map(|r| format!(" They said: {r}")).unwrap_or_default();
                let names: Vec<&str> = files.iter().map(|f| f.display.as_str()).collect();
                ToolError::new(format!(
                    "the person rejected this change to {}; nothing was written.{said} Do not repeat it unchanged: ask them what they want, or take another approach",
                    names.join(", ")
                ))
                .with("rejected", true)
            }
            ChangeDecision::Cancelled => {
                ToolError::new("cancelled: the turn ended before the person answered; nothing was written")
                    .with("cancelled", true)
            }
        },
    };
    if let Some(foresight) = foresight {
        foresight.end().await;
    }
    Err(error)
}

/// Whether the servers say the change adds at least one error (warnings do not count).
fn introduces_errors(report: &tandem_protocol::DiagnosticsPreview) -> bool {
    report.files.iter().flat_map(|f| &f.introduced).any(|d| d.severity == tandem_protocol::PreviewSeverity::Error)
}

/// What the model is told of a change sent back before the person saw it.
fn sent_back(report: &tandem_protocol::DiagnosticsPreview) -> ToolError {
    ToolError::new(format!(
        "not written, and not shown to the person yet: the language servers say this change {}. Fix that and \
         propose the whole change again; the next proposal for these files goes to the person as it is",
        report.summary
    ))
    .with("precheck", true)
    .with("diagnostics", serde_json::to_value(report).unwrap_or_default())
}

/// An accepted change: every hunk (`hunks` is `None`) or those named, with the note for the
/// model when the servers' preview showed new problems.
fn accepted(
    ctx: &ToolContext,
    changes: Vec<(Loaded, Change)>,
    files: &[StagedFile],
    hunks: Option<Vec<String>>,
    foresight: Option<Foresight>,
) -> Result<Reviewed, ToolError> {
    let mut reviewed = match hunks {
        None => Reviewed::as_proposed(changes),
        Some(accepted) => accept_hunks(changes, files, &accepted)?,
    };
    if let Some(report) = foresight.as_ref().and_then(Foresight::report) {
        let partial = reviewed.rejected > 0;
        let note = crate::foresight::accepted_note(report, partial, |path| ctx.workspace.display(path));
        reviewed.notes.extend(note);
    }
    reviewed.foresight = foresight;
    reviewed.asked = true;
    Ok(reviewed)
}

/// The changes with only the `accepted` hunks (review-wide ids) applied, and what to tell the
/// model about the rest; an error when nothing was accepted.
fn accept_hunks(
    changes: Vec<(Loaded, Change)>,
    files: &[StagedFile],
    accepted: &[String],
) -> Result<Reviewed, ToolError> {
    if let Some(unknown) = accepted.iter().find(|id| !files.iter().flat_map(|f| &f.hunks).any(|h| &h.id == *id)) {
        return Err(ToolError::new(format!(
            "the review accepted hunk `{unknown}`, which is not part of this change; nothing was written"
        )));
    }
    let mut kept = Vec::new();
    let mut notes = Vec::new();
    let mut partial = Vec::new();
    let mut rejected_quotes = String::new();
    let rejected = files.iter().flat_map(|f| &f.hunks).filter(|h| !accepted.contains(&h.id)).count();
    for ((loaded, change), file) in changes.into_iter().zip(files) {
        let take = file.accepted_local_ids(accepted);
        let take: Vec<&str> = take.iter().map(String::as_str).collect();
        let all = take.len() == file.hunks.len();
        if !all {
            for hunk in file.hunks.iter().filter(|h| !accepted.contains(&h.id)) {
                if rejected_quotes.len() < MAX_REJECTED_QUOTE {
                    rejected_quotes.push_str(&format!("{} ({}):\n{}", hunk.id, file.display, hunk.patch));
                }
            }
        }
        if take.is_empty() && !file.hunks.is_empty() {
            notes.push(format!("the person rejected every hunk of `{}`: it was left as it was", file.display));
            continue;
        }
        if all {
            kept.push((loaded, change));
            continue;
        }
        let old = loaded.text.clone();
        let subset = |new: &str| {
            tandem_text::hunks::apply_subset(&old, new, &take).map_err(|err| ToolError::new(err.to_string()))
        };
        let change = match change {
            Change::Write(text) => Change::Write(subset(&text)?),
            Change::Move { to, text } => Change::Move { text: subset(&text)?, to },
            Change::Delete => Change::Delete,
        };
        if let Change::Write(text) | Change::Move { text, .. } = &change {
            partial.push(PartialApply::new(&file.display, &old, text));
        }
        let rejected: Vec<&str> =
            file.hunks.iter().filter(|h| !accepted.contains(&h.id)).map(|h| h.id.as_str()).collect();
        notes.push(format!(
            "the person accepted only some hunks of `{}`: rejected {}; the file now differs from your proposal (read it before editing it again)",
            file.display,
            rejected.join(", ")
        ));
        kept.push((loaded, change));
    }
    if kept.is_empty() {
        return Err(ToolError::new(format!(
            "the person rejected every hunk of this change; nothing was written. Rejected:\n{rejected_quotes}"
        ))
        .with("rejected", true));
    }
    if !rejected_quotes.is_empty() {
        notes.push(format!("rejected hunks, not applied:\n{}", rejected_quotes.trim_end()));
    }
    Ok(Reviewed { kept, notes, rejected, partial, foresight: None, asked: true })
}
