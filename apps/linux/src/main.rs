//! `linux PROGRAM [ARG…]`: runs an unmodified static Linux x86-64 program
//! (`ET_EXEC`, as `musl-gcc -static` and Debian's `busybox-static` make)
//! from the boot archive or the file server, in this environment.
//!
//! The personality is an ordinary libOS program linked high in the user
//! half (`linux.ld`). It loads the program at the program's own addresses
//! ([`load`]), registers handlers for the upcalls the kernel reflects —
//! foreign system calls, page faults, exceptions — and jumps to the
//! program's entry. From then on every Linux `syscall` arrives as an upcall
//! on the libOS's exception stack, is emulated by a procedure call into
//! [`table::dispatch`], and resumes the program without entering the
//! kernel. `linux --calls` lists the system-call table.
#![no_std]
#![no_main]

extern crate alloc;

mod attention;
mod calls;
mod children;
mod devices;
mod errno;
mod fdtab;
mod groups;
mod keyboard;
mod layout;
mod load;
mod mem;
mod random;
mod sigframe;
mod signals;
mod slot_end;
mod table;
mod threads;
mod timers;
mod tls;
mod uaccess;

use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU8, Ordering};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::{Args, eprintln, println};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let argv: Vec<String> = args.iter().skip(1).map(String::from).collect();
    match argv.first().map(String::as_str) {
        None => {
            eprintln!("usage: linux PROGRAM [ARG…]   (linux --calls lists the system calls)");
            2
        }
        Some("--calls") => {
            list_calls();
            0
        }
        Some(name) => run(name, &argv),
    }
}

/// Prints the system-call table and how many calls each level has.
fn list_calls() {
    let mut counts = [0usize; 3];
    for e in table::TABLE {
        let (level, i) = match e.level {
            table::Level::Full => ("full", 0),
            table::Level::Partial => ("partial", 1),
            table::Level::Enosys => ("ENOSYS", 2),
        };
        counts[i] += 1;
        println!("{:>4} {:<18} {:<8} {}", e.nr, e.name, level, e.note);
    }
    println!("linux: {} calls: {} full, {} partial, {} ENOSYS", table::TABLE.len(), counts[0], counts[1], counts[2]);
}

/// The exception stack, larger than the libOS's built-in one: every Linux
/// system call runs on it, whole.
static EXCEPTION_STACK: upcall::ExceptionStack<{ upcall::GUARD + 64 * 1024 }> = upcall::ExceptionStack::new();

fn run(name: &str, argv: &[String]) -> i32 {
    let mut argv = argv.to_vec();
    let (image, path) = match calls::exec::resolve(name, &mut argv) {
        Ok(found) => found,
        Err(errno::ENOENT) => {
            eprintln!("linux: {name}: not found");
            return 127;
        }
        Err(e) => {
            let why = match e {
                errno::EACCES => "not executable",
                errno::ELOOP => "too many scripts, interpreter after interpreter",
                _ => "not a program this can run",
            };
            eprintln!("linux: {name}: {why}");
            return 126;
        }
    };
    let envp: Vec<String> = oxok_libos::environ::vars().into_iter().filter(|v| !v.starts_with("OXOK_FD")).collect();
    calls::fs::set_exe(&path);
    upcall::use_stack(&EXCEPTION_STACK);
    upcall::set_foreign_handler(on_foreign);
    upcall::set_handler(Kind::PageFault, on_fault);
    upcall::set_handler(Kind::Exception, on_exception);
    if let Err(e) = upcall::install().and_then(|()| slot_end::install()) {
        eprintln!("linux: cannot register the upcalls: {e}");
        return 1;
    }
    signals::init();
    groups::init();
    oxok_libos::vm::at_fork_child(calls::fork::in_child);
    match load::load(&image, &argv, &envp, &path) {
        Ok(start) => oxok_libos::guest::enter(start.entry, start.sp),
        Err(e) => {
            eprintln!("linux: {name}: {e}");
            126
        }
    }
}

/// Every Linux `syscall`, called by the libOS runtime's foreign entry
/// directly (`upcall::ForeignHandler`): true for its short way back.
extern "C" fn on_foreign(frame: &mut ExceptionFrame) -> bool {
    let outcome = on_syscall(frame);
    upcall::foreign_returns(frame, outcome)
}

/// A Linux `syscall`: number in `rax`, arguments in `rdi rsi rdx r10 r8
/// r9`, result in `rax`; `rcx` and `r11` get the return address and flags
/// as the instruction leaves them on Linux.
///
/// Pending signals are delivered as the call returns
/// ([`signals::deliver_pending`]); a write that met a broken pipe raises
/// `SIGPIPE` first.
#[inline(always)]
fn on_syscall(frame: &mut ExceptionFrame) -> Outcome {
    let r = &frame.regs;
    let (nr, args) = (r.rax, [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9]);
    let result = table::dispatch(nr, &args, frame);
    // The common case, kept short: the call only set its result and there
    // is nothing to do on the way back (no signal pending or mask to bring
    // back, no timer armed, no terminal signal to forward, no broken pipe,
    // no frame the call kept): one word says so (`attention`).
    if attention::quiet() && result != -errno::EPIPE {
        // `rcx` and `r11` already hold the return address and the flags:
        // `syscall` put them there, the kernel's record kept them, and a
        // call that returns this way changed neither `rip` nor the flags.
        frame.regs.rax = result as u64;
        return Outcome::Returned;
    }
    after_call(frame, nr, result)
}

/// The result of a call into `rax`; `rcx` and `r11` as `syscall` leaves
/// them on Linux (the return address and the flags).
#[inline(always)]
fn set_result(frame: &mut ExceptionFrame, result: i64) {
    frame.regs.rax = result as u64;
    frame.regs.rcx = frame.regs.rip;
    frame.regs.r11 = frame.regs.rflags;
}

/// The way back from a call when something is to be done: the frame as
/// the call left it, `SIGPIPE`, timers, forwarded and pending signals.
#[inline(never)]
fn after_call(frame: &mut ExceptionFrame, nr: u64, result: i64) -> Outcome {
    // A plain load first: the common case writes nothing.
    let what = match FRAME.load(Ordering::Acquire) {
        FRAME_RESULT => FRAME_RESULT,
        _ => FRAME.swap(FRAME_RESULT, Ordering::AcqRel),
    };
    match what {
        // The call left the upcall for the service stack (fork): nothing
        // of the program's is in the frame now.
        FRAME_LEFT => return Outcome::Resume,
        // The call set every register itself (rt_sigreturn, execve).
        FRAME_KEPT => {}
        _ => set_result(frame, result),
    }
    if result == -errno::EPIPE && matches!(nr, 1 | 18 | 20 | 40 | 44 | 46) {
        signals::raise(signals::SIGPIPE);
    }
    // Calls SA_RESTART restarts: reads, writes, waits.
    let restartable = matches!(nr, 0 | 1 | 17 | 18 | 19 | 20 | 61 | 247);
    timers::poll();
    groups::forward_pending();
    signals::deliver_pending(frame, nr, restartable);
    attention::settle(|| {
        FRAME.load(Ordering::Acquire) != FRAME_RESULT || !signals::quiet() || !timers::idle() || !groups::idle()
    });
    Outcome::Resume
}

/// What [`on_syscall`] does with the frame after a call: set the result
/// (the usual), leave the registers as the call set them, or leave the
/// frame alone (the call redirected the upcall's resume).
const FRAME_RESULT: u8 = 0;
const FRAME_KEPT: u8 = 1;
const FRAME_LEFT: u8 = 2;
static FRAME: AtomicU8 = AtomicU8::new(FRAME_RESULT);

/// The running call set every register of the frame itself.
pub fn keep_frame() {
    FRAME.store(FRAME_KEPT, Ordering::Release);
    attention::raise();
}

/// The running call pointed the upcall's resume away from the program.
pub fn leave_frame() {
    FRAME.store(FRAME_LEFT, Ordering::Release);
    attention::raise();
}

/// Ends the process as `signal`'s default action does (status 128 +
/// signal), without a message: the program asked for it or could not be
/// given a handler frame.
pub fn die_quietly(signal: u64) -> ! {
    oxok_libos::process::exit_signalled(signal as i32)
}

/// True if the event happened in the Linux program (not in the
/// personality's own code).
fn in_program(frame: &ExceptionFrame) -> bool {
    !(layout::LINUX_BASE..layout::LINUX_END).contains(&frame.regs.rip)
}

/// Page-fault error-code bits: a write, an instruction fetch.
const FAULT_WRITE: u64 = 1 << 1;
const FAULT_FETCH: u64 = 1 << 4;

fn on_fault(frame: &mut ExceptionFrame) -> Outcome {
    if mem::fault(frame.addr, frame.error & FAULT_WRITE != 0, frame.error & FAULT_FETCH != 0) {
        return Outcome::Resume;
    }
    if in_program(frame) && signals::deliver_fault(frame, signals::SIGSEGV) {
        return Outcome::Resume;
    }
    die("segmentation fault", frame, 11)
}

fn on_exception(frame: &mut ExceptionFrame) -> Outcome {
    let what = match frame.vector {
        0 => "divide error",
        3 => "breakpoint",
        6 => "illegal instruction",
        16 | 19 => "floating-point exception",
        _ => "general protection fault",
    };
    let signal = oxok_libos::signal::for_vector(frame.vector as u8);
    if in_program(frame) && signals::deliver_fault(frame, signal as u64) {
        return Outcome::Resume;
    }
    die(what, frame, signal)
}

/// Ends the program as Linux's default action for `signal` would (status
/// 128 + signal), saying why.
fn die(what: &str, frame: &ExceptionFrame, signal: i32) -> ! {
    let rip = frame.regs.rip;
    eprintln!(
        "linux: {what} (vector {}, address {:#x}) at rip {rip:#x}; killed by signal {signal}",
        frame.vector, frame.addr
    );
    oxok_libos::process::exit_signalled(signal)
}
