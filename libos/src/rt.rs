//! Program entry and panics.

use crate::args::Args;
use core::arch::naked_asm;
use core::panic::PanicInfo;

unsafe extern "Rust" {
    /// The program's `main`, declared with [`crate::main!`].
    safe fn oxok_main(args: Args) -> i32;
}

/// The first instruction of every program. The kernel (or exec) leaves a
/// System V initial stack: `rsp` → argc, argv…, NULL, envp…, NULL, auxv.
#[unsafe(naked)]
#[unsafe(no_mangle)]
#[unsafe(link_section = ".text._start")]
extern "C" fn _start() -> ! {
    naked_asm!("mov rdi, rsp", "and rsp, -16", "xor ebp, ebp", "call {start}", "ud2", start = sym start)
}

extern "C" fn start(sp: *const u64) -> ! {
    // SAFETY: `sp` is the initial stack pointer the loader prepared.
    let args = unsafe { Args::from_initial_stack(sp) };
    // Accept signals (and LRPC) from the start: every process has a PCT entry.
    let _ = crate::pct::init();
    crate::environ::init(args);
    // Descriptors the parent passed (`OXOK_FD<n>`), before main runs.
    crate::fd::inherit::init(args);
    let code = oxok_main(args);
    crate::process::exit(code)
}

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    match info.location() {
        Some(l) => crate::println!("panic at {}:{}: {}", l.file(), l.line(), info.message()),
        None => crate::println!("panic: {}", info.message()),
    }
    crate::process::exit(101)
}
