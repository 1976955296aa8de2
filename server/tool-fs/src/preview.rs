//! Review with foresight in the commit path: before the person is asked about a staged change,
//! the language servers get its staged text and say what it would break
//! ([`CodeIntel::preview`]); once the person answered (and an accepted change was committed),
//! their view goes back to the files' current text ([`CodeIntel::end_preview`]), so a rejected
//! change leaves no trace in them.

use std::path::PathBuf;
use std::sync::Arc;

use tandem_protocol::DiagnosticsPreview;
use tandem_tool_api::ToolContext;
use tandem_tool_api::approval::{Approver, StagedFile};
use tandem_tool_api::intel::{CodeIntel, PreviewFile};

use crate::foresight;

/// A preview in progress: the servers hold the staged text of `paths` until [`Foresight::end`]
/// (or, for a call dropped mid-review, until the drop hands the ending to the runtime).
pub(crate) struct Foresight {
    intel: Arc<dyn CodeIntel>,
    paths: Vec<PathBuf>,
    report: Option<DiagnosticsPreview>,
    ended: bool,
}

impl Foresight {
    /// Asks the servers about `files` when `approver` is going to ask the person (a preview
    /// nobody sees would only cost time); `None` when it is not, or there are no servers.
    pub(crate) async fn ask(ctx: &ToolContext, approver: &dyn Approver, files: &[StagedFile]) -> Option<Self> {
        let intel = ctx.intel.clone()?;
        if !approver.asks_about(files) {
            return None;
        }
        let staged: Vec<PreviewFile> = files
            .iter()
            .filter_map(|file| {
                // A deleted file has no staged text; a moved one is new at its destination.
                let new_text = file.new_text.clone()?;
                match &file.moved_to {
                    Some(to) => Some(PreviewFile { path: to.clone(), old_text: None, new_text }),
                    None => Some(PreviewFile { path: file.path.clone(), old_text: file.old_text.clone(), new_text }),
                }
            })
            .collect();
        if staged.is_empty() {
            return None;
        }
        let previewed = intel.preview(&staged).await;
        let report = foresight::build(&previewed, files, |path| ctx.workspace.display(path));
        let paths = staged.into_iter().map(|file| file.path).collect();
        Some(Self { intel, paths, report, ended: false })
    }

    /// What the person is shown.
    pub(crate) fn report(&self) -> Option<&DiagnosticsPreview> {
        self.report.as_ref()
    }

    /// Ends the preview: the servers see the files' current text again.
    pub(crate) async fn end(mut self) {
        self.ended = true;
        self.intel.end_preview(&self.paths).await;
    }
}

impl Drop for Foresight {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        // The call ended without `end` (its future dropped, or an early error): end the preview
        // on the runtime, so the servers still go back to the current text.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
        let intel = Arc::clone(&self.intel);
        let paths = std::mem::take(&mut self.paths);
        runtime.spawn(async move { intel.end_preview(&paths).await });
    }
}
