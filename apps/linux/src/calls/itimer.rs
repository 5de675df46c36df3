//! `alarm`, `getitimer`, `setitimer`: the real-time timer of
//! [`crate::timers`] (`ITIMER_REAL`); the CPU-time timers are refused.

use crate::errno::{EINVAL, Res};
use crate::{timers, uaccess};
use oxok_libos::abi::ExceptionFrame;

const ITIMER_REAL: u64 = 0;
const NS_PER_US: u64 = 1_000;
const NS_PER_S: u64 = 1_000_000_000;

/// `alarm(seconds)`: arms (0: disarms) the timer once; returns the
/// seconds the old one had left, rounded to the nearest (at least 1 if
/// it was armed), as Linux does.
pub fn alarm(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let secs = a[0] as u32 as u64;
    let (left, _) = timers::set(secs * NS_PER_S, 0);
    Ok(if left == 0 { 0 } else { ((left + NS_PER_S / 2) / NS_PER_S).max(1) as i64 })
}

/// A `struct timeval` pair (interval, value) at `addr` in ns.
fn read_itimerval(addr: u64) -> Result<(u64, u64), i64> {
    let mut w = [0u64; 4];
    for (i, v) in w.iter_mut().enumerate() {
        *v = uaccess::read_u64(addr + 8 * i as u64)?;
    }
    let tv = |sec: u64, usec: u64| {
        if (sec as i64) < 0 || usec >= 1_000_000 {
            Err(EINVAL)
        } else {
            Ok(sec.saturating_mul(NS_PER_S).saturating_add(usec * NS_PER_US))
        }
    };
    Ok((tv(w[0], w[1])?, tv(w[2], w[3])?))
}

/// Writes (interval, value) in ns as a `struct itimerval` at `addr`
/// (microseconds rounded up, so an armed timer never reads as 0).
fn write_itimerval(addr: u64, (value, interval): (u64, u64)) -> Result<(), i64> {
    let tv = |ns: u64| [ns / NS_PER_S, (ns % NS_PER_S).div_ceil(NS_PER_US)];
    let (i, v) = (tv(interval), tv(value));
    let fix = |t: [u64; 2]| if t[1] == 1_000_000 { [t[0] + 1, 0] } else { t };
    let (i, v) = (fix(i), fix(v));
    uaccess::write_u64s(addr, &[i[0], i[1], v[0], v[1]])
}

pub fn getitimer(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[0] != ITIMER_REAL {
        return Err(EINVAL);
    }
    write_itimerval(a[1], timers::get()).map(|()| 0)
}

/// `setitimer(which, new, old)`: a NULL `new` disarms, as Linux takes it.
pub fn setitimer(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[0] != ITIMER_REAL {
        return Err(EINVAL);
    }
    let (interval, value) = if a[1] == 0 { (0, 0) } else { read_itimerval(a[1])? };
    if a[2] != 0 {
        uaccess::writable(a[2], 32)?;
    }
    let old = timers::set(value, interval);
    if a[2] != 0 {
        write_itimerval(a[2], old)?;
    }
    Ok(0)
}
