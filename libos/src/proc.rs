//! The process table: process ids are environment ids, and the table is the
//! kernel's exposed environment table (`abi::layout::ENV_TABLE`) plus each
//! process's private libOS state.
//!
//! # Trust model (Xok §5.2, and what Oxok does instead)
//!
//! ExOS on Xok kept its process table in shared memory that every process
//! could write, so one buggy or hostile process could rename, reparent or
//! "kill" any other, and every process had to trust every other one (Xok
//! §5.2 names this as the weakness of its libOS sharing). Oxok splits the
//! table:
//!
//! * **Shared, read-only to everybody** — id, parent, name, status and exit
//!   status: the kernel's environment table, mapped read-only into every
//!   address space. Only the kernel writes it: the parent is whoever called
//!   `env_create`, the id carries a generation so a reused row never
//!   matches an old id, and the status changes only by the kernel's own
//!   transitions. A process cannot forge its own parent or anybody's row.
//! * **Private to each process** — everything a libOS keeps about itself:
//!   signal handlers ([`crate::signal`]), LRPC procedures
//!   ([`crate::lrpc`]), descriptors ([`crate::fd`]), the capability slots
//!   for its children ([`crate::exec::Child`]). No other process can read or
//!   write any of it.
//! * **Changes to another process go by protected control transfer**, with
//!   the caller's id added by the kernel, and the receiver decides (for
//!   signals: only from an ancestor, [`is_ancestor`]). The one exception
//!   is the capability a creator holds for its child: `env_destroy` with it
//!   ends the child whatever the child's libOS does.
//!
//! What stays trusted: the kernel's table. What a hostile process can still
//! do: read everybody's public row (as `ps` does on any Unix).

use crate::exposed;
use oxok_abi::layout::ENV_TABLE_ROWS;
use oxok_abi::{ENV_CREATED, ENV_FREE, ENV_RUNNABLE, ENV_RUNNING, ENV_SLEEPING, ENV_WAITING, ENV_ZOMBIE, EnvEntry};

/// A process id: an environment id (`oxok_abi::env_id`: generation and row).
pub type Pid = u64;

/// The calling process's id (cached after the first call).
#[inline]
pub fn pid() -> Pid {
    exposed::self_id()
}

/// The parent of live process `pid` (a zombie counts: its row is still
/// there), or `None` if there is no such process or it was started by the
/// kernel (parent 0).
#[inline]
pub fn parent(pid: Pid) -> Option<Pid> {
    let parent = exposed::env_parent(pid)?;
    (parent != 0).then_some(u64::from(parent))
}

/// True if `a` is a proper ancestor of `b`: `b`'s parent, or its parent's
/// parent, and so on, as the kernel's exposed table records them.
///
/// The walk reads each row by full id, generation included
/// ([`exposed::env_entry`]), so it stops at the first ancestor that has
/// ended and been reaped — its row is empty, or reused by an environment
/// with another generation, which therefore never matches — and a process
/// whose creator is gone has no ancestors beyond it. It takes at most
/// [`ENV_TABLE_ROWS`] steps, so even a cycle (impossible in the kernel's
/// table, which only ever points at older environments) cannot make it
/// loop.
pub fn is_ancestor(a: Pid, b: Pid) -> bool {
    if a == 0 || a == b {
        return false;
    }
    let mut cur = b;
    for _ in 0..ENV_TABLE_ROWS {
        match parent(cur) {
            Some(p) if p == a => return true,
            Some(p) => cur = p,
            None => return false,
        }
    }
    false
}

/// One process as the exposed table shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Process {
    /// Its id.
    pub pid: Pid,
    /// Its creator's id (0 for programs the kernel started).
    pub parent: Pid,
    /// Program name, NUL-padded (see [`Process::name`]).
    pub name_bytes: [u8; 16],
    /// Kernel status: `ENV_RUNNABLE`, `ENV_SLEEPING`, … (see
    /// [`Process::status_name`]).
    pub status: u32,
    /// For a zombie: how it ended (the kernel's raw word, see
    /// [`crate::exec::ExitStatus::from_raw`]).
    pub exit_status: u64,
    /// Frames it owns.
    pub frames: u32,
}

impl Process {
    /// From a row of the exposed table (`None` for an empty row).
    pub fn from_row(row: &EnvEntry) -> Option<Process> {
        (row.id != 0 && row.status != ENV_FREE).then(|| Process {
            pid: u64::from(row.id),
            parent: u64::from(row.parent),
            name_bytes: row.name,
            status: row.status,
            exit_status: row.exit_status,
            frames: row.frames,
        })
    }

    /// The program name (up to the first NUL; `?` if not UTF-8).
    pub fn name(&self) -> &str {
        let n = self.name_bytes.iter().position(|&b| b == 0).unwrap_or(self.name_bytes.len());
        core::str::from_utf8(&self.name_bytes[..n]).unwrap_or("?")
    }

    /// The status as a word, as `ps` shows it.
    pub fn status_name(&self) -> &'static str {
        status_name(self.status)
    }
}

/// A kernel status as a word.
pub fn status_name(status: u32) -> &'static str {
    match status {
        ENV_CREATED => "created",
        ENV_RUNNABLE => "runnable",
        ENV_RUNNING => "running",
        ENV_WAITING => "waiting",
        ENV_SLEEPING => "sleeping",
        ENV_ZOMBIE => "zombie",
        _ => "free",
    }
}

/// Every process in the table, in row order (a snapshot row by row: a
/// process may start or end while the iterator runs).
pub fn processes() -> impl Iterator<Item = Process> {
    exposed::env_rows().filter_map(|r| Process::from_row(&r))
}

/// The process `pid`, if it is in the table (zombies included).
pub fn process(pid: Pid) -> Option<Process> {
    Process::from_row(&exposed::env_entry(pid)?)
}

/// True if `pid` names a process that has not ended (zombies have).
pub fn alive(pid: Pid) -> bool {
    process(pid).is_some_and(|p| p.status != ENV_ZOMBIE)
}
