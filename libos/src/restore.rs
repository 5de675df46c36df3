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
//! * pipe holder slots, which live in frames shared between processes, are
//!   rewritten by the checkpointer itself in the image, once per frame
//!   ([`crate::fd::pipe::rebind_holders`]).
//!
//! The checkpointer delivers the notice as a protected control transfer
//! served before anything else runs: it imports the saved state as the
//! interrupted state of a transfer tagged [`TAG_RESTORE`](crate::pct::TAG_RESTORE)
//! from itself, owed to nobody, so the reply resumes the saved registers.
//! Only atomics are touched here (the interrupted code may hold any lock).

use core::sync::atomic::{AtomicU64, Ordering};

/// Restores this process has seen.
static RESTORES: AtomicU64 = AtomicU64::new(0);

/// How many times this process was restored from a checkpoint.
pub fn count() -> u64 {
    RESTORES.load(Ordering::Relaxed)
}

/// The restore notice from `caller`: accepted only from this environment's
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
    RESTORES.fetch_add(1, Ordering::Relaxed);
    *msg = [0; crate::pct::WORDS];
}
