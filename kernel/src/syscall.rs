//! System-call dispatch, generated from the call table in `oxok_abi`.
//!
//! Convention (see `oxok_abi`): `rax` holds the call number and receives the
//! status; arguments in `rdi rsi rdx r10 r8 r9`; results in `rdi rsi rdx`.
//! A number outside the Oxok range is a foreign system call: it is
//! reflected to the environment's foreign-system-call upcall (the Linux
//! personality lives there); with none registered the environment dies.

use crate::arch::trapframe::TrapFrame;
use crate::calls::{self, Cx, args};
use crate::env::EnvId;
use crate::state::Kernel;
use crate::upcall;
use crate::{revoke, sched, state};
use oxok_abi::{CALL_BASE, Call, Error};

/// Length of the `syscall` instruction (0f 05).
const SYSCALL_LEN: u64 = 2;

/// Width of the Oxok call-number range: numbers in
/// `CALL_BASE..CALL_BASE + CALL_RANGE` are Oxok's, known or not.
const CALL_RANGE: u64 = 0x1_0000;

macro_rules! generate_dispatch {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];)*) => {
        /// Runs `call` for `caller`, from the call's arguments in `frame`:
        /// each declared argument decoded and checked by its class
        /// (`calls::args`) in register order before the handler runs, the
        /// declared results written back, then [`finish`]. Each arm is the
        /// whole path of its call, so a call's fast return holds only what
        /// that call declares and does (`null`: no decode, no result, no
        /// restart or replaced-frame test); the three calls that hand the
        /// CPU to another environment try their fast path first
        /// (`handoff::handed`), the others nothing.
        #[inline(always)]
        fn dispatch(k: &mut Kernel, frame: &mut TrapFrame, caller: EnvId, call: Call) -> bool {
            match call {
                $(Call::$name => {
                    // A hand-off's fast path, for the calls that have one
                    // (a constant test, gone from every other arm).
                    if crate::handoff::handed(Call::$name, k, frame, caller) {
                        return false;
                    }
                    let mut cx = Cx { k, frame, caller, restart: false, replaced: false, entered: false };
                    let run = |cx: &mut Cx<'_>| -> Result<[u64; oxok_abi::__result_regs!($($res $(: $rclass)?),*)], Error> {
                        let mut _next = 0usize;
                        $(let $arg = { let raw = cx.frame.arg(_next); _next += 1; <args::$class as args::Arg>::decode(cx, raw)? };)*
                        calls::$name(cx, $($arg),*)
                    };
                    let result = run(&mut cx);
                    finish(cx, result)
                })*
            }
        }
    };
}

oxok_abi::for_each_call!(generate_dispatch);

/// After a call ran: its status and results into the caller's registers,
/// and true for the fast return (the common case: no restart, no new
/// state, nothing pending, the caller still current and the scheduler's
/// choice, so alive: ending it would have moved the scheduler on). The
/// rest goes through [`after_call`].
#[inline(always)]
fn finish<const N: usize>(cx: Cx<'_>, result: Result<[u64; N], Error>) -> bool {
    let Cx { k, frame, caller, restart, replaced, entered } = cx;
    if entered {
        // Another environment is current, its registers in the frame:
        // nothing pending, nothing to restart (the full exit, which
        // restores every register).
        return false;
    }
    if !replaced && !restart {
        complete(frame, result);
        if sched::still_running(k, caller) {
            debug_assert!(frame.rcx == frame.rip && frame.r11 == frame.rflags);
            return true;
        }
        return after_call(k, frame, caller, false);
    }
    let restart_now = if !replaced && k.envs.alive(caller) {
        match result {
            Ok(_) => true,
            Err(e) => {
                frame.rax = e.code();
                false
            }
        }
    } else {
        false
    };
    after_call(k, frame, caller, restart_now)
}

/// Writes a finished call's status and its `N` results into the caller's
/// registers.
#[inline(always)]
fn complete<const N: usize>(frame: &mut TrapFrame, result: Result<[u64; N], Error>) {
    match result {
        Ok(values) => {
            frame.rax = 0;
            for (i, v) in values.into_iter().enumerate() {
                frame.set_result(i, v);
            }
        }
        Err(e) => frame.rax = e.code(),
    }
}

/// The slow way out of a call: `restart` puts the caller back onto its
/// `syscall` (Fluke's restart rule: `rax` still holds the number); then the
/// bookkeeping pending work asks for and the scheduler's resume. False: the
/// full exit.
#[inline(always)]
fn after_call(k: &mut Kernel, frame: &mut TrapFrame, caller: EnvId, restart: bool) -> bool {
    if restart {
        #[cfg(feature = "model-process")]
        if crate::model::restart_point(k, caller, frame) {
            return false;
        }
        frame.rip -= SYSCALL_LEN;
    }
    if revoke::pending(k) {
        if k.current == Some(caller) {
            revoke::enforce(k, caller, frame);
        }
        revoke::step(k, revoke::STEP_BUDGET);
    }
    sched::resume(k, frame);
    false
}

/// Handles one `syscall` from the current environment (the handler the
/// kernel registers for the entry stub in `arch::syscall`, which calls it
/// with the frame it pushed). True if the caller simply goes on from its
/// own frame, changed only in `rax` and the result registers (no restart,
/// no new state, nothing pending, still the scheduler's choice): the stub
/// then returns with `sysret` at once, checking only that `rip` is
/// canonical.
pub extern "C" fn handle(frame: &mut TrapFrame) -> bool {
    state::with(|k| handle_locked(k, frame))
}

/// [`handle`] with the kernel state locked.
#[inline(always)]
fn handle_locked(k: &mut Kernel, frame: &mut TrapFrame) -> bool {
    // A call is the caller's progress: a receive interrupt masked since the
    // last may come again (`net::poll_interrupt`).
    crate::net::progressed(k.current);
    let Some(caller) = k.current else {
        sched::resume(k, frame);
        return false;
    };
    let nr = frame.rax;
    match Call::from_number(nr) {
        Some(call) => dispatch(k, frame, caller, call),
        // Outside the Oxok range: the Linux personality's every call comes
        // this way.
        None if nr.wrapping_sub(CALL_BASE) >= CALL_RANGE => foreign(k, frame, caller, nr),
        None => {
            frame.rax = Error::BadCall.code();
            sched::resume(k, frame);
            false
        }
    }
}

/// A foreign system call (`nr` outside the Oxok range): reflected to the
/// caller's foreign-system-call upcall, which returns to the program
/// without entering the kernel; without one the caller is destroyed. True
/// (the stub's `sysret`) when the caller goes on at its handler and nothing
/// is pending: `sysret` takes `rip` from `rcx` and the flags from `r11`,
/// which `syscall` itself overwrote (the interrupted values went into the
/// delivered frame before), so they are set to the handler's.
#[inline(always)]
fn foreign(k: &mut Kernel, frame: &mut TrapFrame, caller: EnvId, nr: u64) -> bool {
    let delivered = match k.envs.get(caller) {
        Some(env) => upcall::deliver_foreign(env, frame),
        None => Err("gone"),
    };
    match delivered {
        // Delivery changes no scheduling state: `caller` is still current.
        Ok(()) if sched::still_chosen(k, caller) => {
            frame.rcx = frame.rip;
            frame.r11 = frame.rflags;
            return true;
        }
        Ok(()) => {}
        Err(why) => {
            sched::destroy(k, caller, 0xff, format_args!("foreign system call {nr} at rip={:#x}: {why}", frame.rip))
        }
    }
    sched::resume(k, frame);
    false
}
