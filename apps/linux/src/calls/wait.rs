//! Waiting for children: `wait4` and `waitid`, over [`crate::children`].
//! A wait sleeps on a wakeup predicate until a child ends or a signal the
//! program does not block arrives (`-EINTR`, restarted after a handler
//! with `SA_RESTART`).

use crate::children::{self, Which};
use crate::errno::{EINVAL, Res};
use crate::{signals, uaccess};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::exec::ExitStatus;

const WNOHANG: u64 = 1;
const WUNTRACED: u64 = 2;
const WEXITED: u64 = 4;
const WCONTINUED: u64 = 8;
const WNOWAIT: u64 = 0x0100_0000;
const WNOTHREAD: u64 = 0x2000_0000;
const WALL: u64 = 0x4000_0000;
const WCLONE: u64 = 0x8000_0000;

/// How a child ended, as Linux reports it: (`CLD_EXITED` 1 or
/// `CLD_KILLED` 2, the exit code or the signal).
fn linux_status(s: ExitStatus) -> (u64, u64) {
    match s.signal() {
        None => (1, (s.code() & 0xff) as u64),
        // A signal's default action, or the kernel destroyed it (a fault
        // nobody handled, by CPU vector, or a kill).
        Some(sig) => (2, sig as u64),
    }
}

/// Waits for a child among `which`; `keep` leaves it waitable.
fn wait_for(which: Which, options: u64, keep: bool) -> Result<Option<(i64, ExitStatus)>, i64> {
    loop {
        if let Some(done) = children::take_ended(which, keep)? {
            return Ok(Some(done));
        }
        if options & WNOHANG != 0 {
            return Ok(None);
        }
        if crate::keyboard::watching() {
            crate::keyboard::check();
        }
        signals::check_interrupted()?;
        children::sleep(which)?;
    }
}

/// `wait4(pid, status, options, rusage)`: `pid` -1 (any child), 0 (a
/// child in the caller's group), below -1 (a child in group -pid), or one
/// child.
pub fn wait4(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (pid, status, options, rusage) = (a[0] as i64 as i32, a[1], a[2], a[3]);
    if options & !(WNOHANG | WUNTRACED | WCONTINUED | WNOTHREAD | WALL | WCLONE) != 0 {
        return Err(EINVAL);
    }
    if status != 0 {
        uaccess::writable(status, 4)?;
    }
    if rusage != 0 {
        uaccess::writable(rusage, 144)?;
    }
    let which = match pid {
        1.. => Which::Pid(i64::from(pid)),
        0 => Which::Group(crate::groups::pgid()),
        -1 => Which::Any,
        _ => Which::Group((-i64::from(pid)) as u64),
    };
    let Some((child, how)) = wait_for(which, options, false)? else { return Ok(0) };
    if status != 0 {
        let word = match linux_status(how) {
            (1, code) => code << 8,
            (_, sig) => sig,
        };
        uaccess::write(status, &(word as u32).to_le_bytes())?;
    }
    if rusage != 0 {
        uaccess::write(rusage, &[0u8; 144])?;
    }
    Ok(child)
}

const P_ALL: u64 = 0;
const P_PID: u64 = 1;
const P_PGID: u64 = 2;

/// `waitid(idtype, id, infop, options, rusage)`: ended children only
/// (`WEXITED` must be asked for); `WNOWAIT` leaves the child waitable.
pub fn waitid(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (idtype, id, info, options, rusage) = (a[0], a[1], a[2], a[3], a[4]);
    if options & !(WNOHANG | WEXITED | WUNTRACED | WCONTINUED | WNOWAIT | WNOTHREAD | WALL | WCLONE) != 0
        || options & WEXITED == 0
    {
        return Err(EINVAL);
    }
    let which = match idtype {
        P_ALL => Which::Any,
        P_PGID if id == 0 => Which::Group(crate::groups::pgid()),
        P_PGID => Which::Group(id),
        P_PID => Which::Pid(id as i64),
        _ => return Err(EINVAL),
    };
    if info != 0 {
        uaccess::writable(info, 128)?;
    }
    if rusage != 0 {
        uaccess::writable(rusage, 144)?;
    }
    let found = wait_for(which, options, options & WNOWAIT != 0)?;
    if info != 0 {
        let mut si = [0u8; 128];
        if let Some((pid, how)) = found {
            let (code, value) = linux_status(how);
            si[0..4].copy_from_slice(&(signals::SIGCHLD as u32).to_le_bytes());
            si[8..12].copy_from_slice(&(code as u32).to_le_bytes());
            si[16..20].copy_from_slice(&(pid as u32).to_le_bytes());
            si[24..28].copy_from_slice(&(value as u32).to_le_bytes());
        }
        uaccess::write(info, &si)?;
    }
    if rusage != 0 {
        uaccess::write(rusage, &[0u8; 144])?;
    }
    Ok(0)
}
