//! Program entry: `_start` takes the System V initial stack and calls the
//! program's `oxok_main`, which [`program_main!`](crate::program_main)
//! declares (through the libOS's `main!`).

use crate::args::Args;
use core::arch::naked_asm;

unsafe extern "Rust" {
    /// The program's entry, declared with [`crate::program_main!`]: runs the
    /// libOS's start-up and the program's `main`, and never returns.
    safe fn oxok_main(args: Args) -> !;
}

/// Declares the program's `oxok_main`: `start(args, main)` with the libOS's
/// start-up function `start` (which runs `main` and exits with its status).
/// Used by the libOS's `main!`; a program has exactly one.
#[macro_export]
macro_rules! program_main {
    ($start:path, $main:path) => {
        // SAFETY: the one definition of the symbol the runtime's `_start`
        // calls, with the signature it declares (`fn(Args) -> !`).
        #[unsafe(no_mangle)]
        #[allow(unsafe_code)]
        fn oxok_main(args: $crate::Args) -> ! {
            $start(args, $main)
        }
    };
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
    oxok_main(args)
}
