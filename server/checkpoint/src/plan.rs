//! Restore plans: which files go back to a checkpoint, which are the person's (conflicts), and
//! which changes no restore can bring back. Who changed a file is decided stretch by stretch
//! (from one snapshot to the next) by the windows of Tandem's tool calls and restores.

use std::collections::{BTreeSet, HashMap};

use crate::{Checkpoint, CheckpointError, Effects, Kind, Plan, Restored, Store, Target};

/// A tool call's or a restore's window: from the snapshot that opened it to the one that
/// closed it (indexes in the session's list).
struct Window<'a> {
    open: usize,
    close: usize,
    effects: &'a Effects,
}

/// Nothing known: no change in the window is explained (an end snapshot without effects).
static NOTHING: Effects = Effects::Writes(Vec::new());

/// The closed windows of `list`. A call's window opens at its latest [`Kind::BeforeTool`]
/// before its [`Kind::AfterTool`]; a restore's at its [`Kind::BeforeRestore`] (a dry run's,
/// never closed, is none). A turn's start or end closes nothing: a window still open then
/// (the process stopped, a snapshot failed) is no window at all.
fn windows(list: &[Checkpoint]) -> Vec<Window<'_>> {
    let mut open: HashMap<Option<&str>, usize> = HashMap::new();
    let mut out = Vec::new();
    for (at, checkpoint) in list.iter().enumerate() {
        let key = checkpoint.tool_call_id.as_deref();
        match checkpoint.kind {
            Kind::BeforeTurn | Kind::AfterTurn => open.clear(),
            Kind::BeforeTool if key.is_some() => {
                open.insert(key, at);
            }
            Kind::BeforeRestore => {
                open.insert(None, at);
            }
            Kind::AfterTool if key.is_some() => {
                if let Some(start) = open.remove(&key) {
                    out.push(Window {
                        open: start,
                        close: at,
                        effects: checkpoint.effects.as_ref().unwrap_or(&NOTHING),
                    });
                }
            }
            Kind::AfterRestore => {
                if let Some(start) = open.remove(&None) {
                    out.push(Window {
                        open: start,
                        close: at,
                        effects: checkpoint.effects.as_ref().unwrap_or(&NOTHING),
                    });
                }
            }
            Kind::BeforeTool | Kind::AfterTool => {}
        }
    }
    out
}

/// Whether the writes of `windows` took `path` from content hash `from` to `to` (`None`:
/// absent) in the stretch from snapshot `at` to the next: each write starting where the one
/// before ended. A window that is exactly this stretch must account for all its writes to the
/// file; one that spans several (sub-agents' calls overlapping) for a run of them.
fn explained(windows: &[&Window<'_>], at: usize, path: &str, from: Option<u64>, to: Option<u64>) -> bool {
    windows.iter().any(|window| {
        let Effects::Writes(writes) = window.effects else { return true };
        let own: Vec<_> = writes.iter().filter(|w| w.path == path).collect();
        let whole = window.open == at && window.close == at + 1;
        let firsts = if whole { 0..own.len().min(1) } else { 0..own.len() };
        firsts.into_iter().any(|first| {
            own[first].before == from
                && (first..own.len())
                    .take_while(|&last| last == first || own[last - 1].after == own[last].before)
                    .any(|last| own[last].after == to && (!whole || last + 1 == own.len()))
        })
    })
}

impl Store {
    /// What restoring `target` would do, given `now`: a snapshot taken just before (a
    /// [`Kind::BeforeRestore`], the session's last).
    pub fn plan(&self, session: &str, target: &Target, now: &Checkpoint) -> Result<Plan, CheckpointError> {
        let mut list = self.list(session)?;
        match list.iter().position(|c| c.id == now.id) {
            Some(at) => list.truncate(at + 1),
            None => list.push(now.clone()),
        }
        let last = list.len() - 1;
        let windows = windows(&list);
        let unknown = |what: String| CheckpointError::Unknown { what };
        // What is brought back: the changes from `start` to `end` (now, or the end of a call).
        let (start, end) = match target {
            Target::Checkpoint(id) => {
                (list.iter().position(|c| c.id == *id).ok_or_else(|| unknown(format!("{id}")))?, last)
            }
            Target::Turn(turn) => (
                list.iter()
                    .position(|c| c.turn == *turn && c.kind == Kind::BeforeTurn)
                    .ok_or_else(|| unknown(format!("for turn {turn}")))?,
                last,
            ),
            Target::Call(id) => {
                let own = |c: &Checkpoint| c.kind == Kind::BeforeTool && c.tool_call_id.as_deref() == Some(id);
                match windows.iter().rev().find(|w| own(&list[w.open])) {
                    Some(window) => (window.open, window.close),
                    // Never closed: its stretch is nobody's for sure, so all of it is a conflict.
                    None => {
                        let at = list.iter().rposition(own).ok_or_else(|| unknown(format!("for tool call `{id}`")))?;
                        (at, (at + 1).min(last))
                    }
                }
            }
        };
        let target = list[start].clone();
        let candidates: BTreeSet<String> = self.git.changed(&target.tree, &list[end].tree)?.into_iter().collect();

        // Who changed them, stretch by stretch from the target to now.
        let pairs: Vec<(&str, &str)> =
            (start..last).map(|i| (list[i].tree.as_str(), list[i + 1].tree.as_str())).collect();
        let stretches = self.git.changed_pairs(&pairs)?;
        let mut by_person = BTreeSet::new();
        // Changes in file tools' and restores' windows, to check against their writes.
        let mut to_check: Vec<(usize, &str, Vec<&Window<'_>>)> = Vec::new();
        for (k, changed) in stretches.iter().enumerate() {
            let at = start + k;
            let changed = changed.iter().filter(|p| candidates.contains(*p));
            // For one call, what changed after it (by anyone) is not the call's to undo.
            if at >= end {
                by_person.extend(changed.cloned());
                continue;
            }
            let inside: Vec<&Window<'_>> = windows.iter().filter(|w| w.open <= at && at < w.close).collect();
            if inside.is_empty() {
                by_person.extend(changed.cloned());
            } else if !inside.iter().any(|w| matches!(w.effects, Effects::Unknown)) {
                to_check.extend(changed.map(|path| (at, path.as_str(), inside.clone())));
            }
        }
        // And each file a window wrote: its first write must replace what the window began
        // with, or the person changed it in between (even if the window ends where it began).
        let mut firsts: Vec<(usize, &str, Option<u64>)> = Vec::new();
        for window in windows.iter().filter(|w| w.open >= start && w.close <= end) {
            let Effects::Writes(writes) = window.effects else { continue };
            let mut seen = BTreeSet::new();
            for write in writes.iter().filter(|w| candidates.contains(&w.path)) {
                if seen.insert(write.path.as_str()) {
                    firsts.push((window.open, write.path.as_str(), write.before));
                }
            }
        }
        let names: Vec<(&str, &str)> = to_check
            .iter()
            .flat_map(|(at, path, _)| [(list[*at].tree.as_str(), *path), (list[at + 1].tree.as_str(), *path)])
            .chain(firsts.iter().map(|(open, path, _)| (list[*open].tree.as_str(), *path)))
            .collect();
        let contents = self.git.contents(&names)?;
        let hash = |i: usize| contents[i].as_deref().map(crate::content_hash);
        for (i, (at, path, inside)) in to_check.iter().enumerate() {
            if !explained(inside, *at, path, hash(2 * i), hash(2 * i + 1)) {
                by_person.insert((*path).to_owned());
            }
        }
        for (i, (_, path, before)) in firsts.iter().enumerate() {
            if hash(2 * to_check.len() + i) != *before {
                by_person.insert((*path).to_owned());
            }
        }

        // What Tandem changed in its windows that snapshots do not hold.
        let mut not_covered = BTreeSet::new();
        let mut existed = Vec::new();
        for window in windows.iter().filter(|w| w.open >= start && w.close <= end) {
            match window.effects {
                Effects::Unknown => {
                    for checkpoint in &list[window.open + 1..=window.close] {
                        not_covered.extend(checkpoint.large_changed.iter().cloned());
                    }
                }
                Effects::Writes(writes) => existed.extend(
                    writes
                        .iter()
                        .filter(|w| w.before.is_some())
                        .map(|w| (list[window.open].tree.as_str(), w.path.as_str())),
                ),
            }
        }
        for ((_, path), held) in existed.iter().zip(self.git.holds(&existed)?) {
            if !held {
                not_covered.insert((*path).to_owned());
            }
        }

        let (mut files, mut conflicts) = (Vec::new(), Vec::new());
        let paths: Vec<&String> = candidates.iter().collect();
        let at_target: Vec<(&str, &str)> = paths.iter().map(|p| (target.tree.as_str(), p.as_str())).collect();
        for (path, content) in paths.into_iter().zip(self.git.contents(&at_target)?) {
            let restored = Restored { content, path: path.clone() };
            if by_person.contains(path) {
                conflicts.push(restored);
            } else {
                files.push(restored);
            }
        }
        Ok(Plan {
            skipped: target.skipped.clone(),
            target,
            files,
            conflicts,
            not_covered: not_covered.into_iter().collect(),
        })
    }
}
