//! The Linux program's children: the environments its `fork`, `vfork` and
//! `clone` made (the personality holds each one's capability), how to find
//! one that has ended, reap it, and sleep until one ends.
//!
//! A child's end is read from the kernel's exposed environment table (its
//! row turns `ENV_ZOMBIE`); sleeping uses one wakeup predicate over the
//! rows of the children waited for, the personality's pending-signal word
//! (a signal interrupts the wait) and, when more children are waited for
//! than one predicate can watch, a short clock deadline after which the
//! rest are looked at again.

use crate::calls::process::linux_pid;
use crate::errno::{ECHILD, EINVAL, Res};
use alloc::vec::Vec;
use oxok_libos::abi::layout::{CLOCK, Clock, ENV_TABLE, ENV_TABLE_ROWS};
use oxok_libos::abi::{ENV_ZOMBIE, EnvEntry};
use oxok_libos::exec::{Child, ExitStatus};
use oxok_libos::{exposed, sys};
use spin::Mutex;

/// The children not reaped yet, oldest first, each with whether its end
/// was already noticed for `SIGCHLD`.
static KIDS: Mutex<Vec<(Child, bool)>> = Mutex::new(Vec::new());

/// Most children one predicate watches (4 instructions each of 64).
const WATCHED: usize = 12;

/// The wakeup-predicate index waits use (the libOS's `exec::wait` index:
/// the personality never runs that while a Linux call waits).
const WAIT_PRED: u64 = oxok_libos::exec::WAIT_PRED;

/// Records a new child.
pub fn add(child: Child) {
    KIDS.lock().push((child, false));
}

/// In a fork child: the parent's children are not this process's (the
/// capabilities named are the parent's), so the list starts empty.
pub fn forget_all() {
    KIDS.lock().clear();
}

/// Which children a wait is for.
#[derive(Clone, Copy)]
pub enum Which {
    Any,
    Pid(i64),
    /// The children in a process group.
    Group(u64),
}

impl Which {
    fn matches(self, c: &Child) -> bool {
        match self {
            Which::Any => true,
            Which::Pid(p) => linux_pid(c.id) == p,
            Which::Group(g) => crate::groups::of_child(linux_pid(c.id)) == Some(g),
        }
    }
}

/// True if child `c` has ended (its row is a zombie, or gone).
fn ended(c: &Child) -> bool {
    exposed::env_status(c.id).is_none_or(|s| s == ENV_ZOMBIE)
}

/// An ended child among `which`: its pid and how it ended, reaped unless
/// `keep`. `ECHILD` if no child matches at all; `Ok(None)` if none ended.
pub fn take_ended(which: Which, keep: bool) -> Result<Option<(i64, ExitStatus)>, i64> {
    let mut kids = KIDS.lock();
    if !kids.iter().any(|(c, _)| which.matches(c)) {
        return Err(ECHILD);
    }
    let Some(i) = kids.iter().position(|(c, _)| which.matches(c) && ended(c)) else { return Ok(None) };
    let id = kids[i].0.id;
    let pid = linux_pid(id);
    if keep {
        let status = exposed::env_entry(id).map_or(ExitStatus::Killed(None), |r| ExitStatus::from_raw(r.exit_status));
        return Ok(Some((pid, status)));
    }
    let (child, noticed) = kids.remove(i);
    if !noticed {
        crate::signals::child_ended();
    }
    let status = match sys::env_reap(child.slot) {
        Ok([raw]) => ExitStatus::from_raw(raw),
        Err(_) => {
            let _ = sys::cap_drop(child.slot);
            ExitStatus::Killed(None)
        }
    };
    Ok(Some((pid, status)))
}

/// True if some child ended since the last call (for `SIGCHLD`); marks
/// those ends noticed. Does not reap.
pub fn newly_ended() -> bool {
    let mut any = false;
    for (c, noticed) in KIDS.lock().iter_mut().filter(|(_, n)| !*n) {
        if ended(c) {
            *noticed = true;
            any = true;
        }
    }
    any
}

/// Sleeps until a child among `which` may have ended or a signal the
/// program does not block is pending (`signals`: the address of the
/// pending word and the mask of signals that interrupt).
pub fn sleep(which: Which) -> Res {
    let ids: Vec<u64> = KIDS.lock().iter().filter(|(c, _)| which.matches(c)).map(|(c, _)| c.id).collect();
    let mut b = oxok_pred::Builder::new();
    for (n, id) in ids.iter().take(WATCHED).enumerate() {
        let row = (*id as usize) & (ENV_TABLE_ROWS - 1);
        let base = ENV_TABLE + (row * core::mem::size_of::<EnvEntry>()) as u64;
        if n > 0 {
            b.or();
        }
        b.load_u32(base + core::mem::offset_of!(EnvEntry, id) as u64).ne_imm(id & 0xffff_ffff);
        b.or().load_u32(base + core::mem::offset_of!(EnvEntry, status) as u64).eq_imm(u64::from(ENV_ZOMBIE));
    }
    if !ids.is_empty() {
        b.or();
    }
    crate::timers::wake_on(&mut b);
    if crate::keyboard::watching() {
        crate::keyboard::wake_on(&mut b);
    }
    if ids.len() > WATCHED {
        let clock = exposed::clock().ok_or(EINVAL)?;
        let ticks = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;
        b.or().load_u64(ticks).ge_imm(clock.ticks + 10);
    }
    let code = b.build().map_err(|_| EINVAL)?;
    let bytes = code.as_bytes();
    oxok_libos::pred::install(WAIT_PRED, bytes).map_err(crate::errno::from_kernel)?;
    sys::env_sleep(1 << WAIT_PRED).map_err(crate::errno::from_kernel)?;
    Ok(0)
}
