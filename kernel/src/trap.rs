//! What happens on a CPU exception. From user mode: the environment's own
//! handler runs (an upcall); with no usable handler the environment is
//! destroyed with a logged reason and the rest go on. From kernel mode: a
//! kernel bug — panic with the registers.

use crate::arch::cpu;
use crate::arch::idt::EXCEPTION_NAMES;
use crate::arch::trapframe::TrapFrame;
use crate::upcall::{self, Event};
use crate::{revoke, sched, state};
use oxok_abi::upcall::{self as kinds, VECTOR_PAGE_FAULT as PAGE_FAULT};

const DEVICE_NOT_AVAILABLE: u64 = 7;
/// First vector that is an interrupt rather than an exception.
const FIRST_IRQ: u64 = 32;

/// Handles the exception or interrupt described by `frame`.
pub fn handle(frame: &mut TrapFrame) {
    if frame.vector >= FIRST_IRQ {
        crate::timer::interrupt(frame);
        return;
    }
    if !frame.is_user() {
        kernel_fault(frame, name(frame.vector));
    }
    let addr = if frame.vector == PAGE_FAULT { cpu::cr2() } else { 0 };
    state::with(|k| {
        let Some(id) = k.current else {
            sched::resume(k, frame);
            return;
        };
        if frame.vector == DEVICE_NOT_AVAILABLE && crate::fpu::device_not_available(&mut k.envs, id) {
            // Lazy FPU switching: its state is in the unit now; retry.
            sched::resume(k, frame);
            return;
        }
        let kind = if frame.vector == PAGE_FAULT { kinds::PAGE_FAULT } else { kinds::EXCEPTION };
        let ev = Event { kind, vector: frame.vector, error: frame.error, addr };
        let delivered = match k.envs.get(id) {
            Some(env) => upcall::deliver(env, frame, &ev),
            None => Err("gone"),
        };
        if let Err(why) = delivered {
            let name = name(frame.vector);
            let detail = if frame.vector == PAGE_FAULT { page_fault_detail(frame.error, addr) } else { Detail::None };
            sched::destroy(
                k,
                id,
                frame.vector,
                format_args!("{name} at rip={:#x} (error {:#x}){detail}; {why}", frame.rip, frame.error),
            );
        } else if revoke::pending(k) {
            revoke::enforce(k, id, frame);
        } else if sched::still_running(k, id) {
            return;
        }
        sched::resume(k, frame);
    });
}

/// The exception's name, for a log line (looked up only when one is
/// written).
fn name(vector: u64) -> &'static str {
    EXCEPTION_NAMES.get(vector as usize).copied().unwrap_or("unexpected interrupt")
}

enum Detail {
    None,
    PageFault { addr: u64, what: &'static str, access: &'static str },
}

impl core::fmt::Display for Detail {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Detail::None => Ok(()),
            Detail::PageFault { addr, what, access } => write!(f, ": {access} of {addr:#x}, {what}"),
        }
    }
}

fn page_fault_detail(error: u64, addr: u64) -> Detail {
    let what = if error & 1 == 0 { "not mapped" } else { "protection violation" };
    let access = if error & 16 != 0 {
        "instruction fetch"
    } else if error & 2 != 0 {
        "write"
    } else {
        "read"
    };
    Detail::PageFault { addr, what, access }
}

fn kernel_fault(f: &TrapFrame, name: &str) -> ! {
    // A fault on the guard page below a kernel stack (cr2 there, or the
    // stack pointer already in it): that stack overflowed.
    let guard = crate::arch::stack::guard_of;
    let (stack, overflow) = guard(cpu::cr2()).or(guard(f.rsp)).map_or(("", ""), |stack| (stack, " overflow: "));
    panic!(
        "{stack}{overflow}{name} in kernel mode (vector {}, error {:#x})\n\
         rip={:#018x} rsp={:#018x} rflags={:#010x} cr2={:#018x} cr3={:#018x}\n\
         rax={:#018x} rbx={:#018x} rcx={:#018x} rdx={:#018x}\n\
         rsi={:#018x} rdi={:#018x} rbp={:#018x} r8 ={:#018x}\n\
         r9 ={:#018x} r10={:#018x} r11={:#018x} r12={:#018x}\n\
         r13={:#018x} r14={:#018x} r15={:#018x}",
        f.vector,
        f.error,
        f.rip,
        f.rsp,
        f.rflags,
        cpu::cr2(),
        cpu::cr3(),
        f.rax,
        f.rbx,
        f.rcx,
        f.rdx,
        f.rsi,
        f.rdi,
        f.rbp,
        f.r8,
        f.r9,
        f.r10,
        f.r11,
        f.r12,
        f.r13,
        f.r14,
        f.r15
    )
}
