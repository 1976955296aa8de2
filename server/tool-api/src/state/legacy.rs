//! State an older version kept in `<workspace>/.tandem/` (sessions, the journal, checkpoints,
//! command logs, scripts, MCP logs). Nothing there is read as state any more: a repository can
//! ship that folder. When the person trusts the workspace, the sessions, journals and MCP logs
//! found there are moved into the state directory once, with a notice; an untrusted
//! workspace's are left where they are, named in a notice. A checkpoint store found there is
//! never opened (Tandem opens only stores it created), only named.

use std::path::{Path, PathBuf};

use super::{LEGACY_KINDS, STATE_DIR, StateError, state_dir};
use crate::trust::Trust;

/// The kinds moved when trusted; the others are named only.
const MOVED: &[&str] = &["sessions", "journal", "mcp"];

/// The marker, in the project's state folder, that the move happened.
const MARKER: &str = "moved-from-workspace";

/// The kinds of an older version's state found in the workspace (real directories only).
pub fn found(root: &Path) -> Vec<&'static str> {
    let base = root.join(STATE_DIR);
    if !std::fs::symlink_metadata(&base).is_ok_and(|m| m.is_dir()) {
        return Vec::new();
    }
    LEGACY_KINDS
        .iter()
        .copied()
        .filter(|kind| std::fs::symlink_metadata(base.join(kind)).is_ok_and(|m| m.is_dir()))
        .collect()
}

/// What happened to an older version's state, for a notice (`None`: nothing to say).
pub fn settle(root: &Path, trust: Trust) -> Result<Option<String>, StateError> {
    let kinds = found(root);
    if kinds.is_empty() {
        return Ok(None);
    }
    let names = kinds.iter().map(|k| format!(".tandem/{k}")).collect::<Vec<_>>().join(", ");
    if trust == Trust::Untrusted {
        return Ok(Some(format!(
            "{names} in this folder is not read: Tandem keeps its state outside the workspace now, and an \
             untrusted repository may ship that folder. If it is yours (an older Tandem wrote it), run `tandem trust` \
             here and the sessions in it are moved on the next start; otherwise delete it"
        )));
    }
    let project = state_dir(root, "")?;
    if project.join(MARKER).exists() {
        return Ok(Some(format!(
            "{names} in this folder is left over from an older Tandem and is not read; its state was moved to {} \
             before. You can delete it",
            project.display()
        )));
    }
    let mut moved = 0;
    let mut problems = Vec::new();
    for kind in kinds.iter().filter(|k| MOVED.contains(k)) {
        let target = state_dir(root, kind)?;
        move_tree(&root.join(STATE_DIR).join(kind), &target, &mut moved, &mut problems);
    }
    super::create_new(&project.join(MARKER)).map_err(|source| StateError::Io { path: project.join(MARKER), source })?;
    let left: Vec<String> =
        kinds.iter().filter(|k| !MOVED.contains(k)).map(|k| format!(".tandem/{k}")).collect::<Vec<_>>();
    let mut notice = format!(
        "moved {moved} file(s) of an older Tandem's state ({}) from this folder's .tandem/ to {}",
        kinds.iter().filter(|k| MOVED.contains(k)).copied().collect::<Vec<_>>().join(", "),
        project.display()
    );
    if !left.is_empty() {
        notice.push_str(&format!(
            "; {} was not moved (old checkpoints, logs and scripts are not reused) and can be deleted",
            left.join(", ")
        ));
    }
    if !problems.is_empty() {
        notice.push_str(&format!("; not moved: {}", problems.join("; ")));
    }
    Ok(Some(notice))
}

/// Moves the regular files under `from` into `to` (same relative paths), never following a
/// symlink and never replacing a file already there. Empty folders left behind are removed.
fn move_tree(from: &Path, to: &Path, moved: &mut usize, problems: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(from) else { return };
    for entry in entries.flatten() {
        let (source, target) = (entry.path(), to.join(entry.file_name()));
        let Ok(meta) = std::fs::symlink_metadata(&source) else { continue };
        if meta.is_dir() {
            if std::fs::create_dir_all(&target).is_ok() && !is_symlink(&target) {
                move_tree(&source, &target, moved, problems);
            }
        } else if meta.is_file() {
            if target.exists() || is_symlink(&target) {
                problems.push(format!("{} (already there)", source.display()));
                continue;
            }
            match move_file(&source, &target) {
                Ok(()) => *moved += 1,
                Err(err) => problems.push(format!("{}: {err}", source.display())),
            }
        } else {
            problems.push(format!("{} (not a regular file)", source.display()));
        }
    }
    std::fs::remove_dir(from).ok();
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Renames, or copies then removes across file systems.
fn move_file(source: &Path, target: &PathBuf) -> std::io::Result<()> {
    match std::fs::rename(source, target) {
        Ok(()) => Ok(()),
        Err(err) if err.raw_os_error() == Some(18) => {
            let mut input = std::fs::File::open(source)?;
            let mut output = super::create_new(target)?;
            std::io::copy(&mut input, &mut output)?;
            output.sync_all()?;
            std::fs::remove_file(source)
        }
        Err(err) => Err(err),
    }
}
