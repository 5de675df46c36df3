//! The network table (`oxok_abi::net::NET_TABLE`): one kernel frame,
//! exposed read-only to every environment, holding the NIC's counters and
//! one row per bound ring, followed by the filter table
//! (`oxok_abi::net::FILTER_TABLE`): a row per installed filter with its
//! owner, ring, the filter it refines, its packet count and its atoms. Only
//! this module writes them.

use crate::mem::access::KernelFrame;
use crate::mem::paging;
use alloc::vec::Vec;
use oxok_abi::net::{
    FILTER_ROW_BYTES, FILTER_ROWS_MAX, FILTER_ROWS_PER_PAGE, FILTER_TABLE, FILTER_TABLE_PAGES, FilterRow, NET_TABLE,
    NetHeader, RING_ROWS, RING_ROWS_MAX, RingRow,
};

static TABLE: spin::Once<&'static KernelFrame> = spin::Once::new();
static FILTERS: spin::Once<Vec<&'static KernelFrame>> = spin::Once::new();

/// Allocates the tables' frames and exposes them (boot only).
pub fn init() -> Result<(), oxok_abi::Error> {
    let table = exposed_frame(NET_TABLE).ok_or(oxok_abi::Error::NoMemory)?;
    TABLE.call_once(|| table);
    let mut pages = Vec::new();
    pages.try_reserve_exact(FILTER_TABLE_PAGES).map_err(|_| oxok_abi::Error::NoMemory)?;
    for page in 0..FILTER_TABLE_PAGES {
        pages.push(exposed_frame(FILTER_TABLE + page as u64 * 4096).ok_or(oxok_abi::Error::NoMemory)?);
    }
    FILTERS.call_once(|| pages);
    Ok(())
}

/// A fresh zeroed kernel frame exposed read-only at `va`.
fn exposed_frame(va: u64) -> Option<&'static KernelFrame> {
    paging::expose(va, KernelFrame::alloc()?).ok()
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

/// The page holding filter row `index` and the row's offset in it.
fn filter_place(index: usize) -> Option<(&'static KernelFrame, usize)> {
    let page = FILTERS.get()?.get(index / FILTER_ROWS_PER_PAGE).filter(|_| index < FILTER_ROWS_MAX)?;
    Some((page, index % FILTER_ROWS_PER_PAGE * FILTER_ROW_BYTES))
}

/// Rewrites filter row `index`: its head and its atoms (`None`: the row is
/// free now, all zero).
pub fn set_filter(index: usize, row: Option<(&FilterRow, &[u8; oxok_abi::filter::FILTER_BYTES])>) {
    let Some((page, at)) = filter_place(index) else { return };
    let (head, atoms) = match row {
        Some((r, atoms)) => (words([r.owner, r.ring, r.id, r.refines, r.accepted, r.atoms]), *atoms),
        None => ([0u8; 64], [0u8; oxok_abi::filter::FILTER_BYTES]),
    };
    let head_len = size_of::<FilterRow>();
    page.write(at, &head[..head_len]);
    page.write(at + head_len, &atoms);
}

/// Rewrites the `refines` word of filter row `index`.
pub fn set_filter_refines(index: usize, refines: u64) {
    if let Some((page, at)) = filter_place(index) {
        page.write(at + core::mem::offset_of!(FilterRow, refines), &refines.to_le_bytes());
    }
}

/// Rewrites the `accepted` word of filter row `index`.
pub fn set_filter_accepted(index: usize, accepted: u64) {
    if let Some((page, at)) = filter_place(index) {
        page.write(at + core::mem::offset_of!(FilterRow, accepted), &accepted.to_le_bytes());
    }
}
