//! Call capabilities: the credential for reaching another environment by
//! protected control transfer (`pct_call`, `pct_send`) or directed yield
//! (`yield_cpu`). The kernel takes a *target word*
//! ([`call_target`](oxok_abi::call_target)): the environment's id and the
//! slot of this environment's capability for it with
//! [`rights::CALL`](oxok_abi::rights::CALL). This module finds that slot.
//!
//! **Where they come from.** A creator holds every right on what it
//! creates. [`pass_on`] (called by `exec` and `fork` before a child runs)
//! hands the child a call-only capability for its parent — so it can ask
//! its parent for things (`signal::kill_via_parent`) and donate time to it
//! (a pipe's other end) — and, if this process can call a file server
//! (`fs::locate`), one for that server too. Boot programs started together
//! get them for each other from the kernel. Nothing else: a process cannot
//! reach a sibling or a stranger unless someone who can hands it one.
//!
//! **Finding the slot.** Capabilities live in the kernel; `cap_info`
//! describes one slot. A small lock-free cache maps ids to slots (also "no
//! capability", for a while, so that yields to a sibling do not scan the
//! list every time). A cached slot may go stale (the capability was
//! dropped or revoked): the kernel then answers `BadCap`, and
//! [`with_target`] forgets the entry and tries once more with a fresh
//! lookup. The kernel checks every word, so a wrong cache entry costs a
//! retry, never authority.

use crate::sys;
use core::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use oxok_abi::{CAP_SLOTS, Error, NO_CAP_SLOT, call_target, cap_kind, rights};

const CACHE: usize = 16;
/// `id | slot << 32`; 0 is empty. `slot == NO_CAP_SLOT` remembers "none".
static ENTRIES: [AtomicU64; CACHE] = [const { AtomicU64::new(0) }; CACHE];
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Lookups answered by a cached "none" since the last rescan; after
/// [`NEGATIVE_USES`] the "none" entries are dropped (a capability may have
/// arrived since).
static NEGATIVE_HITS: AtomicU32 = AtomicU32::new(0);
const NEGATIVE_USES: u32 = 256;
/// The last slot found, `id | slot << 32` (0: none), looked at before the
/// cache: a program that calls or yields to one partner over and over (a
/// pipe's other end, a server) finds it in one compare. Never "none".
static LAST: AtomicU64 = AtomicU64::new(0);

fn cached(id: u64) -> Option<u64> {
    let id = id as u32;
    ENTRIES.iter().map(|e| e.load(Ordering::Relaxed)).find(|&v| v != 0 && v as u32 == id).map(|v| v >> 32)
}

fn remember(id: u64, slot: u64) {
    forget(id);
    let i = NEXT.fetch_add(1, Ordering::Relaxed) % CACHE;
    ENTRIES[i].store((id & 0xffff_ffff) | (slot << 32), Ordering::Relaxed);
}

/// Drops what the cache says about environment `id`.
pub fn forget(id: u64) {
    let id = id as u32;
    let last = LAST.load(Ordering::Relaxed);
    if last as u32 == id {
        let _ = LAST.compare_exchange(last, 0, Ordering::Relaxed, Ordering::Relaxed);
    }
    for e in &ENTRIES {
        let v = e.load(Ordering::Relaxed);
        if v != 0 && v as u32 == id {
            let _ = e.compare_exchange(v, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

/// Drops every cached entry (after a restore, every id is new).
pub fn forget_all() {
    LAST.store(0, Ordering::Relaxed);
    for e in &ENTRIES {
        e.store(0, Ordering::Relaxed);
    }
}

fn forget_negatives() {
    for e in &ENTRIES {
        let v = e.load(Ordering::Relaxed);
        if v >> 32 == NO_CAP_SLOT {
            let _ = e.compare_exchange(v, 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

/// The slot of a capability for environment `id` with `need` (and call),
/// by asking the kernel about every slot.
fn scan(id: u64, need: u64) -> Option<u64> {
    (0..CAP_SLOTS as u64).find(|&s| {
        sys::cap_info(s).is_ok_and(|[kind, number, r]| {
            kind == cap_kind::ENV && number == id && r & (rights::CALL | need) == rights::CALL | need
        })
    })
}

/// The slot of this environment's call capability for `id`, if it has one.
/// Inlined: the last slot found is one compare away (a caller that goes
/// back and forth with one partner pays no call for it).
#[inline]
pub fn slot_for(id: u64) -> Option<u64> {
    let last = LAST.load(Ordering::Relaxed);
    // The low half is an id (never 0) only where an entry is.
    if last != 0 && u64::from(last as u32) == id {
        return Some(last >> 32);
    }
    slot_looked_up(id)
}

/// [`slot_for`] past the last slot found: the cache, else the kernel.
#[inline(never)]
fn slot_looked_up(id: u64) -> Option<u64> {
    if id == 0 || id > u64::from(u32::MAX) {
        return None;
    }
    match cached(id) {
        Some(NO_CAP_SLOT) if NEGATIVE_HITS.fetch_add(1, Ordering::Relaxed) < NEGATIVE_USES => None,
        Some(NO_CAP_SLOT) => {
            NEGATIVE_HITS.store(0, Ordering::Relaxed);
            forget_negatives();
            lookup(id)
        }
        Some(slot) => {
            LAST.store(id | slot << 32, Ordering::Relaxed);
            Some(slot)
        }
        None => lookup(id),
    }
}

fn lookup(id: u64) -> Option<u64> {
    let found = scan(id, 0);
    remember(id, found.unwrap_or(NO_CAP_SLOT));
    found
}

/// The target word for environment `id` (see the module documentation);
/// with no capability, a word naming an empty slot (the kernel answers
/// `BadCap` — or first `BadEnv`, `Invalid`, `Busy` as the call says).
#[inline]
pub fn target(id: u64) -> u64 {
    call_target(id, slot_for(id).unwrap_or(NO_CAP_SLOT))
}

/// Runs `f` with the target word for `id`; if the kernel says the slot
/// holds no fitting capability (`BadCap`), looks again and tries once more.
/// Inlined, with the retry out of line ([`again`]): a caller's values
/// (a message) are read again there, not kept aside for it.
#[inline]
pub fn with_target<T>(id: u64, mut f: impl FnMut(u64) -> Result<T, Error>) -> Result<T, Error> {
    match f(target(id)) {
        Err(Error::BadCap) => again(id, f),
        r => r,
    }
}

/// [`with_target`] after `BadCap`: forgets the slot, looks again, tries once
/// more.
#[cold]
#[inline(never)]
fn again<T>(id: u64, mut f: impl FnMut(u64) -> Result<T, Error>) -> Result<T, Error> {
    forget(id);
    f(target(id))
}

/// Directed yield to environment `id` with this environment's call
/// capability for it (plain yield for 0). Inlined: a hand-off between two
/// environments (`shm_pingpong`, a pipe's ends) is this and the call.
#[inline]
pub fn yield_to(id: u64) -> Result<(), Error> {
    if id == 0 {
        return sys::yield_cpu(0).map(|_| ());
    }
    with_target(id, |word| sys::yield_cpu(word).map(|_| ()))
}

/// Hands the new environment `child` (capability slot) what it needs to
/// reach its family and the terminal: a call-only capability for this
/// environment, one (with grant, to pass on) for the file server if this
/// environment can call it, the same for the neighbour table server
/// (`net::neigh`), and a copy of its console capability. Best effort: a full list or a too-deep derivation just goes
/// without (the child then cannot reach that environment).
pub fn pass_on(child: u64) {
    let _ = sys::cap_grant(0, child, rights::CALL);
    let server = crate::fs::server().ok();
    let disk = crate::fs::locate::disk_server();
    let arpd = crate::fs::locate::neighbour_server();
    let fsd_rights = rights::CALL | rights::GRANT;
    // One pass over the list, stopping once all are found.
    let (mut console, mut fsd, mut dfsd, mut neigh) = (None, server.is_none(), disk.is_none(), arpd.is_none());
    for s in 0..CAP_SLOTS as u64 {
        if console.is_some() && fsd && dfsd && neigh {
            break;
        }
        match sys::cap_info(s) {
            // The console: the same rights this environment has for it.
            Ok([cap_kind::CONSOLE, _, r]) if console.is_none() && r & rights::GRANT != 0 => {
                console = Some(());
                let _ = sys::cap_grant(s, child, r);
            }
            Ok([cap_kind::ENV, id, r]) if !fsd && Some(id) == server && r & fsd_rights == fsd_rights => {
                fsd = true;
                let _ = sys::cap_grant(s, child, fsd_rights);
            }
            Ok([cap_kind::ENV, id, r]) if !dfsd && Some(id) == disk && r & fsd_rights == fsd_rights => {
                dfsd = true;
                let _ = sys::cap_grant(s, child, fsd_rights);
            }
            Ok([cap_kind::ENV, id, r]) if !neigh && Some(id) == arpd && r & fsd_rights == fsd_rights => {
                neigh = true;
                let _ = sys::cap_grant(s, child, fsd_rights);
            }
            _ => {}
        }
    }
}

/// Grants the environment `child` (capability slot) a call-only capability
/// for environment `env`, from this environment's capability for `env`
/// with call and grant. Best effort, as [`pass_on`].
pub fn grant_call(env: u64, child: u64) {
    if let Some(slot) = scan(env, rights::GRANT) {
        let _ = sys::cap_grant(slot, child, rights::CALL);
    }
}
