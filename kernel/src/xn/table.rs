//! XN's exposed table ([`oxok_abi::xn::XN_TABLE`]): kernel frames mapped
//! read-only into every address space — header, roots, per-file-system
//! usage, the free map and the registry rows. Only this module writes it,
//! after every XN call and every tick that changed something: the header,
//! roots and usage whole (their counts kept by XN as it goes), of the free
//! map's words and the registry's rows only those XN names as changed
//! (`Xn::take_changed_map`, `Xn::take_changed`), so a call costs what it
//! changed, not the size of the disk or of the registry.

use super::XnState;
use crate::mem::access::KernelFrame;
use crate::mem::{PAGE_SIZE, paging};
use alloc::vec::Vec;
use oxok_abi::xn::{
    MAX_FS, MAX_ROOTS, XN_FREE_MAP, XN_FREE_MAP_PAGES, XN_FSS, XN_ROOTS, XN_ROW_EMPTY, XN_ROWS, XN_TABLE,
    XN_TABLE_PAGES,
};

static TABLE: spin::Once<Vec<&'static KernelFrame>> = spin::Once::new();

/// Allocates and exposes the table's frames (boot only).
pub fn init() -> Result<(), oxok_abi::Error> {
    let mut frames = Vec::new();
    for i in 0..XN_TABLE_PAGES {
        let f = KernelFrame::alloc().ok_or(oxok_abi::Error::NoMemory)?;
        frames.push(paging::expose(XN_TABLE + i * PAGE_SIZE, f)?);
    }
    TABLE.call_once(|| frames);
    Ok(())
}

/// Writes `bytes` at byte `offset` of the table.
fn write(offset: u64, bytes: &[u8]) {
    let Some(frames) = TABLE.get() else { return };
    let mut at = offset;
    let mut rest = bytes;
    while !rest.is_empty() {
        let Some(f) = frames.get((at / PAGE_SIZE) as usize) else { return };
        let within = (at % PAGE_SIZE) as usize;
        let n = rest.len().min(PAGE_SIZE as usize - within);
        f.write(within, &rest[..n]);
        rest = &rest[n..];
        at += n as u64;
    }
}

/// Writes the words `w` at byte `offset` of the table (no allocation: a
/// publish happens after every XN call).
fn write_words(offset: u64, w: &[u64]) {
    let mut buf = [0u8; 256];
    for (i, chunk) in w.chunks(buf.len() / 8).enumerate() {
        let n = chunk.len() * 8;
        for (b, x) in buf.chunks_exact_mut(8).zip(chunk) {
            b.copy_from_slice(&x.to_le_bytes());
        }
        write(offset + (i * buf.len()) as u64, &buf[..n]);
    }
}

impl XnState {
    /// Rewrites the table if anything changed.
    pub(super) fn publish(&mut self) {
        if !self.changed {
            return;
        }
        self.changed = false;
        let rows = self.xn.take_changed();
        let map_changed = self.xn.take_changed_map();
        let xn = &self.xn;
        let map = xn.free_map();
        // One pass over the registry for every count.
        let mut per_fs = [0u64; MAX_FS];
        let (registered, cached) = xn.counts(&mut per_fs);
        let header = [
            1,
            map.nblocks(),
            map.free_count(),
            registered,
            self.cat.fss.len() as u64,
            xn.roots().len() as u64,
            self.seq,
            self.oldest_pending(),
            self.errors,
            xn.will_free().len() as u64,
            u64::from(self.catalog_pending()),
            self.duplicates,
            self.recovered,
            cached,
            self.writes,
            self.interrupted,
            self.disk.write_requests(),
            xn.rows() as u64,
        ];
        write_words(0, &header);
        // The roots one row at a time (a few; no page-sized staging to
        // clear at every publish), and zeros where rows were before.
        let shown = xn.roots().len().min(MAX_ROOTS);
        let mut root = [0u8; 16];
        for (j, r) in xn.roots().iter().take(shown).enumerate() {
            root[0..8].copy_from_slice(&r.block.to_le_bytes());
            root[8..12].copy_from_slice(&r.fs.0.to_le_bytes());
            root[12..16].copy_from_slice(&r.ty.to_le_bytes());
            write(XN_ROOTS + j as u64 * 16, &root);
        }
        for j in shown..self.roots_shown {
            write(XN_ROOTS + j as u64 * 16, &[0u8; 16]);
        }
        self.roots_shown = shown;
        let mut fss = [0u64; MAX_FS * 2];
        for (i, row) in self.cat.fss.iter().take(MAX_FS).enumerate() {
            fss[i * 2] = u64::from(row.count);
            fss[i * 2 + 1] = per_fs[i];
        }
        write_words(XN_FSS, &fss);
        // Only the free map's words that changed.
        let limit = XN_FREE_MAP_PAGES * PAGE_SIZE as usize / 8;
        for i in map_changed.positions(map.words().len().min(limit)) {
            if let Some(w) = map.words().get(i) {
                write(XN_FREE_MAP + i as u64 * 8, &w.to_le_bytes());
            }
        }
        // Only the rows whose entry may have changed (each entry keeps its
        // row; a flush changes every state), a free one as empty.
        let mut row = [0u8; 32];
        for n in rows.positions(xn.rows()) {
            row.fill(0);
            match xn.row(n) {
                Some((b, v)) => {
                    row[0..8].copy_from_slice(&b.to_le_bytes());
                    row[8..16].copy_from_slice(&v.frame.map_or(u64::MAX, oxok_xn::Frame::raw).to_le_bytes());
                    row[16..24].copy_from_slice(&v.parent.unwrap_or(u64::MAX).to_le_bytes());
                    row[24..26].copy_from_slice(&(v.fs.0 as u16).to_le_bytes());
                    row[26..28].copy_from_slice(&(v.ty as u16).to_le_bytes());
                    row[28] = v.state;
                    row[29] = u8::from(v.will_free);
                }
                None => row[0..8].copy_from_slice(&XN_ROW_EMPTY.to_le_bytes()),
            }
            write(XN_ROWS + n as u64 * 32, &row);
        }
    }
}
