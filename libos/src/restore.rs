//! Being restored from a checkpoint (Fluke §4's user-level checkpointer,
//! `apps/ckpt`). A checkpointer rebuilds a process in a fresh environment
//! from its exported state and memory; physical names change on the way —
//! the environment's id, every frame number — while capability slots and
//! virtual addresses stay. So the libOS keeps no raw physical name where a
//! restore would break it, and what it caches it re-derives here:
//!
//! * the cached own id ([`crate::exposed::self_id`]) is forgotten;
//! * the call-capability cache ([`crate::callcap`]), ids to slots, is
//!   emptied;
//! * a child's id is read from its capability when waited for
//!   ([`crate::exec::Child::live_id`]);
//! * pipe holder entries, which live in frames shared between processes, are
//!   rewritten by the checkpointer itself in the image, once per frame
//!   ([`crate::fd::pipe::rebind_holders`]);
//! * a sleep in progress keeps the time it had left at the cut, in this
//!   machine's clock ([`crate::time::rebase`]): clocks count from each
//!   machine's boot;
//! * the file server is looked up again ([`crate::fs::locate`]), and open
//!   files follow their entries in the open-file table
//!   ([`crate::fs::ftable`]), which the checkpointer re-bound to handles
//!   of the target's server; the shared buffer page is asked for again on
//!   first use (its owner id is the old one).
//!
//! **Capabilities the restore could not carry** — for an environment
//! outside the tree that the restoring checkpointer holds no capability
//! for — are revoked, visibly (Aegis): their slots are empty, so using
//! one fails with `BadCap`, and the notice carries the mask of those slots
//! ([`revoked`]).
//!
//! The checkpointer delivers the notice as a protected control transfer
//! served before anything else runs: it imports the saved state as the
//! interrupted state of a transfer tagged [`TAG_RESTORE`](crate::pct::TAG_RESTORE)
//! from itself, owed to nobody, so the reply resumes the saved registers.
//! Only atomics are touched here (the interrupted code may hold any lock).

use core::sync::atomic::{AtomicU64, Ordering};

/// Restores this process has seen.
static RESTORES: AtomicU64 = AtomicU64::new(0);
/// Capability slots revoked by the last restore (bit per slot).
static REVOKED: AtomicU64 = AtomicU64::new(0);

/// The capability slots the last restore could not carry and revoked (bit
/// `s` for slot `s`); 0 if none, or never restored.
pub fn revoked() -> u64 {
    REVOKED.load(Ordering::Relaxed)
}

/// How many times this process was restored from a checkpoint.
pub fn count() -> u64 {
    RESTORES.load(Ordering::Acquire)
}

/// The restore notice from `caller` (word 1 the old id, word 2 the revoked
/// slots, words 3 and 4 the saving machine's clock ticks at the cut and
/// its tick rate): accepted only from this environment's
/// creator (the checkpointer that built it); anything else is answered
/// "not serving" and changes nothing.
pub(crate) fn on_message(caller: u64, msg: &mut crate::pct::Msg) {
    crate::exposed::forget_self_id();
    let me = crate::exposed::self_id();
    if crate::proc::parent(me) != Some(caller) {
        *msg = [0; crate::pct::WORDS];
        msg[0] = crate::pct::TAG_NOT_SERVING;
        return;
    }
    crate::callcap::forget_all();
    crate::fs::locate::forget();
    REVOKED.store(msg[2], Ordering::Relaxed);
    crate::time::rebase(msg[3], msg[4]);
    RESTORES.fetch_add(1, Ordering::AcqRel);
    *msg = [0; crate::pct::WORDS];
}
