//! Time from the exposed clock page and the time-stamp counter: no kernel
//! entry. `CLOCK_REALTIME` (and `gettimeofday`, `time`) is the wall clock
//! the kernel read from the real-time clock at boot plus the TSC since
//! then; the other clocks count from boot.

use crate::errno::{EINVAL, Res};
use crate::uaccess;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::exposed;

const CLOCK_REALTIME: u64 = 0;
const CLOCK_MONOTONIC: u64 = 1;
const CLOCK_PROCESS_CPUTIME_ID: u64 = 2;
const CLOCK_THREAD_CPUTIME_ID: u64 = 3;
const CLOCK_MONOTONIC_RAW: u64 = 4;
const CLOCK_REALTIME_COARSE: u64 = 5;
const CLOCK_MONOTONIC_COARSE: u64 = 6;
const CLOCK_BOOTTIME: u64 = 7;

/// Nanoseconds since boot.
pub fn now_ns() -> u64 {
    let Some((ticks, hz)) = exposed::tsc_since_boot() else { return 0 };
    if hz == 0 {
        return 0;
    }
    ((u128::from(ticks) * 1_000_000_000) / u128::from(hz)) as u64
}

fn known(clock: u64) -> bool {
    matches!(
        clock,
        CLOCK_REALTIME
            | CLOCK_MONOTONIC
            | CLOCK_PROCESS_CPUTIME_ID
            | CLOCK_THREAD_CPUTIME_ID
            | CLOCK_MONOTONIC_RAW
            | CLOCK_REALTIME_COARSE
            | CLOCK_MONOTONIC_COARSE
            | CLOCK_BOOTTIME
    )
}

/// Nanoseconds since 1970-01-01 UTC (since boot if the kernel found no
/// real-time clock).
pub fn realtime_ns() -> u64 {
    oxok_libos::time::unix_ns().unwrap_or_else(now_ns)
}

pub fn clock_gettime(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if !known(a[0]) {
        return Err(EINVAL);
    }
    let ns = if matches!(a[0], CLOCK_REALTIME | CLOCK_REALTIME_COARSE) { realtime_ns() } else { now_ns() };
    uaccess::write_u64s(a[1], &[ns / 1_000_000_000, ns % 1_000_000_000]).map(|()| 0)
}

pub fn clock_getres(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if !known(a[0]) {
        return Err(EINVAL);
    }
    if a[1] != 0 {
        uaccess::write_u64s(a[1], &[0, 1])?;
    }
    Ok(0)
}

pub fn gettimeofday(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let ns = realtime_ns();
    if a[0] != 0 {
        uaccess::write_u64s(a[0], &[ns / 1_000_000_000, (ns % 1_000_000_000) / 1000])?;
    }
    if a[1] != 0 {
        uaccess::write_u64s(a[1], &[0])?;
    }
    Ok(0)
}

pub fn time(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let s = realtime_ns() / 1_000_000_000;
    if a[0] != 0 {
        uaccess::write_u64s(a[0], &[s])?;
    }
    Ok(s as i64)
}

/// The wakeup-predicate index the personality sleeps on (the libOS keeps
/// 2 for the console and 3 for `wait`).
const SLEEP_SLOT: u64 = 1;

/// Sleeps until `deadline` (nanoseconds since boot): the environment
/// waits on a predicate over the clock page's tick count, in whole timer
/// ticks (so at least as long as asked), then until the TSC passes the
/// deadline.
fn sleep_until(deadline: u64) -> Res {
    let clock = oxok_libos::exposed::clock().ok_or(EINVAL)?;
    let now = now_ns();
    if deadline > now && clock.tick_hz > 0 {
        let wait = u128::from(deadline - now) * u128::from(clock.tick_hz);
        let ticks = clock.ticks.saturating_add(wait.div_ceil(1_000_000_000) as u64);
        let word = oxok_libos::abi::layout::CLOCK + core::mem::offset_of!(oxok_libos::abi::layout::Clock, ticks) as u64;
        let mut b = oxok_pred::Builder::new();
        b.load_u64(word).ge_imm(ticks);
        crate::timers::wake_on(b.or());
        let code = b.build().map_err(|_| EINVAL)?;
        let bytes = code.as_bytes();
        crate::signals::check_interrupted()?;
        oxok_libos::pred::install(SLEEP_SLOT, bytes).map_err(crate::errno::from_kernel)?;
        oxok_libos::sys::env_sleep(1 << SLEEP_SLOT).map_err(crate::errno::from_kernel)?;
    }
    while now_ns() < deadline {
        crate::signals::check_interrupted()?;
        let _ = oxok_libos::sys::yield_cpu(0);
    }
    Ok(0)
}

/// Writes the time left until `deadline` as a `timespec` at `addr` (for
/// a sleep a signal ended), if `addr` is not 0.
fn write_left(addr: u64, deadline: u64) -> Result<(), i64> {
    if addr == 0 {
        return Ok(());
    }
    let left = deadline.saturating_sub(now_ns());
    uaccess::write_u64s(addr, &[left / 1_000_000_000, left % 1_000_000_000])
}

/// A `struct timespec` at `addr` in nanoseconds (`EINVAL` if malformed).
fn timespec_ns(addr: u64) -> Result<u64, i64> {
    let raw = uaccess::read_vec(addr, 16)?;
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
    let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(EINVAL);
    }
    Ok((sec as u64).saturating_mul(1_000_000_000).saturating_add(nsec as u64))
}

/// Sleeps until `deadline`; with other threads, they run meanwhile
/// (`true`: the frame now holds another thread, which the caller returns
/// to at once).
fn sleep_or_switch(deadline: u64, frame: &mut ExceptionFrame) -> Result<bool, i64> {
    if crate::threads::count() > 1 {
        crate::threads::block(frame, crate::threads::Wait::Sleep { deadline }, 0);
        return Ok(true);
    }
    sleep_until(deadline).map(|_| false)
}

pub fn nanosleep(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let ns = timespec_ns(a[0])?;
    if a[1] != 0 {
        uaccess::writable(a[1], 16)?;
    }
    let deadline = now_ns().saturating_add(ns);
    match sleep_or_switch(deadline, frame) {
        Ok(true) => return Ok(0),
        Err(crate::errno::EINTR) => {
            write_left(a[1], deadline)?;
            return Err(crate::errno::EINTR);
        }
        r => r?,
    };
    if a[1] != 0 {
        uaccess::write_u64s(a[1], &[0, 0])?;
    }
    Ok(0)
}

const TIMER_ABSTIME: u64 = 1;

/// The boot-relative time (what sleeps wait for) at which the wall clock
/// reads `realtime` (ns since the epoch).
pub fn boot_from_realtime(realtime: u64) -> u64 {
    let (wall, boot) = (realtime_ns(), now_ns());
    realtime.saturating_sub(wall).saturating_add(boot)
}

pub fn clock_nanosleep(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    if !known(a[0]) || a[1] & !TIMER_ABSTIME != 0 {
        return Err(EINVAL);
    }
    let ns = timespec_ns(a[2])?;
    let deadline = match (a[1] & TIMER_ABSTIME != 0, a[0]) {
        (true, CLOCK_REALTIME | CLOCK_REALTIME_COARSE) => boot_from_realtime(ns),
        (true, _) => ns,
        (false, _) => now_ns().saturating_add(ns),
    };
    match sleep_or_switch(deadline, frame) {
        Ok(true) => return Ok(0),
        Err(crate::errno::EINTR) => {
            if a[1] & TIMER_ABSTIME == 0 {
                write_left(a[3], deadline)?;
            }
            return Err(crate::errno::EINTR);
        }
        r => r?,
    };
    if a[1] & TIMER_ABSTIME == 0 && a[3] != 0 {
        uaccess::write_u64s(a[3], &[0, 0])?;
    }
    Ok(0)
}
