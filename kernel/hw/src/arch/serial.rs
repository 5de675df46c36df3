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

/// The second UART (COM2): an auxiliary line a program may use to talk to
/// another machine (QEMU joins two machines' COM2 through a socket
/// character device). Raw bytes both ways; nothing of the console.
pub mod aux {
    use super::super::cpu::{inb, outb};
    use core::sync::atomic::{AtomicBool, Ordering};

    const COM2: u16 = 0x2f8;
    static PRESENT: AtomicBool = AtomicBool::new(false);

    /// Finds COM2 (its scratch register keeps what is written to it; a
    /// missing port reads all ones) and programs it: 115200 baud, 8N1,
    /// FIFOs on, interrupts off.
    pub fn init() {
        outb(COM2 + 7, 0x5a);
        let first = inb(COM2 + 7);
        outb(COM2 + 7, 0xa5);
        if first != 0x5a || inb(COM2 + 7) != 0xa5 {
            return;
        }
        outb(COM2 + 1, 0x00);
        outb(COM2 + 3, 0x80);
        outb(COM2, 0x01);
        outb(COM2 + 1, 0x00);
        outb(COM2 + 3, 0x03);
        outb(COM2 + 2, 0x07); // FIFOs on and cleared
        outb(COM2 + 4, 0x03);
        PRESENT.store(true, Ordering::Relaxed);
    }

    /// Whether the machine has a second UART.
    pub fn present() -> bool {
        PRESENT.load(Ordering::Relaxed)
    }

    /// Sends bytes while the transmitter takes them, without waiting;
    /// returns how many it took.
    pub fn write(bytes: &[u8]) -> usize {
        let mut n = 0;
        for &b in bytes {
            if inb(COM2 + 5) & 0x20 == 0 {
                break;
            }
            outb(COM2, b);
            n += 1;
        }
        n
    }

    /// Takes the bytes waiting in the receiver, at most `out.len()`.
    pub fn read(out: &mut [u8]) -> usize {
        let mut n = 0;
        while n < out.len() && inb(COM2 + 5) & 0x01 != 0 {
            out[n] = inb(COM2);
            n += 1;
        }
        n
    }
}
