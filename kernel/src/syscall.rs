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
use crate::upcall::{self, Event};
use crate::{revoke, sched, state};
use oxok_abi::upcall as kinds;
use oxok_abi::{CALL_BASE, Call, Error, MAX_RESULTS};

/// Length of the `syscall` instruction (0f 05).
const SYSCALL_LEN: u64 = 2;

/// Width of the Oxok call-number range: numbers in
/// `CALL_BASE..CALL_BASE + CALL_RANGE` are Oxok's, known or not.
const CALL_RANGE: u64 = 0x1_0000;

macro_rules! generate_dispatch {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident: $class:ident),*) -> [$($res:ident $(: $rclass:ident)?),*];)*) => {
        /// Runs `call` with its arguments from the caller's registers, each
        /// decoded and checked by its class (`calls::args`) in register
        /// order before the handler runs.
        #[inline(always)]
        fn dispatch(cx: &mut Cx<'_>, call: Call) -> Result<[u64; MAX_RESULTS], Error> {
            match call {
                $(Call::$name => {
                    let mut _next = 0usize;
                    $(let $arg = { let raw = cx.frame.arg(_next); _next += 1; <args::$class as args::Arg>::decode(cx, raw)? };)*
                    let r: [u64; oxok_abi::__result_regs!($($res $(: $rclass)?),*)] = calls::$name(cx, $($arg),*)?;
                    let mut out = [0u64; MAX_RESULTS];
                    out[..r.len()].copy_from_slice(&r);
                    Ok(out)
                })*
            }
        }
    };
}

oxok_abi::for_each_call!(generate_dispatch);

/// Writes a finished call's status and results into the caller's registers.
#[inline(always)]
fn complete(frame: &mut TrapFrame, call: Call, result: Result<[u64; MAX_RESULTS], Error>) {
    match result {
        Ok(values) => {
            frame.rax = 0;
            for (i, v) in values.iter().take(call.results()).enumerate() {
                frame.set_result(i, *v);
            }
        }
        Err(e) => frame.rax = e.code(),
    }
}

/// Handles one `syscall` from the current environment. True if the caller
/// simply goes on from its own frame, changed only in `rax` and the result
/// registers (no restart, no new state, nothing pending, still the
/// scheduler's choice): the entry stub then returns with `sysret` at once,
/// checking only that `rip` is canonical. Called by the stub in
/// `arch::syscall` with the frame it pushed.
pub extern "C" fn handle(frame: &mut TrapFrame) -> bool {
    state::with(|k| {
        let Some(caller) = k.current else {
            sched::resume(k, frame);
            return false;
        };
        let nr = frame.rax;
        // Foreign first: the Linux personality's every call comes this way,
        // so it is decided before anything an Oxok call needs.
        if nr.wrapping_sub(CALL_BASE) >= CALL_RANGE {
            return foreign(k, frame, caller, nr);
        }
        match Call::from_number(nr) {
            Some(call) => {
                let mut cx = Cx { k, frame, caller, restart: false, replaced: false };
                let result = dispatch(&mut cx, call);
                let Cx { k, frame, restart, replaced, .. } = cx;
                if !replaced && !restart {
                    complete(frame, call, result);
                    // The common case: nothing pending, the caller still
                    // current and the scheduler's choice (so alive: ending
                    // it would have moved the scheduler on) goes on.
                    if sched::still_running(k, caller) {
                        debug_assert!(frame.rcx == frame.rip && frame.r11 == frame.rflags);
                        return true;
                    }
                } else if !replaced && k.envs.alive(caller) {
                    if result.is_ok() {
                        #[cfg(feature = "model-process")]
                        if crate::model::restart_point(k, caller, frame) {
                            return false;
                        }
                        // `rax` still holds the number: back onto `syscall`.
                        frame.rip -= SYSCALL_LEN;
                    } else {
                        complete(frame, call, result);
                    }
                }
                // Otherwise nothing to return to, or a new state to resume
                // from.
                if revoke::pending(k) {
                    if k.current == Some(caller) {
                        revoke::enforce(k, caller, frame);
                    }
                    revoke::step(k, revoke::STEP_BUDGET);
                }
            }
            None => frame.rax = Error::BadCall.code(),
        }
        sched::resume(k, frame);
        false
    })
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
    let ev = Event { kind: kinds::FOREIGN_SYSCALL, vector: kinds::VECTOR_SYSCALL, error: 0, addr: 0 };
    let delivered = match k.envs.get(caller) {
        Some(env) => upcall::deliver(env, frame, &ev),
        None => Err("gone"),
    };
    match delivered {
        Ok(()) if sched::still_running(k, caller) => {
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
