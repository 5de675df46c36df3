//! System information: uname, ids, limits, random bytes.

use crate::errno::{EFAULT, EINVAL, EPERM, ESRCH, Res};
use crate::{random, uaccess};
use oxok_libos::abi::ExceptionFrame;

/// Every id of the one user: root, as a fresh Linux system's only user.
pub fn zero(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(0)
}

/// `struct utsname`: six fields of 65 bytes.
pub fn uname(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let fields: [&[u8]; 6] = [b"Linux", b"oxok", b"6.1.0-oxok", b"#1 Oxok personality", b"x86_64", b"(none)"];
    let mut buf = [0u8; 6 * 65];
    for (i, f) in fields.iter().enumerate() {
        buf[i * 65..i * 65 + f.len()].copy_from_slice(f);
    }
    uaccess::write(a[0], &buf)?;
    Ok(0)
}

const RLIM_INFINITY: u64 = u64::MAX;
const RLIMIT_STACK: u64 = 3;
const RLIMIT_NPROC: u64 = 6;
const RLIMIT_NOFILE: u64 = 7;

/// The processes limit set so far (`RLIM_INFINITY`: none).
static NPROC: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(RLIM_INFINITY);
const RLIM_NLIMITS: u64 = 16;

/// The limits the personality reports: the stack's size, the descriptor
/// table's size, everything else unlimited.
fn limit(resource: u64) -> Result<[u64; 2], i64> {
    match resource {
        RLIMIT_STACK => Ok([crate::layout::STACK_SIZE, crate::layout::STACK_SIZE]),
        RLIMIT_NOFILE => Ok([oxok_libos::fd::MAX_FDS as u64; 2]),
        RLIMIT_NPROC => Ok([NPROC.load(core::sync::atomic::Ordering::Relaxed); 2]),
        r if r < RLIM_NLIMITS => Ok([RLIM_INFINITY; 2]),
        _ => Err(EINVAL),
    }
}

pub fn getrlimit(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let l = limit(a[0])?;
    uaccess::write_u64s(a[1], &l)?;
    Ok(0)
}

pub fn prlimit64(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (pid, resource, new, old) = (a[0], a[1], a[2], a[3]);
    if pid != 0 && pid as i64 != crate::calls::process::linux_pid(oxok_libos::proc::pid()) {
        return Err(ESRCH);
    }
    let l = limit(resource)?;
    if old != 0 {
        uaccess::writable(old, 16)?;
    }
    if new != 0 {
        let mut want = [0u8; 16];
        uaccess::read(new, &mut want)?;
        let soft = u64::from_le_bytes(want[..8].try_into().unwrap_or([0; 8]));
        let hard = u64::from_le_bytes(want[8..].try_into().unwrap_or([0; 8]));
        if soft > hard {
            return Err(EINVAL);
        }
        match resource {
            RLIMIT_NPROC => set_nproc(hard.min(soft), l[0])?,
            // Other limits are fixed; asking for what they are is fine.
            _ if [soft, hard] == l => {}
            _ => return Err(EPERM),
        }
    }
    if old != 0 {
        uaccess::write_u64s(old, &l)?;
    }
    Ok(0)
}

pub fn setrlimit(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    prlimit64(&[0, a[0], a[1], 0, 0, 0], f)
}

/// `RLIMIT_NPROC`: the process moves into a new sub-account of its own
/// whose limit on environments is `n` (itself included), so it and every
/// process it starts from then on — its whole subtree — can never hold
/// more than `n` environments, whatever they do (a fork past it fails
/// with `EAGAIN`). Limits only narrow, as Linux's for an unprivileged
/// process.
fn set_nproc(n: u64, now: u64) -> Result<(), i64> {
    if n > now {
        return Err(EPERM);
    }
    if n == now {
        return Ok(());
    }
    oxok_libos::process::limit(0, oxok_libos::abi::ACCOUNT_UNLIMITED, n).map_err(|e| match e {
        oxok_libos::abi::Error::NoMemory => crate::errno::EAGAIN,
        _ => EINVAL,
    })?;
    NPROC.store(n, core::sync::atomic::Ordering::Relaxed);
    Ok(())
}

const GRND_NONBLOCK: u64 = 1;
const GRND_RANDOM: u64 = 2;
const GRND_INSECURE: u64 = 4;

pub fn getrandom(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (buf, len, flags) = (a[0], a[1], a[2]);
    if flags & !(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE) != 0 {
        return Err(EINVAL);
    }
    let len = len.min(uaccess::CHUNK as u64) as usize;
    let mut bytes = alloc::vec![0u8; len];
    random::fill(&mut bytes);
    uaccess::write(buf, &bytes).map_err(|_| EFAULT)?;
    Ok(len as i64)
}
