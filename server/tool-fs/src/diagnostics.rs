//! Diagnostics after a change: what the language servers say of the files a write tool just
//! changed, rendered for the model (errors listed, warnings counted), and the same rendering for
//! the `lsp` tool's diagnostics operation.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use tandem_tool_api::intel::{DiagnosticsReport, Severity};
use tandem_tool_api::{ToolContext, ToolOutput};

/// After a successful commit: the fresh diagnostics of the changed files (errors listed,
/// warnings counted), appended to the result, when language servers are available. A server
/// that did not answer in time is reported as "diagnostics not ready", never as "no errors".
/// Public for the other tools that commit files (`lsp`'s rename).
pub async fn attach_diagnostics(ctx: &ToolContext, paths: &[PathBuf], output: &mut ToolOutput) {
    let Some(intel) = &ctx.intel else { return };
    let reports = intel.diagnostics_after_write(paths).await;
    let mut meta = serde_json::Map::new();
    let mut lines = Vec::new();
    for (path, report) in &reports {
        if let Some((text, value)) = render_report(ctx, path, report) {
            lines.push(text);
            meta.insert(ctx.workspace.display(path), value);
        }
    }
    if !lines.is_empty() {
        output.output.push_str("\n\nDiagnostics after this change:\n");
        output.output.push_str(&lines.join("\n"));
        output.metadata.insert("diagnostics".into(), meta.into());
    }
}

/// A report's text (for the model) and metadata; `None` when there is nothing to say (no server,
/// or diagnostics switched off). Public for the `lsp` tool (`tandem-tool-intel`), whose
/// diagnostics operation starts from it.
pub fn render_report(ctx: &ToolContext, path: &Path, report: &DiagnosticsReport) -> Option<(String, Value)> {
    let shown = ctx.workspace.display(path);
    match report {
        DiagnosticsReport::NoServer | DiagnosticsReport::Disabled => None,
        DiagnosticsReport::NotReady { server, reason } => Some((
            format!(
                "`{shown}`: diagnostics not ready ({server}: {reason}); this says nothing about errors: ask again with `lsp` operation diagnostics"
            ),
            json!({ "status": "notReady", "server": server, "reason": reason }),
        )),
        DiagnosticsReport::Failed { message } => Some((
            format!("`{shown}`: diagnostics not ready ({message})"),
            json!({ "status": "failed", "message": message }),
        )),
        DiagnosticsReport::Fresh { server, diagnostics } => {
            let mut sorted: Vec<_> = diagnostics.iter().collect();
            sorted.sort_by_key(|d| (d.severity, d.range.start));
            let errors: Vec<_> = sorted.iter().filter(|d| d.severity == Severity::Error).collect();
            let warnings = sorted.iter().filter(|d| d.severity == Severity::Warning).count();
            let mut text = match errors.len() {
                0 => format!("`{shown}`: no errors ({server}), {warnings} warning(s)"),
                n => format!("`{shown}`: {n} error(s), {warnings} warning(s) ({server}):"),
            };
            let mut listed = Vec::new();
            for d in errors.iter().take(20) {
                let code = d.code.as_deref().map(|c| format!(" [{c}]")).unwrap_or_default();
                let message = d.message.lines().next().unwrap_or_default();
                text.push_str(&format!(
                    "\n  {shown}:{}:{}: error: {message}{code}",
                    d.range.start.line + 1,
                    d.range.start.character + 1
                ));
                listed.push(json!({ "line": d.range.start.line + 1, "column": d.range.start.character + 1,
                    "message": d.message, "code": d.code, "source": d.source }));
            }
            if errors.len() > 20 {
                text.push_str(&format!("\n  … {} more errors", errors.len() - 20));
            }
            Some((
                text,
                json!({ "status": "fresh", "server": server, "errors": listed, "errorCount": errors.len(), "warnings": warnings }),
            ))
        }
    }
}
