//! `futex`: waits and wakes between the threads of a process
//! ([`crate::threads`]). A wait compares the word first (`EAGAIN` if it
//! changed), then the thread waits for a wake, its timeout (`ETIMEDOUT`)
//! or a signal (`EINTR`) while the others run. Process-shared futexes
//! are the process's own too: memory is never shared writable between
//! Linux processes here.

use crate::errno::{EAGAIN, EINVAL, ENOSYS, Res};
use crate::threads::{self, Wait};
use crate::uaccess;
use oxok_libos::abi::ExceptionFrame;

const FUTEX_WAIT: u64 = 0;
const FUTEX_WAKE: u64 = 1;
const FUTEX_REQUEUE: u64 = 3;
const FUTEX_CMP_REQUEUE: u64 = 4;
const FUTEX_WAIT_BITSET: u64 = 9;
const FUTEX_WAKE_BITSET: u64 = 10;
const FUTEX_PRIVATE_FLAG: u64 = 128;
const FUTEX_CLOCK_REALTIME: u64 = 256;

fn word(addr: u64) -> Result<u32, i64> {
    let mut b = [0u8; 4];
    uaccess::read(addr, &mut b)?;
    Ok(u32::from_le_bytes(b))
}

/// A `struct timespec` at `addr`, in nanoseconds.
fn timespec(addr: u64) -> Result<u64, i64> {
    let raw = uaccess::read_vec(addr, 16)?;
    let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
    let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(EINVAL);
    }
    Ok((sec as u64).saturating_mul(1_000_000_000).saturating_add(nsec as u64))
}

/// `futex(uaddr, op, val, timeout | val2, uaddr2, val3)`.
pub fn futex(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let (uaddr, op, val, timeout, uaddr2, val3) = (a[0], a[1], a[2] as u32, a[3], a[4], a[5] as u32);
    if !uaddr.is_multiple_of(4) {
        return Err(EINVAL);
    }
    match op & !(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME) {
        cmd @ (FUTEX_WAIT | FUTEX_WAIT_BITSET) => {
            let bitset = if cmd == FUTEX_WAIT { u32::MAX } else { val3 };
            if bitset == 0 {
                return Err(EINVAL);
            }
            if word(uaddr)? != val {
                return Err(EAGAIN);
            }
            // FUTEX_WAIT's timeout is relative; FUTEX_WAIT_BITSET's is
            // absolute, on the wall clock with FUTEX_CLOCK_REALTIME, else
            // on the monotonic clock (which counts from boot).
            let deadline = match timeout {
                0 => None,
                t if cmd == FUTEX_WAIT => Some(crate::calls::time::now_ns().saturating_add(timespec(t)?)),
                t if op & FUTEX_CLOCK_REALTIME != 0 => Some(crate::calls::time::boot_from_realtime(timespec(t)?)),
                t => Some(timespec(t)?),
            };
            crate::signals::check_interrupted()?;
            threads::block(frame, Wait::Futex { addr: uaddr, bitset, deadline }, 0);
            Ok(0)
        }
        cmd @ (FUTEX_WAKE | FUTEX_WAKE_BITSET) => {
            let bitset = if cmd == FUTEX_WAKE { u32::MAX } else { val3 };
            if bitset == 0 {
                return Err(EINVAL);
            }
            Ok(threads::wake(uaddr, bitset, u64::from(val)) as i64)
        }
        cmd @ (FUTEX_REQUEUE | FUTEX_CMP_REQUEUE) => {
            if !uaddr2.is_multiple_of(4) {
                return Err(EINVAL);
            }
            uaccess::read_vec(uaddr2, 4)?;
            if cmd == FUTEX_CMP_REQUEUE && word(uaddr)? != val3 {
                return Err(EAGAIN);
            }
            let woken = threads::wake(uaddr, u32::MAX, u64::from(val));
            let moved = threads::requeue(uaddr, uaddr2, timeout & 0x7fff_ffff);
            Ok((woken + moved) as i64)
        }
        _ => Err(ENOSYS),
    }
}
