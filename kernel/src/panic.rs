//! The kernel panic handler: message, location, a frame-pointer backtrace,
//! then QEMU exits with the panic status.

use crate::arch::{cpu, qemu};
use crate::logline::Direct;
use core::fmt::Write;
use core::panic::PanicInfo;
use oxok_abi::boot::EXIT_PANIC;

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    cpu::disable_interrupts();
    // Written directly (never held back, no lock), on a line of its own.
    crate::logline::panic_begin();
    let _ = match info.location() {
        Some(l) => writeln!(Direct, "KERNEL PANIC at {}:{}: {}", l.file(), l.line(), info.message()),
        None => writeln!(Direct, "KERNEL PANIC: {}", info.message()),
    };
    let _ = writeln!(Direct, "backtrace (return addresses):");
    for (i, ret) in crate::arch::backtrace::frames(cpu::frame_pointer()).enumerate() {
        let _ = writeln!(Direct, "  #{i}: {ret:#018x}");
    }
    qemu::exit(EXIT_PANIC)
}
