//! The process groups of the commands Tandem runs. Every command gets a group of its own, and
//! whatever happens to the call — it ends, times out, or is cancelled (its future dropped) —
//! the whole group is stopped: at once when the command ended by itself (what it left running
//! goes), else politely: SIGTERM, a grace period, then SIGKILL. [`stop_all`] does the same for
//! every group still running, before the process exits, so nothing outlives Tandem.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process_group, test_kill_process_group};

/// How long a cancelled command has to exit after SIGTERM before SIGKILL.
pub const GRACE: Duration = Duration::from_secs(2);

/// Groups that may still have processes.
static LIVE: LazyLock<Mutex<HashSet<i32>>> = LazyLock::new(|| Mutex::new(HashSet::new()));

fn live() -> std::sync::MutexGuard<'static, HashSet<i32>> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn signal(pgid: i32, signal: Signal) {
    if let Some(pid) = Pid::from_raw(pgid) {
        // The group may be gone already; nothing else to do then.
        kill_process_group(pid, signal).ok();
    }
}

/// Whether the group has a process that still runs. A zombie (exited, not yet reaped: the
/// group's leader is our own child until the runtime reaps it) runs nothing and does not count.
fn alive(pgid: i32) -> bool {
    if Pid::from_raw(pgid).is_none_or(|pid| test_kill_process_group(pid).is_err()) {
        return false;
    }
    let Ok(entries) = std::fs::read_dir("/proc") else { return true };
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
        let Some((_, rest)) = stat.rsplit_once(") ") else { return false };
        let mut fields = rest.split(' ');
        let state = fields.next().unwrap_or("Z");
        let pgrp = fields.nth(1).and_then(|f| f.parse::<i32>().ok());
        pgrp == Some(pgid) && state != "Z" && state != "X"
    })
}

/// Waits until every group of `pgids` is gone or `grace` passed; returns the ones left.
fn wait_gone(pgids: &[i32], grace: Duration) -> Vec<i32> {
    let deadline = Instant::now() + grace;
    loop {
        let left: Vec<i32> = pgids.iter().copied().filter(|&pgid| alive(pgid)).collect();
        if left.is_empty() || Instant::now() >= deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM to `pgids`, up to `grace` for them to exit, then SIGKILL.
fn terminate(pgids: &[i32], grace: Duration) {
    for &pgid in pgids {
        signal(pgid, Signal::TERM);
    }
    let left = wait_gone(pgids, grace);
    for &pgid in &left {
        signal(pgid, Signal::KILL);
    }
    // SIGKILL is delivered asynchronously: wait (briefly) until they are really gone.
    wait_gone(&left, Duration::from_secs(1));
    let mut live = live();
    for pgid in pgids {
        live.remove(pgid);
    }
}

/// The process group of one running command; stopped when dropped.
pub(crate) struct Group {
    pgid: i32,
}

impl Group {
    /// Tracks the group `pgid` (the command's process id: it leads its own group).
    pub(crate) fn new(pgid: i32) -> Self {
        live().insert(pgid);
        Self { pgid }
    }

    /// The command ended by itself (or timed out): what it left running is killed at once.
    pub(crate) fn end(self) {
        signal(self.pgid, Signal::KILL);
        wait_gone(&[self.pgid], Duration::from_secs(1));
        live().remove(&self.pgid);
        std::mem::forget(self);
    }
}

impl Drop for Group {
    /// Dropped while the command runs (the call was cancelled): SIGTERM, grace, SIGKILL, in the
    /// background so the canceller does not wait.
    fn drop(&mut self) {
        let pgid = self.pgid;
        signal(pgid, Signal::TERM);
        std::thread::spawn(move || terminate(&[pgid], GRACE));
    }
}

impl Group {
    /// For a background command, which outlives its call: no longer stopped on drop, only by
    /// `bash_output` kill or [`stop_all`]. Returns the group id.
    pub(crate) fn detach(self) -> i32 {
        let pgid = self.pgid;
        std::mem::forget(self);
        pgid
    }
}

/// Tracks the process group `pgid` of a child that tandem started outside the command tools
/// (an MCP server), so that [`stop_all`] stops it too.
pub fn track_group(pgid: i32) {
    live().insert(pgid);
}

/// A background command's shell ended: its group is forgotten once nothing is left in it (a
/// group id can be reused after that).
pub(crate) fn forget_if_gone(pgid: i32) {
    if !alive(pgid) {
        live().remove(&pgid);
    }
}

/// Stops every command still running (SIGTERM, grace, SIGKILL) and waits for it: call before
/// the process exits. Returns how many groups were still there.
pub fn stop_all() -> usize {
    let pgids: Vec<i32> = live().iter().copied().filter(|&pgid| alive(pgid)).collect();
    terminate(&pgids, GRACE);
    pgids.len()
}
