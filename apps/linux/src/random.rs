//! Random bytes for `AT_RANDOM` and `getrandom`: the CPU's `rdrand`, or,
//! on a CPU without it, a SplitMix64 stream seeded from the time-stamp
//! counter (unpredictable enough for stack canaries and hash seeds, not for
//! keys; the CPUs Oxok runs on under QEMU have `rdrand`).

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::exposed;

static STATE: AtomicU64 = AtomicU64::new(0);

fn next() -> u64 {
    if let Some(v) = oxok_libos::guest::rdrand() {
        return v;
    }
    let mut z = STATE.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed) ^ exposed::rdtsc();
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `buf` with random bytes.
pub fn fill(buf: &mut [u8]) {
    for chunk in buf.chunks_mut(8) {
        let v = next().to_le_bytes();
        chunk.copy_from_slice(&v[..chunk.len()]);
    }
}

/// Sixteen random bytes.
pub fn bytes16() -> [u8; 16] {
    let mut b = [0u8; 16];
    fill(&mut b);
    b
}
