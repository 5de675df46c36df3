//! Time: the CPU's time-stamp counter, the wall clock, sleeps.

use core::sync::atomic::{AtomicU64, Ordering};

/// The time-stamp counter (TSC ticks; the rate is in the clock page).
#[inline(always)]
pub fn rdtsc() -> u64 {
    crate::exposed::rdtsc()
}

/// The wall-clock time, nanoseconds since 1970-01-01 UTC: the clock page's
/// time at boot (from the real-time clock) plus the TSC since then. `None`
/// when the kernel could not read the real-time clock.
pub fn unix_ns() -> Option<u64> {
    let (boot, since, hz) = since_boot()?;
    let ns = u128::from(boot) * 1_000_000_000 + u128::from(since) * 1_000_000_000 / u128::from(hz);
    u64::try_from(ns).ok()
}

/// The clock page's Unix time at boot and the TSC ticks since then, at
/// `hz` (never 0). `None` without the real-time clock.
fn since_boot() -> Option<(u64, u64, u64)> {
    let c = crate::exposed::clock()?;
    let (since, hz) = crate::exposed::tsc_since_boot()?;
    (c.boot_unix != 0 && hz != 0).then_some((c.boot_unix, since, hz))
}

/// The wall-clock time in whole seconds since 1970 ([`unix_ns`] without
/// its 128-bit arithmetic). `None` without the real-time clock.
pub fn unix_secs() -> Option<u64> {
    let (boot, since, hz) = since_boot()?;
    Some(boot.saturating_add(since / hz))
}

/// Milliseconds of the kernel's timer since it started (the clock page's
/// ticks; 0 without a clock page).
pub fn ticks_ms() -> u64 {
    crate::exposed::clock().map_or(0, |c| c.ticks.saturating_mul(1000) / c.tick_hz.max(1))
}

/// Timer ticks since boot, as the exposed clock shows them (0 without it).
pub fn ticks() -> u64 {
    crate::exposed::clock().map_or(0, |c| c.ticks)
}

/// Milliseconds as timer ticks, rounded down (at least one; the kernel's
/// `timer::ms_to_ticks` rounds up): at the kernel's default 250 Hz a tick
/// is 4 ms.
pub fn ms_to_ticks(ms: u64) -> u64 {
    let hz = crate::exposed::clock().map_or(1000, |c| c.tick_hz.max(1));
    (ms.saturating_mul(hz) / 1000).max(1)
}

/// The sleep in progress, in this machine's clock ticks: its deadline (0:
/// none) and its length. Kept here rather than on the stack, and compared
/// by the predicate as a parameter rather than an immediate, so that a
/// restore on another machine (whose clock counts from its own boot) can
/// rebase it ([`rebase`]).
static DEADLINE: AtomicU64 = AtomicU64::new(0);
static LENGTH: AtomicU64 = AtomicU64::new(0);
/// What the last restore found of a sleep in progress: ticks left after
/// rebasing, and the sleep's length (both 0: none).
static REBASED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
/// The sleep predicate's parameter holding the deadline.
const DEADLINE_PARAM: u64 = 0;

/// Sleeps for at least `ms` milliseconds of the kernel's timer ticks, on a
/// wakeup predicate over the clock page's tick count (no CPU used while
/// asleep). Uses predicate index [`WAIT_PRED`](crate::exec::WAIT_PRED).
/// Fails with `Invalid` when the machine has no timer. A checkpoint taken
/// meanwhile carries the time left, not the deadline ([`rebase`]).
pub fn sleep_ms(ms: u64) -> Result<(), crate::Error> {
    use oxok_abi::layout::{CLOCK, Clock};
    let clock = crate::exposed::clock().ok_or(crate::Error::Invalid)?;
    if clock.tick_hz == 0 {
        return Err(crate::Error::Invalid);
    }
    let ticks = ms.saturating_mul(clock.tick_hz).div_ceil(1000);
    let word = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
    let code = oxok_pred::Builder::new()
        .load_u64(word)
        .ge_param(DEADLINE_PARAM as u8)
        .build()
        .map_err(|_| crate::Error::Invalid)?;
    let bytes = code.as_bytes();
    let pred = crate::exec::WAIT_PRED;
    // A sleep in a transfer handler nests inside the one it interrupted,
    // which gets its deadline back (its loop sets the parameter again).
    let outer =
        (LENGTH.swap(ticks, Ordering::Relaxed), DEADLINE.swap(clock.ticks.saturating_add(ticks), Ordering::AcqRel));
    let r = (|| {
        crate::pred::install(pred, bytes)?;
        loop {
            // A restore notice may rebase the deadline at any instruction:
            // the parameter is set from the deadline read after the
            // restore count, and set again if a restore came in between.
            let restores = crate::restore::count();
            let deadline = DEADLINE.load(Ordering::Acquire);
            if crate::exposed::clock().is_none_or(|c| c.ticks >= deadline) {
                return Ok(());
            }
            crate::sys::pred_param(0, pred, DEADLINE_PARAM, deadline)?;
            if crate::restore::count() != restores {
                continue;
            }
            crate::sys::env_sleep(1 << pred)?;
        }
    })();
    LENGTH.store(outer.0, Ordering::Relaxed);
    DEADLINE.store(outer.1, Ordering::Release);
    r
}

/// After a restore: moves the deadline of a sleep in progress from the
/// saving machine's clock (`cut`: its ticks at the checkpoint, `old_hz`:
/// its tick rate) to this one's, keeping the time that was left at the
/// cut. Called by the restore notice (atomics and a system call only).
pub(crate) fn rebase(cut: u64, old_hz: u64) {
    let deadline = DEADLINE.load(Ordering::Acquire);
    let Some(c) = crate::exposed::clock() else { return };
    if deadline == 0 || cut == 0 {
        return;
    }
    let left_then = deadline.saturating_sub(cut);
    let left = if old_hz == 0 || old_hz == c.tick_hz {
        left_then
    } else {
        u64::try_from(u128::from(left_then) * u128::from(c.tick_hz) / u128::from(old_hz)).unwrap_or(u64::MAX)
    };
    let new = c.ticks.saturating_add(left);
    DEADLINE.store(new, Ordering::Release);
    let _ = crate::sys::pred_param(0, crate::exec::WAIT_PRED, DEADLINE_PARAM, new);
    REBASED[0].store(left, Ordering::Relaxed);
    REBASED[1].store(LENGTH.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// The sleep the last restore found in progress: (ticks it had left, in
/// this machine's clock, its length in ticks); `None` if there was none.
/// The first is at most the second when the deadline was rebased.
pub fn restored_sleep() -> Option<(u64, u64)> {
    let len = REBASED[1].load(Ordering::Relaxed);
    (len != 0).then(|| (REBASED[0].load(Ordering::Relaxed), len))
}
