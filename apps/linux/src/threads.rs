//! Linux threads of one process, run by the personality in its one
//! environment: many-to-one. A thread runs until it makes a call that
//! waits — `futex` wait, `nanosleep`, `sched_yield`, its own `exit` — or
//! its time slot ends, and the personality then switches the upcall's frame to
//! another thread that can run: registers, FS base (its TLS), FXSAVE image and signal
//! mask are each thread's own; memory, descriptors and dispositions are
//! the process's, as Linux's `CLONE_VM|CLONE_FILES|CLONE_SIGHAND` threads
//! share them. A read or write of a pipe or the console that would block
//! waits the same way and runs again once the descriptor is ready. Other
//! calls that block (`wait4`, `poll`, a write that fills a pipe) block
//! every thread. A thread that spins without a call is preempted at the
//! end of the environment's time slot ([`preempt`], from the slot-end
//! upcall: `crate::slot_end`).
//!
//! When every thread waits, the environment sleeps on one wakeup
//! predicate: the earliest timeout, a signal the program does not block,
//! the counters of the pipes waited for, console input; a signal makes one waiting thread's wait return `EINTR` so
//! its handler can run.

use crate::errno::{EINTR, ETIMEDOUT};
use crate::signals::{self, MASK};
use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use oxok_libos::abi::layout::{CLOCK, Clock, SYSINFO, SysInfo};
use oxok_libos::abi::{ExceptionFrame, Regs};
use oxok_libos::guest::{self, Fxsave};
use oxok_libos::{exposed, sys};
use spin::Mutex;

/// What a thread that is not running waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// Nothing: it can run.
    Ready,
    /// A `futex` wake at `addr` matching `bitset`, or the deadline (ns
    /// since boot).
    Futex { addr: u64, bitset: u32, deadline: Option<u64> },
    /// The deadline only (`nanosleep`).
    Sleep { deadline: u64 },
    /// Descriptor `fd` to have one of `events` (`poll` bits): the call
    /// (number `nr`, which returns to `rip`) then runs again from the
    /// start.
    Io { fd: i32, events: u16, nr: u64, rip: u64 },
}

/// A thread that is not running: everything the CPU would hold.
struct Thread {
    tid: i64,
    regs: Regs,
    fs: u64,
    fpu: Fxsave,
    mask: u64,
    wait: Wait,
    clear_tid: u64,
}

struct Table {
    /// The running thread's tid and clear-child-tid word (0: the main
    /// thread, whose tid is the pid, until a second thread appears).
    current: i64,
    current_clear: u64,
    /// The others, in the order they get the CPU.
    others: Vec<Thread>,
    /// The last tid handed out.
    last_tid: i64,
}

static TABLE: Mutex<Table> = Mutex::new(Table { current: 0, current_clear: 0, others: Vec::new(), last_tid: 0 });

/// Tids of threads other than the main one start here (pids, which are
/// environment ids, stay below 2^31 as these do, but do not reach it).
const FIRST_TID: i64 = 0x7000_0000;

/// Most threads a process may have.
pub const MAX_THREADS: usize = 256;

/// The calling thread's id.
pub fn tid() -> i64 {
    let cur = TABLE.lock().current;
    if cur != 0 { cur } else { crate::calls::process::linux_pid(oxok_libos::proc::pid()) }
}

/// True if `tid` is one of this process's threads.
pub fn is_ours(tid: i64) -> bool {
    tid == self::tid() || TABLE.lock().others.iter().any(|t| t.tid == tid)
}

/// How many threads the process has.
pub fn count() -> usize {
    TABLE.lock().others.len() + 1
}

/// Records the running thread's clear-child-tid word.
pub fn set_clear_tid(addr: u64) {
    TABLE.lock().current_clear = addr;
}

/// Makes a new thread that starts with `regs` and FS base `fs` (the
/// caller's FPU state and mask); returns its tid. `None` if the process
/// has [`MAX_THREADS`].
pub fn spawn(regs: Regs, fs: u64, clear_tid: u64) -> Option<i64> {
    let mut t = TABLE.lock();
    if t.others.len() + 1 >= MAX_THREADS {
        return None;
    }
    if t.current == 0 {
        t.current = crate::calls::process::linux_pid(oxok_libos::proc::pid());
    }
    t.last_tid = t.last_tid.max(FIRST_TID) + 1;
    let tid = t.last_tid;
    let mut fpu = Fxsave([0; 512]);
    guest::fxsave(&mut fpu);
    let mask = MASK.load(Ordering::Acquire);
    t.others.push(Thread { tid, regs, fs, fpu, mask, wait: Wait::Ready, clear_tid });
    Some(tid)
}

/// Wakes up to `n` threads waiting on `addr` whose bitset meets `bitset`;
/// returns how many.
pub fn wake(addr: u64, bitset: u32, n: u64) -> u64 {
    let mut woken = 0;
    for th in TABLE.lock().others.iter_mut() {
        if woken >= n {
            break;
        }
        if let Wait::Futex { addr: a, bitset: b, .. } = th.wait
            && a == addr
            && b & bitset != 0
        {
            th.wait = Wait::Ready;
            set_result(&mut th.regs, 0);
            woken += 1;
        }
    }
    woken
}

/// Moves up to `n` waiters on `from` to wait on `to` instead; returns how
/// many.
pub fn requeue(from: u64, to: u64, n: u64) -> u64 {
    let mut moved = 0;
    for th in TABLE.lock().others.iter_mut() {
        if moved >= n {
            break;
        }
        if let Wait::Futex { addr, bitset, deadline } = th.wait
            && addr == from
        {
            th.wait = Wait::Futex { addr: to, bitset, deadline };
            moved += 1;
        }
    }
    moved
}

/// A `syscall`'s return as the thread will see it.
fn set_result(regs: &mut Regs, value: i64) {
    regs.rax = value as u64;
}

/// The calling thread waits (`wait`) — or, with [`Wait::Ready`], only
/// gives the others a turn: its call returns `result` when it runs again
/// (a wake or timeout sets its own). Switches the frame to the next thread
/// that can run, sleeping the environment while none can.
pub fn block(frame: &mut ExceptionFrame, wait: Wait, result: i64) {
    let mut regs = frame.regs;
    regs.rcx = regs.rip;
    regs.r11 = regs.rflags;
    set_result(&mut regs, result);
    park(frame, regs, wait);
    crate::keep_frame();
}

/// At the end of a time slot, with the running thread interrupted in its
/// own code (`frame`, every register as it was): this one goes to the back
/// of the line, ready, and the first thread that can run now — one that
/// was ready, or whose sleep or wait has just ended — is loaded into the
/// frame (this one again if none). So a thread spinning without calls
/// does not keep the others from running, nor sleepers from waking.
pub fn preempt(frame: &mut ExceptionFrame) {
    if count() < 2 {
        return;
    }
    let regs = frame.regs;
    park(frame, regs, Wait::Ready);
}

/// Saves the running thread (`regs`, its FS base, FPU state and mask) as
/// waiting for `wait` and loads the next thread that can run.
fn park(frame: &mut ExceptionFrame, regs: Regs, wait: Wait) {
    let mut fpu = Fxsave([0; 512]);
    guest::fxsave(&mut fpu);
    let me = {
        let mut t = TABLE.lock();
        if t.current == 0 {
            t.current = crate::calls::process::linux_pid(oxok_libos::proc::pid());
        }
        Thread {
            tid: t.current,
            regs,
            fs: crate::tls::fs_base(),
            fpu,
            mask: MASK.load(Ordering::Acquire),
            wait,
            clear_tid: t.current_clear,
        }
    };
    TABLE.lock().others.push(me);
    run_next(frame);
}

/// With other threads, a call on `fd` that would block until one of
/// `events` holds lets them run instead and starts again once it holds
/// (true: the frame now holds another thread). Alone, the call blocks as
/// usual (false).
pub fn wait_io(frame: &mut ExceptionFrame, fd: u64, events: u16) -> bool {
    if count() < 2 || crate::calls::poll::ready(fd as i32, events, &mut Vec::new()) {
        return false;
    }
    let (nr, rip) = (frame.regs.rax, frame.regs.rip);
    block(frame, Wait::Io { fd: fd as i32, events, nr, rip }, 0);
    true
}

/// The calling thread ends (its `exit`): its clear-child-tid word is
/// zeroed and woken, and another thread runs. False if it is the last
/// thread (the process ends instead).
pub fn exit_current(frame: &mut ExceptionFrame) -> bool {
    let clear = {
        let t = TABLE.lock();
        if t.others.is_empty() {
            return false;
        }
        t.current_clear
    };
    if clear != 0 && crate::uaccess::write(clear, &0u32.to_le_bytes()).is_ok() {
        wake(clear, u32::MAX, 1);
    }
    run_next(frame);
    crate::keep_frame();
    true
}

/// Loads the next thread that can run into the frame; while none can,
/// times out waits whose deadline passed, lets a pending signal interrupt
/// one, or sleeps.
fn run_next(frame: &mut ExceptionFrame) {
    loop {
        let now = crate::calls::time::now_ns();
        let mut wake = Vec::new();
        let mut t = TABLE.lock();
        for th in t.others.iter_mut() {
            let (deadline, result) = match th.wait {
                Wait::Futex { deadline, .. } => (deadline, -ETIMEDOUT),
                Wait::Sleep { deadline } => (Some(deadline), 0),
                Wait::Io { fd, events, nr, rip } => {
                    if crate::calls::poll::ready(fd, events, &mut wake) {
                        // Back onto the `syscall` instruction: the call
                        // runs again and now goes ahead.
                        th.wait = Wait::Ready;
                        th.regs.rax = nr;
                        th.regs.rip = rip - 2;
                    }
                    (None, 0)
                }
                Wait::Ready => (None, 0),
            };
            if deadline.is_some_and(|d| d <= now) {
                th.wait = Wait::Ready;
                set_result(&mut th.regs, result);
            }
        }
        if !t.others.iter().any(|th| th.wait == Wait::Ready) && signals::interrupted() {
            // A signal: the first waiter's call ends with EINTR.
            if let Some(th) = t.others.first_mut() {
                if let Wait::Io { rip, .. } = th.wait {
                    th.regs.rip = rip;
                }
                th.wait = Wait::Ready;
                set_result(&mut th.regs, -EINTR);
            }
        }
        if let Some(i) = t.others.iter().position(|th| th.wait == Wait::Ready) {
            let next = t.others.remove(i);
            t.current = next.tid;
            t.current_clear = next.clear_tid;
            drop(t);
            frame.regs = next.regs;
            let _ = crate::tls::arch_prctl(0x1002, next.fs);
            guest::fxrstor(&next.fpu);
            MASK.store(next.mask, Ordering::Release);
            return;
        }
        let deadline = t
            .others
            .iter()
            .filter_map(|th| match th.wait {
                Wait::Futex { deadline, .. } => deadline,
                Wait::Sleep { deadline } => Some(deadline),
                Wait::Ready | Wait::Io { .. } => None,
            })
            .min();
        drop(t);
        sleep(deadline, &wake);
    }
}

/// Sleeps until `deadline` (ns since boot), a signal the program does
/// not block, or a change of a word in `wake` (descriptors waited for;
/// those are also looked at again every few ticks, and console input
/// wakes the sleep too).
fn sleep(deadline: Option<u64>, wake: &[(u64, u64)]) {
    let mut b = oxok_pred::Builder::new();
    crate::timers::wake_on(&mut b);
    for &(w, seen) in wake.iter().take(8) {
        b.or().load_u64(w).ne_imm(seen);
    }
    let io = TABLE.lock().others.iter().any(|th| matches!(th.wait, Wait::Io { .. }));
    let Some(clock) = exposed::clock() else { return };
    let mut until = None;
    if let Some(d) = deadline {
        let now = crate::calls::time::now_ns();
        let wait = u128::from(d.saturating_sub(now)) * u128::from(clock.tick_hz);
        until = Some(clock.ticks.saturating_add(wait.div_ceil(1_000_000_000) as u64 + 1));
    }
    if io {
        until = Some(until.map_or(clock.ticks + 10, |u: u64| u.min(clock.ticks + 10)));
        let console = SYSINFO + core::mem::offset_of!(SysInfo, console_in) as u64;
        let seen = exposed::sysinfo().map_or(0, |i| i.console_in);
        b.or().load_u64(console).ne_imm(seen);
    }
    if let Some(ticks) = until {
        b.or().load_u64(CLOCK + core::mem::offset_of!(Clock, ticks) as u64).ge_imm(ticks);
    }
    let Ok(code) = b.build() else { return };
    let bytes = code.as_bytes();
    if oxok_libos::pred::install(SLEEP_SLOT, bytes).is_ok() {
        let _ = sys::env_sleep(1 << SLEEP_SLOT);
    }
}

/// The predicate index waits here use (`nanosleep`'s: a thread waiting
/// here is not in `nanosleep`).
const SLEEP_SLOT: u64 = 1;

/// In a fork child, and at `execve`: only the calling thread goes on.
pub fn only_current() {
    let mut t = TABLE.lock();
    t.others.clear();
    t.current = 0;
    t.current_clear = 0;
}
