//! Review with foresight: the delta between the diagnostics of a change's current text and of
//! its staged text (errors and warnings introduced, and resolved), placed in the change's hunks,
//! as a permission request carries it ([`DiagnosticsPreview`]) and as the model is told when
//! the person accepts anyway. Pure: the servers were asked by [`CodeIntel::preview`](tandem_tool_api::CodeIntel::preview).

use std::path::Path;

use tandem_protocol::{DiagnosticsPreview, FileDiagnosticsPreview, PreviewDiagnostic, PreviewSeverity, PreviewStatus};
use tandem_text::hunks::Hunk;
use tandem_tool_api::approval::StagedFile;
use tandem_tool_api::intel::{Diagnostic, PreviewReport, PreviewedFile, Severity};

/// Most diagnostics listed per file and direction; the count in the summary stays exact.
const MAX_LISTED: usize = 50;
/// Messages quoted in the summary.
const MAX_QUOTED: usize = 3;

/// The previews of `previewed` as the permission request carries them; `None` when no server
/// reported on any file (nothing to show, and nothing waited for).
pub(crate) fn build(
    previewed: &[PreviewedFile],
    staged: &[StagedFile],
    display: impl Fn(&Path) -> String,
) -> Option<DiagnosticsPreview> {
    if previewed.is_empty() {
        return None;
    }
    let mut files = Vec::new();
    let mut shown = Vec::new();
    for file in previewed {
        let staged_file = staged.iter().find(|s| s.moved_to.as_ref().unwrap_or(&s.path) == &file.path);
        let hunks = staged_file.map(|s| s.hunks.as_slice()).unwrap_or_default();
        let name = staged_file.map_or_else(|| display(&file.path), |s| s.display.clone());
        let preview = file_preview(file, hunks);
        // Another file matters only when its diagnostics change.
        if !file.changed
            && preview.status == PreviewStatus::Ready
            && preview.introduced.is_empty()
            && preview.resolved.is_empty()
        {
            continue;
        }
        files.push(preview);
        shown.push(name);
    }
    let ready = files.iter().filter(|f| f.status == PreviewStatus::Ready).count();
    let status = match ready {
        0 => PreviewStatus::NotReady,
        n if n == files.len() => PreviewStatus::Ready,
        _ => PreviewStatus::Partial,
    };
    let hunks: usize = staged.iter().map(|s| s.hunks.len()).sum();
    let summary = summary(&files, &shown, status, hunks > 1);
    Some(DiagnosticsPreview { status, summary, files })
}

/// One file's entry: the delta when ready, else why not.
fn file_preview(file: &PreviewedFile, hunks: &[Hunk]) -> FileDiagnosticsPreview {
    let path = file.path.display().to_string();
    let (server, status, reason, introduced, resolved) = match &file.report {
        PreviewReport::Ready { server, before, after } => {
            let (introduced, resolved) = delta(before, after, hunks);
            let introduced = introduced.into_iter().take(MAX_LISTED).map(|d| wire(d, new_hunk(d, hunks))).collect();
            let resolved = resolved.into_iter().take(MAX_LISTED).map(|d| wire(d, old_hunk(d, hunks))).collect();
            (Some(server.clone()), PreviewStatus::Ready, None, introduced, resolved)
        }
        PreviewReport::NotReady { server, reason } => {
            (Some(server.clone()), PreviewStatus::NotReady, Some(reason.clone()), Vec::new(), Vec::new())
        }
        PreviewReport::Failed { message } => {
            (None, PreviewStatus::NotReady, Some(message.clone()), Vec::new(), Vec::new())
        }
    };
    FileDiagnosticsPreview { path, changed: file.changed, server, status, reason, introduced, resolved }
}

fn counts(d: &Diagnostic) -> bool {
    matches!(d.severity, Severity::Error | Severity::Warning)
}

/// The errors and warnings of `after` that `before` lacks (introduced), and those of `before`
/// that `after` lacks (resolved). Positions move with the change, so a diagnostic of `before`
/// is matched first with one of the same severity, message and code at its line carried over
/// the hunks (when it lies outside them), then with any of the same severity, message and code.
pub(crate) fn delta<'a>(
    before: &'a [Diagnostic],
    after: &'a [Diagnostic],
    hunks: &[Hunk],
) -> (Vec<&'a Diagnostic>, Vec<&'a Diagnostic>) {
    let before: Vec<&Diagnostic> = before.iter().filter(|d| counts(d)).collect();
    let after: Vec<&Diagnostic> = after.iter().filter(|d| counts(d)).collect();
    let same = |a: &Diagnostic, b: &Diagnostic| a.severity == b.severity && a.message == b.message && a.code == b.code;
    let mut taken = vec![false; before.len()];
    let mut matched = vec![false; after.len()];
    // First pass: same diagnostic at the carried-over line.
    for (i, a) in after.iter().enumerate() {
        let found = before.iter().enumerate().position(|(j, b)| {
            !taken[j] && same(a, b) && carried(b.range.start.line, hunks) == Some(a.range.start.line)
        });
        if let Some(j) = found {
            taken[j] = true;
            matched[i] = true;
        }
    }
    // Second pass: same diagnostic anywhere (a line moved inside a hunk).
    for (i, a) in after.iter().enumerate().filter(|(i, _)| !matched[*i]).collect::<Vec<_>>() {
        if let Some(j) = (0..before.len()).find(|j| !taken[*j] && same(a, before[*j])) {
            taken[j] = true;
            matched[i] = true;
        }
    }
    let introduced = after.iter().zip(&matched).filter(|(_, m)| !**m).map(|(d, _)| *d).collect();
    let resolved = before.iter().zip(&taken).filter(|(_, t)| !**t).map(|(d, _)| *d).collect();
    (introduced, resolved)
}

/// The 0-based line of the new text that the old text's 0-based `line` became, or `None` when a
/// hunk covers it.
fn carried(line: u32, hunks: &[Hunk]) -> Option<u32> {
    let line = line as usize + 1;
    let mut shift: isize = 0;
    for hunk in hunks {
        let start = hunk.old_start;
        let end = hunk.old_start + hunk.old_lines;
        if hunk.old_lines > 0 && start <= line && line < end {
            return None;
        }
        let before_line = if hunk.old_lines > 0 { end <= line } else { start < line };
        if before_line {
            shift += hunk.new_lines as isize - hunk.old_lines as isize;
        }
    }
    u32::try_from(line as isize + shift - 1).ok()
}

/// The hunk whose new lines hold `d` (a diagnostic of the staged text).
fn new_hunk(d: &Diagnostic, hunks: &[Hunk]) -> Option<String> {
    let line = d.range.start.line as usize + 1;
    hunks.iter().find(|h| h.overlaps(line, 1)).map(|h| h.id.clone())
}

/// The hunk whose old lines held `d` (a diagnostic of the current text).
fn old_hunk(d: &Diagnostic, hunks: &[Hunk]) -> Option<String> {
    let line = d.range.start.line as usize + 1;
    hunks
        .iter()
        .find(|h| {
            let start = h.old_start.max(1);
            start <= line && line < start + h.old_lines.max(1)
        })
        .map(|h| h.id.clone())
}

fn wire(d: &Diagnostic, hunk: Option<String>) -> PreviewDiagnostic {
    PreviewDiagnostic {
        severity: if d.severity == Severity::Error { PreviewSeverity::Error } else { PreviewSeverity::Warning },
        message: d.message.clone(),
        line: d.range.start.line + 1,
        column: d.range.start.character + 1,
        end_line: d.range.end.line + 1,
        end_column: d.range.end.character + 1,
        code: d.code.clone(),
        source: d.source.clone(),
        hunk,
    }
}

fn plural(n: usize, word: &str) -> String {
    if n == 1 { format!("1 {word}") } else { format!("{n} {word}s") }
}

/// `main.py:7: "str" is not assignable to "int"` (the message's first line, shortened).
fn quote(name: &str, d: &PreviewDiagnostic) -> String {
    let message = d.message.lines().next().unwrap_or_default();
    let message: String = if message.chars().count() > 120 {
        message.chars().take(117).chain("...".chars()).collect()
    } else {
        message.to_owned()
    };
    format!("{name}:{}: {message}", d.line)
}

/// The introduced diagnostics of `severity`, with their file's name.
fn introduced_of<'a>(
    ready: &[(&'a FileDiagnosticsPreview, &'a String)],
    severity: PreviewSeverity,
) -> Vec<(&'a String, &'a PreviewDiagnostic)> {
    let mut out = Vec::new();
    for (file, name) in ready {
        out.extend(file.introduced.iter().filter(|d| d.severity == severity).map(|d| (*name, d)));
    }
    out
}

/// The person's line: what the change introduces and resolves, what is not known, and that it
/// is the whole change's.
fn summary(files: &[FileDiagnosticsPreview], shown: &[String], status: PreviewStatus, several_hunks: bool) -> String {
    let ready: Vec<(&FileDiagnosticsPreview, &String)> =
        files.iter().zip(shown).filter(|(f, _)| f.status == PreviewStatus::Ready).collect();
    let errors = introduced_of(&ready, PreviewSeverity::Error);
    let warnings = introduced_of(&ready, PreviewSeverity::Warning);
    let resolved: usize = ready.iter().map(|(f, _)| f.resolved.len()).sum();
    let mut parts = Vec::new();
    if !errors.is_empty() {
        let quoted: Vec<String> = errors.iter().take(MAX_QUOTED).map(|(name, d)| quote(name, d)).collect();
        let more =
            if errors.len() > MAX_QUOTED { format!("; … {} more", errors.len() - MAX_QUOTED) } else { String::new() };
        parts.push(format!("introduces {}: {}{more}", plural(errors.len(), "error"), quoted.join("; ")));
    }
    if !warnings.is_empty() {
        let verb = if errors.is_empty() { "introduces " } else { "" };
        parts.push(format!("{verb}{}", plural(warnings.len(), "warning")));
    }
    if resolved > 0 {
        parts.push(format!("resolves {resolved}"));
    }
    let mut text = match (status, parts.is_empty()) {
        (PreviewStatus::NotReady, _) => "diagnostics not ready, so nothing is known about errors".to_owned(),
        (_, true) => "no new errors or warnings".to_owned(),
        (_, false) => parts.join(" / "),
    };
    let waiting: Vec<String> = files
        .iter()
        .zip(shown)
        .filter(|(f, _)| f.status == PreviewStatus::NotReady)
        .map(|(f, name)| {
            let who = f.server.as_deref().map(|s| format!("{s}: ")).unwrap_or_default();
            format!("{name} ({who}{})", f.reason.as_deref().unwrap_or("no answer"))
        })
        .collect();
    if !waiting.is_empty() {
        text.push_str(&format!("; not ready: {}", waiting.join(", ")));
    }
    if several_hunks {
        text.push_str(" (preview of the whole change, every hunk applied)");
    }
    text
}

/// What the model is told when the person accepted a change whose preview showed new errors or
/// warnings; `None` when it showed none. `partial`: only some hunks were applied.
pub(crate) fn accepted_note(
    preview: &DiagnosticsPreview,
    partial: bool,
    display: impl Fn(&Path) -> String,
) -> Option<String> {
    let introduced: Vec<String> = preview
        .files
        .iter()
        .flat_map(|f| {
            let name = display(Path::new(&f.path));
            f.introduced.iter().map(move |d| {
                let severity = if d.severity == PreviewSeverity::Error { "error" } else { "warning" };
                format!("{} ({severity})", quote(&name, d))
            })
        })
        .collect();
    if introduced.is_empty() {
        return None;
    }
    let listed: Vec<&str> = introduced.iter().take(MAX_QUOTED * 2).map(String::as_str).collect();
    let more = match introduced.len().saturating_sub(listed.len()) {
        0 => String::new(),
        n => format!("; … {n} more"),
    };
    let scope = if partial {
        " The preview was of the whole change and only some hunks were applied: the diagnostics after this change say what holds now."
    } else {
        ""
    };
    Some(format!(
        "the person accepted this change after its preview showed that it introduces {}: {}{more}. Fix them unless the person asked for them.{scope}",
        plural(introduced.len(), "problem"),
        listed.join("; ")
    ))
}

#[cfg(test)]
mod tests;
