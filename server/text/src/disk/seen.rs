//! Stamps of files read whole: a big file's metadata when its content was last read and hashed,
//! so that a later check that it still holds that content (right before a rename over it) need
//! not read it all again.
//!
//! # Why trusting a stamp is sound
//!
//! A stamp is the file's device and inode, its size, its modification time and its change time
//! (`ctime`), to the nanosecond. Every way of changing a file's bytes through the file system
//! (`write`, `truncate`, `fallocate`, a rename over it) gives it a new inode or sets its change
//! time to the kernel's current time, and userspace cannot set the change time back. So a file
//! whose stamp is unchanged holds what it held when the stamp was taken, unless it was changed
//! within the same tick of the kernel's clock as the change the stamp records ("racily clean",
//! as git calls it). A stamp is remembered only when that cannot have happened:
//!
//! - the same stamp was read before and after the content was read (no change during the read);
//! - its change time lies at least [`MARGIN`] before the read began, more than the kernel's
//!   clock lags behind the real time, so any later change gets a later change time;
//! - its change time has a non-zero nanosecond part: file systems that keep whole seconds
//!   (ext3's small inodes, FAT) would let a change within the same second go unseen;
//! - the file system is a local one whose timestamps are set by this kernel: never a network
//!   file system, where the attributes may be cached or the server's clock may differ.
//!
//! Left out: writes through a shared `mmap` of the file, which the kernel may not stamp at all
//! until writeback. Editors, formatters and version control write with `write` and `rename`.
//!
//! Only files of [`MIN_LEN`] bytes or more are remembered by hash: hashing a smaller one again
//! costs less than being clever about it.
//!
//! Small text files (up to [`TEXT_MAX`] bytes) are remembered whole under the same rule
//! ([`note_text`]): a file read again, as a model reads the same files again and again, costs
//! one `stat` while its stamp stays the same, and is read from disk as soon as it changes.

use std::collections::HashMap;
use std::fs::{File, Metadata};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::ContentHash;

/// Files smaller than this are hashed again rather than trusted by their stamp.
pub(crate) const MIN_LEN: u64 = 1024 * 1024;
/// How much older than the read a stamp's change time must be: well above the kernel clock's
/// tick (at most 10 ms).
pub(crate) const MARGIN: Duration = Duration::from_millis(50);
/// How many stamps are remembered; past that, all are forgotten (and files hashed again).
const MAX_REMEMBERED: usize = 512;

/// Local file systems with nanosecond timestamps set by this kernel (`statfs` magic numbers):
/// ext2/3/4, XFS, Btrfs, tmpfs, F2FS, overlayfs, ZFS, bcachefs.
const LOCAL: [i64; 8] =
    [0xEF53, 0x5846_5342, 0x9123_683E, 0x0102_1994, 0xF2F5_2010, 0x794C_7630, 0x2FC1_2FC1, 0xCA45_1A4E];

/// What a file's metadata says of which file it is and when it last changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl Stamp {
    pub(crate) fn of(meta: &Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// Whether a later change of the file is sure to change this stamp (see the module's notes),
    /// for a read that began at `began`.
    fn settled(&self, file: &File, began: SystemTime) -> bool {
        let (secs, nanos) = self.changed;
        let (Ok(secs), Ok(nanos)) = (u64::try_from(secs), u32::try_from(nanos)) else { return false };
        let changed = UNIX_EPOCH + Duration::new(secs, nanos);
        nanos != 0 && changed.checked_add(MARGIN).is_some_and(|settled| settled < began) && is_local(file)
    }
}

/// Whether `file` lies on one of the [`LOCAL`] file systems.
pub(crate) fn is_local(file: &File) -> bool {
    rustix::fs::fstatfs(file).is_ok_and(|fs| LOCAL.contains(&fs.f_type))
}

static SEEN: Mutex<Option<HashMap<PathBuf, (Stamp, ContentHash)>>> = Mutex::new(None);

/// After `file` (at `path`) was read whole and hashed to `hash`: `before` is its stamp from
/// before the read, which began at `began`. Remembers the stamp when it can be trusted later,
/// and forgets any older one for `path` otherwise.
pub(crate) fn note_read(path: &Path, file: &File, before: Stamp, began: SystemTime, hash: ContentHash) {
    let after = file.metadata().map(|meta| Stamp::of(&meta));
    let trusted =
        before.len >= MIN_LEN && after.as_ref().is_ok_and(|after| *after == before) && before.settled(file, began);
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    let seen = seen.get_or_insert_with(HashMap::new);
    if trusted {
        if seen.len() >= MAX_REMEMBERED {
            seen.clear();
        }
        seen.insert(path.to_path_buf(), (before, hash));
    } else {
        seen.remove(path);
    }
}

/// The content hash of the file at `path` whose stamp is `now`, if a read of it was remembered
/// under that very stamp.
pub(crate) fn known_hash(path: &Path, now: Stamp) -> Option<ContentHash> {
    let seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    match seen.as_ref()?.get(path) {
        Some((stamp, hash)) if *stamp == now => Some(*hash),
        _ => None,
    }
}

/// Text files up to this size are remembered whole ([`note_text`]).
pub(crate) const TEXT_MAX: u64 = 128 * 1024;
/// How many bytes of text are remembered at most; past that, all are forgotten.
const TEXTS_MAX_BYTES: usize = 4 * 1024 * 1024;

/// A small text file as it was read: what [`super::read`] gives for it.
#[derive(Clone)]
pub(crate) struct KnownText {
    pub(crate) hash: ContentHash,
    pub(crate) format: crate::FileFormat,
    pub(crate) text: String,
}

#[derive(Default)]
struct Texts {
    files: HashMap<PathBuf, (Stamp, KnownText)>,
    bytes: usize,
}

static TEXTS: Mutex<Option<Texts>> = Mutex::new(None);

/// After the small text file `file` (at `path`) was read whole (as `known`): `before` is its
/// stamp from before the read, which began at `began`. Remembers the text when its stamp can be
/// trusted later (see the module's notes), and forgets any older one for `path` otherwise.
pub(crate) fn note_text(path: &Path, file: &File, before: Stamp, began: SystemTime, known: &KnownText) {
    let after = file.metadata().map(|meta| Stamp::of(&meta));
    let trusted =
        before.len <= TEXT_MAX && after.as_ref().is_ok_and(|after| *after == before) && before.settled(file, began);
    let mut texts = TEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    let texts = texts.get_or_insert_with(Texts::default);
    if let Some((_, old)) = texts.files.remove(path) {
        texts.bytes -= old.text.len();
    }
    if trusted {
        if texts.bytes + known.text.len() > TEXTS_MAX_BYTES {
            *texts = Texts::default();
        }
        texts.bytes += known.text.len();
        texts.files.insert(path.to_path_buf(), (before, known.clone()));
    }
}

/// The text of the file at `path` whose stamp is `now`, if a read of it was remembered under
/// that very stamp.
pub(crate) fn known_text(path: &Path, now: Stamp) -> Option<KnownText> {
    let texts = TEXTS.lock().unwrap_or_else(PoisonError::into_inner);
    match texts.as_ref()?.files.get(path) {
        Some((stamp, known)) if *stamp == now => Some(known.clone()),
        _ => None,
    }
}
