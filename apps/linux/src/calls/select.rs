//! `select` and `pselect6`: the descriptor sets become `poll` records
//! ([`crate::calls::poll::wait_ready`]) and the answer goes back into the
//! sets. A descriptor that is not open is `EBADF`, as Linux says.

use crate::calls::poll::{self, Deadline, POLLERR, POLLHUP, POLLIN, POLLNVAL, POLLOUT};
use crate::errno::{EBADF, EINVAL, Res};
use crate::uaccess;
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;

/// `FD_SETSIZE`.
const SETSIZE: u64 = 1024;

/// The `nfds` bits of the set at `addr` (none if `addr` is 0).
fn read_set(addr: u64, nfds: u64) -> Result<Vec<u64>, i64> {
    let words = nfds.div_ceil(64) as usize;
    if addr == 0 {
        return Ok(vec![0; words]);
    }
    let raw = uaccess::read_vec(addr, words * 8)?;
    let mut set: Vec<u64> = raw.chunks(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8]))).collect();
    if let Some(last) = set.last_mut()
        && !nfds.is_multiple_of(64)
    {
        *last &= (1 << (nfds % 64)) - 1;
    }
    Ok(set)
}

fn has(set: &[u64], fd: usize) -> bool {
    set[fd / 64] & (1 << (fd % 64)) != 0
}

fn write_set(addr: u64, set: &[u64]) -> Result<(), i64> {
    if addr == 0 {
        return Ok(());
    }
    uaccess::write_u64s(addr, set)
}

/// The common part: sets at `r`, `w`, `e` for `nfds` descriptors, a
/// deadline ([`Deadline::NOW`]: do not wait).
fn select_sets(nfds: u64, r: u64, w: u64, e: u64, deadline: Option<Deadline>) -> Res {
    if nfds > SETSIZE {
        return Err(EINVAL);
    }
    let (rs, ws, es) = (read_set(r, nfds)?, read_set(w, nfds)?, read_set(e, nfds)?);
    for (addr, set) in [(r, &rs), (w, &ws), (e, &es)] {
        if addr != 0 {
            uaccess::writable(addr, set.len() as u64 * 8)?;
        }
    }
    let mut records = Vec::new();
    for fd in 0..nfds as usize {
        let mut want = 0;
        if has(&rs, fd) {
            want |= POLLIN;
        }
        if has(&ws, fd) {
            want |= POLLOUT;
        }
        if want != 0 || has(&es, fd) {
            records.push((fd as i32, want, 0u16));
        }
    }
    poll::wait_ready(&mut records, deadline)?;
    if records.iter().any(|r| r.2 & POLLNVAL != 0) {
        return Err(EBADF);
    }
    let words = nfds.div_ceil(64) as usize;
    let (mut ro, mut wo, eo) = (vec![0u64; words], vec![0u64; words], vec![0u64; words]);
    let mut count = 0;
    for &(fd, want, got) in &records {
        let bit = 1u64 << (fd % 64);
        let i = fd as usize / 64;
        if want & POLLIN != 0 && got & (POLLIN | POLLHUP | POLLERR) != 0 {
            ro[i] |= bit;
            count += 1;
        }
        if want & POLLOUT != 0 && got & (POLLOUT | POLLERR) != 0 {
            wo[i] |= bit;
            count += 1;
        }
    }
    write_set(r, &ro)?;
    write_set(w, &wo)?;
    write_set(e, &eo)?;
    Ok(count)
}

/// A timeout of `sec` seconds and `nsec` nanoseconds as a deadline.
fn deadline_of(sec: i64, nsec: i64) -> Result<Option<Deadline>, i64> {
    if sec < 0 || !(0..1_000_000_000).contains(&nsec) {
        return Err(EINVAL);
    }
    if sec == 0 && nsec == 0 {
        return Ok(Some(Deadline::NOW));
    }
    poll::deadline(sec.saturating_mul(1000).saturating_add((nsec + 999_999) / 1_000_000))
}

/// `select(nfds, readfds, writefds, exceptfds, timeval)`: the timeout is
/// left as it was (Linux writes the time left; programs may not rely on
/// either).
pub fn select(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let deadline = if a[4] == 0 {
        None
    } else {
        let raw = uaccess::read_vec(a[4], 16)?;
        let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
        let usec = i64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
        if !(0..1_000_000).contains(&usec) {
            return Err(EINVAL);
        }
        deadline_of(sec, usec * 1000)?
    };
    select_sets(a[0], a[1], a[2], a[3], deadline)
}

/// `pselect6(nfds, readfds, writefds, exceptfds, timespec, {sigmask, size})`.
pub fn pselect6(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let deadline = if a[4] == 0 {
        None
    } else {
        let raw = uaccess::read_vec(a[4], 16)?;
        let sec = i64::from_le_bytes(raw[..8].try_into().unwrap_or([0; 8]));
        let nsec = i64::from_le_bytes(raw[8..].try_into().unwrap_or([0; 8]));
        deadline_of(sec, nsec)?
    };
    let mask = if a[5] != 0 {
        let pair = uaccess::read_vec(a[5], 16)?;
        let set = u64::from_le_bytes(pair[..8].try_into().unwrap_or([0; 8]));
        let size = u64::from_le_bytes(pair[8..].try_into().unwrap_or([0; 8]));
        poll::sigmask_arg(set, size)?
    } else {
        None
    };
    poll::with_mask(mask, || select_sets(a[0], a[1], a[2], a[3], deadline))
}
