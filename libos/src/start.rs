//! The libOS's start-up, before `main`, and panics.

use crate::Args;
use core::panic::PanicInfo;

/// Runs before the program's `main` (called by the runtime's entry through
/// [`crate::main!`]): the PCT entry, the environment, inherited
/// descriptors; then `main`, and exits with its status.
pub fn start(args: Args, main: fn(Args) -> i32) -> ! {
    // Accept signals (and LRPC) from the start: every process has a PCT entry.
    let _ = crate::pct::init();
    crate::environ::init(args);
    // Descriptors the parent passed (`OXOK_FD<n>`), before main runs.
    crate::fd::inherit::init(args);
    let code = main(args);
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
