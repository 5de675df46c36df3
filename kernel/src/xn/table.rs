//! XN's exposed table ([`oxok_abi::xn::XN_TABLE`]): kernel frames mapped
//! read-only into every address space — header, roots, per-file-system
//! usage, the free map and the registry rows. Only this module writes it,
//! after every XN call and every tick that changed something, a word at a
//! time: of the header, roots and usage the words that differ from what it
//! shows ([`Shown`]; their counts kept by XN as it goes), of the free map's
//! words and the registry's rows only those XN names as changed
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

/// Writes the word `w` at byte `offset` (a multiple of 8) of the table.
fn put(offset: u64, w: u64) {
    let Some(frames) = TABLE.get() else { return };
    if let Some(f) = frames.get((offset / PAGE_SIZE) as usize) {
        f.write_u64((offset % PAGE_SIZE) as usize, w);
    }
}

/// Writes the words of `new` that differ from `old` (what the table holds
/// there) at byte `offset` of the table, and remembers them in `old`.
fn put_changed(offset: u64, new: &[u64], old: &mut [u64]) {
    for (i, (&n, o)) in new.iter().zip(old.iter_mut()).enumerate() {
        if n != *o {
            put(offset + i as u64 * 8, n);
            *o = n;
        }
    }
}

/// Writes rows of two words at byte `base`: the `n` rows `row` gives
/// (`None`: zeros), and zeros where rows were shown before (`shown` of
/// them, `words` what the table holds there); what shows now.
fn put_rows(base: u64, n: usize, shown: usize, words: &mut [u64], row: impl Fn(usize) -> Option<[u64; 2]>) -> usize {
    for (j, old) in words.chunks_exact_mut(2).enumerate().take(n.max(shown)) {
        let new = if j < n { row(j).unwrap_or([0, 0]) } else { [0, 0] };
        put_changed(base + j as u64 * 16, &new, old);
    }
    n
}

/// Words of the table's header.
const HEADER_WORDS: usize = 18;

/// What the table's header, roots and usage hold now (the frames start
/// zeroed), so a publish writes only the words that change.
pub(super) struct Shown {
    header: [u64; HEADER_WORDS],
    roots: [u64; MAX_ROOTS * 2],
    /// Root rows shown (rows past them are zero).
    roots_shown: usize,
    fss: [u64; MAX_FS * 2],
    /// File-system rows shown (rows past them are zero).
    fss_shown: usize,
}

impl Shown {
    /// An all-zero table's.
    pub(super) const ZERO: Shown = Shown {
        header: [0; HEADER_WORDS],
        roots: [0; MAX_ROOTS * 2],
        roots_shown: 0,
        fss: [0; MAX_FS * 2],
        fss_shown: 0,
    };
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
        let header: [u64; HEADER_WORDS] = [
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
        let shown = &mut self.shown;
        put_changed(0, &header, &mut shown.header);
        // The roots' rows in use: a root is its block and then its file
        // system and type in one word.
        let roots = xn.roots();
        shown.roots_shown = put_rows(XN_ROOTS, roots.len().min(MAX_ROOTS), shown.roots_shown, &mut shown.roots, |j| {
            roots.get(j).map(|r| [r.block, u64::from(r.fs.0) | u64::from(r.ty) << 32])
        });
        // The file systems' rows: templates and blocks registered.
        let fss = &self.cat.fss;
        shown.fss_shown = put_rows(XN_FSS, fss.len().min(MAX_FS), shown.fss_shown, &mut shown.fss, |j| {
            Some([u64::from(fss.get(j)?.count), *per_fs.get(j)?])
        });
        // Only the free map's words that changed.
        let limit = XN_FREE_MAP_PAGES * PAGE_SIZE as usize / 8;
        for i in map_changed.positions(map.words().len().min(limit)) {
            if let Some(&w) = map.words().get(i) {
                put(XN_FREE_MAP + i as u64 * 8, w);
            }
        }
        // Only the rows whose entry may have changed (each entry keeps its
        // row; a flush changes every state), a free one as empty: the
        // block, the frame, the parent, then file system (16 bits), type
        // (16), state (8) and will-free (8) in one word.
        for n in rows.positions(xn.rows()) {
            let row = match xn.row(n) {
                Some((b, v)) => [
                    b,
                    v.frame.map_or(u64::MAX, oxok_xn::Frame::raw),
                    v.parent.unwrap_or(u64::MAX),
                    u64::from(v.fs.0 as u16)
                        | u64::from(v.ty as u16) << 16
                        | u64::from(v.state) << 32
                        | u64::from(v.will_free) << 40,
                ],
                None => [XN_ROW_EMPTY, 0, 0, 0],
            };
            let at = XN_ROWS + n as u64 * 32;
            for (i, w) in row.into_iter().enumerate() {
                put(at + i as u64 * 8, w);
            }
        }
    }
}
