//! Serialisation of commits per file. Checking that a file is still what a tool read and
//! replacing it must be one step: two writers that both check, then both rename, lose the
//! first one's change. Inside the process a commit holds an async lock per path (every
//! session and front door shares them); across processes, the disk part of a commit holds an
//! advisory `flock` on the directories it writes in, and never across an `await`.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

type Slot = tokio::sync::Mutex<()>;

/// The live per-path locks (dead ones are swept when a new one is made).
static LOCKS: LazyLock<Mutex<HashMap<PathBuf, Weak<Slot>>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn slot(path: &Path) -> Arc<Slot> {
    let mut locks = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(slot) = locks.get(path).and_then(Weak::upgrade) {
        return slot;
    }
    locks.retain(|_, slot| slot.strong_count() > 0);
    let slot = Arc::new(Slot::new(()));
    locks.insert(path.to_path_buf(), Arc::downgrade(&slot));
    slot
}

/// The in-process locks of some paths, released on drop.
pub(crate) struct PathLocks {
    _held: Vec<tokio::sync::OwnedMutexGuard<()>>,
}

/// Locks `paths` for this process, in sorted order (so two commits of overlapping sets of
/// files cannot deadlock). Not reentrant: a task must not lock a path it holds.
pub(crate) async fn lock_paths(paths: impl IntoIterator<Item = PathBuf>) -> PathLocks {
    let mut paths: Vec<PathBuf> = paths.into_iter().collect();
    paths.sort();
    paths.dedup();
    let mut held = Vec::with_capacity(paths.len());
    for path in paths {
        held.push(slot(&path).lock_owned().await);
    }
    PathLocks { _held: held }
}

/// `flock`s on directories, released on drop (when the descriptors close).
pub(crate) struct DirLocks {
    _files: Vec<File>,
}

/// Locks the directories holding `paths` against other processes, in sorted order. Blocking:
/// call it from blocking file work. A directory that cannot be opened is not locked (the
/// write itself then reports the problem).
pub(crate) fn lock_dirs<'a>(paths: impl IntoIterator<Item = &'a Path>) -> DirLocks {
    let mut dirs: Vec<&Path> = paths.into_iter().filter_map(Path::parent).collect();
    dirs.sort();
    dirs.dedup();
    let mut files = Vec::with_capacity(dirs.len());
    for dir in dirs {
        match File::open(dir).and_then(|file| file.lock().map(|()| file)) {
            Ok(file) => files.push(file),
            Err(err) => tracing::debug!(dir = %dir.display(), "cannot lock the directory: {err}"),
        }
    }
    DirLocks { _files: files }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_held_by_one_task_at_a_time_and_locks_are_swept() {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let runtime = runtime.unwrap_or_else(|e| panic!("{e}"));
        runtime.block_on(async {
            let a = PathBuf::from("/lock-test/a");
            let held = lock_paths([a.clone(), a.clone()]).await;
            let again = tokio::time::timeout(std::time::Duration::from_millis(50), lock_paths([a.clone()])).await;
            assert!(again.is_err(), "a held path was locked twice");
            drop(held);
            let _again = lock_paths([a.clone()]).await;
        });
        let _other = slot(Path::new("/lock-test/b"));
        let locks = LOCKS.lock().unwrap_or_else(PoisonError::into_inner);
        assert!(!locks.contains_key(Path::new("/lock-test/a")), "a released lock is swept");
    }
}
