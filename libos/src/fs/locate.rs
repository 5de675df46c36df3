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
//! The answer is cached per process (a forked child looks again) and
//! checked to be alive on each use; `spawn_server` and `stop_server` drop
//! the cache.

use crate::{exposed, proc};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::ENV_TABLE_ROWS;
use oxok_abi::{ENV_FREE, ENV_ZOMBIE, EnvEntry};

/// The program name a file server runs under.
pub const SERVER_NAME: &str = "fsd";

/// `owner` and `server` of the cached answer (0: none).
static OWNER: AtomicU64 = AtomicU64::new(0);
static SERVER: AtomicU64 = AtomicU64::new(0);

/// This process's file server, if an ancestor (or itself) runs one.
pub fn server() -> Option<u64> {
    let me = exposed::self_id();
    let cached = SERVER.load(Ordering::Acquire);
    if OWNER.load(Ordering::Acquire) == me && cached != 0 && exposed::env_entry(cached).is_some_and(|r| serves(&r)) {
        return Some(cached);
    }
    let found = find(me)?;
    remember(found);
    Some(found)
}

/// Caches `server` as this process's (what `spawn_server` just started).
pub fn remember(server: u64) {
    OWNER.store(0, Ordering::Release);
    SERVER.store(server, Ordering::Release);
    OWNER.store(exposed::self_id(), Ordering::Release);
}

/// Drops the cached answer.
pub fn forget() {
    OWNER.store(0, Ordering::Release);
}

/// The nearest ancestor's server (at most `ENV_TABLE_ROWS` steps up).
fn find(me: u64) -> Option<u64> {
    let mut creator = me;
    for _ in 0..ENV_TABLE_ROWS {
        if let Some(id) = created_by(creator) {
            return Some(id);
        }
        creator = proc::parent(creator)?;
    }
    None
}

/// A live file server `creator` started (the first in table order).
fn created_by(creator: u64) -> Option<u64> {
    (0..ENV_TABLE_ROWS)
        .filter_map(exposed::env_row)
        .find(|r| u64::from(r.parent) == creator && serves(r))
        .map(|r| u64::from(r.id))
}

/// True for a live environment running the file server.
fn serves(r: &EnvEntry) -> bool {
    r.id != 0 && r.status != ENV_FREE && r.status != ENV_ZOMBIE && name(r) == SERVER_NAME.as_bytes()
}

/// The row's program name without its NUL padding.
fn name(r: &EnvEntry) -> &[u8] {
    let len = r.name.iter().position(|&b| b == 0).unwrap_or(r.name.len());
    &r.name[..len]
}
