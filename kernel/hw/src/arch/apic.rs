//! The local APIC (xAPIC, MMIO at 0xFEE00000 through the uncached part of
//! the direct map): the periodic timer that drives the slot vector.

use super::cpu::rdtsc;
use crate::mem::addr::PhysAddr;
use crate::mem::phys;

const APIC_BASE: PhysAddr = PhysAddr::new(0xFEE0_0000);
const REG_EOI: u64 = 0xB0;
const REG_SPURIOUS: u64 = 0xF0;
const REG_ICR_LOW: u64 = 0x300;
const REG_LVT_TIMER: u64 = 0x320;
const REG_INITIAL_COUNT: u64 = 0x380;
const REG_CURRENT_COUNT: u64 = 0x390;
const REG_DIVIDE: u64 = 0x3E0;
const DIVIDE_BY_16: u32 = 0x3;
const PERIODIC: u32 = 1 << 17;
const MASKED: u32 = 1 << 16;
/// ICR destination shorthand: this CPU.
const TO_SELF: u32 = 1 << 18;

/// Vector of the timer interrupt.
pub const TIMER_VECTOR: u8 = 0x30;
/// Vector of the NIC's receive interrupt (MSI-X).
pub const NET_VECTOR: u8 = 0x31;
/// Vector of the disk's completion interrupt (MSI-X).
pub const DISK_VECTOR: u8 = 0x32;
/// Vector of APIC spurious interrupts.
pub const SPURIOUS_VECTOR: u8 = 0xFF;

fn write(reg: u64, value: u32) {
    // SAFETY: the xAPIC page is direct-mapped uncached (3–4 GiB range of
    // the direct map); `reg` is one of the architectural register offsets.
    unsafe { (phys::virt(APIC_BASE.offset(reg)) as *mut u32).write_volatile(value) }
}

fn read(reg: u64) -> u32 {
    // SAFETY: as in `write`.
    unsafe { (phys::virt(APIC_BASE.offset(reg)) as *const u32).read_volatile() }
}

/// Enables the APIC and starts the timer at `hz` interrupts per second;
/// `tsc_hz` (already calibrated) measures the APIC timer's own rate.
/// Returns the timer's input rate (after the divider) in Hz.
pub fn start_timer(hz: u64, tsc_hz: u64) -> u64 {
    write(REG_SPURIOUS, 0x100 | u32::from(SPURIOUS_VECTOR));
    write(REG_DIVIDE, DIVIDE_BY_16);
    write(REG_LVT_TIMER, MASKED | u32::from(TIMER_VECTOR));
    // Count down from the top; measure the count over 10 ms of TSC time,
    // reading the TSC and the count together at both ends, three times,
    // and take the median: a host that stalls the guest (TCG under load)
    // between two readings spoils one round, not the rate.
    write(REG_INITIAL_COUNT, u32::MAX);
    let wait = tsc_hz / 100;
    let mut rates = [0u64; 3];
    for r in rates.iter_mut() {
        let start = rdtsc();
        let c0 = read(REG_CURRENT_COUNT);
        while rdtsc().wrapping_sub(start) < wait {
            core::hint::spin_loop();
        }
        let c1 = read(REG_CURRENT_COUNT);
        let took = rdtsc().wrapping_sub(start).max(1);
        // Counts per second, scaled by the TSC time the round really took.
        *r = u64::from(c0.saturating_sub(c1)).saturating_mul(tsc_hz.max(1)) / took;
    }
    rates.sort_unstable();
    let rate = rates[1];
    let period = (rate / hz.max(1)).clamp(1, u64::from(u32::MAX)) as u32;
    write(REG_LVT_TIMER, PERIODIC | u32::from(TIMER_VECTOR));
    write(REG_INITIAL_COUNT, period);
    rate
}

/// Sends this CPU an interrupt on `vector` (fixed delivery): it is taken
/// as soon as interrupts are enabled, as a device's would be.
pub fn self_interrupt(vector: u8) {
    write(REG_ICR_LOW, TO_SELF | u32::from(vector));
}

/// Acknowledges the interrupt being handled.
pub fn eoi() {
    write(REG_EOI, 0);
}
