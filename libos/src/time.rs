//! Time: the CPU's time-stamp counter.

/// The time-stamp counter (TSC ticks; the rate is in the clock page).
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc only reads a counter; user mode may execute it.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The wall-clock time, nanoseconds since 1970-01-01 UTC: the clock page's
/// time at boot (from the real-time clock) plus the TSC since then. `None`
/// when the kernel could not read the real-time clock.
pub fn unix_ns() -> Option<u64> {
    let c = crate::exposed::clock()?;
    let (since, hz) = crate::exposed::tsc_since_boot()?;
    if c.boot_unix == 0 || hz == 0 {
        return None;
    }
    let ns = u128::from(c.boot_unix) * 1_000_000_000 + u128::from(since) * 1_000_000_000 / u128::from(hz);
    u64::try_from(ns).ok()
}

/// Sleeps for at least `ms` milliseconds of the kernel's timer ticks, on a
/// wakeup predicate over the clock page's tick count (no CPU used while
/// asleep). Uses predicate slot [`WAIT_SLOT`](crate::exec::WAIT_SLOT).
/// Fails with `Invalid` when the machine has no timer.
pub fn sleep_ms(ms: u64) -> Result<(), crate::Error> {
    use oxok_abi::layout::{CLOCK, Clock};
    let clock = crate::exposed::clock().ok_or(crate::Error::Invalid)?;
    if clock.tick_hz == 0 {
        return Err(crate::Error::Invalid);
    }
    let ticks = ms.saturating_mul(clock.tick_hz).div_ceil(1000);
    let deadline = clock.ticks.saturating_add(ticks);
    let word = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
    let code = oxok_pred::Builder::new().load_u64(word).ge_imm(deadline).build().map_err(|_| crate::Error::Invalid)?;
    let bytes = code.as_bytes();
    let slot = crate::exec::WAIT_SLOT;
    crate::sys::pred_install(0, slot, bytes.as_ptr() as u64, bytes.len() as u64)?;
    while crate::exposed::clock().is_some_and(|c| c.ticks < deadline) {
        crate::sys::env_sleep(1 << slot)?;
    }
    Ok(())
}
