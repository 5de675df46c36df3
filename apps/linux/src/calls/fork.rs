//! New processes: `fork`, `vfork` and `clone` without `CLONE_VM` sharing
//! (or with `CLONE_VM|CLONE_VFORK`, as `posix_spawn` asks: the child gets
//! a copy instead of the shared space, which a vfork child cannot tell
//! apart as long as it only calls `execve` or `_exit`, as it must).
//!
//! Each is the libOS's fork (`vm::fork`: copy-on-write from the exposed
//! page tables), which cannot run on the exception stack a Linux call
//! arrives on — the child gets fresh frames for that stack and could not
//! return through the handler. So the call saves the program's registers
//! and leaves the upcall onto the personality's service stack, pointing
//! the resume at [`forked`]; there, as ordinary code, it forks, and each
//! side resumes the program from the saved registers with its own result
//! in `rax` (`guest::resume`): the child's pid in the parent, 0 in the
//! child. A fork that fails (the account's limit on environments, no
//! memory) returns `-EAGAIN` and changes nothing.

use crate::calls::process::linux_pid;
use crate::errno::{EAGAIN, EINVAL, Res};
use crate::{children, uaccess};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::{ExceptionFrame, Regs};
use oxok_libos::vm::{self, Fork};
use oxok_libos::{guest, proc};
use spin::Mutex;

const CSIGNAL: u64 = 0xff;
const CLONE_VM: u64 = 0x100;
const CLONE_FS: u64 = 0x200;
const CLONE_FILES: u64 = 0x400;
const CLONE_SIGHAND: u64 = 0x800;
const CLONE_VFORK: u64 = 0x4000;
const CLONE_THREAD: u64 = 0x10000;
const CLONE_SETTLS: u64 = 0x80000;
const CLONE_PARENT_SETTID: u64 = 0x100000;
const CLONE_CHILD_CLEARTID: u64 = 0x200000;
const CLONE_CHILD_SETTID: u64 = 0x1000000;

/// What the fork on the service stack needs.
struct Pending {
    /// The program's registers at the call (`rcx`/`r11` as `syscall` left
    /// them).
    regs: Regs,
    /// The child's stack pointer (0: the parent's).
    stack: u64,
    /// The child's thread pointer, for `CLONE_SETTLS`.
    tls: Option<u64>,
    /// Where to store the child's pid in both (`CLONE_PARENT_SETTID`).
    parent_tid: u64,
    /// Where to store it in the child (`CLONE_CHILD_SETTID`).
    child_tid: u64,
    /// The child's clear-on-exit word (`CLONE_CHILD_CLEARTID`).
    clear_tid: u64,
}

/// The parent's pending signals as it forks (the child does not inherit
/// them).
static PENDING_AT_FORK: AtomicU64 = AtomicU64::new(0);

static PENDING: Mutex<Option<Pending>> = Mutex::new(None);

/// Words of the service stack (64 KiB).
const SERVICE_WORDS: usize = 8192;
/// The top of the stack [`forked`] runs on: on the heap, allocated once
/// and never freed — far from the exception stack, so that a fault on it
/// (a copy-on-write page after the fork) is not taken for a fault inside
/// an upcall handler, whose frame the kernel would put on this stack.
static SERVICE_TOP: AtomicU64 = AtomicU64::new(0);

fn service_top() -> u64 {
    let top = SERVICE_TOP.load(Ordering::Acquire);
    if top != 0 {
        return top;
    }
    let stack = alloc::vec![0u64; SERVICE_WORDS].leak();
    let top = (stack.as_ptr() as u64 + (SERVICE_WORDS * 8) as u64) & !15;
    SERVICE_TOP.store(top, Ordering::Release);
    top
}

/// Saves the call and points the upcall's resume at [`forked`].
fn start(frame: &mut ExceptionFrame, p: Pending) -> Res {
    *PENDING.lock() = Some(p);
    let top = service_top();
    frame.regs = Regs { rip: forked as *const () as u64, rsp: top - 8, rflags: 0x202, ..Regs::default() };
    crate::leave_frame();
    Ok(0)
}

/// The program's registers as a returning `syscall` leaves them.
fn saved(frame: &ExceptionFrame) -> Regs {
    let mut regs = frame.regs;
    regs.rcx = regs.rip;
    regs.r11 = regs.rflags;
    regs
}

pub fn fork(_: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let regs = saved(frame);
    start(frame, Pending { regs, stack: 0, tls: None, parent_tid: 0, child_tid: 0, clear_tid: 0 })
}

pub fn vfork(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    fork(a, frame)
}

/// `clone(flags, stack, parent_tid, child_tid, tls)` for a new process.
/// Threads (`CLONE_THREAD`, which needs `CLONE_VM|CLONE_SIGHAND`) are
/// [`crate::threads`]'s; `CLONE_VM` without either is refused (`EINVAL`).
pub fn clone(a: &[u64; 6], frame: &mut ExceptionFrame) -> Res {
    let (flags, stack, parent_tid, child_tid, tls) = (a[0], a[1], a[2], a[3], a[4]);
    if flags & CLONE_THREAD != 0 {
        return thread(flags, stack, parent_tid, child_tid, tls, frame);
    }
    if flags & CLONE_SIGHAND != 0 || (flags & CLONE_VM != 0 && flags & CLONE_VFORK == 0) {
        return Err(EINVAL);
    }
    // Sharing descriptors or the directory with a separate process is not
    // built (the child gets copies).
    if flags & (CLONE_FILES | CLONE_FS) != 0 {
        return Err(EINVAL);
    }
    let _ = flags & CSIGNAL;
    for (bit, addr) in [(CLONE_PARENT_SETTID, parent_tid), (CLONE_CHILD_SETTID, child_tid)] {
        if flags & bit != 0 {
            uaccess::writable(addr, 4)?;
        }
    }
    let regs = saved(frame);
    start(
        frame,
        Pending {
            regs,
            stack,
            tls: (flags & CLONE_SETTLS != 0).then_some(tls),
            parent_tid: if flags & CLONE_PARENT_SETTID != 0 { parent_tid } else { 0 },
            child_tid: if flags & CLONE_CHILD_SETTID != 0 { child_tid } else { 0 },
            clear_tid: if flags & CLONE_CHILD_CLEARTID != 0 { child_tid } else { 0 },
        },
    )
}

/// A new thread: the caller's registers with `rax` 0 on the new stack,
/// its own TLS; tids written where `CLONE_PARENT_SETTID` and
/// `CLONE_CHILD_SETTID` ask (the memory is one).
fn thread(flags: u64, stack: u64, parent_tid: u64, child_tid: u64, tls: u64, frame: &mut ExceptionFrame) -> Res {
    let needed = CLONE_VM | CLONE_SIGHAND;
    if flags & needed != needed || stack == 0 {
        return Err(EINVAL);
    }
    for (bit, addr) in [(CLONE_PARENT_SETTID, parent_tid), (CLONE_CHILD_SETTID, child_tid)] {
        if flags & bit != 0 {
            uaccess::writable(addr, 4)?;
        }
    }
    let mut regs = saved(frame);
    regs.rax = 0;
    regs.rsp = stack;
    let fs = if flags & CLONE_SETTLS != 0 { tls } else { crate::tls::fs_base() };
    let clear = if flags & CLONE_CHILD_CLEARTID != 0 { child_tid } else { 0 };
    let tid = crate::threads::spawn(regs, fs, clear).ok_or(EAGAIN)?;
    for (bit, addr) in [(CLONE_PARENT_SETTID, parent_tid), (CLONE_CHILD_SETTID, child_tid)] {
        if flags & bit != 0 {
            uaccess::write(addr, &(tid as u32).to_le_bytes())?;
        }
    }
    Ok(tid)
}

/// Runs on the service stack: forks and resumes the program on each side.
extern "C" fn forked() -> ! {
    let Some(p) = PENDING.lock().take() else { crate::die_quietly(crate::signals::SIGSEGV) };
    let mut regs = p.regs;
    PENDING_AT_FORK.store(crate::signals::pending(), Ordering::Release);
    match vm::fork() {
        Ok(Fork::Child) => {
            let me = linux_pid(proc::pid()) as u32;
            regs.rax = 0;
            if p.stack != 0 {
                regs.rsp = p.stack;
            }
            if let Some(tls) = p.tls {
                let _ = crate::tls::arch_prctl(0x1002, tls);
            }
            for addr in [p.parent_tid, p.child_tid] {
                if addr != 0 {
                    let _ = uaccess::write(addr, &me.to_le_bytes());
                }
            }
            crate::threads::only_current();
            crate::threads::set_clear_tid(p.clear_tid);
        }
        Ok(Fork::Parent(child)) => {
            let pid = linux_pid(child.id);
            if p.parent_tid != 0 {
                let _ = uaccess::write(p.parent_tid, &(pid as u32).to_le_bytes());
            }
            children::add(child);
            crate::groups::child_born(pid);
            regs.rax = pid as u64;
        }
        // Out of environments or frames in the account: Linux's answer
        // to a fork past RLIMIT_NPROC.
        Err(_) => regs.rax = (-EAGAIN) as u64,
    }
    guest::resume(&regs)
}

/// Run in every fork child before it resumes the program: what the copy
/// carried over but is the parent's.
pub fn in_child() {
    children::forget_all();
    crate::signals::after_fork(PENDING_AT_FORK.load(Ordering::Acquire));
    crate::fdtab::after_fork();
    crate::timers::clear();
    crate::groups::in_child();
}
