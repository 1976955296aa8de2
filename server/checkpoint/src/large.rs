//! The files left out of snapshots for their size, and per session the stamp (size, times,
//! inode) each had at the session's last snapshot: a snapshot names those whose stamp changed
//! since, so that a restore can say which of them the agent changed beyond undo's reach. A few
//! stats per snapshot. The list is the store's (`large.json`: a file is left out for every
//! session once it was for one); the stamps are each session's (`large/<session>.json`), so one
//! session's snapshots never hide a change from another's.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::CheckpointError;

/// Size, modification and change times (seconds, nanoseconds), inode; `None`: gone.
type Stamp = Option<(u64, i64, i64, i64, i64, u64)>;

fn list_path(dir: &Path) -> PathBuf {
    dir.join("large.json")
}

/// Where `session`'s stamps are kept (`session` as a file name).
pub(crate) fn stamps_path(dir: &Path, session: &str) -> PathBuf {
    dir.join("large").join(format!("{session}.json"))
}

/// The files left out for their size (none when there are none, or the list cannot be read).
pub(crate) fn paths(dir: &Path) -> BTreeSet<String> {
    read(&list_path(dir)).unwrap_or_default()
}

/// Adds `new` (just left out) to the list, stamps every listed file now for `session`, and
/// returns those whose stamp changed since the session's last snapshot, in order. The caller
/// holds the store's lock.
pub(crate) fn update(dir: &Path, root: &Path, session: &str, new: &[String]) -> Result<Vec<String>, CheckpointError> {
    let mut list = paths(dir);
    if list.is_empty() && new.is_empty() {
        return Ok(Vec::new());
    }
    let before = list.len();
    list.extend(new.iter().cloned());
    if list.len() != before {
        write(&list_path(dir), &list)?;
    }
    let path = stamps_path(dir, session);
    let mut stamps: BTreeMap<String, Stamp> = read(&path).unwrap_or_default();
    let mut changed = Vec::new();
    let mut dirty = false;
    for file in list {
        let now = stamp_of(&root.join(&file));
        match stamps.insert(file.clone(), now) {
            Some(old) if old == now => {}
            // First seen by this session: its baseline, not a change.
            None => dirty = true,
            Some(_) => {
                changed.push(file);
                dirty = true;
            }
        }
    }
    if dirty {
        write(&path, &stamps)?;
    }
    Ok(changed)
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

/// Writes `value` to `path` whole (a temporary file renamed over it).
fn write(path: &Path, value: &impl serde::Serialize) -> Result<(), CheckpointError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let bytes = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    let mut temp = path.as_os_str().to_owned();
    temp.push(".tmp");
    std::fs::write(&temp, bytes)?;
    std::fs::rename(temp, path)?;
    Ok(())
}

fn stamp_of(path: &Path) -> Stamp {
    let meta = std::fs::symlink_metadata(path).ok()?;
    Some((meta.len(), meta.mtime(), meta.mtime_nsec(), meta.ctime(), meta.ctime_nsec(), meta.ino()))
}
