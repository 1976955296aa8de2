//! Buffers for whole files. A fresh buffer costs a page fault per 4 KiB page the first time it
//! is written: for a 50 MB file that is 12,800 faults, most of the time of reading it (three to
//! five times a copy into memory already touched, on a virtual machine). Two things make that
//! rarer:
//!
//! - **Reuse.** A large buffer that is done with ([`recycle`]) is kept for a few seconds, and the
//!   next large buffer asked for ([`buffer`]) is that memory, already touched: an edit of a big
//!   file frees the old text and its new one, and the next edit reads into the one and builds
//!   into the other. What is kept is what the last big operation used: two buffers at most (an
//!   edit's pair; a kept buffer is already resident, so keeping it never makes the process bigger
//!   than that operation made it), within [`KEEP_BYTES`]. It is given back to the system after
//!   [`KEEP_FOR`] unused, or at once when the system runs low on memory, by the background thread
//!   that also frees what [`release`] hands it.
//! - **Huge pages.** A fresh large buffer asks the kernel for transparent huge pages (2 MiB
//!   each, where the system allows them with `madvise`): one fault per 2 MiB instead of 512.
//!
//! A kept buffer is handed out empty (length zero): what it held is never visible through it.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::time::{Duration, Instant};

/// Buffers smaller than this are left to the allocator as they are.
const HUGE_FROM: usize = 4 * 1024 * 1024;
/// The size of a transparent huge page on x86-64 and arm64 (with 4 KiB base pages).
const HUGE_PAGE: usize = 2 * 1024 * 1024;

/// How long a recycled buffer is kept for reuse.
pub const KEEP_FOR: Duration = Duration::from_secs(5);
/// At most this many bytes (capacity) are kept, whatever the process held.
pub const KEEP_BYTES: usize = 256 * 1024 * 1024;
/// At most this many buffers are kept (an edit frees two: the old text and its copy on disk).
const KEEP_BUFFERS: usize = 2;
/// Nothing is kept while the system has less memory available than this share of its total.
const LOW_MEMORY_SHARE: f64 = 0.1;
/// How often the background thread looks at the system's memory while buffers are kept.
const PRESSURE_EVERY: Duration = Duration::from_secs(1);

/// An empty byte buffer with room for `capacity` bytes: a kept one when one fits (see the module
/// documentation), else a fresh one.
pub fn buffer(capacity: usize) -> Vec<u8> {
    if capacity < HUGE_FROM {
        return Vec::with_capacity(capacity);
    }
    if let Some(bytes) = pool().take(capacity) {
        return bytes;
    }
    // Rounded up to whole huge pages: an edit that makes the text a little longer then still
    // fits in the buffer the text was read into (pages never written cost nothing).
    let mut bytes = Vec::with_capacity(capacity.next_multiple_of(HUGE_PAGE));
    prefer_huge_pages(bytes.spare_capacity_mut().as_mut_ptr().cast(), bytes.capacity());
    bytes
}

/// An empty string with room for `capacity` bytes.
pub fn string(capacity: usize) -> String {
    // An empty buffer is valid UTF-8.
    String::from_utf8(buffer(capacity)).unwrap_or_default()
}

/// Done with `bytes`: a large buffer is kept for reuse (see the module documentation), anything
/// else is freed off the caller's thread.
pub fn recycle(bytes: Vec<u8>) {
    let freed = if bytes.capacity() < HUGE_FROM {
        vec![bytes]
    } else {
        let room = if memory_low() { 0 } else { KEEP_BYTES };
        pool().keep(bytes, Instant::now(), room)
    };
    // Also wakes the background thread, which then watches the new buffer's expiry.
    send(Box::new(freed));
}

/// [`recycle`] for a string's buffer.
pub fn recycle_string(text: String) {
    recycle(text.into_bytes());
}

/// Drops `value` on a background thread: freeing a large buffer, or closing the last handle of
/// a large replaced file, takes milliseconds that the caller need not wait for. Values are
/// dropped in the order given; when the thread cannot be started they are dropped here.
pub fn release<T: Send + 'static>(value: T) {
    send(Box::new(value));
}

/// What the background thread is handed: something to drop.
type Garbage = Box<dyn Send>;

/// A buffer kept for reuse, and when it was kept.
struct Kept {
    bytes: Vec<u8>,
    since: Instant,
}

/// The kept buffers, oldest first.
#[derive(Default)]
struct Pool {
    kept: Vec<Kept>,
}

impl Pool {
    /// The smallest kept buffer with room for `capacity` bytes, emptied; none when even that
    /// one is much larger (it would hold memory the caller does not need: it expires instead).
    fn take(&mut self, capacity: usize) -> Option<Vec<u8>> {
        let fits = |bytes: &Vec<u8>| bytes.capacity() >= capacity && bytes.capacity() <= 2 * capacity + HUGE_FROM;
        let best = (0..self.kept.len())
            .filter(|&i| fits(&self.kept[i].bytes))
            .min_by_key(|&i| self.kept[i].bytes.capacity())?;
        let mut bytes = self.kept.remove(best).bytes;
        bytes.clear();
        Some(bytes)
    }

    /// Keeps `bytes` when large, then gives up the oldest kept buffers beyond the bounds:
    /// [`KEEP_BUFFERS`], and `room` bytes in all ([`KEEP_BYTES`], or nothing when the system is
    /// low on memory). Returns what to free (`bytes` itself when it is small, or larger than the
    /// room).
    fn keep(&mut self, bytes: Vec<u8>, now: Instant, room: usize) -> Vec<Vec<u8>> {
        let mut freed = Vec::new();
        if bytes.capacity() < HUGE_FROM || bytes.capacity() > room {
            freed.push(bytes);
        } else {
            self.kept.push(Kept { bytes, since: now });
        }
        while self.kept.len() > KEEP_BUFFERS || self.bytes() > room {
            freed.push(self.kept.remove(0).bytes);
        }
        freed
    }

    /// Gives back every kept buffer (the system is low on memory).
    fn drain(&mut self) -> Vec<Vec<u8>> {
        self.kept.drain(..).map(|k| k.bytes).collect()
    }

    /// Takes out the buffers kept for [`KEEP_FOR`] or longer at `now` (to be freed), and says
    /// when the next one expires.
    fn expire(&mut self, now: Instant) -> (Vec<Vec<u8>>, Option<Instant>) {
        let mut freed = Vec::new();
        self.kept.retain_mut(|k| {
            let expired = now.saturating_duration_since(k.since) >= KEEP_FOR;
            if expired {
                freed.push(std::mem::take(&mut k.bytes));
            }
            !expired
        });
        (freed, self.kept.iter().map(|k| k.since + KEEP_FOR).min())
    }

    fn bytes(&self) -> usize {
        self.kept.iter().map(|k| k.bytes.capacity()).sum()
    }
}

/// Whether the system has less than [`LOW_MEMORY_SHARE`] of its memory available
/// (`/proc/meminfo`); `false` where that cannot be told.
fn memory_low() -> bool {
    let Ok(meminfo) = std::fs::read_to_string("/proc/meminfo") else { return false };
    let field = |name: &str| -> Option<f64> {
        meminfo.lines().find_map(|line| line.strip_prefix(name)?.trim().trim_end_matches("kB").trim().parse().ok())
    };
    match (field("MemAvailable:"), field("MemTotal:")) {
        (Some(available), Some(total)) if total > 0.0 => available < total * LOW_MEMORY_SHARE,
        _ => false,
    }
}

/// The process's kept buffers.
static POOL: Mutex<Pool> = Mutex::new(Pool { kept: Vec::new() });

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    POOL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Hands `garbage` to the background thread (started on first use) to drop, or drops it here
/// when the thread cannot be started.
fn send(garbage: Garbage) {
    static REAPER: Mutex<Option<Option<Sender<Garbage>>>> = Mutex::new(None);
    let mut reaper = REAPER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let sender = reaper.get_or_insert_with(|| {
        let (sender, receiver) = channel::<Garbage>();
        let spawned = std::thread::Builder::new().name("tandem-release".into()).spawn(move || reap(&receiver));
        spawned.ok().map(|_| sender)
    });
    let garbage = match sender {
        Some(sender) => match sender.send(garbage) {
            Ok(()) => return,
            Err(returned) => returned.0,
        },
        None => garbage,
    };
    drop(reaper);
    drop(garbage);
}

/// The background thread: frees what it is handed, in order, and the kept buffers as they
/// expire (it sleeps when nothing is kept).
fn reap(receiver: &Receiver<Garbage>) {
    let mut next_expiry = None;
    loop {
        match next_expiry {
            None => match receiver.recv() {
                Ok(garbage) => drop(garbage),
                Err(_) => return,
            },
            Some(at) => match receiver.recv_timeout(Instant::saturating_duration_since(&at, Instant::now())) {
                Ok(garbage) => drop(garbage),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return,
            },
        }
        let (mut freed, next) = pool().expire(Instant::now());
        // While buffers are kept, the system's memory is looked at now and then: when it runs
        // low, they are given back at once.
        if next.is_some() && memory_low() {
            freed.extend(pool().drain());
        }
        drop(freed);
        next_expiry = next.map(|at| at.min(Instant::now() + PRESSURE_EVERY));
    }
}

/// Asks for huge pages for the whole huge pages inside `len` bytes from `start`. Advice only:
/// when the kernel says no (THP off, or not Linux), nothing changes.
fn prefer_huge_pages(start: *mut u8, len: usize) {
    let first = start.addr().next_multiple_of(HUGE_PAGE);
    let end = (start.addr() + len) / HUGE_PAGE * HUGE_PAGE;
    if end <= first {
        return;
    }
    let range = start.wrapping_add(first - start.addr());
    // SAFETY: `MADV_HUGEPAGE` changes how the kernel backs the pages of the range, never their
    // contents or whether they may be accessed, and the range lies inside the allocation of
    // `len` bytes at `start` that the caller owns.
    #[expect(unsafe_code, reason = "madvise(2) takes a raw address range")]
    let advised = unsafe { rustix::mm::madvise(range.cast(), end - first, rustix::mm::Advice::LinuxHugepage) };
    // Refused (THP off, an old kernel): the buffer works the same on small pages.
    advised.ok();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every size, small or huge, gives an empty buffer with at least that room, which holds
    /// what is written into it.
    #[test]
    fn buffers_of_any_size_hold_what_is_put_in_them() {
        for capacity in [0, 1, 4095, HUGE_FROM - 1, HUGE_FROM, HUGE_FROM + 12_345, 3 * HUGE_FROM] {
            let mut bytes = buffer(capacity);
            assert!(bytes.is_empty() && bytes.capacity() >= capacity);
            bytes.extend((0..capacity).map(|i| (i % 251) as u8));
            assert!(bytes.iter().enumerate().all(|(i, b)| *b == (i % 251) as u8));
            let mut text = string(capacity);
            text.extend(std::iter::repeat_n('x', capacity));
            assert_eq!(text.len(), capacity);
        }
    }

    #[derive(Clone, Debug)]
    enum Step {
        /// Recycle a buffer of this capacity (MiB), full of one byte.
        Keep(usize),
        /// Ask for a buffer of this many bytes.
        Take(usize),
        /// Let this many milliseconds pass, then expire.
        Wait(u64),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        prop_oneof![
            (1usize..300).prop_map(Step::Keep),
            (0usize..200 * 1024 * 1024).prop_map(Step::Take),
            (0u64..8000).prop_map(Step::Wait),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(200))]

        /// Whatever is kept, taken and waited for: what is kept stays within its bounds and
        /// expires on time, a taken buffer is empty and fits the request without being far
        /// larger, nothing is taken while a kept buffer would fit, and every buffer is kept,
        /// taken or freed, once.
        #[test]
        fn kept_buffers_are_bounded_empty_when_taken_and_expire(steps in proptest::collection::vec(step(), 1..40)) {
            let mut pool = Pool::default();
            let start = Instant::now();
            let mut now = start;
            let (mut given, mut out) = (0usize, 0usize);
            for step in steps {
                match step {
                    Step::Keep(mib) => {
                        // Capacity only: the pages are never touched.
                        let mut bytes = Vec::with_capacity(mib << 20);
                        bytes.push(0xAB);
                        given += 1;
                        out += pool.keep(bytes, now, KEEP_BYTES).len();
                    }
                    Step::Take(capacity) => {
                        let fitting = pool.kept.iter().any(|k| k.bytes.capacity() >= capacity && k.bytes.capacity() <= 2 * capacity + HUGE_FROM);
                        let taken = pool.take(capacity);
                        proptest::prop_assert_eq!(taken.is_some(), fitting);
                        if let Some(bytes) = taken {
                            proptest::prop_assert!(bytes.is_empty());
                            proptest::prop_assert!(bytes.capacity() >= capacity && bytes.capacity() <= 2 * capacity + HUGE_FROM);
                            out += 1;
                        }
                    }
                    Step::Wait(ms) => {
                        now += Duration::from_millis(ms);
                        let (freed, next) = pool.expire(now);
                        out += freed.len();
                        proptest::prop_assert!(pool.kept.iter().all(|k| now.duration_since(k.since) < KEEP_FOR));
                        proptest::prop_assert_eq!(next, pool.kept.iter().map(|k| k.since + KEEP_FOR).min());
                    }
                }
                proptest::prop_assert!(pool.kept.len() <= KEEP_BUFFERS && pool.bytes() <= KEEP_BYTES);
                proptest::prop_assert!(pool.kept.iter().all(|k| k.bytes.capacity() >= HUGE_FROM));
                proptest::prop_assert_eq!(given, out + pool.kept.len());
            }
        }
    }

    /// An edit of a big file leaves its two buffers kept, the next edit's pair replaces them,
    /// and nothing is kept under memory pressure.
    #[test]
    fn the_pool_keeps_the_last_edits_pair_and_nothing_under_pressure() {
        let mib = |n: usize| n << 20;
        let now = Instant::now();
        let mut pool = Pool::default();
        assert!(pool.keep(Vec::with_capacity(mib(50)), now, KEEP_BYTES).is_empty(), "the old text is kept");
        assert!(pool.keep(Vec::with_capacity(mib(50)), now, KEEP_BYTES).is_empty(), "the new text is kept");
        assert_eq!(pool.keep(Vec::with_capacity(mib(30)), now, KEEP_BYTES).len(), 1, "the oldest goes");
        assert_eq!(pool.kept.len(), 2);
        assert_eq!(pool.keep(Vec::with_capacity(mib(12)), now, 0).len(), 3, "under pressure, all go");
        assert!(pool.kept.is_empty());
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(300))]

        /// Edits of files of any sizes, one after another as an agent makes them (each reads the
        /// old text into one buffer, builds the new one in another, and recycles both): an edit
        /// of the same file again (same size) before they expire gets both its buffers from the
        /// pool (when the two it used fit in [`KEEP_BYTES`]).
        #[test]
        fn the_same_edit_again_reuses_both_buffers(
            edits in proptest::collection::vec((4usize..200, 0u64..7000), 1..30),
        ) {
            let mib = |n: usize| n << 20;
            let mut pool = Pool::default();
            let mut now = Instant::now();
            let mut last: Option<(usize, bool)> = None;
            for (size, pause) in edits {
                now += Duration::from_millis(pause);
                drop(pool.expire(now));
                let mut buffers = Vec::new();
                let mut reused = 0;
                for capacity in [mib(size), mib(size) + 1] {
                    let bytes = match pool.take(capacity) {
                        Some(bytes) => { reused += 1; bytes }
                        None => Vec::with_capacity(capacity.next_multiple_of(HUGE_PAGE)),
                    };
                    buffers.push(bytes);
                }
                // (When the previous edit's two fit in the pool's bound: a larger pair keeps one.)
                if last == Some((size, true)) && Duration::from_millis(pause) < KEEP_FOR {
                    proptest::prop_assert_eq!(reused, 2, "the same edit again, soon, reuses both buffers");
                }
                let pair: usize = buffers.iter().map(Vec::capacity).sum();
                for bytes in buffers {
                    drop(pool.keep(bytes, now, KEEP_BYTES));
                }
                last = Some((size, pair <= KEEP_BYTES));
            }
        }
    }

    /// A recycled buffer is what the next fitting request gets, emptied: reading a smaller file
    /// into it shows that file only, never the rest of what the buffer held.
    #[test]
    fn a_reused_buffer_shows_only_what_is_read_into_it() -> std::io::Result<()> {
        // Larger than twice anything the other tests of this crate ask for, so that the buffer
        // is ours to take.
        let big = 40 * 1024 * 1024 + 77;
        let mut old = buffer(big);
        old.resize(big, b'o');
        let address = old.as_ptr();
        recycle(old);
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("new.txt");
        let content = vec![b'n'; big - 4096];
        std::fs::write(&path, &content)?;
        let mut bytes = buffer(content.len());
        let reused = bytes.as_ptr() == address;
        std::io::Read::read_to_end(&mut std::fs::File::open(&path)?, &mut bytes)?;
        assert!(bytes == content, "the read holds only the file (reused: {reused})");
        assert!(reused, "the recycled buffer was not reused");
        Ok(())
    }
}
