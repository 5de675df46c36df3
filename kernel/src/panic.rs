//! The kernel panic handler: message, location, a frame-pointer backtrace,
//! then QEMU exits with the panic status.

use crate::arch::{cpu, qemu};
use crate::kprintln;
use core::panic::PanicInfo;
use oxok_abi::boot::EXIT_PANIC;

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    cpu::disable_interrupts();
    match info.location() {
        Some(l) => kprintln!("KERNEL PANIC at {}:{}: {}", l.file(), l.line(), info.message()),
        None => kprintln!("KERNEL PANIC: {}", info.message()),
    }
    kprintln!("backtrace (return addresses):");
    for (i, ret) in crate::arch::backtrace::frames(cpu::frame_pointer()).enumerate() {
        kprintln!("  #{i}: {ret:#018x}");
    }
    qemu::exit(EXIT_PANIC)
}
