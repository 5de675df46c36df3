//! Process groups and sessions, and the terminal's foreground group, kept
//! by the personality of each process (there is no kernel notion of
//! them): a process knows its own group and session, which a fork child
//! inherits and `execve` keeps, and the groups of its children (what it
//! and they set with `setpgid`). A process started from the Oxok shell
//! leads a session and a group of its own.
//!
//! **The terminal.** The Oxok shell owns the console and sends a keyboard
//! signal (`^C`, `^\`, `^Z`) to the programs of its foreground job. A
//! Linux shell with job control (`busybox sh` with `set -m`, or
//! interactive) puts each job in a group of its own and names it the
//! terminal's foreground group (`tcsetpgrp`); it then plays the tty
//! driver's part for its session: a keyboard signal that reaches it while
//! another group is in the foreground is passed to that group — its
//! children in it and their descendants — instead of being taken, so `^C`
//! ends the job and the shell goes on. The passing is done where the
//! personality looks at signals (as calls return and in waits, whose
//! predicates watch the word [`FORWARD`] too).
//!
//! The terminal's foreground group is the session's, not one process's:
//! it lives in a page ([`crate::layout::TERMINAL_PAGE`]) the session's
//! leader maps shared (`LIBOS_SHARED`), so every fork descendant sees the
//! same word — a job's child that names itself the foreground (as ash's
//! children do) is seen by the shell. `setsid` leaves it for a fresh one.
//!
//! **Reach.** Groups are known to their creators: `kill(-pgid)` reaches
//! the caller (if in the group), its children in the group and their
//! descendants; `getpgid`/`getsid` answer for the caller and its
//! children, `ESRCH` for others.

use crate::calls::process::linux_pid;
use crate::layout::TERMINAL_PAGE;
use alloc::collections::BTreeMap;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::pte;
use oxok_libos::abi::{ANY_FRAME, MapEntry};
use oxok_libos::{guest, proc, sys};
use spin::Mutex;

/// This process's group and session; 0 until [`init`].
static PGID: AtomicU64 = AtomicU64::new(0);
static SID: AtomicU64 = AtomicU64::new(0);
/// Keyboard signals to pass to the foreground group (bit `sig`).
pub static FORWARD: AtomicU64 = AtomicU64::new(0);
/// The groups of this process's children, by Linux pid.
static KIDS: Mutex<BTreeMap<i64, u64>> = Mutex::new(BTreeMap::new());

/// Most children remembered; beyond it, ended ones are dropped first.
const MAX_KIDS: usize = 1024;

const SIGINT: u64 = 2;
const SIGQUIT: u64 = 3;
const SIGTSTP: u64 = 20;

fn me() -> u64 {
    linux_pid(proc::pid()) as u64
}

/// At start (`linux PROGRAM`): a session and a group of its own, and the
/// session's terminal page.
pub fn init() {
    let me = me();
    PGID.store(me, Ordering::Relaxed);
    SID.store(me, Ordering::Relaxed);
    new_terminal(me);
}

/// Maps a fresh terminal page (dropping the old one, if any) whose
/// foreground group is `group`. Without it (no frame), the foreground
/// reads as the caller's group and cannot be set.
fn new_terminal(group: u64) {
    let _ = sys::page_batch(0, [MapEntry::unmap(TERMINAL_PAGE)].as_ptr() as u64, 1);
    let Ok([slot, _]) = sys::frame_alloc(ANY_FRAME) else { return };
    let flags = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_SHARED;
    if sys::page_map(0, slot, TERMINAL_PAGE, flags).is_err() {
        let _ = sys::frame_free(slot);
        return;
    }
    let _ = sys::cap_drop(slot);
    let _ = guest::copy_out(TERMINAL_PAGE, &group.to_le_bytes());
}

/// The foreground group in the terminal page (0 if there is none).
fn fg_word() -> u64 {
    let mut b = [0u8; 8];
    guest::copy_in(TERMINAL_PAGE, &mut b).map_or(0, |()| u64::from_le_bytes(b))
}

/// In a fork child: the parent's group and session (already in memory),
/// none of the parent's children, nothing to pass on.
pub fn in_child() {
    KIDS.lock().clear();
    FORWARD.store(0, Ordering::Relaxed);
}

/// A new child (fork): it starts in this process's group.
pub fn child_born(pid: i64) {
    let mut kids = KIDS.lock();
    if kids.len() >= MAX_KIDS {
        kids.retain(|&p, _| proc::alive(p as u64));
    }
    if kids.len() < MAX_KIDS {
        kids.insert(pid, PGID.load(Ordering::Relaxed));
    }
}

pub fn pgid() -> u64 {
    PGID.load(Ordering::Relaxed)
}

pub fn sid() -> u64 {
    SID.load(Ordering::Relaxed)
}

/// The group of `pid` (0: the caller), if it is the caller or a child.
pub fn pgid_of(pid: i64) -> Option<u64> {
    if pid == 0 || pid as u64 == me() {
        return Some(pgid());
    }
    KIDS.lock().get(&pid).copied().filter(|_| proc::alive(pid as u64))
}

/// The group a child was last known in (ended or not).
pub fn of_child(pid: i64) -> Option<u64> {
    KIDS.lock().get(&pid).copied()
}

/// `setpgid(pid, pgid)` as Linux checks it, for the caller and its
/// children: `Err(errno)`.
pub fn set(pid: i64, group: i64) -> Result<(), i64> {
    use crate::errno::{EINVAL, EPERM, ESRCH};
    if group < 0 {
        return Err(EINVAL);
    }
    let me = me();
    let target = if pid == 0 { me } else { pid as u64 };
    let group = if group == 0 { target } else { group as u64 };
    // A group to join must be the target's own or one already in the
    // caller's session: its own, or a child's.
    let known = group == target || group == pgid() || KIDS.lock().values().any(|&g| g == group);
    if !known {
        return Err(EPERM);
    }
    if target == me {
        if sid() == me {
            return Err(EPERM);
        }
        PGID.store(group, Ordering::Relaxed);
        return Ok(());
    }
    let mut kids = KIDS.lock();
    match kids.get_mut(&(target as i64)) {
        Some(g) if proc::alive(target) => {
            *g = group;
            Ok(())
        }
        _ => Err(ESRCH),
    }
}

/// `setsid`: a new session and group led by the caller; `EPERM` if it
/// leads a group already.
pub fn new_session() -> Result<u64, i64> {
    let me = me();
    if pgid() == me {
        return Err(crate::errno::EPERM);
    }
    PGID.store(me, Ordering::Relaxed);
    SID.store(me, Ordering::Relaxed);
    new_terminal(me);
    Ok(me)
}

/// True if another group of this session — a job — is the terminal's
/// foreground (this process is then its shell, or a bystander).
pub fn job_in_foreground() -> bool {
    let fg = fg_word();
    fg != 0 && fg != pgid()
}

/// The terminal page's foreground word (its address) and its value now,
/// for wait predicates; `None` if the page is not mapped.
pub fn foreground_word() -> Option<(u64, u64)> {
    let mut b = [0u8; 8];
    guest::copy_in(TERMINAL_PAGE, &mut b).ok().map(|()| (TERMINAL_PAGE, u64::from_le_bytes(b)))
}

/// `tcgetpgrp`: the session's foreground group.
pub fn foreground() -> u64 {
    match fg_word() {
        0 => pgid(),
        g => g,
    }
}

/// `tcsetpgrp(group)`: a group of this session (the caller's, a child's,
/// or the foreground already) becomes the foreground; `EPERM` for another
/// session's, `ESRCH` for none.
pub fn set_foreground(group: u64) -> Result<(), i64> {
    let known =
        group == pgid() || group == fg_word() || KIDS.lock().iter().any(|(&p, &g)| g == group && proc::alive(p as u64));
    if !known {
        // A group whose leader lives elsewhere is another session's.
        return Err(if proc::alive(group) { crate::errno::EPERM } else { crate::errno::ESRCH });
    }
    guest::copy_out(TERMINAL_PAGE, &group.to_le_bytes()).map_err(|_| crate::errno::ENOTTY)
}

/// A signal from another process: true if it is a keyboard signal to pass
/// to another foreground group (recorded in [`FORWARD`]; the caller then
/// does not take it).
pub fn divert(sig: u64) -> bool {
    let fg = fg_word();
    if !matches!(sig, SIGINT | SIGQUIT | SIGTSTP) || fg == 0 || fg == pgid() {
        return false;
    }
    FORWARD.fetch_or(1 << sig, Ordering::AcqRel);
    crate::attention::raise();
    true
}

/// True if no terminal signal waits to be forwarded ([`forward_pending`]
/// would do nothing).
#[inline(always)]
pub fn idle() -> bool {
    FORWARD.load(Ordering::Relaxed) == 0
}

/// Passes the recorded keyboard signals to the foreground group (one
/// load when there are none).
#[inline(always)]
pub fn forward_pending() {
    if FORWARD.load(Ordering::Relaxed) != 0 {
        forward_now();
    }
}

#[cold]
fn forward_now() {
    let sigs = FORWARD.swap(0, Ordering::AcqRel);
    let fg = foreground();
    for sig in 1..64u64 {
        if sigs & (1 << sig) != 0 {
            let _ = kill_group(fg, sig);
        }
    }
}

/// Sends `sig` to group `group`: the caller if in it (its own signal,
/// made pending), its children in it and their descendants. `Ok(n)`: how
/// many others took it; `Err(ESRCH)` if nobody is in the group.
pub fn kill_group(group: u64, sig: u64) -> Result<usize, i64> {
    let mine = group == pgid();
    let members: alloc::vec::Vec<u64> =
        KIDS.lock().iter().filter(|&(&p, &g)| g == group && proc::alive(p as u64)).map(|(&p, _)| p as u64).collect();
    if !mine && members.is_empty() {
        return Err(crate::errno::ESRCH);
    }
    let mut sent = 0;
    if sig != 0 {
        // Descendants first, so none outlives a parent it would have
        // been reaped by before it gets the signal.
        for p in proc::processes() {
            if p.status != oxok_libos::abi::ENV_ZOMBIE
                && members.iter().any(|&m| proc::is_ancestor(m, p.pid))
                && oxok_libos::signal::kill(p.pid, sig as i32).is_ok()
            {
                sent += 1;
            }
        }
        for &m in &members {
            if oxok_libos::signal::kill(m, sig as i32).is_ok() {
                sent += 1;
            }
        }
        if mine {
            crate::signals::raise(sig);
        }
    }
    Ok(sent)
}

/// The address of [`FORWARD`], for wait predicates.
pub fn forward_word() -> u64 {
    FORWARD.as_ptr() as u64
}
