//! Leaving QEMU through the `isa-debug-exit` device.

use oxok_abi::boot::DEBUG_EXIT_PORT;

/// Ends the QEMU run with debug-exit `value`; QEMU exits with status
/// `(value << 1) | 1`. On a machine without the device, halts.
pub fn exit(value: u32) -> ! {
    super::cpu::outl(DEBUG_EXIT_PORT, value);
    super::cpu::halt_forever()
}
