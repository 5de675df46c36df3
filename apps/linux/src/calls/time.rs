//! Time from the exposed clock page and the time-stamp counter: no kernel
//! entry. The clock page has no wall-clock time yet, so `CLOCK_REALTIME`
//! counts from boot like `CLOCK_MONOTONIC`.

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

pub fn clock_gettime(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if !known(a[0]) {
        return Err(EINVAL);
    }
    let ns = now_ns();
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
    let ns = now_ns();
    if a[0] != 0 {
        uaccess::write_u64s(a[0], &[ns / 1_000_000_000, (ns % 1_000_000_000) / 1000])?;
    }
    if a[1] != 0 {
        uaccess::write_u64s(a[1], &[0])?;
    }
    Ok(0)
}

pub fn time(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let s = now_ns() / 1_000_000_000;
    if a[0] != 0 {
        uaccess::write_u64s(a[0], &[s])?;
    }
    Ok(s as i64)
}
