//! Process calls: ids, exit, the thread pointer, yield.

use crate::errno::{EINVAL, Res};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::{proc, sys};

/// The Linux pid of environment `id` (ids fit in 31 bits: generation and
/// row).
pub fn linux_pid(id: u64) -> i64 {
    (id & 0x7fff_ffff) as i64
}

pub fn getpid(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(linux_pid(proc::pid()))
}

pub fn getppid(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(proc::parent(proc::pid()).map_or(0, linux_pid))
}

pub fn exit(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    oxok_libos::process::exit((a[0] & 0xff) as i32)
}

/// `sched_yield`: another thread of the process runs if one can, else
/// another environment.
pub fn sched_yield(_: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    if crate::threads::count() > 1 {
        crate::threads::block(frame, crate::threads::Wait::Ready, 0);
        return Ok(0);
    }
    let _ = sys::yield_cpu(0);
    Ok(0)
}

/// `set_tid_address`: the calling thread's clear-child-tid word (zeroed
/// and woken when it exits, [`crate::threads`]); returns its tid.
pub fn set_tid_address(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    crate::threads::set_clear_tid(a[0]);
    Ok(crate::threads::tid())
}

pub fn gettid(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(crate::threads::tid())
}

/// `exit`: ends the calling thread; the last one ends the process.
pub fn exit_thread(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    if crate::threads::exit_current(frame) {
        return Ok(0);
    }
    exit(a, frame)
}

pub fn set_robust_list(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    // struct robust_list_head is 24 bytes.
    if a[1] != 24 { Err(EINVAL) } else { Ok(0) }
}

/// `arch_prctl`: the thread pointer ([`crate::tls`]).
pub fn arch_prctl(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    crate::tls::arch_prctl(a[0], a[1])
}

const PR_SET_NAME: u64 = 15;
const PR_GET_NAME: u64 = 16;

/// `prctl`: the process name (`PR_SET_NAME` renames the environment, as
/// `ps` shows it; `PR_GET_NAME`); other options `EINVAL`.
pub fn prctl(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    match a[0] {
        PR_SET_NAME => {
            let name = crate::uaccess::read_vec(a[1], 16)?;
            let len = name.iter().position(|&b| b == 0).unwrap_or(15);
            let name = &name[..len];
            sys::env_rename(0, name.as_ptr() as u64, name.len() as u64).map_err(crate::errno::from_kernel)?;
            Ok(0)
        }
        PR_GET_NAME => {
            let row = oxok_libos::proc::process(proc::pid()).ok_or(EINVAL)?;
            let mut name = [0u8; 16];
            let n = row.name().len().min(15);
            name[..n].copy_from_slice(&row.name().as_bytes()[..n]);
            crate::uaccess::write(a[1], &name).map(|()| 0)
        }
        _ => Err(EINVAL),
    }
}

/// `setpgid(pid, pgid)` for the caller and its children ([`crate::groups`]).
pub fn setpgid(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    crate::groups::set(a[0] as i64 as i32 as i64, a[1] as i64 as i32 as i64).map(|()| 0)
}

pub fn getpgrp(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(crate::groups::pgid() as i64)
}

/// `getpgid(pid)`: the caller's or a child's group; `ESRCH` for others.
pub fn getpgid(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    crate::groups::pgid_of(a[0] as i64 as i32 as i64).map(|g| g as i64).ok_or(crate::errno::ESRCH)
}

/// `getsid(pid)`: the caller's session, which its children share (a child
/// that made its own answers for itself); `ESRCH` for others.
pub fn getsid(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let pid = a[0] as i64 as i32 as i64;
    crate::groups::pgid_of(pid).map(|_| crate::groups::sid() as i64).ok_or(crate::errno::ESRCH)
}

pub fn setsid(_: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    crate::groups::new_session().map(|s| s as i64)
}
