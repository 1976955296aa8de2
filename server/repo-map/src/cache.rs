//! The outline cache of one workspace: outlines by content hash, and per file the stat it had
//! when its content was last hashed. Kept in the process (one per workspace root) and in the
//! state directory (`repo-map/outlines.json`, never in the workspace), so a map of an unchanged
//! tree reads no file: the stat says the file is as it was, the hash names its outline.
//!
//! A stat is trusted only when the file's change time was at least [`RACY_MARGIN_NS`] older than
//! the moment its content was read (as git treats "racily clean" entries): a write within the
//! file system's clock tick after the read could leave size and times as they were, so such a
//! file is hashed again on the next map, and trusted from then on.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::outline::Outline;

/// Bumped whenever outlines change meaning (queries, fields): older caches are dropped.
const FORMAT: u32 = 3;
/// How much older than the read a file's change time must be for its stat to be trusted.
pub(crate) const RACY_MARGIN_NS: i64 = 50_000_000;
/// The state subfolder.
const SUB: &str = "repo-map";
const FILE: &str = "outlines.json";

/// What a file's stat says about its content.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct StatKey {
    pub len: u64,
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub ino: u64,
}

impl StatKey {
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt as _;
        Self {
            len: meta.len(),
            mtime_ns: meta.mtime().saturating_mul(1_000_000_000).saturating_add(meta.mtime_nsec()),
            ctime_ns: meta.ctime().saturating_mul(1_000_000_000).saturating_add(meta.ctime_nsec()),
            ino: meta.ino(),
        }
    }
}

/// A file as last hashed.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub key: StatKey,
    /// When its content was read (ns since the epoch, taken before the read).
    pub checked_at: i64,
    pub hash: u64,
}

impl Entry {
    /// Whether `key` shows the file unchanged since it was hashed.
    pub(crate) fn vouches_for(&self, key: &StatKey) -> bool {
        self.key == *key && key.ctime_ns.saturating_add(RACY_MARGIN_NS) <= self.checked_at
    }
}

/// The cache of one workspace.
#[derive(Default)]
pub(crate) struct Store {
    pub entries: HashMap<String, Entry>,
    pub outlines: HashMap<u64, Arc<Outline>>,
    /// Bumped on every change of `entries`: what was computed from an equal generation holds.
    pub generation: u64,
    /// Changed since it was last saved.
    pub dirty: bool,
    /// The editor texts of the last scan (path, hash): texts that win over the disk.
    pub overrides: HashMap<String, u64>,
}

#[derive(Serialize, Deserialize)]
struct OnDisk {
    format: u32,
    entries: HashMap<String, Entry>,
    outlines: Vec<(u64, Outline)>,
}

pub(crate) type Shared = Arc<Mutex<Store>>;

/// Generations are unique in the process, whichever store bumps one.
static GENERATIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A generation no store has had.
pub(crate) fn next_generation() -> u64 {
    GENERATIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

static STORES: LazyLock<Mutex<HashMap<PathBuf, Shared>>> = LazyLock::new(Default::default);

/// Where the cache of the workspace at `root` is kept on disk: `dir` when given (tests,
/// benchmarks), else the workspace's state directory.
pub(crate) fn location(root: &Path, dir: Option<&Path>) -> CacheDir {
    match dir {
        Some(dir) => CacheDir { dir: dir.to_path_buf(), state_of: None },
        None => CacheDir { dir: tandem_tool_api::state::state_path(root, SUB), state_of: Some(root.to_path_buf()) },
    }
}

/// A cache's folder on disk.
#[derive(Clone, Debug)]
pub(crate) struct CacheDir {
    pub(crate) dir: PathBuf,
    /// The workspace whose state directory holds it (created on save as state folders are).
    state_of: Option<PathBuf>,
}

/// The store kept in `at`: the process's, else loaded from disk.
pub(crate) fn store(at: &CacheDir) -> Shared {
    let mut stores = STORES.lock().unwrap_or_else(PoisonError::into_inner);
    stores.entry(at.dir.clone()).or_insert_with(|| Arc::new(Mutex::new(load(&at.dir)))).clone()
}

/// Forgets the process's copy of the cache of `root` kept in `dir` (as in
/// [`Request::cache`](crate::Request::cache)), outlines and history; the copy on disk stays:
/// the next map starts as a new process would.
pub fn forget_in_process(root: &Path, dir: Option<&Path>) {
    let at = location(root, dir);
    STORES.lock().unwrap_or_else(PoisonError::into_inner).remove(&at.dir);
    crate::history::forget(&at.dir);
}

fn load(dir: &Path) -> Store {
    let Some(disk) = read::<OnDisk>(dir, FILE) else { return Store::default() };
    if disk.format != FORMAT {
        return Store::default();
    }
    Store {
        entries: disk.entries,
        outlines: disk.outlines.into_iter().map(|(h, o)| (h, Arc::new(o))).collect(),
        generation: next_generation(),
        dirty: false,
        overrides: HashMap::new(),
    }
}

/// The JSON file `name` of the cache folder `dir`, when it is there and reads (an unreadable one
/// is said in the log and costs only the cache).
pub(crate) fn read<T: serde::de::DeserializeOwned>(dir: &Path, name: &str) -> Option<T> {
    let path = dir.join(name);
    let file = tandem_tool_api::state::open_regular(&path).ok()?;
    match serde_json::from_reader(std::io::BufReader::new(file)) {
        Ok(value) => Some(value),
        Err(err) => {
            tracing::warn!("the repository map's cache {} is unreadable ({err}); starting afresh", path.display());
            None
        }
    }
}

/// Writes `value` as the JSON file `name` of the cache folder `at` (a temporary file renamed
/// over the old one).
pub(crate) fn write(at: &CacheDir, name: &str, value: &impl Serialize) -> Result<(), Box<dyn std::error::Error>> {
    let dir = match &at.state_of {
        Some(root) => tandem_tool_api::state::state_dir(root, SUB)?,
        None => {
            std::fs::create_dir_all(&at.dir)?;
            at.dir.clone()
        }
    };
    let temp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&temp);
    let mut file = std::io::BufWriter::new(tandem_tool_api::state::create_new(&temp)?);
    serde_json::to_writer(&mut file, value)?;
    file.flush()?;
    drop(file);
    std::fs::rename(&temp, dir.join(name))?;
    Ok(())
}

/// Writes `store` to the state directory when it changed (a temporary file renamed over the
/// old one); outlines no file names any more are dropped first. A failure costs only the cache.
pub(crate) fn save(at: &CacheDir, store: &mut Store) {
    if !store.dirty {
        return;
    }
    let live: std::collections::HashSet<u64> = store.entries.values().map(|e| e.hash).collect();
    store.outlines.retain(|h, _| live.contains(h));
    let disk = OnDisk {
        format: FORMAT,
        entries: store.entries.clone(),
        outlines: store.outlines.iter().map(|(h, o)| (*h, (**o).clone())).collect(),
    };
    let result = write(at, FILE, &disk);
    match result {
        Ok(()) => store.dirty = false,
        Err(err) => tracing::warn!("cannot save the repository map's cache: {err}"),
    }
}
