//! The real-time interval timer (`alarm`, `setitimer(ITIMER_REAL)`): a
//! deadline on the boot clock, and a period to re-arm it with. No helper
//! runs at the deadline: the personality looks at it where a signal could
//! be noticed — as every call returns ([`poll`] before delivering pending
//! signals) and in every wait, whose wakeup predicate also wakes at the
//! deadline's clock tick ([`wake_on`]) — and then makes `SIGALRM` pending.
//! So a program sleeping, waiting or making calls gets `SIGALRM` on time
//! (to the tick); one spinning without calls gets it at its next call.
//! A fork child starts with no timer; `execve` keeps it, as on Linux.

use crate::calls::time::now_ns;
use crate::signals;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{CLOCK, Clock};
use oxok_libos::exposed;

/// The deadline in nanoseconds since boot; 0: not armed.
static DEADLINE: AtomicU64 = AtomicU64::new(0);
/// The period to re-arm with; 0: one shot.
static INTERVAL: AtomicU64 = AtomicU64::new(0);

const SIGALRM: u64 = 14;

/// True if no timer is armed ([`poll`] would do nothing).
#[inline(always)]
pub fn idle() -> bool {
    DEADLINE.load(Ordering::Relaxed) == 0
}

/// If the deadline has passed: `SIGALRM` pending, and the timer re-armed
/// one period after the last deadline passed (missed periods give one
/// signal, as Linux's does) or disarmed. The common case is one load.
#[inline(always)]
pub fn poll() {
    let d = DEADLINE.load(Ordering::Relaxed);
    if d != 0 {
        poll_armed(d);
    }
}

#[cold]
fn poll_armed(d: u64) {
    let now = now_ns();
    if now < d {
        return;
    }
    let period = INTERVAL.load(Ordering::Relaxed);
    let next = if period == 0 { 0 } else { d.saturating_add(period.saturating_mul((now - d) / period + 1)) };
    DEADLINE.store(next, Ordering::Relaxed);
    signals::raise(SIGALRM);
}

/// Arms the timer to fire in `value` ns (0: disarm), then every `interval`
/// ns (0: once); returns the old (time left, interval).
pub fn set(value: u64, interval: u64) -> (u64, u64) {
    let old = get();
    let now = now_ns();
    let deadline = if value == 0 { 0 } else { now.saturating_add(value).max(1) };
    INTERVAL.store(if value == 0 { 0 } else { interval }, Ordering::Relaxed);
    DEADLINE.store(deadline, Ordering::Relaxed);
    crate::attention::raise();
    old
}

/// (time left, interval) in ns; (0, 0) when not armed.
pub fn get() -> (u64, u64) {
    poll();
    let d = DEADLINE.load(Ordering::Relaxed);
    if d == 0 {
        return (0, 0);
    }
    (d.saturating_sub(now_ns()).max(1), INTERVAL.load(Ordering::Relaxed))
}

/// In a fork child: no timer.
pub fn clear() {
    DEADLINE.store(0, Ordering::Relaxed);
    INTERVAL.store(0, Ordering::Relaxed);
}

/// Appends to a wakeup predicate the terms that end a wait for a signal:
/// a pending signal the program does not block, a keyboard signal to pass
/// to the foreground group ([`crate::groups`]), or — while the timer is
/// armed — the clock reaching the deadline's tick.
pub fn wake_on(b: &mut oxok_pred::Builder) {
    let (pending, interrupting) = signals::watch();
    b.load_u64(pending).and_imm(interrupting).ne_imm(0);
    b.or().load_u64(crate::groups::forward_word()).ne_imm(0);
    let d = DEADLINE.load(Ordering::Relaxed);
    let Some(clock) = exposed::clock() else { return };
    if d == 0 || clock.tick_hz == 0 {
        return;
    }
    let wait = u128::from(d.saturating_sub(now_ns())) * u128::from(clock.tick_hz);
    let tick = clock.ticks.saturating_add(wait.div_ceil(1_000_000_000) as u64);
    b.or().load_u64(CLOCK + core::mem::offset_of!(Clock, ticks) as u64).ge_imm(tick);
}
