//! One word that says a call's way back may have something to do.
//!
//! After every Linux call the personality must bring back a mask
//! `rt_sigsuspend` replaced, deliver pending signals, fire an expired
//! timer, forward a keyboard signal, note exited children for a `SIGCHLD`
//! handler, or leave the registers as the call set them. Each of those
//! rare cases has its own word; testing them all costs a load and a branch
//! each on every call. Instead, whatever makes one of them hold raises
//! this word *after* changing its own (so a raise is never older than the
//! state it announces), and the common way back tests only this word.
//! The slow way back ([`crate::after_call`]) lowers it first and then
//! raises it again if any case still holds, so a raise that races with it
//! (a signal from another process arriving in an upcall) is never lost. A
//! raise with nothing to do costs one slow way back.

use core::sync::atomic::{AtomicBool, Ordering};

static RAISED: AtomicBool = AtomicBool::new(true);

/// Something the way back must see may hold now.
#[inline(always)]
pub fn raise() {
    RAISED.store(true, Ordering::Release);
}

/// True if nothing was raised since the last [`settle`] found all quiet.
#[inline(always)]
pub fn quiet() -> bool {
    !RAISED.load(Ordering::Acquire)
}

/// Lowers the word, then raises it again if `still` (evaluated after the
/// lowering) says a case holds.
pub fn settle(still: impl FnOnce() -> bool) {
    RAISED.store(false, Ordering::SeqCst);
    if still() {
        raise();
    }
}
