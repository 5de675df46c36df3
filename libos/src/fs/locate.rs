//! Finding the file server through a table, not a variable: the exposed
//! environment table (Xok §5.1), which only the kernel writes. A process's
//! file server is the live environment named `fsd` that its nearest
//! ancestor created — itself first, then its parent, and so on up. Init
//! starts the system's server before the shell, so everything under the
//! shell finds init's; a test program that starts its own
//! ([`spawn_server`](super::spawn_server)) finds that one, and so do its
//! children. A program can only ever pick a server one of its own
//! ancestors (or itself) started, and it still needs a call capability for
//! it (`callcap::pass_on` hands children one).
//!
//! The answer is cached per process — a forked child takes its parent's —
//! and checked to be alive on each use (a cached "none" is looked up again
//! now and then); starting a server of the name (`exec::spawn`, which calls
//! [`started`]) and `stop_server` reset the cache. A lookup reads the
//! table once for every name, whatever the depth of the ancestry.
//!
//! The disk file server (`dfsd`, C-FFS over XN) is found the same way under
//! its own name ([`disk_server`]); when there is one, `super::route` sends
//! it every path but `/tmp`. So is the machine's neighbour table server
//! (`arpd`, [`neighbour_server`]), which may also be a boot program: the
//! machine's command line started it, so every program may use it.

use crate::{exposed, proc};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::ENV_TABLE_ROWS;
use oxok_abi::{ENV_FREE, ENV_ZOMBIE, EnvEntry};

/// The program name a file server runs under.
pub const SERVER_NAME: &str = "fsd";
/// The program name of the disk file server (C-FFS over XN): with one
/// running, every path but `/tmp` goes to it (`super::route`).
pub const DISK_SERVER_NAME: &str = "dfsd";

/// The cached answer for one server name: the process it was found for
/// (0: none), the server (0: there is none), and how many times a "none"
/// was reused.
struct Cached {
    name: &'static str,
    /// Also a boot program's (no creator) when no ancestor runs one.
    boot_too: bool,
    owner: AtomicU64,
    server: AtomicU64,
    none_uses: AtomicU64,
}

static RAM: Cached = Cached::new(SERVER_NAME, false);
static DISK: Cached = Cached::new(DISK_SERVER_NAME, false);
static NEIGHBOURS: Cached = Cached::new(crate::net::neigh::SERVER_NAME, true);

/// A cached "no server" is looked up again after this many uses (an
/// ancestor may have started one since).
const NONE_REUSE: u64 = 64;

/// This process's file server, if an ancestor (or itself) runs one.
pub fn server() -> Option<u64> {
    RAM.server()
}

/// This process's disk file server, if an ancestor (or itself) runs one.
pub fn disk_server() -> Option<u64> {
    DISK.server()
}

/// The machine's neighbour table server (`arpd`): an ancestor's, or a
/// boot program.
pub fn neighbour_server() -> Option<u64> {
    NEIGHBOURS.server()
}

/// Tells the lookups that this process just started `name` as `id`: a
/// server of that name is this process's own from now on, whatever an
/// earlier lookup found (or did not find).
pub(crate) fn started(name: &str, id: u64) {
    let me = exposed::self_id();
    for c in [&RAM, &DISK, &NEIGHBOURS].into_iter().filter(|c| c.name == name) {
        c.cache(me, id);
    }
}

/// Drops the cached answers.
pub fn forget() {
    RAM.owner.store(0, Ordering::Release);
    DISK.owner.store(0, Ordering::Release);
}

impl Cached {
    const fn new(name: &'static str, boot_too: bool) -> Cached {
        Cached { name, boot_too, owner: AtomicU64::new(0), server: AtomicU64::new(0), none_uses: AtomicU64::new(0) }
    }

    fn server(&self) -> Option<u64> {
        let me = exposed::self_id();
        let owner = self.owner.load(Ordering::Acquire);
        // A forked child starts with its parent's memory, cache included:
        // the parent's answer is the child's too (the child has created
        // nothing).
        let inherited = owner != me && owner != 0 && proc::parent(me) == Some(owner);
        if owner == me || inherited {
            let cached = self.server.load(Ordering::Acquire);
            if cached != 0 && still_serves(cached, self.name) {
                if inherited {
                    self.owner.store(me, Ordering::Release);
                }
                return Some(cached);
            }
            if cached == 0 && self.none_uses.fetch_add(1, Ordering::Relaxed) < NONE_REUSE {
                if inherited {
                    self.owner.store(me, Ordering::Release);
                }
                return None;
            }
        }
        refresh(me);
        let found = self.server.load(Ordering::Acquire);
        (found != 0).then_some(found)
    }

    fn cache(&self, owner: u64, server: u64) {
        self.owner.store(0, Ordering::Release);
        self.server.store(server, Ordering::Release);
        self.none_uses.store(0, Ordering::Relaxed);
        self.owner.store(owner, Ordering::Release);
    }
}

/// Most live servers of one name a lookup considers.
const CANDIDATES: usize = 8;

/// Every name looked up: one pass over the table answers them all.
static ALL: [&Cached; 3] = [&RAM, &DISK, &NEIGHBOURS];

/// Looks every name up again for process `me` and caches the answers: one
/// pass over the table for live servers (usually none or one of each),
/// then [`nearest`] for each name.
fn refresh(me: u64) {
    let mut servers = [[(0u64, 0u64); CANDIDATES]; ALL.len()];
    let mut n = [0usize; ALL.len()];
    for r in exposed::env_rows().filter(live) {
        let Some(k) = ALL.iter().position(|c| name(&r) == c.name.as_bytes()) else { continue };
        if n[k] < CANDIDATES {
            servers[k][n[k]] = (u64::from(r.parent), u64::from(r.id));
            n[k] += 1;
        }
    }
    for (k, c) in ALL.iter().enumerate() {
        c.cache(me, nearest(me, &servers[k][..n[k]], c.boot_too).unwrap_or(0));
    }
}

/// Of `servers` (creator, id), the one the nearest ancestor created: up
/// the ancestry (at most `ENV_TABLE_ROWS` steps) to the first creator of
/// one; then, if `boot_too`, a boot program's (one with no creator).
fn nearest(me: u64, servers: &[(u64, u64)], boot_too: bool) -> Option<u64> {
    if servers.is_empty() {
        return None;
    }
    let mut creator = me;
    for _ in 0..ENV_TABLE_ROWS {
        if let Some(&(_, id)) = servers.iter().find(|(parent, _)| *parent == creator) {
            return Some(id);
        }
        match proc::parent(creator) {
            Some(p) => creator = p,
            None => break,
        }
    }
    let boot = servers.iter().find(|(parent, _)| *parent == 0);
    boot.filter(|_| boot_too).map(|&(_, id)| id)
}

/// True if environment `id` is alive and runs the server `server`: its
/// status and name read alone (what a cached answer is checked by at
/// every use).
fn still_serves(id: u64, server: &str) -> bool {
    exposed::env_status(id).is_some_and(live_status)
        && exposed::env_name(id).is_some_and(|n| unpadded(&n) == server.as_bytes())
}

/// True for a live environment's row.
fn live(r: &EnvEntry) -> bool {
    r.id != 0 && live_status(r.status)
}

/// True for the status of a live environment.
fn live_status(status: u32) -> bool {
    status != ENV_FREE && status != ENV_ZOMBIE
}

/// The row's program name without its NUL padding.
fn name(r: &EnvEntry) -> &[u8] {
    unpadded(&r.name)
}

/// A row's name without its NUL padding.
fn unpadded(name: &[u8]) -> &[u8] {
    let len = name.iter().position(|&b| b == 0).unwrap_or(name.len());
    &name[..len]
}
