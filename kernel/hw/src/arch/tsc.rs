//! TSC calibration against the PIT (channel 2, gated through port 0x61):
//! CPUID leaves 0x15/0x16 are absent under QEMU TCG.

use super::cpu::{inb, outb, rdtsc};

const PIT_HZ: u64 = 1_193_182;
const SAMPLE_MS: u64 = 10;

/// TSC ticks per second, measured over 10 ms of PIT time.
pub fn calibrate() -> u64 {
    let count = PIT_HZ * SAMPLE_MS / 1000;
    let gate = inb(0x61);
    outb(0x61, (gate & !0x02) | 0x01); // gate on, speaker off
    outb(0x43, 0xb0); // channel 2, lo/hi byte, mode 0 (interrupt on terminal count)
    outb(0x42, count as u8);
    outb(0x42, (count >> 8) as u8);
    let start = rdtsc();
    let mut spins = 0u64;
    while inb(0x61) & 0x20 == 0 && spins < 100_000_000 {
        spins += 1;
    }
    let end = rdtsc();
    outb(0x61, gate);
    (end - start) * (1000 / SAMPLE_MS)
}
