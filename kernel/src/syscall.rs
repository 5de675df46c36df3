//! System-call dispatch, generated from the call table in `oxok_abi`.
//!
//! Convention (see `oxok_abi`): `rax` holds the call number and receives the
//! status; arguments in `rdi rsi rdx r10 r8 r9`; results in `rdi rsi rdx`.
//! A number outside the Oxok range is a foreign system call: it goes to the
//! environment's foreign-system-call upcall once the protection core adds
//! upcalls, and until then destroys the environment with a logged reason.

use crate::arch::trapframe::TrapFrame;
use crate::calls::{self, Cx};
use crate::{sched, state};
use oxok_abi::{CALL_BASE, Call, Error, MAX_RESULTS};

/// Width of the Oxok call-number range: numbers in
/// `CALL_BASE..CALL_BASE + CALL_RANGE` are Oxok's, known or not.
const CALL_RANGE: u64 = 0x1_0000;

macro_rules! generate_dispatch {
    ($($(#[doc = $doc:literal])* $idx:literal => $name:ident($($arg:ident),*) -> [$($res:ident),*];)*) => {
        /// Runs `call` with its arguments from the caller's registers.
        fn dispatch(cx: &mut Cx<'_>, call: Call) -> Result<[u64; MAX_RESULTS], Error> {
            match call {
                $(Call::$name => {
                    let mut _next = 0usize;
                    $(let $arg = cx.frame.arg(_next); _next += 1;)*
                    let r: [u64; oxok_abi::__count!($($res)*)] = calls::$name(cx, $($arg),*)?;
                    let mut out = [0u64; MAX_RESULTS];
                    out[..r.len()].copy_from_slice(&r);
                    Ok(out)
                })*
            }
        }
    };
}

oxok_abi::for_each_call!(generate_dispatch);

/// Handles one `syscall` from the current environment.
pub fn handle(frame: &mut TrapFrame) {
    state::with(|k| {
        let Some(caller) = k.current else {
            sched::resume(k, frame);
            return;
        };
        let nr = frame.rax;
        match Call::from_number(nr) {
            Some(call) => {
                let mut cx = Cx { k, frame, caller };
                let result = dispatch(&mut cx, call);
                let Cx { k, frame, .. } = cx;
                if k.envs.alive(caller) {
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
                sched::resume(k, frame);
            }
            None if nr.wrapping_sub(CALL_BASE) < CALL_RANGE => {
                frame.rax = Error::BadCall.code();
                sched::resume(k, frame);
            }
            None => {
                sched::destroy(
                    k,
                    caller,
                    format_args!(
                        "foreign system call {nr} at rip={:#x} and no foreign-call handler",
                        frame.rip
                    ),
                );
                sched::resume(k, frame);
            }
        }
    });
}
