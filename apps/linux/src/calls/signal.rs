//! Signal bookkeeping: dispositions, the mask and the alternate stack are
//! recorded and reported back as Linux does; delivering signals to Linux
//! programs (`SA_RESTORER` frames) is not built yet.

use crate::errno::{EINVAL, Res};
use crate::uaccess;
use oxok_libos::abi::ExceptionFrame;
use spin::Mutex;

/// Signals 1..=64.
const NSIG: u64 = 64;
const SIGKILL: u64 = 9;
const SIGSTOP: u64 = 19;

/// `struct sigaction` as the kernel sees it: handler, flags, restorer,
/// mask (32 bytes).
static ACTIONS: Mutex<[[u64; 4]; NSIG as usize]> = Mutex::new([[0; 4]; NSIG as usize]);
static MASK: Mutex<u64> = Mutex::new(0);
/// `stack_t`: sp, flags (+pad), size.
static ALTSTACK: Mutex<[u64; 3]> = Mutex::new([0, 2 /* SS_DISABLE */, 0]);

pub fn rt_sigaction(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (sig, act, old, size) = (a[0], a[1], a[2], a[3]);
    if sig == 0 || sig > NSIG || size != 8 {
        return Err(EINVAL);
    }
    let new = if act != 0 {
        let raw = uaccess::read_vec(act, 32)?;
        let w = |i: usize| u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        Some([w(0), w(1), w(2), w(3)])
    } else {
        None
    };
    if new.is_some() && (sig == SIGKILL || sig == SIGSTOP) {
        return Err(EINVAL);
    }
    if old != 0 {
        uaccess::writable(old, 32)?;
    }
    let mut actions = ACTIONS.lock();
    let slot = &mut actions[(sig - 1) as usize];
    let previous = *slot;
    if let Some(n) = new {
        *slot = n;
    }
    drop(actions);
    if old != 0 {
        uaccess::write_u64s(old, &previous)?;
    }
    Ok(0)
}

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;
/// SIGKILL and SIGSTOP can never be blocked.
const UNBLOCKABLE: u64 = (1 << (SIGKILL - 1)) | (1 << (SIGSTOP - 1));

pub fn rt_sigprocmask(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (how, set, old, size) = (a[0], a[1], a[2], a[3]);
    if size != 8 {
        return Err(EINVAL);
    }
    let new = if set != 0 { Some(uaccess::read_u64(set)?) } else { None };
    if old != 0 {
        uaccess::writable(old, 8)?;
    }
    let mut mask = MASK.lock();
    let previous = *mask;
    if let Some(s) = new {
        *mask = match how {
            SIG_BLOCK => previous | s,
            SIG_UNBLOCK => previous & !s,
            SIG_SETMASK => s,
            _ => return Err(EINVAL),
        } & !UNBLOCKABLE;
    }
    drop(mask);
    if old != 0 {
        uaccess::write_u64s(old, &[previous])?;
    }
    Ok(0)
}

pub fn sigaltstack(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (ss, old) = (a[0], a[1]);
    let new = if ss != 0 {
        let raw = uaccess::read_vec(ss, 24)?;
        let w = |i: usize| u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        Some([w(0), w(1) & 0xffff_ffff, w(2)])
    } else {
        None
    };
    let mut alt = ALTSTACK.lock();
    let previous = *alt;
    if let Some(n) = new {
        *alt = n;
    }
    drop(alt);
    if old != 0 {
        uaccess::write_u64s(old, &previous)?;
    }
    Ok(0)
}

/// Signals whose default action is to be ignored.
fn ignored_by_default(sig: u64) -> bool {
    matches!(sig, 17 /* SIGCHLD */ | 18 /* SIGCONT */ | 23 /* SIGURG */ | 28 /* SIGWINCH */)
}

const SIG_DFL: u64 = 0;
const SIG_IGN: u64 = 1;

/// A signal to the caller itself: the default action ends it (status
/// 128 plus the signal, as a shell reports a killed child), an ignored one
/// does nothing; running a handler is not built yet (`ENOSYS`).
fn to_self(sig: u64) -> Res {
    if sig == 0 {
        return Ok(0);
    }
    let handler = ACTIONS.lock()[(sig - 1) as usize][0];
    match handler {
        SIG_IGN => Ok(0),
        SIG_DFL if ignored_by_default(sig) => Ok(0),
        SIG_DFL => oxok_libos::process::exit(128 + sig as i32),
        _ => Err(crate::errno::ENOSYS),
    }
}

/// `kill(pid, sig)`: to itself as [`to_self`]; to another process through
/// the libOS's signals (accepted only from ancestors, as there).
pub fn kill(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (pid, sig) = (a[0] as i64 as i32, a[1]);
    if sig > NSIG {
        return Err(EINVAL);
    }
    let me = crate::calls::process::linux_pid(oxok_libos::proc::pid());
    if i64::from(pid) == me || pid == 0 {
        return to_self(sig);
    }
    if pid < 0 {
        return Err(crate::errno::ESRCH);
    }
    if sig == 0 {
        return if oxok_libos::proc::alive(pid as u64) { Ok(0) } else { Err(crate::errno::ESRCH) };
    }
    match oxok_libos::signal::kill(pid as u64, sig as i32) {
        Ok(()) => Ok(0),
        Err(oxok_libos::Error::Denied) => Err(crate::errno::EPERM),
        Err(_) => Err(crate::errno::ESRCH),
    }
}

/// `tgkill(tgid, tid, sig)`: one thread per process, so as `kill(tid)`.
pub fn tgkill(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    kill(&[a[1], a[2], 0, 0, 0, 0], f)
}

/// `tkill(tid, sig)`.
pub fn tkill(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    kill(a, f)
}
