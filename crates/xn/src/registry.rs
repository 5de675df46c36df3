//! The buffer-cache registry: one entry per allocated block (block →
//! frame, type, state), kept sorted by block number, memory proportional to
//! the allocated blocks, each entry with its row of the exposed table
//! ([`Rows`]).

use alloc::vec::Vec;

use core::cell::Cell;
use core::ops::{Deref, DerefMut};

use oxok_abi::xn::{DATA, MAX_FS, state};

use crate::Refusal;
use crate::rows::{NO_ROW, RowSet, Rows};

/// Open epochs with completions an entry remembers exactly.
pub(crate) const PENDING: usize = 4;

/// XN's record of one allocated block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    /// File system index.
    pub fs: u32,
    /// `DATA` or a template number of the file system.
    pub ty: u32,
    /// Allocation generation (distinct for every allocation).
    pub generation: u64,
    /// The owning metadata block and its generation; `None` for a root.
    pub parent: Option<(u64, u64)>,
    /// Blocks this metadata block owns in core.
    pub children: u64,
    /// The frame holding the cached block.
    pub frame: Option<crate::Frame>,
    /// Cached content changed since the last write was issued.
    pub dirty: bool,
    /// A write is in flight.
    pub in_flight: bool,
    /// Writes issued so far (the sequence number of the last one).
    pub issued: u64,
    /// Completed writes not yet known durable: (epoch of completion,
    /// highest sequence completed in it), oldest first; `pending` are used.
    pub done: [(u64, u64); PENDING],
    /// Entries of `done` in use.
    pub pending: u8,
    /// The highest sequence known durable, or 0.
    pub durable_seq: u64,
    /// Freed in core when the parent had issued this many writes; the block
    /// waits on the will-free list.
    pub freed: Option<u64>,
    /// The parent's `issued` when this block was allocated.
    pub parent_issued_at_alloc: u64,
    /// Copies in flight reading this block's frame (it stays cached and
    /// allocated until they are done).
    pub pins: u32,
    /// Its row of the exposed table, or [`NO_ROW`] (set by the registry).
    pub row: u32,
}

impl Entry {
    /// A freshly allocated (tainted, uncached) entry.
    pub fn new(fs: u32, ty: u32, generation: u64, parent: Option<(u64, u64)>, parent_issued: u64) -> Entry {
        Entry {
            fs,
            ty,
            generation,
            parent,
            children: 0,
            frame: None,
            dirty: false,
            in_flight: false,
            issued: 0,
            done: [(0, 0); PENDING],
            pending: 0,
            durable_seq: 0,
            freed: None,
            parent_issued_at_alloc: parent_issued,
            pins: 0,
            row: NO_ROW,
        }
    }

    /// An entry found on disk at recovery: durable, uncached.
    pub fn recovered(fs: u32, ty: u32, generation: u64, parent: Option<(u64, u64)>) -> Entry {
        Entry { issued: 1, durable_seq: 1, ..Entry::new(fs, ty, generation, parent, 0) }
    }

    /// Whether it is a metadata block.
    pub fn is_meta(&self) -> bool {
        self.ty != DATA
    }

    /// The completions recorded in `done`.
    fn pending(&self) -> &[(u64, u64)] {
        self.done.get(..usize::from(self.pending)).unwrap_or(&[])
    }

    /// The highest sequence whose write is durable once every epoch up to
    /// `durable` is (exact, as long as at most [`PENDING`] epochs with
    /// completions are open; beyond that, later — never earlier).
    pub fn durable_seq(&self, durable: u64) -> u64 {
        self.pending().iter().filter(|&&(e, _)| e <= durable).map(|&(_, s)| s).fold(self.durable_seq, u64::max)
    }

    /// Records the completion of write `seq` in `epoch`.
    pub fn completed(&mut self, seq: u64, epoch: u64, durable: u64) {
        // Fold what is durable now, keep the rest in order.
        self.durable_seq = self.durable_seq(durable);
        let mut kept = [(0, 0); PENDING];
        let mut n = 0;
        for &(e, s) in self.pending() {
            if e > durable {
                kept[n] = (e, s);
                n += 1;
            }
        }
        match kept.get_mut(n.wrapping_sub(1)) {
            Some(last) if last.0 == epoch => last.1 = last.1.max(seq),
            _ if n == PENDING => {
                // Full: merge the two oldest into the later one
                // (conservative: the older completion counts later).
                kept[1].1 = kept[1].1.max(kept[0].1);
                kept.copy_within(1.., 0);
                kept[PENDING - 1] = (epoch, seq);
            }
            _ => {
                kept[n] = (epoch, seq);
                n += 1;
            }
        }
        self.done = kept;
        self.pending = n as u8;
    }

    /// Whether any write of it has completed since it was allocated (so
    /// the disk holds bytes of its own, durable or not).
    pub fn ever_completed(&self, durable: u64) -> bool {
        self.durable_seq(durable) != 0 || self.pending != 0
    }

    /// Whether a completed write is not yet durable.
    pub fn undurable(&self, durable: u64) -> bool {
        self.pending().iter().any(|&(e, _)| e > durable)
    }

    /// The exposed state ([`oxok_abi::xn::state`]).
    pub fn state(&self, durable: u64) -> u8 {
        if self.in_flight {
            state::IN_FLIGHT
        } else if self.durable_seq(durable) == 0 {
            state::TAINTED
        } else if self.dirty || self.undurable(durable) {
            state::DIRTY
        } else {
            state::CLEAN
        }
    }
}

/// The entries, sorted by block, their rows of the exposed table (and
/// which changed since it was last brought up to date, [`take_changed`]),
/// and the counts the exposed header shows, kept as entries come, go and
/// change.
///
/// [`take_changed`]: Registry::take_changed
#[derive(Clone, Debug, Default)]
pub(crate) struct Registry {
    entries: Vec<(u64, Entry)>,
    rows: Rows,
    tally: Tally,
    /// Where the last two lookups that found different places found their
    /// blocks: the next lookup tries each and just after it before it
    /// searches (a write-back and a publish walk blocks in order; a copy
    /// walks two runs, its sources and its destinations, in turn). Only
    /// hints: each is checked by its block.
    finger: Cell<[usize; 2]>,
}

/// Entries with a cache frame, and entries per file system (numbers past
/// [`MAX_FS`] uncounted).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    pub cached: u64,
    pub per_fs: [u64; MAX_FS],
}

impl Tally {
    /// What `e` adds to the counts.
    fn key(e: &Entry) -> (bool, u32) {
        (e.frame.is_some(), e.fs)
    }

    fn count(&mut self, (cached, fs): (bool, u32), add: bool) {
        let step = |n: &mut u64| *n = if add { n.wrapping_add(1) } else { n.wrapping_sub(1) };
        if cached {
            step(&mut self.cached);
        }
        if let Some(n) = self.per_fs.get_mut(fs as usize) {
            step(n);
        }
    }
}

/// An entry handed out for change ([`Registry::get_mut`]): the counts
/// follow whatever the change did to its frame or file system.
pub(crate) struct EntryMut<'a> {
    entry: &'a mut Entry,
    tally: &'a mut Tally,
    was: (bool, u32),
}

impl Deref for EntryMut<'_> {
    type Target = Entry;
    fn deref(&self) -> &Entry {
        self.entry
    }
}

impl DerefMut for EntryMut<'_> {
    fn deref_mut(&mut self) -> &mut Entry {
        self.entry
    }
}

impl Drop for EntryMut<'_> {
    fn drop(&mut self) {
        let now = Tally::key(self.entry);
        if now != self.was {
            self.tally.count(self.was, false);
            self.tally.count(now, true);
        }
    }
}

impl Registry {
    /// A registry whose exposed table has `max` rows (tests; the kernel's
    /// has [`XN_ROWS_MAX`](oxok_abi::xn::XN_ROWS_MAX)).
    #[cfg(test)]
    pub fn with_rows(max: usize) -> Registry {
        Registry { entries: Vec::new(), rows: Rows::with_max(max), tally: Tally::default(), finger: Cell::new([0; 2]) }
    }

    /// Every row changed (a change that alters every entry's state).
    pub fn mark_all(&mut self) {
        self.rows.mark_all();
    }

    /// The rows changed since the last call, and none from now on.
    pub fn take_changed(&mut self) -> RowSet {
        self.rows.take_changed()
    }

    /// The entry row `row` of the exposed table shows, if any.
    pub fn at_row(&self, row: usize) -> Option<(u64, &Entry)> {
        let block = self.rows.block(row)?;
        self.get(block).map(|e| (block, e))
    }

    /// Rows of the exposed table handed out so far.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Entries there are.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    fn find(&self, block: u64) -> Result<usize, usize> {
        let [f, g] = self.finger.get();
        for i in [f, f.wrapping_add(1), g, g.wrapping_add(1)] {
            if self.entries.get(i).is_some_and(|&(b, _)| b == block) {
                self.point(i);
                return Ok(i);
            }
        }
        let found = self.entries.binary_search_by_key(&block, |&(b, _)| b);
        if let Ok(i) = found {
            self.point(i);
        }
        found
    }

    /// A lookup found index `i`: the fingers follow it.
    fn point(&self, i: usize) {
        let [f, g] = self.finger.get();
        // A step of the run the first finger follows moves it; a step of
        // the other's swaps them, so each stays on its own run.
        let next = if i == f || i == f.wrapping_add(1) { [i, g] } else { [i, f] };
        self.finger.set(next);
    }

    pub fn get(&self, block: u64) -> Option<&Entry> {
        self.find(block).ok().and_then(|i| self.entries.get(i)).map(|(_, e)| e)
    }

    /// The entry of `block`, for change: its row counts as changed.
    pub fn get_mut(&mut self, block: u64) -> Option<EntryMut<'_>> {
        let i = self.find(block).ok()?;
        let Registry { entries, rows, tally, .. } = self;
        let entry = entries.get_mut(i).map(|(_, e)| e)?;
        rows.mark(entry.row);
        let was = Tally::key(entry);
        Some(EntryMut { entry, tally, was })
    }

    /// The counts: entries with a cache frame, entries per file system.
    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Makes room for `n` more entries.
    pub fn reserve(&mut self, n: u64) -> Result<(), Refusal> {
        let n = usize::try_from(n).map_err(|_| Refusal::NoMemory)?;
        self.entries.try_reserve(n).map_err(|_| Refusal::NoMemory)
    }

    /// Inserts (after [`reserve`](Registry::reserve)); replaces an existing
    /// entry for the block (which keeps its row).
    pub fn insert(&mut self, block: u64, mut entry: Entry) -> Result<(), Refusal> {
        match self.find(block) {
            Ok(i) => {
                if let Some(slot) = self.entries.get_mut(i) {
                    self.tally.count(Tally::key(&slot.1), false);
                    self.tally.count(Tally::key(&entry), true);
                    entry.row = slot.1.row;
                    self.rows.mark(entry.row);
                    slot.1 = entry;
                }
            }
            Err(i) => {
                self.entries.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
                self.tally.count(Tally::key(&entry), true);
                entry.row = self.rows.give(block);
                self.entries.insert(i, (block, entry));
            }
        }
        Ok(())
    }

    /// Inserts `n` entries for the blocks `start..start + n`, none of which
    /// is present (after [`reserve`](Registry::reserve)): one move of the
    /// tail, not one per block.
    pub fn insert_run(&mut self, start: u64, n: u64, mut make: impl FnMut() -> Entry) -> Result<(), Refusal> {
        let count = usize::try_from(n).map_err(|_| Refusal::NoMemory)?;
        self.entries.try_reserve(count).map_err(|_| Refusal::NoMemory)?;
        let at = self.entries.partition_point(|&(b, _)| b < start);
        for b in start..start.saturating_add(n) {
            let mut e = make();
            self.tally.count(Tally::key(&e), true);
            e.row = self.rows.give(b);
            self.entries.push((b, e));
        }
        if let Some(tail) = self.entries.get_mut(at..) {
            tail.rotate_right(count);
        }
        Ok(())
    }

    /// Removes the entries of blocks `start..end` for which `drop` holds, in
    /// one pass.
    pub fn remove_run(&mut self, start: u64, end: u64, mut drop: impl FnMut(u64, &Entry) -> bool) {
        let lo = self.entries.partition_point(|&(b, _)| b < start);
        let hi = self.entries.partition_point(|&(b, _)| b < end);
        let mut w = lo;
        for r in lo..hi {
            let Some((b, e)) = self.entries.get(r) else { break };
            if drop(*b, e) {
                self.tally.count(Tally::key(e), false);
                self.rows.release(e.row);
            } else {
                self.entries.swap(w, r);
                w += 1;
            }
        }
        self.entries.drain(w..hi);
        self.seat_waiting();
    }

    /// Appends without keeping the order (recovery); [`sort`](Registry::sort)
    /// before any lookup.
    pub fn push_unsorted(&mut self, block: u64, mut entry: Entry) -> Result<(), Refusal> {
        self.entries.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
        self.tally.count(Tally::key(&entry), true);
        entry.row = self.rows.give(block);
        self.entries.push((block, entry));
        Ok(())
    }

    /// Restores the order after [`push_unsorted`](Registry::push_unsorted).
    pub fn sort(&mut self) {
        self.entries.sort_unstable_by_key(|&(b, _)| b);
        self.mark_all();
    }

    /// Sets every metadata entry's `children` to the number of entries
    /// naming it as parent (recovery; the registry must be sorted).
    pub fn count_children(&mut self) {
        for i in 0..self.entries.len() {
            let Some(&(_, Entry { parent: Some((p, _)), .. })) = self.entries.get(i) else { continue };
            if let Some(mut pe) = self.get_mut(p) {
                pe.children += 1;
            }
        }
    }

    /// Removes the entries of `blocks` (sorted; a block without an entry
    /// is skipped) in one pass: each later entry moves once.
    pub fn remove_sorted(&mut self, blocks: &[u64]) {
        if blocks.is_empty() {
            return;
        }
        let Registry { entries, rows, tally, .. } = self;
        let mut k = 0;
        entries.retain(|(b, e)| {
            while blocks.get(k).is_some_and(|g| g < b) {
                k += 1;
            }
            let gone = blocks.get(k) == Some(b);
            if gone {
                tally.count(Tally::key(e), false);
                rows.release(e.row);
            }
            !gone
        });
        self.seat_waiting();
    }

    /// Gives rows freed to entries waiting for one. Each waiting block is
    /// looked at once (a stale one, gone or seated since, is dropped), and
    /// the list is pruned when stale blocks outnumber the entries still
    /// waiting, so it stays within twice the registry's size.
    fn seat_waiting(&mut self) {
        while self.rows.has_free() {
            let Some(block) = self.rows.next_waiting() else { break };
            let Ok(i) = self.find(block) else { continue };
            if let Some((_, e)) = self.entries.get_mut(i)
                && e.row == NO_ROW
            {
                e.row = self.rows.give(block);
            }
        }
        let rowless = self.entries.len().saturating_sub(self.rows.used());
        if self.rows.waiting() > 2 * rowless + 64 {
            let entries = &self.entries;
            let waits = |b: &u64| {
                entries
                    .binary_search_by_key(b, |&(x, _)| x)
                    .is_ok_and(|i| entries.get(i).is_some_and(|e| e.1.row == NO_ROW))
            };
            self.rows.retain_waiting(waits);
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, &Entry)> {
        self.entries.iter().map(|(b, e)| (*b, e))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::collections::BTreeSet;

    /// Random insertions and removals past a table of 8 rows: every row
    /// shows a distinct registered block, and every entry has a row
    /// whenever fewer entries than rows are registered (a freed row goes to
    /// an entry waiting for one); the waiting list stays bounded.
    #[test]
    fn rows_stay_distinct_and_waiting_entries_get_freed_rows() {
        let mut rng = oxok_testrng::Rng::new(7);
        for _ in 0..200 {
            let mut reg = Registry::with_rows(8);
            let mut live = BTreeSet::new();
            for _ in 0..300 {
                let b = rng.below(40);
                if rng.below(2) == 0 {
                    reg.insert(b, Entry::new(0, DATA, 1, None, 0)).unwrap();
                    live.insert(b);
                } else if rng.below(2) == 0 {
                    reg.remove_sorted(&[b]);
                    live.remove(&b);
                } else {
                    let end = b + rng.below(6);
                    reg.remove_run(b, end, |_, _| true);
                    live.retain(|&x| !(b..end).contains(&x));
                }
                let shown: Vec<u64> = (0..reg.rows()).filter_map(|r| reg.at_row(r).map(|(b, _)| b)).collect();
                let distinct: BTreeSet<u64> = shown.iter().copied().collect();
                assert_eq!(distinct.len(), shown.len(), "a block in two rows");
                assert!(distinct.is_subset(&live));
                assert_eq!(shown.len(), live.len().min(8), "a free row while an entry waits");
                for (r, b) in (0..reg.rows()).filter_map(|r| reg.at_row(r).map(|(b, _)| (r, b))) {
                    assert_eq!(reg.get(b).map(|e| e.row as usize), Some(r));
                }
                assert!(reg.rows.waiting() <= 2 * live.len() + 64);
            }
        }
    }

    /// Lookups in order, backwards, in two interleaved walks, at random
    /// and right after entries came and went before the last one found (so
    /// a finger points at a moved entry): each finds exactly the block
    /// asked for, or nothing for a block not registered — the fingers are
    /// hints, never answers.
    #[test]
    fn a_lookup_finds_its_own_block_wherever_the_last_one_was() {
        let mut rng = oxok_testrng::Rng::new(11);
        for _ in 0..100 {
            let mut reg = Registry::with_rows(64);
            let mut live = BTreeSet::new();
            for _ in 0..400 {
                let b = rng.below(60);
                match rng.below(4) {
                    0 => {
                        let e = Entry::new(0, DATA, b + 1, None, 0);
                        reg.insert(b, e).unwrap();
                        live.insert(b);
                    }
                    1 => {
                        reg.remove_sorted(&[b]);
                        live.remove(&b);
                    }
                    2 => {
                        // A walk in order, then back; then two walks in
                        // turn (a copy's sources and destinations).
                        let from = rng.below(60);
                        for x in (from..60).chain((0..from).rev()) {
                            assert_eq!(reg.get(x).map(|e| e.generation), live.contains(&x).then_some(x + 1));
                        }
                        for (x, y) in (0..from).zip(from..60) {
                            for z in [x, y] {
                                assert_eq!(reg.get(z).map(|e| e.generation), live.contains(&z).then_some(z + 1));
                            }
                        }
                    }
                    _ => {
                        let x = rng.below(62);
                        assert_eq!(reg.get(x).map(|e| e.generation), live.contains(&x).then_some(x + 1));
                        let found = reg.get_mut(x).map(|e| e.generation);
                        assert_eq!(found, live.contains(&x).then_some(x + 1));
                    }
                }
            }
        }
    }
}
