//! fuzz-victim: the bystander of the fuzzer (`fuzz drive`). It keeps 64 KiB
//! of private data with a known checksum and re-checks it in a loop, printing
//! its progress, for as long as the driver lives. It also watches the clock:
//! the longest stretch in which it was not given the CPU is its measure of
//! a freeze of other environments (a kernel busy with interrupts off, or
//! one that stopped scheduling it). Verdict: no checksum change, no pause
//! longer than `FREEZE_S` seconds, and its row in the kernel's table
//! unchanged.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::ENV_TABLE_ROWS;
use oxok_libos::{Args, exposed, println, proc};
use oxok_testrng::Rng;
use oxok_tests::Checks;

oxok_libos::main!(main);

/// The longest pause, in seconds, that does not count as a freeze. The
/// freezes this catches lasted 25 s and more; a machine shared by many
/// QEMUs may pause a guest for a second or two.
const FREEZE_S: u64 = 10;
/// Seconds between progress lines.
const REPORT_S: u64 = 2;

fn checksum(data: &[u64]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| (h ^ x).wrapping_mul(0x1000_0000_01b3))
}

/// The driver: a boot program named `fuzz`.
fn driver() -> Option<u64> {
    (0..ENV_TABLE_ROWS).filter_map(exposed::env_row).find_map(|r| {
        let n = r.name.iter().position(|&b| b == 0).unwrap_or(r.name.len());
        (&r.name[..n] == b"fuzz" && r.parent == 0).then_some(u64::from(r.id))
    })
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("fuzz-victim");
    let me = proc::pid();
    let mut rng = Rng::new(0xf022_71c7);
    let data: Vec<u64> = (0..8192).map(|_| rng.next()).collect();
    let sum = checksum(&data);
    let row = proc::process(me);
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz).max(1);
    let start = exposed::rdtsc();
    let mut driver_id = None;
    while driver_id.is_none() && exposed::rdtsc() - start < 10 * hz {
        driver_id = driver();
        let _ = oxok_libos::sys::yield_cpu(0);
    }
    t.check(driver_id.is_some(), "the driver is there");
    let (mut rounds, mut changes, mut longest) = (0u64, 0u64, 0u64);
    let mut last = exposed::rdtsc();
    let mut next_report = last + REPORT_S * hz;
    while driver_id.is_some_and(proc::alive) {
        if checksum(&data) != sum {
            changes += 1;
        }
        rounds += 1;
        let now = exposed::rdtsc();
        longest = longest.max(now.wrapping_sub(last));
        last = now;
        if now >= next_report {
            next_report = now + REPORT_S * hz;
            println!("fuzz-victim: {rounds} rounds, checksum {}", if changes == 0 { "intact" } else { "CHANGED" });
        }
    }
    let longest_ms = longest * 1000 / hz;
    println!("fuzz-victim: {rounds} rounds, {changes} checksum changes, longest pause {longest_ms} ms");
    t.expect(changes, 0, "private data unchanged");
    t.check(longest_ms <= FREEZE_S * 1000, "never frozen");
    t.expect(proc::process(me), row, "own row in the kernel's table unchanged");
    t.check(rounds > 0, "made progress");
    t.finish()
}
