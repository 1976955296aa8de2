//! The outlines of a tree: walked with the tools' walker (ignore files, hidden entries and
//! `.git` left out, symbolic links not followed), each source file's outline from the cache
//! when its stat vouches for it, else read (a regular file only, opened without following a
//! symbolic link and without blocking), hashed, and parsed unless an outline of that content is
//! cached. Files too big or binary are skipped and counted, as are ignored entries.

use std::collections::HashMap;
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use globset::GlobSet;
use serde::Serialize;
use tandem_text::{ContentHash, Decoded};

use crate::cache::{self, Entry, StatKey};
use crate::lang::Lang;
use crate::outline::{Outline, outline};

/// Files larger than this are not outlined (generated code, data).
pub const MAX_FILE_BYTES: u64 = 512 * 1024;

/// A source file of the map.
#[derive(Clone, Debug)]
pub struct FileOutline {
    /// Its path relative to the root, `/`-separated.
    pub rel: String,
    /// Its language.
    pub lang: Lang,
    /// The hash of the content outlined.
    pub hash: u64,
    /// The outline.
    pub outline: Arc<Outline>,
}

/// What a scan saw and did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Stats {
    /// Source files outlined.
    pub outlined: usize,
    /// Files read from disk.
    pub read: usize,
    /// Files parsed (no outline of their content was cached).
    pub parsed: usize,
    /// Source files over the size cap.
    pub too_big: usize,
    /// Source files that are not text.
    pub binary: usize,
    /// Entries the ignore rules or hiding left out (a directory counts once).
    pub ignored: usize,
    /// Files in no language the map knows.
    pub other: usize,
    /// Files that could not be read (vanished, not regular, no permission).
    pub unreadable: usize,
}

/// The scan of a tree.
#[derive(Clone, Debug, Default)]
pub struct Scan {
    /// Source files, by path.
    pub files: Vec<FileOutline>,
    /// Counts.
    pub stats: Stats,
    /// The cache's generation after the scan: equal generations, equal files.
    pub generation: u64,
}

/// What to scan.
#[derive(Clone, Debug, Default)]
pub struct ScanOptions {
    /// Only paths (relative to the root) matching these.
    pub globs: Option<GlobSet>,
    /// Texts that win over the disk (documents open in the editor), by absolute path.
    pub overrides: HashMap<PathBuf, String>,
    /// Where the cache is kept on disk (default: the workspace's state directory).
    pub cache: Option<PathBuf>,
}

/// A file the walk found.
struct Found {
    rel: String,
    abs: PathBuf,
    lang: Lang,
    key: StatKey,
}

/// Walks `root` and outlines its source files; the cache is saved before it returns.
pub fn scan(root: &Path, options: &ScanOptions) -> Scan {
    let (scan, unsaved) = scan_unsaved(root, options);
    unsaved.save();
    scan
}

/// A cache a scan changed, to be saved ([`Unsaved::save`]): the caller may do other work
/// (build the ranking model) while another thread writes it.
pub(crate) struct Unsaved {
    at: cache::CacheDir,
    shared: cache::Shared,
}

impl Unsaved {
    /// Writes the cache to disk when it changed.
    pub(crate) fn save(self) {
        let mut store = self.shared.lock().unwrap_or_else(PoisonError::into_inner);
        cache::save(&self.at, &mut store);
    }
}

/// [`scan`], with the cache left to save.
pub(crate) fn scan_unsaved(root: &Path, options: &ScanOptions) -> (Scan, Unsaved) {
    let mut stats = Stats::default();
    let (found, walk_stats) = walk(root, options.globs.as_ref());
    stats.ignored = walk_stats.ignored;
    stats.other = walk_stats.other;
    stats.too_big = walk_stats.too_big;

    let at = cache::location(root, options.cache.as_deref());
    let shared = cache::store(&at);
    let mut store = shared.lock().unwrap_or_else(PoisonError::into_inner);
    let mut files: Vec<Option<FileOutline>> = Vec::with_capacity(found.len());
    let mut needed: Vec<usize> = Vec::new();
    let mut overridden: HashMap<String, u64> = HashMap::new();
    for (index, file) in found.iter().enumerate() {
        if let Some(text) = options.overrides.get(&file.abs) {
            let hash = ContentHash::of(text.as_bytes()).0;
            overridden.insert(file.rel.clone(), hash);
            let outline = match store.outlines.get(&hash) {
                Some(o) => o.clone(),
                None => {
                    stats.parsed += 1;
                    let o = Arc::new(outline(file.lang, text));
                    store.outlines.insert(hash, o.clone());
                    o
                }
            };
            files.push(Some(FileOutline { rel: file.rel.clone(), lang: file.lang, hash, outline }));
            continue;
        }
        let cached = store
            .entries
            .get(&file.rel)
            .filter(|e| e.vouches_for(&file.key))
            .and_then(|e| Some((e.hash, store.outlines.get(&e.hash)?.clone())));
        match cached {
            Some((hash, outline)) => {
                files.push(Some(FileOutline { rel: file.rel.clone(), lang: file.lang, hash, outline }))
            }
            None => {
                files.push(None);
                needed.push(index);
            }
        }
    }

    // Read, hash and parse what the cache cannot vouch for, in parallel, the lock released.
    let known: std::collections::HashSet<u64> = store.outlines.keys().copied().collect();
    drop(store);
    let results = read_all(&found, &needed, &known);
    let mut store = shared.lock().unwrap_or_else(PoisonError::into_inner);
    let mut changed = false;
    for (index, result) in needed.iter().zip(results) {
        let file = &found[*index];
        stats.read += usize::from(!matches!(result, Read::Unreadable));
        match result {
            Read::Unreadable => stats.unreadable += 1,
            Read::TooBig => stats.too_big += 1,
            Read::Binary => stats.binary += 1,
            Read::Known { hash, checked_at } | Read::Parsed { hash, checked_at, .. } => {
                let outline = match result {
                    Read::Parsed { outline, .. } => {
                        stats.parsed += 1;
                        let outline = Arc::new(outline);
                        store.outlines.insert(hash, outline.clone());
                        outline
                    }
                    _ => match store.outlines.get(&hash) {
                        Some(o) => o.clone(),
                        None => continue,
                    },
                };
                let entry = Entry { key: file.key, checked_at, hash };
                let old = store.entries.insert(file.rel.clone(), entry);
                changed |= old.is_none_or(|o| o.hash != hash);
                store.dirty = true;
                files[*index] = Some(FileOutline { rel: file.rel.clone(), lang: file.lang, hash, outline });
            }
        }
    }
    // Files gone from a whole-tree walk leave the cache.
    if options.globs.is_none() {
        let seen: std::collections::HashSet<&str> = found.iter().map(|f| f.rel.as_str()).collect();
        let before = store.entries.len();
        store.entries.retain(|rel, _| seen.contains(rel.as_str()));
        if store.entries.len() != before {
            changed = true;
            store.dirty = true;
        }
    }
    if overridden != store.overrides {
        store.overrides = overridden;
        changed = true;
    }
    if changed || store.generation == 0 {
        store.generation = cache::next_generation();
    }
    let generation = store.generation;
    drop(store);
    let files: Vec<FileOutline> = files.into_iter().flatten().collect();
    stats.outlined = files.len();
    (Scan { files, stats, generation }, Unsaved { at, shared })
}

#[derive(Default)]
struct WalkStats {
    ignored: usize,
    other: usize,
    too_big: usize,
}

/// The source files under `root` (by path), with what was left out.
fn walk(root: &Path, globs: Option<&GlobSet>) -> (Vec<Found>, WalkStats) {
    let found = Mutex::new(Vec::new());
    let visited = AtomicUsize::new(0);
    let children = AtomicUsize::new(0);
    let other = AtomicUsize::new(0);
    let too_big = AtomicUsize::new(0);
    tandem_tool_api::walker(root).build_parallel().run(|| {
        let (visited, children, other, too_big) = (&visited, &children, &other, &too_big);
        let mut batch = Batch { items: Vec::new(), into: &found };
        Box::new(move |entry| {
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            if entry.depth() > 0 {
                visited.fetch_add(1, Ordering::Relaxed);
            }
            let Some(file_type) = entry.file_type() else { return ignore::WalkState::Continue };
            if file_type.is_dir() {
                // What the directory holds, against what the walk visits of it: the difference
                // is what the ignore rules and hiding left out.
                let count = std::fs::read_dir(entry.path()).map(Iterator::count).unwrap_or(0);
                children.fetch_add(count, Ordering::Relaxed);
                return ignore::WalkState::Continue;
            }
            if !file_type.is_file() {
                return ignore::WalkState::Continue;
            }
            let Ok(rel) = entry.path().strip_prefix(root) else { return ignore::WalkState::Continue };
            let rel = rel.to_string_lossy().into_owned();
            if globs.is_some_and(|g| !g.is_match(&rel)) {
                return ignore::WalkState::Continue;
            }
            let Some(lang) = Lang::of(&rel) else {
                other.fetch_add(1, Ordering::Relaxed);
                return ignore::WalkState::Continue;
            };
            let Ok(meta) = entry.metadata() else { return ignore::WalkState::Continue };
            if meta.len() > MAX_FILE_BYTES {
                too_big.fetch_add(1, Ordering::Relaxed);
                return ignore::WalkState::Continue;
            }
            batch.items.push(Found { rel, abs: entry.into_path(), lang, key: StatKey::of(&meta) });
            if batch.items.len() >= 256 {
                batch.flush();
            }
            ignore::WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    let stats = WalkStats {
        ignored: children.into_inner().saturating_sub(visited.into_inner()),
        other: other.into_inner(),
        too_big: too_big.into_inner(),
    };
    (found, stats)
}

/// One walker thread's files, handed to the shared list in batches and when the walk drops it.
struct Batch<'a> {
    items: Vec<Found>,
    into: &'a Mutex<Vec<Found>>,
}

impl Batch<'_> {
    fn flush(&mut self) {
        self.into.lock().unwrap_or_else(PoisonError::into_inner).append(&mut self.items);
    }
}

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

/// What reading one file gave.
enum Read {
    Unreadable,
    TooBig,
    Binary,
    /// Content whose outline is cached.
    Known {
        hash: u64,
        checked_at: i64,
    },
    Parsed {
        hash: u64,
        checked_at: i64,
        outline: Outline,
    },
}

fn read_all(found: &[Found], needed: &[usize], known: &std::collections::HashSet<u64>) -> Vec<Read> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<(usize, Read)>> = Mutex::new(Vec::with_capacity(needed.len()));
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8).min(needed.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&index) = needed.get(i) else { break };
                    let file = &found[index];
                    mine.push((i, read_one(file, known)));
                }
                results.lock().unwrap_or_else(PoisonError::into_inner).append(&mut mine);
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

fn now_ns() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}

fn read_one(file: &Found, known: &std::collections::HashSet<u64>) -> Read {
    let checked_at = now_ns();
    let Some(bytes) = read_regular(&file.abs) else { return Read::Unreadable };
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Read::TooBig;
    }
    let hash = ContentHash::of(&bytes).0;
    if known.contains(&hash) {
        return Read::Known { hash, checked_at };
    }
    match tandem_text::decode(bytes) {
        Decoded::Text { text, .. } => Read::Parsed { hash, checked_at, outline: outline(file.lang, &text) },
        Decoded::Binary { .. } => Read::Binary,
    }
}

/// The bytes of `path` when it is a regular file (opened without following a symbolic link and
/// without blocking on a FIFO), at most one byte over the cap.
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
    let file = std::fs::OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(path).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len().min(MAX_FILE_BYTES + 1) as usize);
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}
