//! What the approver knows of undo: which files a change or a command would lose for good
//! (checkpoints leave them out), and how a request says so.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use super::CallApprover;

impl CallApprover {
    /// Of `paths` (absolute), those that exist and checkpoints leave out, each with why
    /// (`` `big.log` (over the 10 MB checkpoint limit) ``).
    pub(super) async fn not_covered(&self, paths: Vec<PathBuf>) -> Vec<String> {
        let Some((store, root)) = &self.undo else { return Vec::new() };
        let mut relative: Vec<String> = paths.iter().filter_map(|path| relative_to(root, path)).collect();
        relative.sort_unstable();
        relative.dedup();
        if relative.is_empty() {
            return Vec::new();
        }
        let store = Arc::clone(store);
        match tokio::task::spawn_blocking(move || store.left_out(&relative)).await {
            Ok(Ok(list)) => {
                list.into_iter().map(|(path, why)| format!("`{path}` ({})", left_out_reason(why))).collect()
            }
            Ok(Err(err)) => {
                tracing::warn!("cannot tell which files undo leaves out: {err}");
                Vec::new()
            }
            Err(err) => {
                tracing::warn!("cannot tell which files undo leaves out (the task failed): {err}");
                Vec::new()
            }
        }
    }

    /// The paths a command's words name, from its working directory `dir` (as shown:
    /// workspace-relative).
    pub(super) fn named_paths(&self, command: &str, dir: &str) -> Vec<PathBuf> {
        let Some((_, root)) = &self.undo else { return Vec::new() };
        let base = root.join(dir);
        let words = command
            .split(|c: char| c.is_whitespace() || ";&|<>()`".contains(c))
            .map(|word| word.trim_matches(|c| c == '\'' || c == '"'))
            .filter(|word| !word.is_empty() && !word.starts_with('-') && !word.contains(['$', '*', '?', '~', '=']));
        words.take(64).map(|word| base.join(word)).collect()
    }
}

/// A request's title, saying when the change is not covered by undo.
pub(super) fn titled(title: &str, not_covered: &[String]) -> String {
    if not_covered.is_empty() { title.to_owned() } else { format!("{title} (not covered by undo)") }
}

/// What a request says of the files a change would lose for good.
pub(super) fn not_covered_text(not_covered: &[String]) -> String {
    format!(
        "Not covered by undo: {}. Checkpoints leave these files out, so this change to them cannot be undone.",
        not_covered.join(", ")
    )
}

/// `path` relative to `root`, `/`-separated, with `.` and `..` worked out; `None` outside it.
fn relative_to(root: &Path, path: &Path) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    for component in path.strip_prefix(root).ok()?.components() {
        match component {
            Component::Normal(name) => names.push(name.to_str()?),
            Component::ParentDir => {
                names.pop()?;
            }
            Component::CurDir => {}
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!names.is_empty()).then(|| names.join("/"))
}

/// Why a file is not covered by undo, in words.
fn left_out_reason(why: tandem_checkpoint::LeftOut) -> String {
    match why {
        tandem_checkpoint::LeftOut::TooLarge => {
            format!("over the {} MB checkpoint limit", tandem_checkpoint::DEFAULT_MAX_FILE_BYTES / (1024 * 1024))
        }
        tandem_checkpoint::LeftOut::Ignored => "ignored: .gitignore or a default exclude".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_are_named_relative_to_the_workspace_and_never_outside_it() {
        let root = Path::new("/ws");
        assert_eq!(relative_to(root, Path::new("/ws/./a/../b.log")).as_deref(), Some("b.log"));
        assert_eq!(relative_to(root, Path::new("/ws/build")).as_deref(), Some("build"));
        assert_eq!(relative_to(root, Path::new("/ws/../etc/passwd")), None);
        assert_eq!(relative_to(root, Path::new("/ws")), None);
        assert_eq!(relative_to(root, Path::new("/other/x")), None);
    }
}
