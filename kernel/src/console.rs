//! Console input: the timer tick polls the UART into a ring; `console_read`
//! drains it. The ring is single-producer (the tick, which may interrupt the
//! idle loop) and single-consumer (the call, under the kernel lock), so it
//! needs only atomics.

use crate::arch::serial;
use crate::mem::exposed;
use core::sync::atomic::{AtomicU8, AtomicU64, Ordering};

const SIZE: usize = 4096;
static RING: [AtomicU8; SIZE] = [const { AtomicU8::new(0) }; SIZE];
static HEAD: AtomicU64 = AtomicU64::new(0); // bytes ever received
static TAIL: AtomicU64 = AtomicU64::new(0); // bytes ever consumed

/// Moves waiting UART bytes into the ring (dropping them when it is full)
/// and publishes the count in the system-information page.
pub fn poll() {
    let mut got = false;
    while let Some(b) = serial::try_read_byte() {
        let head = HEAD.load(Ordering::Relaxed);
        if head - TAIL.load(Ordering::Acquire) < SIZE as u64 {
            RING[(head % SIZE as u64) as usize].store(b, Ordering::Relaxed);
            HEAD.store(head + 1, Ordering::Release);
            got = true;
        }
    }
    if got {
        let head = HEAD.load(Ordering::Relaxed);
        exposed::update_sysinfo(|i| i.console_in = head);
    }
}

/// Takes up to `out.len()` received bytes; returns how many.
pub fn read(out: &mut [u8]) -> usize {
    let n = peek(out);
    TAIL.fetch_add(n as u64, Ordering::Release);
    n
}

/// Copies up to `out.len()` waiting bytes without taking them.
pub fn peek(out: &mut [u8]) -> usize {
    let tail = TAIL.load(Ordering::Relaxed);
    let available = (HEAD.load(Ordering::Acquire) - tail) as usize;
    let n = available.min(out.len());
    for (i, slot) in out.iter_mut().take(n).enumerate() {
        *slot = RING[((tail + i as u64) % SIZE as u64) as usize].load(Ordering::Relaxed);
    }
    n
}

/// Bytes waiting.
pub fn pending() -> usize {
    (HEAD.load(Ordering::Acquire) - TAIL.load(Ordering::Relaxed)) as usize
}
