//! The network table (`oxok_abi::net::NET_TABLE`): one kernel frame,
//! exposed read-only to every environment, holding the NIC's counters and
//! one row per bound ring. Only this module writes it.

use crate::mem::dma::write_frame;
use crate::mem::{PAGE_SIZE, frame, paging};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::frames::OWNER_KERNEL;
use oxok_abi::net::{NET_TABLE, NetHeader, RING_ROWS, RING_ROWS_MAX, RingRow};

static TABLE_PA: AtomicU64 = AtomicU64::new(0);

/// Allocates the table's frame and exposes it (boot only).
pub fn init() -> Result<(), oxok_abi::Error> {
    let pa = frame::with(|f| f.alloc(OWNER_KERNEL)).ok_or(oxok_abi::Error::NoMemory)?;
    paging::expose(NET_TABLE, pa, PAGE_SIZE)?;
    TABLE_PA.store(pa, Ordering::Relaxed);
    Ok(())
}

fn words<const N: usize>(w: [u64; N]) -> [u8; 64] {
    let mut b = [0u8; 64];
    for (i, v) in w.iter().enumerate().take(8) {
        b[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
    }
    b
}

/// Rewrites the header.
pub fn set_header(h: &NetHeader) {
    let pa = TABLE_PA.load(Ordering::Relaxed);
    if pa != 0 {
        let b = words([h.mac, h.received, h.unclaimed, h.sent, h.refused, h.filters, h.rings, 0]);
        write_frame(pa, 0, &b);
    }
}

/// Rewrites ring row `index`.
pub fn set_ring(index: usize, row: &RingRow) {
    let pa = TABLE_PA.load(Ordering::Relaxed);
    if pa != 0 && index < RING_ROWS_MAX {
        let b = words([row.owner, row.ring, row.produced, row.dropped]);
        write_frame(pa, RING_ROWS as usize + index * size_of::<RingRow>(), &b[..32]);
    }
}
