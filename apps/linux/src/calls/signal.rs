//! Signal calls: dispositions (`rt_sigaction`), the mask
//! (`rt_sigprocmask`), the alternate stack, sending (`kill`, `tgkill`,
//! `tkill`), waiting for one (`rt_sigsuspend`, `pause`), what is pending,
//! and returning from a handler (`rt_sigreturn`). The state and delivery
//! are [`crate::signals`]; the frame is [`crate::sigframe`].

use crate::errno::{EINTR, EINVAL, EPERM, ESRCH, Res};
use crate::signals::{self, ALTSTACK, MASK, NSIG, SIGKILL, SIGSTOP, UNBLOCKABLE};
use crate::uaccess;
use core::sync::atomic::Ordering;
use oxok_libos::abi::ExceptionFrame;

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
    let previous = signals::ACTIONS.lock()[(sig - 1) as usize];
    if let Some(n) = new {
        signals::set_action(sig, n);
    }
    if old != 0 {
        uaccess::write_u64s(old, &previous)?;
    }
    Ok(0)
}

const SIG_BLOCK: u64 = 0;
const SIG_UNBLOCK: u64 = 1;
const SIG_SETMASK: u64 = 2;

pub fn rt_sigprocmask(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (how, set, old, size) = (a[0], a[1], a[2], a[3]);
    if size != 8 {
        return Err(EINVAL);
    }
    let new = if set != 0 { Some(uaccess::read_u64(set)?) } else { None };
    if new.is_some() && how > SIG_SETMASK {
        return Err(EINVAL);
    }
    if old != 0 {
        uaccess::writable(old, 8)?;
    }
    let previous = MASK.load(Ordering::Acquire);
    if let Some(s) = new {
        let next = match how {
            SIG_BLOCK => previous | s,
            SIG_UNBLOCK => previous & !s,
            _ => s,
        };
        MASK.store(next & !UNBLOCKABLE, Ordering::Release);
    }
    if old != 0 {
        uaccess::write_u64s(old, &[previous])?;
    }
    Ok(0)
}

pub fn rt_sigpending(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[1] != 8 {
        return Err(EINVAL);
    }
    uaccess::write_u64s(a[0], &[signals::pending() & MASK.load(Ordering::Acquire)]).map(|()| 0)
}

pub fn sigaltstack(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (ss, old) = (a[0], a[1]);
    let new = if ss != 0 {
        let raw = uaccess::read_vec(ss, 24)?;
        let w = |i: usize| u64::from_le_bytes(raw[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        let flags = w(1) & 0xffff_ffff;
        if flags & !2 != 0 {
            return Err(EINVAL);
        }
        if flags == 0 && w(2) < 2048 {
            return Err(crate::errno::ENOMEM);
        }
        Some([w(0), flags, w(2)])
    } else {
        None
    };
    if old != 0 {
        uaccess::writable(old, 24)?;
    }
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

/// `kill(pid, sig)`: to the caller itself (or its group, which is itself)
/// the signal is made pending and delivered as the call returns; to
/// another process it goes through the libOS's signals (accepted only
/// from an ancestor, as there: a parent can signal its children).
pub fn kill(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (pid, sig) = (a[0] as i64 as i32, a[1]);
    if sig > NSIG {
        return Err(EINVAL);
    }
    let me = crate::calls::process::linux_pid(oxok_libos::proc::pid());
    if i64::from(pid) == me {
        signals::raise(sig);
        return Ok(0);
    }
    if pid == 0 || pid < -1 {
        let group = if pid == 0 { crate::groups::pgid() } else { (-i64::from(pid)) as u64 };
        return crate::groups::kill_group(group, sig).map(|_| 0);
    }
    if pid < 0 {
        return Err(ESRCH);
    }
    if sig == 0 {
        return if oxok_libos::proc::alive(pid as u64) { Ok(0) } else { Err(ESRCH) };
    }
    if sig >= oxok_libos::signal::NSIG as u64 {
        return Err(EINVAL);
    }
    match oxok_libos::signal::kill(pid as u64, sig as i32) {
        Ok(()) => Ok(0),
        Err(oxok_libos::Error::Denied) => Err(EPERM),
        Err(_) => Err(ESRCH),
    }
}

/// `tgkill(tgid, tid, sig)`: to a thread of this process, the signal is
/// the process's (pending and masks are per process but for the running
/// thread's mask); else as `kill(tid)`.
pub fn tgkill(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    tkill(&[a[1], a[2], 0, 0, 0, 0], f)
}

/// `tkill(tid, sig)`.
pub fn tkill(a: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    if a[1] <= NSIG && crate::threads::is_ours(a[0] as i64 as i32 as i64) {
        signals::raise(a[1]);
        return Ok(0);
    }
    kill(a, f)
}

/// `rt_sigreturn`: back from a handler ([`crate::sigframe::restore`]).
pub fn rt_sigreturn(_: &[u64; 6], f: &mut ExceptionFrame) -> Res {
    if crate::sigframe::restore(f).is_err() {
        crate::die_quietly(signals::SIGSEGV);
    }
    crate::keep_frame();
    Ok(0)
}

/// Sleeps until a signal the program does not block is pending.
fn sleep_for_signal() -> Res {
    while !signals::interrupted() {
        let keys = crate::keyboard::watching();
        if keys {
            crate::keyboard::check();
        }
        let mut b = oxok_pred::Builder::new();
        crate::timers::wake_on(&mut b);
        if keys {
            crate::keyboard::wake_on(&mut b);
        }
        let code = b.build().map_err(|_| EINVAL)?;
        let bytes = code.as_bytes();
        oxok_libos::pred::install(SIGNAL_SLOT, bytes).map_err(crate::errno::from_kernel)?;
        oxok_libos::sys::env_sleep(1 << SIGNAL_SLOT).map_err(crate::errno::from_kernel)?;
    }
    Err(EINTR)
}

/// The predicate index `pause` and `rt_sigsuspend` sleep on (2 is the
/// console's, which a program in these calls is not reading).
const SIGNAL_SLOT: u64 = 2;

pub fn pause(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    sleep_for_signal()
}

/// `rt_sigsuspend(mask, size)`: the mask is replaced while it sleeps; the
/// handler runs with it, and the old one comes back when it returns
/// (the frame saves the mask in force at delivery, which is restored
/// here only if no handler ran).
pub fn rt_sigsuspend(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    if a[1] != 8 {
        return Err(EINVAL);
    }
    let new = uaccess::read_u64(a[0])?;
    let old = MASK.swap(new & !UNBLOCKABLE, Ordering::AcqRel);
    let r = sleep_for_signal();
    SUSPEND_MASK.store(old | SUSPENDED, Ordering::Release);
    crate::attention::raise();
    r
}

/// The mask `rt_sigsuspend` replaced, to restore once the handler's frame
/// is pushed (bit 63 set: a value is waiting).
pub static SUSPEND_MASK: core::sync::atomic::AtomicU64 = core::sync::atomic::AtomicU64::new(0);
pub const SUSPENDED: u64 = 1 << 63;
