//! The legacy 8259 PICs: remapped away from the exception vectors and
//! masked. Oxok uses the local APIC; without this, the PIT's IRQ 0 would
//! arrive on vector 8 (double fault) as soon as user code runs with IF set.

use super::cpu::outb;

/// First vector of the master PIC after remapping; the slave follows at +8.
pub const PIC_BASE: u8 = 32;

/// Remaps both PICs to vectors 32–47 and masks every line.
pub fn init() {
    const ICW1_INIT_ICW4: u8 = 0x11;
    outb(0x20, ICW1_INIT_ICW4);
    outb(0xa0, ICW1_INIT_ICW4);
    outb(0x21, PIC_BASE);
    outb(0xa1, PIC_BASE + 8);
    outb(0x21, 4); // slave on IRQ 2
    outb(0xa1, 2);
    outb(0x21, 1); // 8086 mode
    outb(0xa1, 1);
    outb(0x21, 0xff);
    outb(0xa1, 0xff);
}
