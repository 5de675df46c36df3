//! The 16550 UART on COM1: the kernel console.

use super::cpu::{inb, outb};

const COM1: u16 = 0x3f8;

/// Programs COM1 for 115200 baud, 8N1, FIFOs off, interrupts off.
pub fn init() {
    outb(COM1 + 1, 0x00); // no interrupts
    outb(COM1 + 3, 0x80); // DLAB on
    outb(COM1, 0x01); // divisor 1 → 115200 baud
    outb(COM1 + 1, 0x00);
    outb(COM1 + 3, 0x03); // 8N1, DLAB off
    // FIFOs stay off: enabling them resets QEMU's receive buffer, losing
    // input typed before boot; the timer polls at 1000 Hz, plenty for a console.
    outb(COM1 + 2, 0x00);
    outb(COM1 + 4, 0x03); // DTR + RTS
}

/// Sends one byte, waiting for the transmitter.
pub fn write_byte(b: u8) {
    let mut spins = 0u32;
    while inb(COM1 + 5) & 0x20 == 0 && spins < 1_000_000 {
        spins += 1;
    }
    outb(COM1, b);
}

/// Sends bytes, turning `\n` into `\r\n`.
pub fn write(bytes: &[u8]) {
    for &b in bytes {
        if b == b'\n' {
            write_byte(b'\r');
        }
        write_byte(b);
    }
}

/// A byte received on COM1, if one is waiting.
pub fn try_read_byte() -> Option<u8> {
    (inb(COM1 + 5) & 0x01 != 0).then(|| inb(COM1))
}
