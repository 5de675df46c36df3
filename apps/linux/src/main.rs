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

mod calls;
mod devices;
mod errno;
mod fdtab;
mod layout;
mod load;
mod mem;
mod random;
mod table;
mod tls;
mod uaccess;

use alloc::string::String;
use alloc::vec::Vec;
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::{Args, eprintln, exec, fs, println};

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

/// The program `name`: from the boot archive (by name, or by its last path
/// component), else from the file server.
fn find(name: &str) -> Option<(&'static [u8], String)> {
    let base = fs::file_name(name);
    for n in [name, base] {
        if let Some(image) = exec::program(n) {
            return Some((image, alloc::format!("/bin/{n}")));
        }
    }
    let path = fs::normalize(&fs::absolute(name).ok()?);
    let data = fs::read_file(&path).ok()?;
    Some((data.leak(), path))
}

fn run(name: &str, argv: &[String]) -> i32 {
    let Some((image, path)) = find(name) else {
        eprintln!("linux: {name}: not found");
        return 127;
    };
    let envp: Vec<String> = oxok_libos::environ::vars().into_iter().filter(|v| !v.starts_with("OXOK_FD")).collect();
    calls::fs::set_exe(&path);
    upcall::set_handler(Kind::ForeignSyscall, on_syscall);
    upcall::set_handler(Kind::PageFault, on_fault);
    upcall::set_handler(Kind::Exception, on_exception);
    if let Err(e) = upcall::install() {
        eprintln!("linux: cannot register the upcalls: {e}");
        return 1;
    }
    match load::load(image, argv, &envp, &path) {
        Ok(start) => oxok_libos::guest::enter(start.entry, start.sp),
        Err(e) => {
            eprintln!("linux: {name}: {e}");
            126
        }
    }
}

/// A Linux `syscall`: number in `rax`, arguments in `rdi rsi rdx r10 r8
/// r9`, result in `rax`; `rcx` and `r11` get the return address and flags
/// as the instruction leaves them on Linux.
fn on_syscall(frame: &mut ExceptionFrame) -> Outcome {
    let r = &frame.regs;
    let (nr, args) = (r.rax, [r.rdi, r.rsi, r.rdx, r.r10, r.r8, r.r9]);
    let result = table::dispatch(nr, &args, frame);
    frame.regs.rax = result as u64;
    frame.regs.rcx = frame.regs.rip;
    frame.regs.r11 = frame.regs.rflags;
    Outcome::Resume
}

/// Page-fault error-code bits: a write, an instruction fetch.
const FAULT_WRITE: u64 = 1 << 1;
const FAULT_FETCH: u64 = 1 << 4;

fn on_fault(frame: &mut ExceptionFrame) -> Outcome {
    if mem::fault(frame.addr, frame.error & FAULT_WRITE != 0, frame.error & FAULT_FETCH != 0) {
        return Outcome::Resume;
    }
    die("segmentation fault", frame, 11)
}

fn on_exception(frame: &mut ExceptionFrame) -> Outcome {
    let (what, signal) = match frame.vector {
        0 => ("divide error", 8),
        3 => ("breakpoint", 5),
        6 => ("illegal instruction", 4),
        16 | 19 => ("floating-point exception", 8),
        _ => ("general protection fault", 11),
    };
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
    oxok_libos::process::exit(128 + signal)
}
