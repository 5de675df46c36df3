//! [`Rows`]: where each registry entry shows in XN's exposed table.
//!
//! An entry keeps one row for as long as it is registered, so an
//! allocation or a free rewrites one row of the table, not every row after
//! it in block order (rows kept in block order cost an unlink in the disk
//! bench 144 rewritten rows, a fifth of its instructions). Rows go first
//! come, first served, up to a limit ([`XN_ROWS_MAX`] in the kernel); an
//! entry that finds none waits for the next row freed. A freed row reads
//! [`XN_ROW_EMPTY`] until an entry takes it again.

use alloc::vec::Vec;

use crate::blockset::Bits;

use oxok_abi::xn::{XN_ROW_EMPTY, XN_ROWS_MAX};

/// An entry with no row (the table was full when it came).
pub(crate) const NO_ROW: u32 = u32::MAX;

/// Words of [`RowSet`].
const SET_WORDS: usize = XN_ROWS_MAX.div_ceil(64);

/// A set of rows of the exposed table (those that may be stale).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RowSet([u64; SET_WORDS]);

impl Default for RowSet {
    fn default() -> RowSet {
        RowSet([0; SET_WORDS])
    }
}

impl RowSet {
    /// Every row.
    pub fn all() -> RowSet {
        RowSet([u64::MAX; SET_WORDS])
    }

    fn add(&mut self, row: u32) {
        let row = row as usize;
        if let Some(w) = self.0.get_mut(row / 64) {
            *w |= 1 << (row % 64);
        }
    }

    /// The rows below `len`, in order.
    pub fn positions(&self, len: usize) -> impl Iterator<Item = usize> + '_ {
        // Most words are empty (a call changes a few rows): passed over
        // with one test each.
        let words = self.0.get(..len.div_ceil(64)).unwrap_or(&self.0);
        words
            .iter()
            .enumerate()
            .filter(|&(_, &w)| w != 0)
            .flat_map(move |(i, &w)| Bits(w).map(move |b| i * 64 + b as usize).take_while(move |&r| r < len))
    }
}

/// The rows of the exposed table: which block each shows, the free ones,
/// the blocks waiting for one, and the rows changed since they were last
/// taken.
#[derive(Clone, Debug)]
pub(crate) struct Rows {
    /// Row → block ([`XN_ROW_EMPTY`] when free).
    blocks: Vec<u64>,
    /// Free rows (below `blocks.len()`); room for every row is reserved
    /// with the row, so freeing never allocates.
    free: Vec<u32>,
    /// Blocks registered without a row; some may since have left the
    /// registry (the registry checks).
    waiting: Vec<u64>,
    changed: RowSet,
    max: usize,
}

impl Default for Rows {
    fn default() -> Rows {
        Rows::with_max(XN_ROWS_MAX)
    }
}

impl Rows {
    /// Rows for at most `max` entries (at most [`XN_ROWS_MAX`]).
    pub fn with_max(max: usize) -> Rows {
        Rows {
            blocks: Vec::new(),
            free: Vec::new(),
            waiting: Vec::new(),
            changed: RowSet::default(),
            max: max.min(XN_ROWS_MAX),
        }
    }

    /// A row for `block`, or [`NO_ROW`] (the block then waits for one;
    /// without memory even to wait it is simply not shown).
    pub fn give(&mut self, block: u64) -> u32 {
        let row = match self.free.pop() {
            Some(r) => r,
            None if self.blocks.len() < self.max
                && self.blocks.try_reserve(1).is_ok()
                && self.free.try_reserve(self.blocks.len() + 1).is_ok() =>
            {
                self.blocks.push(XN_ROW_EMPTY);
                (self.blocks.len() - 1) as u32
            }
            None => {
                if self.waiting.try_reserve(1).is_ok() {
                    self.waiting.push(block);
                }
                return NO_ROW;
            }
        };
        if let Some(b) = self.blocks.get_mut(row as usize) {
            *b = block;
        }
        self.changed.add(row);
        row
    }

    /// Frees `row` (nothing for [`NO_ROW`]).
    pub fn release(&mut self, row: u32) {
        if let Some(b) = self.blocks.get_mut(row as usize) {
            *b = XN_ROW_EMPTY;
            self.changed.add(row);
            self.free.push(row);
        }
    }

    /// Whether a row is free now.
    pub fn has_free(&self) -> bool {
        !self.free.is_empty() || self.blocks.len() < self.max
    }

    /// A block waiting for a row (the latest to come), taken off the list.
    pub fn next_waiting(&mut self) -> Option<u64> {
        self.waiting.pop()
    }

    /// Blocks on the waiting list (some may be stale).
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Keeps only the waiting blocks for which `keep` holds.
    pub fn retain_waiting(&mut self, keep: impl FnMut(&u64) -> bool) {
        self.waiting.retain(keep);
    }

    /// Rows in use.
    pub fn used(&self) -> usize {
        self.blocks.len() - self.free.len()
    }

    /// Rows ever handed out (every row below is either in use or free).
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// The block row `row` shows, if any.
    pub fn block(&self, row: usize) -> Option<u64> {
        self.blocks.get(row).copied().filter(|&b| b != XN_ROW_EMPTY)
    }

    /// Row `row`'s entry changed.
    pub fn mark(&mut self, row: u32) {
        self.changed.add(row);
    }

    /// Every row changed (a change that alters every entry's state).
    pub fn mark_all(&mut self) {
        self.changed = RowSet::all();
    }

    /// The rows changed since the last call, and none from now on.
    pub fn take_changed(&mut self) -> RowSet {
        core::mem::take(&mut self.changed)
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use alloc::vec::Vec;

    #[test]
    fn a_row_set_lists_what_was_added_below_the_length() {
        let mut s = RowSet::default();
        for r in [3, 64, 65, 700, 2047] {
            s.add(r);
        }
        assert_eq!(s.positions(2048).collect::<Vec<_>>(), [3, 64, 65, 700, 2047]);
        assert_eq!(s.positions(700).collect::<Vec<_>>(), [3, 64, 65]);
        assert_eq!(RowSet::all().positions(3).collect::<Vec<_>>(), [0, 1, 2]);
        assert_eq!(RowSet::default().positions(2048).count(), 0);
    }

    #[test]
    fn rows_are_reused_and_past_the_limit_blocks_wait() {
        let mut r = Rows::with_max(2);
        assert_eq!((r.give(10), r.give(11), r.give(12)), (0, 1, NO_ROW));
        assert_eq!((r.used(), r.len(), r.waiting()), (2, 2, 1));
        r.release(0);
        assert_eq!(r.block(0), None);
        assert!(r.has_free());
        assert_eq!(r.next_waiting(), Some(12));
        assert_eq!(r.give(12), 0);
        assert_eq!((r.block(0), r.block(1)), (Some(12), Some(11)));
        assert_eq!(r.take_changed().positions(2).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(r.take_changed().positions(2).count(), 0);
    }
}
