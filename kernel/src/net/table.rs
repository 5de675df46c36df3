//! The network table (`oxok_abi::net::NET_TABLE`): one kernel frame,
//! exposed read-only to every environment, holding the NIC's counters and
//! one row per bound ring. Only this module writes it.

use crate::mem::access::KernelFrame;
use crate::mem::paging;
use oxok_abi::net::{NET_TABLE, NetHeader, RING_ROWS, RING_ROWS_MAX, RingRow};

static TABLE: spin::Once<KernelFrame> = spin::Once::new();

/// Allocates the table's frame and exposes it (boot only).
pub fn init() -> Result<(), oxok_abi::Error> {
    let frame = KernelFrame::alloc().ok_or(oxok_abi::Error::NoMemory)?;
    if let Err(e) = paging::expose(NET_TABLE, &frame) {
        frame.free();
        return Err(e);
    }
    TABLE.call_once(|| frame);
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
    if let Some(table) = TABLE.get() {
        let b = words([h.mac, h.received, h.unclaimed, h.sent, h.refused, h.filters, h.rings, 0]);
        table.write(0, &b);
    }
}

/// Rewrites ring row `index`.
pub fn set_ring(index: usize, row: &RingRow) {
    if let Some(table) = TABLE.get().filter(|_| index < RING_ROWS_MAX) {
        let b = words([row.owner, row.ring, row.produced, row.dropped]);
        table.write(RING_ROWS as usize + index * size_of::<RingRow>(), &b[..32]);
    }
}
