//! Time: the CPU's time-stamp counter.

/// The time-stamp counter (TSC ticks; the rate is in the clock page).
#[inline(always)]
pub fn rdtsc() -> u64 {
    // SAFETY: rdtsc only reads a counter; user mode may execute it.
    unsafe { core::arch::x86_64::_rdtsc() }
}
