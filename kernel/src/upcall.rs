//! Delivering events to an environment's own handlers (Aegis's upcalls).
//!
//! The kernel writes an `ExceptionFrame` on the environment's exception
//! stack — below its top, or below the lowest live `rsp` on that stack
//! minus the red zone when a handler is still running there — and starts
//! the handler with `rdi` pointing at the frame and `rsp` just below it, as
//! if called. The handler resumes the interrupted code itself; the kernel is not involved.
//! Every write goes through the checked user copy: a bad stack or entry
//! costs the environment its life, never the kernel.

use crate::arch::trapframe::TrapFrame;
use crate::env::Env;
use crate::mem::user;
use oxok_abi::layout::USER_TOP;
use oxok_abi::{ExceptionFrame, upcall};

/// How far below its top an exception stack may reach: an interrupted `rsp`
/// in that range means the handler itself was interrupted (nesting).
const EXCEPTION_STACK_REACH: u64 = 1 << 20;

/// What to deliver.
pub struct Event {
    /// Upcall kind (`oxok_abi::upcall`).
    pub kind: u64,
    /// `ExceptionFrame::vector`.
    pub vector: u64,
    /// `ExceptionFrame::error`.
    pub error: u64,
    /// `ExceptionFrame::addr`.
    pub addr: u64,
}

/// The entry for `kind` among `entries`, falling back to the generic
/// exception entry for page faults.
#[inline(always)]
fn entry_for(entries: &[u64; upcall::KINDS], kind: u64) -> u64 {
    let get = |k: u64| entries.get(k as usize).copied().unwrap_or(0);
    match (get(kind), kind) {
        (0, upcall::PAGE_FAULT) => get(upcall::EXCEPTION),
        (e, _) => e,
    }
}

/// Where a record may go on the exception stack below `top`: under the
/// lowest `rsp` on it that is still in use, less the red zone — the
/// interrupted code's own (a handler interrupted: nesting), or the one a
/// protected control transfer interrupted and will resume (a handler that
/// was running when the transfer arrived, e.g. blocked in a call; an event
/// in the transfer's handler, which runs on another stack, must not be
/// written over it) — or at `top` when neither is on it.
#[inline(always)]
fn free_below(top: u64, rsp: u64, pct_interrupted: Option<u64>) -> u64 {
    // `r <= top && r > top.saturating_sub(EXCEPTION_STACK_REACH)`, in one
    // unsigned comparison (an `r` above `top` wraps to a huge distance).
    let on_stack = |r: u64| r != 0 && top.wrapping_sub(r) < EXCEPTION_STACK_REACH;
    let mut low = if on_stack(rsp) { rsp } else { u64::MAX };
    if let Some(r) = pct_interrupted
        && on_stack(r)
    {
        low = low.min(r);
    }
    if low == u64::MAX { top } else { low.saturating_sub(upcall::RED_ZONE) }
}

/// An interrupted `rsp` below this is no stack: a handler could not resume
/// the interrupted code, since the resume writes its last words just below
/// the red zone under `rsp` (`oxok_rt::upcall`). Code runs so only for an
/// instruction or two: the PCT entry starts with `rsp` 0 and loads its own
/// stack first.
const NO_STACK_BELOW: u64 = 4096;

/// Events that arrive whatever the code is doing (slot start and end,
/// revocation), as opposed to those its own instruction caused. These
/// wait, rather than interrupt code that has no stack ([`NO_STACK_BELOW`]):
/// a slot end then preempts in place, as for an environment without the
/// entry, and the code resumes where it was from the kernel's save.
fn asynchronous(kind: u64) -> bool {
    matches!(kind, upcall::SLOT_START | upcall::SLOT_END | upcall::REVOCATION)
}

// What delivery writes on the exception stack: a `Pod` record of `oxok-hw`.
use crate::mem::pod::Delivery;

/// Where a record for `frame`'s environment goes on its exception stack:
/// `(at, ret_slot)`, the frame's address (16-aligned) and the handler's
/// return slot just below it.
#[inline(always)]
fn place(env: &Env, entries: &[u64; upcall::KINDS], frame: &TrapFrame) -> Result<(u64, u64), &'static str> {
    let top = entries[upcall::EXCEPTION_STACK as usize];
    if top == 0 || top > USER_TOP {
        return Err("no exception stack registered");
    }
    let base = free_below(top, frame.rsp, env.pct_saved().map(|saved| saved.rsp));
    let at = base.checked_sub(size_of::<ExceptionFrame>() as u64).ok_or("exception stack overflow")? & !15;
    let ret_slot = at.checked_sub(8).ok_or("exception stack overflow")?;
    Ok((at, ret_slot))
}

/// Redirects `frame` (the environment's current registers) into its handler
/// for `ev`. Errors say why delivery was impossible.
pub fn deliver(env: &mut Env, frame: &mut TrapFrame, ev: &Event) -> Result<(), &'static str> {
    let entries = env.handlers.entries().ok_or("no handler registered")?;
    let entry = entry_for(entries, ev.kind);
    if entry == 0 {
        return Err("no handler registered");
    }
    if asynchronous(ev.kind) && frame.rsp < NO_STACK_BELOW {
        return Err("interrupted with no stack to resume on");
    }
    let (at, ret_slot) = place(env, entries, frame)?;
    // One record, stored field by field straight into the exception stack
    // (one page-table walk when it lies in one page, as it nearly always
    // does; no temporary, no byte copy).
    user::fill_struct(&env.space, ret_slot, Record { frame, ev }).map_err(|_| "exception stack not writable")?;
    frame.enter_handler(entry, ret_slot, at, ev.kind);
    Ok(())
}

/// Redirects `frame`, a foreign system call of the environment (`rax` the
/// number), into its foreign-system-call handler ([`upcall::FOREIGN_SYSCALL`];
/// no fallback). As [`deliver`], but the record holds only what entering
/// the handler changes or what `syscall` itself overwrote: `vector`
/// ([`upcall::VECTOR_SYSCALL`]), `error` and `addr` (0), and of the
/// registers `rip`, `rflags`, `rsp`, `rdi`, `rsi`, `rcx` and `r11`. Every
/// other register (`rax rbx rdx rbp r8`–`r15`) is still the program's when
/// the handler starts, and its entry stores them into the record itself
/// (the contract in `oxok_abi::upcall`): the kernel saves only what it
/// destroys, as Aegis's exception path did.
#[inline(always)]
pub fn deliver_foreign(env: &mut Env, frame: &mut TrapFrame) -> Result<(), &'static str> {
    let entries = env.handlers.entries().ok_or("no handler registered")?;
    let entry = entries[upcall::FOREIGN_SYSCALL as usize];
    if entry == 0 {
        return Err("no handler registered");
    }
    let (at, ret_slot) = place(env, entries, frame)?;
    user::fill_struct(&env.space, ret_slot, ForeignRecord(frame)).map_err(|_| "exception stack not writable")?;
    frame.enter_handler(entry, ret_slot, at, upcall::FOREIGN_SYSCALL);
    Ok(())
}

/// An event's record ([`deliver`]): the event and every register.
struct Record<'a> {
    frame: &'a TrapFrame,
    ev: &'a Event,
}

impl user::Fill<Delivery> for Record<'_> {
    #[inline(always)]
    fn fill(self, d: &mut Delivery) {
        d.ret = 0;
        d.frame.vector = self.ev.vector;
        d.frame.error = self.ev.error;
        d.frame.addr = self.ev.addr;
        self.frame.store_regs(&mut d.frame.regs);
    }
}

/// A foreign system call's record ([`deliver_foreign`]).
struct ForeignRecord<'a>(&'a TrapFrame);

impl user::Fill<Delivery> for ForeignRecord<'_> {
    #[inline(always)]
    fn fill(self, d: &mut Delivery) {
        d.ret = 0;
        d.frame.vector = upcall::VECTOR_SYSCALL;
        d.frame.error = 0;
        d.frame.addr = 0;
        self.0.store_entry_regs(&mut d.frame.regs);
    }
}
