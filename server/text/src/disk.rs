//! The only IO in this crate: reading files for the cache and writing them atomically.
//!
//! A write goes to a temporary file in the same directory, is fsynced, and is renamed over the
//! target, so a crash at any point leaves either the old or the new content. The file's
//! permissions (and owner, where allowed) are carried over. The content the caller last saw is
//! checked twice, before writing and right before the rename, so a change made meanwhile by the
//! person or another program is never overwritten. The check hashes the file again, except for
//! a big file whose stamp (inode, size, modification and change times) is the one it had when it
//! was read whole and settled: [`seen`] says why that is sound and when it is not trusted.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::format::{Decoded, decode_checked};
use crate::memory::release;
use crate::{ContentHash, TextError};

mod seen;

/// A file read from disk.
#[derive(Debug)]
pub struct DiskFile {
    /// Hash of the raw bytes (BOM included).
    pub hash: ContentHash,
    /// Size in bytes.
    pub len: u64,
    /// Its content, decoded.
    pub decoded: Decoded,
}

/// The outcome of [`read`].
#[derive(Debug)]
pub enum ReadOutcome {
    /// The file was read.
    File(DiskFile),
    /// Nothing exists at the path.
    NotFound,
    /// The path is a directory.
    Directory,
    /// The file is larger than the limit given.
    TooLarge {
        /// Its size in bytes.
        len: u64,
    },
}

fn io_err<'a>(action: &'static str, path: &'a Path) -> impl FnOnce(io::Error) -> TextError + use<'a> {
    move |source| TextError::Io { action, path: path.to_path_buf(), source }
}

/// What kind of thing a non-regular, non-directory file is, for error messages.
fn special_kind(file_type: fs::FileType) -> &'static str {
    if file_type.is_fifo() {
        "a named pipe (FIFO)"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else {
        "not a regular file"
    }
}

fn not_regular(path: &Path, file_type: fs::FileType) -> TextError {
    TextError::NotRegular { path: path.to_path_buf(), what: special_kind(file_type) }
}

/// Opens `path` for reading only when it is a regular file: a named pipe, socket or device is
/// refused before it is opened (opening one can block forever or have side effects), and the
/// open itself never blocks (`O_NONBLOCK`, which changes nothing for a regular file), so a file
/// swapped for a pipe in between is caught by the check on the open descriptor.
/// `Ok(None)`: nothing exists at `path`.
fn open_regular(path: &Path, action: &'static str) -> Result<Option<(File, fs::Metadata)>, TextError> {
    match fs::metadata(path) {
        Ok(meta) => open_seen(path, &meta, action),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io_err(action, path)(err)),
    }
}

/// [`open_regular`] with what `stat` said of `path` already in hand.
fn open_seen(
    path: &Path,
    seen: &fs::Metadata,
    action: &'static str,
) -> Result<Option<(File, fs::Metadata)>, TextError> {
    if seen.is_dir() {
        return Err(io_err(action, path)(io::Error::new(io::ErrorKind::IsADirectory, "it is a directory")));
    }
    if !seen.is_file() {
        return Err(not_regular(path, seen.file_type()));
    }
    let file = match OpenOptions::new().read(true).custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32).open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_err(action, path)(err)),
    };
    let meta = file.metadata().map_err(io_err(action, path))?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    Ok(Some((file, meta)))
}

/// Reads and decodes a file of at most `max_len` bytes. Only regular files are read: a named
/// pipe, socket or device is refused with [`TextError::NotRegular`].
pub fn read(path: &Path, max_len: u64) -> Result<ReadOutcome, TextError> {
    read_seen(path, max_len, None)
}

/// [`read`], when the caller already has `stat`'s answer for `path` (`seen`), as resolving a
/// path gives it: not asked again.
pub fn read_seen(path: &Path, max_len: u64, seen: Option<fs::Metadata>) -> Result<ReadOutcome, TextError> {
    let seen = match seen.map_or_else(|| fs::metadata(path), Ok) {
        Ok(seen) if seen.is_dir() => return Ok(ReadOutcome::Directory),
        Ok(seen) => seen,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(ReadOutcome::NotFound),
        Err(err) => return Err(io_err("cannot read", path)(err)),
    };
    // A small text file read before and unchanged since (see `seen`): no need to read it again.
    if seen.is_file()
        && seen.len() <= max_len.min(seen::TEXT_MAX)
        && let Some(known) = seen::known_text(path, seen::Stamp::of(&seen))
    {
        let decoded = Decoded::Text { text: known.text, format: known.format };
        return Ok(ReadOutcome::File(DiskFile { hash: known.hash, len: seen.len(), decoded }));
    }
    let began = std::time::SystemTime::now();
    let Some((mut file, meta)) = open_seen(path, &seen, "cannot read")? else { return Ok(ReadOutcome::NotFound) };
    if meta.len() > max_len {
        return Ok(ReadOutcome::TooLarge { len: meta.len() });
    }
    let mut bytes = crate::memory::buffer(usize::try_from(meta.len()).unwrap_or(0));
    // Hashed and checked as UTF-8 piece by piece as it comes in, while each piece is in the
    // CPU's cache: for a big file, a pass over it in memory costs about as much as reading it.
    let (mut hasher, mut utf8) = (crate::hash::Hashing::new(), crate::format::Utf8Check::default());
    // One byte past the limit tells a file that grew meanwhile from one that fits.
    let mut rest = max_len.saturating_add(1);
    loop {
        let (start, want) = (bytes.len(), READ_PIECE.min(rest));
        let read = Read::by_ref(&mut file).take(want).read_to_end(&mut bytes).map_err(io_err("cannot read", path))?;
        let piece = &bytes[start..];
        hasher.update(piece);
        utf8.feed(piece);
        rest -= read as u64;
        // Short of what was asked: the end of the file (or one byte past the limit).
        if (read as u64) < want || rest == 0 {
            break;
        }
    }
    #[cfg(test)]
    tests::READ.with(|read| read.set(read.get() + bytes.len() as u64));
    if bytes.len() as u64 > max_len {
        return Ok(ReadOutcome::TooLarge { len: bytes.len() as u64 });
    }
    let hash = hasher.finish();
    let len = bytes.len() as u64;
    let stamp = seen::Stamp::of(&meta);
    if len >= seen::MIN_LEN {
        seen::note_read(path, &file, stamp, began, hash);
    }
    let decoded = decode_checked(bytes, Some(utf8.is_utf8()));
    if len <= seen::TEXT_MAX
        && let Decoded::Text { text, format } = &decoded
    {
        let known = seen::KnownText { hash, format: *format, text: text.clone() };
        seen::note_text(path, &file, stamp, began, &known);
    }
    Ok(ReadOutcome::File(DiskFile { hash, len, decoded }))
}

/// The raw bytes of the regular file at `path` (an image to show), `None` when there is none or
/// it holds more than `max_len` bytes.
pub fn read_bytes(path: &Path, max_len: u64) -> Result<Option<Vec<u8>>, TextError> {
    let seen = match fs::metadata(path) {
        Ok(seen) => seen,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(io_err("cannot read", path)(err)),
    };
    let Some((file, meta)) = open_seen(path, &seen, "cannot read")? else { return Ok(None) };
    if meta.len() > max_len {
        return Ok(None);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(max_len.saturating_add(1)).read_to_end(&mut bytes).map_err(io_err("cannot read", path))?;
    Ok((bytes.len() as u64 <= max_len).then_some(bytes))
}

/// What the caller believes is on disk; the write is refused when that is no longer true.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Write whatever is there (the caller checked otherwise).
    Any,
    /// No file exists at the path.
    Absent,
    /// The file has exactly this content.
    Hash(ContentHash),
}

/// Hash of the file at `path` (`None` when absent), streamed: big files are not held in memory.
/// Only a regular file has one: anything else is refused.
pub fn current_hash(path: &Path) -> Result<Option<ContentHash>, TextError> {
    match open_regular(path, "cannot read")? {
        None => Ok(None),
        Some((file, meta)) => hash_known(&file, &meta, path).map(Some),
    }
}

/// The hash of the open `file` (whose metadata is `meta`): remembered from a read under the same
/// stamp when that can be trusted (see [`seen`]), else read and hashed.
fn hash_known(file: &File, meta: &fs::Metadata, path: &Path) -> Result<ContentHash, TextError> {
    match seen::known_hash(path, seen::Stamp::of(meta)) {
        Some(hash) => Ok(hash),
        None => hash_of(file, path),
    }
}

/// The hash of what `file` holds from its current offset on, read in blocks.
fn hash_of(mut file: &File, path: &Path) -> Result<ContentHash, TextError> {
    let mut hasher = crate::hash::Hashing::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        match file.read(&mut buffer) {
            Ok(0) => return Ok(hasher.finish()),
            Ok(n) => {
                #[cfg(test)]
                tests::HASHED.with(|hashed| hashed.set(hashed.get() + n as u64));
                hasher.update(&buffer[..n]);
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(io_err("cannot read", path)(err)),
        }
    }
}

/// Refuses (with [`TextError::Stale`]) when the file at `path` no longer matches `expected`.
pub fn check_expected(path: &Path, expected: Expected) -> Result<(), TextError> {
    check_expected_open(path, expected).map(drop)
}

/// [`check_expected`], returning the file it checked, still open: closing the last handle of a
/// replaced file is what frees its pages (milliseconds for a large one), so a caller about to
/// rename over it can hand the handle to [`release`] instead of paying that in the rename.
fn check_expected_open(path: &Path, expected: Expected) -> Result<Option<File>, TextError> {
    let mut open = None;
    let current = match expected {
        Expected::Any => return Ok(None),
        Expected::Absent => path.symlink_metadata().is_ok().then_some(ContentHash(0)),
        Expected::Hash(_) => match open_regular(path, "cannot read")? {
            None => None,
            Some((file, meta)) => {
                let hash = hash_known(&file, &meta, path)?;
                open = Some(file);
                Some(hash)
            }
        },
    };
    let detail = match (expected, current) {
        (Expected::Any, _) | (Expected::Absent, None) => return Ok(open),
        (Expected::Hash(want), Some(got)) if want == got => return Ok(open),
        (Expected::Absent, Some(_)) => "a file now exists there",
        (Expected::Hash(_), None) => "it was deleted on disk",
        (Expected::Hash(_), Some(_)) => "its content on disk is different",
    };
    Err(TextError::Stale { path: path.to_path_buf(), detail: detail.to_owned() })
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// How the names of Tandem's temporary files begin.
pub const TEMP_PREFIX: &str = ".tandem-";

/// A new name next to `path` for a temporary file ending in `suffix` (`tmp`, `pre`): short and
/// fixed in length whatever the file's name (a hash of the path, the process and a counter),
/// so a file whose name is near the 255-byte limit can still be written.
pub fn temp_path(path: &Path, suffix: &str) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let mut hasher = crate::hash::Hashing::new();
    hasher.update(path.as_os_str().as_encoded_bytes());
    hasher.update(&std::process::id().to_le_bytes());
    hasher.update(&n.to_le_bytes());
    hasher.update(&nanos.to_le_bytes());
    path.with_file_name(format!("{TEMP_PREFIX}{:016x}.{suffix}", hasher.finish().0))
}

/// Writes `bytes` to `path` atomically, if the file still matches `expected`.
/// The parent directory must exist.
pub fn write_atomic(path: &Path, bytes: &[u8], expected: Expected) -> Result<(), TextError> {
    write_atomic_parts(path, &[bytes], expected)
}

/// Like [`write_atomic`], for content given in parts (a BOM and the text, say), so that large
/// files are not copied into one buffer first. `expected` is checked right before the rename,
/// the moment that decides; a file that was absent must still be absent before anything is
/// written at all.
pub fn write_atomic_parts(path: &Path, parts: &[&[u8]], expected: Expected) -> Result<(), TextError> {
    if expected == Expected::Absent {
        check_expected(path, expected)?;
    }
    let tmp = temp_path(path, "tmp");
    let result = stage(path, &tmp, parts).and_then(|_| check_and_install(&tmp, path, expected));
    if result.is_err() {
        // Best effort: the temporary file may not exist if creating it failed.
        fs::remove_file(&tmp).ok();
    }
    result
}

/// What is at `path` now, for a write: `None` when nothing; refused when it is a directory or
/// not a regular file (a named pipe, socket or device is never replaced).
fn existing_for_write(path: &Path) -> Result<Option<fs::Metadata>, TextError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            Err(io_err("cannot write", path)(io::Error::new(io::ErrorKind::IsADirectory, "it is a directory")))
        }
        Ok(meta) if !meta.is_file() => Err(not_regular(path, meta.file_type())),
        Ok(meta) => Ok(Some(meta)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(err) => Err(io_err("cannot write", path)(err)),
    }
}

/// Writes the new content of `path` to the temporary file `tmp` (which must not exist) in the
/// same directory, with the permissions (and owner, where allowed) of the file it will
/// replace, and syncs it. Nothing at `path` changes; [`install`] puts it in place. Returns
/// the hash of what it wrote, taken piece by piece as each piece is written (while the piece
/// is in the CPU's cache), so a large text is not read once more to hash it.
pub fn stage(path: &Path, tmp: &Path, parts: &[&[u8]]) -> Result<ContentHash, TextError> {
    let existing = existing_for_write(path)?;
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666) // the umask applies, as for any new file
        .open(tmp)
        .map_err(io_err("cannot create a temporary file next to", path))?;
    let mut hasher = crate::hash::Hashing::new();
    for piece in parts.iter().flat_map(|part| part.chunks(STAGE_PIECE)) {
        hasher.update(piece);
        file.write_all(piece).map_err(io_err("cannot write", tmp))?;
    }
    if let Some(meta) = &existing {
        file.set_permissions(fs::Permissions::from_mode(meta.mode()))
            .map_err(io_err("cannot set permissions on", tmp))?;
        if meta.uid() != current_uid(&file) {
            // Only root may give a file away; otherwise it becomes ours, as with any editor's save.
            std::os::unix::fs::fchown(&file, Some(meta.uid()), Some(meta.gid())).ok();
        }
    }
    file.sync_all().map_err(io_err("cannot sync", tmp))?;
    Ok(hasher.finish())
}

/// How much [`stage`] hashes and writes at a time: small enough to stay in the CPU's cache
/// between the two, large enough that the extra `write` calls cost nothing.
const STAGE_PIECE: usize = 256 * 1024;
/// The size of the pieces a file is read in (each hashed and checked while in the CPU's cache).
const READ_PIECE: u64 = 256 * 1024;

/// Checks that `path` still matches `expected`, then renames the staged `tmp` over it and syncs
/// the directory. The replaced file is closed (and its pages freed) off this thread.
pub fn check_and_install(tmp: &Path, path: &Path, expected: Expected) -> Result<(), TextError> {
    let replaced = check_expected_open(path, expected)?;
    let result = install(tmp, path);
    release(replaced);
    result
}

/// Renames the staged `tmp` over `path` and syncs the directory.
pub fn install(tmp: &Path, path: &Path) -> Result<(), TextError> {
    fs::rename(tmp, path).map_err(io_err("cannot replace", path))?;
    sync_parent(path)
}

fn current_uid(file: &File) -> u32 {
    file.metadata().map_or(u32::MAX, |m| m.uid())
}

/// Syncs the directory that holds `path` (after a rename, link or removal in it).
pub fn sync_parent(path: &Path) -> Result<(), TextError> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    File::open(parent).and_then(|dir| dir.sync_all()).map_err(io_err("cannot sync directory", parent))
}

/// Removes a file if it still matches `expected` (only a regular file: see [`read`]).
pub fn remove(path: &Path, expected: Expected) -> Result<(), TextError> {
    check_expected(path, expected)?;
    if let Ok(meta) = fs::symlink_metadata(path)
        && !meta.is_file()
        && !meta.file_type().is_symlink()
    {
        return Err(not_regular(path, meta.file_type()));
    }
    fs::remove_file(path).map_err(io_err("cannot delete", path))?;
    sync_parent(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    thread_local! {
        /// Bytes this thread read to hash files again.
        pub(super) static HASHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
        /// Bytes this thread read from files to give their content.
        pub(super) static READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    }

    const UTF8_BOM_BYTES: &[u8] = b"\xEF\xBB\xBF";

    fn tempdir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "tandem-text-{}-{}",
            std::process::id(),
            TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).ok();
        dir
    }

    #[test]
    fn write_preserves_mode_and_refuses_stale() -> Result<(), TextError> {
        let dir = tempdir();
        let path = dir.join("script.sh");
        fs::write(&path, "old").map_err(io_err("w", &path))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o751)).map_err(io_err("p", &path))?;
        let old = ContentHash::of(b"old");
        write_atomic(&path, b"new", Expected::Hash(old))?;
        let meta = fs::metadata(&path).map_err(io_err("m", &path))?;
        assert_eq!(meta.mode() & 0o777, 0o751);
        assert_eq!(fs::read(&path).ok().as_deref(), Some(&b"new"[..]));
        // The disk now says "new": a writer that last saw "old" is refused and changes nothing.
        let err = write_atomic(&path, b"other", Expected::Hash(old));
        assert!(matches!(err, Err(TextError::Stale { .. })), "{err:?}");
        assert_eq!(fs::read(&path).ok().as_deref(), Some(&b"new"[..]));
        assert!(matches!(write_atomic(&path, b"x", Expected::Absent), Err(TextError::Stale { .. })));
        // No temporary files are left behind.
        let names: Vec<_> = fs::read_dir(&dir).map_err(io_err("d", &dir))?.flatten().map(|e| e.file_name()).collect();
        assert_eq!(names.len(), 1, "{names:?}");
        fs::remove_dir_all(&dir).ok();
        Ok(())
    }

    /// What `release` is given is dropped, in order; and the replaced files a write closes off
    /// its thread are closed: a hundred replacements leave no descriptor open.
    #[test]
    fn released_values_are_dropped_and_replaced_files_closed() -> Result<(), TextError> {
        struct Tell(u32, std::sync::mpsc::Sender<u32>);
        impl Drop for Tell {
            fn drop(&mut self) {
                self.1.send(self.0).ok();
            }
        }
        let (send, receive) = std::sync::mpsc::channel();
        for n in 0..3 {
            release(Tell(n, send.clone()));
        }
        let wait = std::time::Duration::from_secs(30);
        let order: Vec<u32> = (0..3).filter_map(|_| receive.recv_timeout(wait).ok()).collect();
        assert_eq!(order, [0, 1, 2]);

        let dir = tempdir();
        let path = dir.join("f.txt");
        fs::write(&path, "0").map_err(io_err("w", &path))?;
        let open_fds = || fs::read_dir("/proc/self/fd").map(|d| d.count()).unwrap_or(0);
        let before = open_fds();
        for n in 0..100u32 {
            let old = ContentHash::of(n.to_string().as_bytes());
            write_atomic(&path, (n + 1).to_string().as_bytes(), Expected::Hash(old))?;
        }
        // Everything released before this marker has been dropped once it is.
        release(Tell(99, send));
        assert_eq!(receive.recv_timeout(wait).ok(), Some(99));
        // Other tests of this binary run meanwhile and open files too: a leak would be 100.
        assert!(open_fds() <= before + 16, "{} descriptors open after, {before} before", open_fds());
        assert_eq!(fs::read_to_string(&path).ok().as_deref(), Some("100"));
        fs::remove_dir_all(&dir).ok();
        Ok(())
    }

    /// Ways another program may change a big file after Tandem read it.
    #[derive(Clone, Debug)]
    enum Change {
        /// Nothing: the check must pass.
        None,
        /// The same bytes written over it in place.
        SameBytes,
        /// One byte changed in place (the size stays).
        Byte { at: usize, xor: u8 },
        /// Truncated and written again, as long as before, one byte different.
        Rewritten { at: usize },
        /// Another file of the same size renamed over it.
        RenamedOver { at: usize },
        /// Bytes added at the end.
        Appended(Vec<u8>),
        /// One byte changed, then its modification time set back to what it was.
        Backdated { at: usize },
    }

    fn change() -> impl proptest::strategy::Strategy<Value = Change> {
        use proptest::prelude::*;
        prop_oneof![
            Just(Change::None),
            Just(Change::SameBytes),
            (any::<usize>(), 1u8..).prop_map(|(at, xor)| Change::Byte { at, xor }),
            any::<usize>().prop_map(|at| Change::Rewritten { at }),
            any::<usize>().prop_map(|at| Change::RenamedOver { at }),
            proptest::collection::vec(any::<u8>(), 1..64).prop_map(Change::Appended),
            any::<usize>().prop_map(|at| Change::Backdated { at }),
        ]
    }

    fn flipped(bytes: &[u8], at: usize, xor: u8) -> Vec<u8> {
        let mut out = bytes.to_vec();
        let at = at % out.len();
        out[at] ^= xor;
        out
    }

    /// Applies `change` to the file at `path` holding `bytes`; returns whether its content differs.
    fn make(path: &Path, bytes: &[u8], change: &Change) -> io::Result<bool> {
        use std::os::unix::fs::FileExt;
        match change {
            Change::None => Ok(false),
            Change::SameBytes => OpenOptions::new().write(true).open(path)?.write_all_at(bytes, 0).map(|()| false),
            Change::Byte { at, xor } => {
                let at = at % bytes.len();
                OpenOptions::new().write(true).open(path)?.write_all_at(&[bytes[at] ^ xor], at as u64).map(|()| true)
            }
            Change::Rewritten { at } => fs::write(path, flipped(bytes, *at, 1)).map(|()| true),
            Change::RenamedOver { at } => {
                let other = path.with_extension("other");
                fs::write(&other, flipped(bytes, *at, 0x20))?;
                fs::rename(&other, path).map(|()| true)
            }
            Change::Appended(more) => OpenOptions::new().append(true).open(path)?.write_all(more).map(|()| true),
            Change::Backdated { at } => {
                let modified = fs::metadata(path)?.modified()?;
                let at = at % bytes.len();
                let file = OpenOptions::new().write(true).open(path)?;
                file.write_all_at(&[bytes[at] ^ 0x40], at as u64)?;
                file.set_modified(modified).map(|()| true)
            }
        }
    }

    /// The rule both memories follow: only a file left alone since a settled read is not read
    /// again (`again`: the bytes read the second time); one read right after it was written is.
    fn settle_rule(
        path: &Path,
        settled: bool,
        change: &Change,
        again: u64,
    ) -> Result<(), proptest::test_runner::TestCaseError> {
        let local = File::open(path).is_ok_and(|f| seen::is_local(&f));
        if settled && matches!(change, Change::None) && local {
            proptest::prop_assert_eq!(again, 0, "an unchanged settled file was read again");
        }
        if !settled {
            proptest::prop_assert!(again > 0, "a file read right after it was written must be read again");
        }
        Ok(())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// However a small file changes after it was read (at once, or once its stamp is settled
        /// and its text remembered), the next read gives what the file holds now; left alone
        /// since a settled read, it is given without being read again.
        #[test]
        fn a_small_file_changed_after_it_was_read_is_read_again(
            len in 1usize..4096,
            seed in proptest::prelude::any::<u8>(),
            settled in proptest::prelude::any::<bool>(),
            change in change(),
        ) {
            let fail = |e: io::Error| proptest::test_runner::TestCaseError::fail(e.to_string());
            let dir = tempdir();
            let path = dir.join("small.txt");
            let bytes: Vec<u8> = (0..len).map(|i| b'a' + ((i * 7 + usize::from(seed)) % 26) as u8).collect();
            fs::write(&path, &bytes).map_err(fail)?;
            if settled {
                std::thread::sleep(seen::MARGIN * 2);
            }
            let Ok(ReadOutcome::File(first)) = read(&path, u64::MAX) else { panic!("cannot read {}", path.display()) };
            proptest::prop_assert_eq!(first.hash, ContentHash::of(&bytes));
            let changed = make(&path, &bytes, &change).map_err(fail)?;
            READ.with(|r| r.set(0));
            let Ok(ReadOutcome::File(again)) = read(&path, u64::MAX) else { panic!("cannot read {}", path.display()) };
            let read_bytes = READ.with(std::cell::Cell::get);
            let now = fs::read(&path).map_err(fail)?;
            proptest::prop_assert_eq!(again.hash, ContentHash::of(&now), "{:?}: not what the file holds", change);
            proptest::prop_assert_eq!(again.len, now.len() as u64);
            match (&again.decoded, crate::format::decode(now)) {
                (Decoded::Text { text, format }, Decoded::Text { text: now, format: now_format }) => {
                    proptest::prop_assert_eq!((text, format), (&now, &now_format), "{:?}", change);
                }
                (Decoded::Binary { kind }, Decoded::Binary { kind: now }) => proptest::prop_assert_eq!(kind, &now),
                (got, now) => proptest::prop_assert!(false, "{change:?}: read {got:?}, the file holds {now:?}"),
            }
            if changed {
                proptest::prop_assert!(read_bytes > 0, "{change:?}: a changed file was not read again");
            }
            settle_rule(&path, settled, &change, read_bytes)?;
            fs::remove_dir_all(&dir).ok();
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 32, ..Default::default() })]

        /// The hash `stage` gives is the hash of the bytes it wrote, however the content is cut
        /// into parts and wherever the parts cross its pieces.
        #[test]
        fn stage_hashes_exactly_what_it_wrote(
            lens in proptest::collection::vec(0usize..STAGE_PIECE * 2 + 3, 0..4),
            seed in proptest::prelude::any::<u8>(),
        ) {
            let dir = tempdir();
            let (path, tmp) = (dir.join("f.txt"), dir.join("f.tmp"));
            let parts: Vec<Vec<u8>> = lens
                .iter()
                .enumerate()
                .map(|(p, len)| (0..*len).map(|i| (i * 31 + p * 7 + usize::from(seed)) as u8).collect())
                .collect();
            let slices: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
            let hash = stage(&path, &tmp, &slices).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            let written = fs::read(&tmp).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            proptest::prop_assert_eq!(&written, &parts.concat());
            proptest::prop_assert_eq!(hash, ContentHash::of(&written));
            fs::remove_dir_all(&dir).ok();
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// A file read in pieces (hashed and checked as UTF-8 as they come) reads as the whole
        /// file decoded at once does: the same hash, text or binary verdict and text, with a
        /// character (whole, broken or cut short) where a piece ends, and a size limit just
        /// below, at or above the file's size.
        #[test]
        fn a_file_read_in_pieces_reads_as_the_whole_decoded_at_once(
            pieces in 1u64..3,
            shift in 0usize..8,
            tail in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..6),
            bom in proptest::prelude::any::<bool>(),
            ending in proptest::prop_oneof![
                proptest::strategy::Just("é".as_bytes().to_vec()),
                proptest::strategy::Just("€".as_bytes().to_vec()),
                proptest::strategy::Just("𝄞".as_bytes().to_vec()),
                proptest::strategy::Just(vec![0xE2, 0x82]),
                proptest::strategy::Just(vec![0xF0, 0x9D, 0x84, 0x41]),
                proptest::strategy::Just(vec![0xC3, 0x28]),
            ],
            limit in -1i64..2,
        ) {
            let dir = tempdir();
            let path = dir.join("f.txt");
            // The chosen character starts a few bytes before the end of a piece, so that it is
            // cut there, or lies wholly in one piece.
            let filler = (pieces * READ_PIECE) as usize - shift.min(4);
            let mut bytes = if bom { UTF8_BOM_BYTES.to_vec() } else { Vec::new() };
            bytes.extend((bytes.len()..filler).map(|i| if i % 61 == 60 { b'\n' } else { b'a' + (i % 26) as u8 }));
            bytes.extend(&ending);
            bytes.extend(&tail);
            fs::write(&path, &bytes).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            let max_len = (bytes.len() as i64 + limit).max(0) as u64;
            let outcome = read(&path, max_len).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            match outcome {
                ReadOutcome::TooLarge { .. } => proptest::prop_assert!(bytes.len() as u64 > max_len),
                ReadOutcome::File(file) => {
                    proptest::prop_assert!(bytes.len() as u64 <= max_len);
                    proptest::prop_assert_eq!(file.hash, ContentHash::of(&bytes));
                    proptest::prop_assert_eq!(file.len, bytes.len() as u64);
                    match (file.decoded, crate::format::decode(bytes.clone())) {
                        (Decoded::Text { text, format }, Decoded::Text { text: whole, format: whole_format }) => {
                            proptest::prop_assert!(text == whole, "the text differs");
                            proptest::prop_assert_eq!(format, whole_format);
                        }
                        (Decoded::Binary { kind }, Decoded::Binary { kind: whole }) => proptest::prop_assert_eq!(kind, whole),
                        _ => proptest::prop_assert!(false, "text read in pieces, binary whole, or the other way round"),
                    }
                }
                _ => proptest::prop_assert!(false, "not read as a file"),
            }
            fs::remove_dir_all(&dir).ok();
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 24, ..Default::default() })]

        /// However a big file changes after it was read (at once, or once its stamp is settled
        /// and trusted), the check before a rename over it refuses; when it did not change, the
        /// check passes, and a settled file is checked without being read again.
        #[test]
        fn a_big_file_changed_after_it_was_read_is_always_refused(
            len in seen::MIN_LEN..seen::MIN_LEN + 4096,
            seed in proptest::prelude::any::<u8>(),
            settled in proptest::prelude::any::<bool>(),
            change in change(),
        ) {
            let dir = tempdir();
            let path = dir.join("big.txt");
            let bytes: Vec<u8> = (0..len).map(|i| b'a' + ((i * 7 + u64::from(seed)) % 26) as u8).collect();
            fs::write(&path, &bytes).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            if settled {
                std::thread::sleep(seen::MARGIN * 2);
            }
            let Ok(ReadOutcome::File(file)) = read(&path, u64::MAX) else { panic!("cannot read {}", path.display()) };
            proptest::prop_assert_eq!(file.hash, ContentHash::of(&bytes));
            let changed = make(&path, &bytes, &change).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            HASHED.with(|h| h.set(0));
            let checked = check_expected(&path, Expected::Hash(file.hash));
            let hashed = HASHED.with(std::cell::Cell::get);
            if changed {
                proptest::prop_assert!(matches!(checked, Err(TextError::Stale { .. })), "{change:?} went unseen: {checked:?}");
            } else {
                proptest::prop_assert!(checked.is_ok(), "{change:?}: {checked:?}");
            }
            settle_rule(&path, settled, &change, hashed)?;
            fs::remove_dir_all(&dir).ok();
        }
    }
}
