//! The buffer-cache registry: one entry per allocated block (block →
//! frame, type, state), kept sorted by block number, memory proportional to
//! the allocated blocks.

use alloc::vec::Vec;

use core::ops::{Deref, DerefMut};

use oxok_abi::xn::{DATA, MAX_FS, state};

use crate::{Refusal, Spans};

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

/// The entries, sorted by block, the positions changed since the
/// exposed rows were last brought up to date ([`take_changed`]), and the
/// counts the exposed header shows, kept as entries come, go and change.
///
/// [`take_changed`]: Registry::take_changed
#[derive(Clone, Debug, Default)]
pub(crate) struct Registry(Vec<(u64, Entry)>, Spans, Tally);

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
    /// Positions `lo..hi` may differ from their exposed rows: an entry
    /// handed out for change, or every position from an insertion or
    /// removal on (the later entries moved).
    fn mark(&mut self, lo: usize, hi: usize) {
        self.1.add(lo, hi);
    }

    /// Every position changed (a change that alters every entry's state).
    pub fn mark_all(&mut self) {
        self.mark(0, usize::MAX);
    }

    /// The positions changed since the last call, and none from now on.
    pub fn take_changed(&mut self) -> Spans {
        self.1.take()
    }

    /// The entry at position `i` (the exposed table's row `i`).
    pub fn at(&self, i: usize) -> Option<(u64, &Entry)> {
        self.0.get(i).map(|(b, e)| (*b, e))
    }

    /// Entries there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    fn find(&self, block: u64) -> Result<usize, usize> {
        self.0.binary_search_by_key(&block, |&(b, _)| b)
    }

    pub fn get(&self, block: u64) -> Option<&Entry> {
        self.find(block).ok().and_then(|i| self.0.get(i)).map(|(_, e)| e)
    }

    pub fn get_mut(&mut self, block: u64) -> Option<EntryMut<'_>> {
        let i = self.find(block).ok()?;
        self.mark(i, i + 1);
        let Registry(entries, _, tally) = self;
        let entry = entries.get_mut(i).map(|(_, e)| e)?;
        let was = Tally::key(entry);
        Some(EntryMut { entry, tally, was })
    }

    /// The counts: entries with a cache frame, entries per file system.
    pub fn tally(&self) -> &Tally {
        &self.2
    }

    /// Makes room for `n` more entries.
    pub fn reserve(&mut self, n: u64) -> Result<(), Refusal> {
        let n = usize::try_from(n).map_err(|_| Refusal::NoMemory)?;
        self.0.try_reserve(n).map_err(|_| Refusal::NoMemory)
    }

    /// Inserts (after [`reserve`](Registry::reserve)); replaces an existing
    /// entry for the block.
    pub fn insert(&mut self, block: u64, entry: Entry) -> Result<(), Refusal> {
        match self.find(block) {
            Ok(i) => {
                self.mark(i, i + 1);
                if let Some(slot) = self.0.get_mut(i) {
                    self.2.count(Tally::key(&slot.1), false);
                    self.2.count(Tally::key(&entry), true);
                    slot.1 = entry;
                }
            }
            Err(i) => {
                self.0.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
                self.2.count(Tally::key(&entry), true);
                self.0.insert(i, (block, entry));
                self.mark(i, self.0.len());
            }
        }
        Ok(())
    }

    /// Inserts `n` entries for the blocks `start..start + n`, none of which
    /// is present (after [`reserve`](Registry::reserve)): one move of the
    /// tail, not one per block.
    pub fn insert_run(&mut self, start: u64, n: u64, mut make: impl FnMut() -> Entry) -> Result<(), Refusal> {
        let count = usize::try_from(n).map_err(|_| Refusal::NoMemory)?;
        self.0.try_reserve(count).map_err(|_| Refusal::NoMemory)?;
        let at = self.0.partition_point(|&(b, _)| b < start);
        for b in start..start.saturating_add(n) {
            let e = make();
            self.2.count(Tally::key(&e), true);
            self.0.push((b, e));
        }
        if let Some(tail) = self.0.get_mut(at..) {
            tail.rotate_right(count);
        }
        self.mark(at, self.0.len());
        Ok(())
    }

    /// Removes the entries of blocks `start..end` for which `drop` holds, in
    /// one pass.
    pub fn remove_run(&mut self, start: u64, end: u64, mut drop: impl FnMut(u64, &Entry) -> bool) {
        let lo = self.0.partition_point(|&(b, _)| b < start);
        let hi = self.0.partition_point(|&(b, _)| b < end);
        self.mark(lo, self.0.len());
        let mut w = lo;
        for r in lo..hi {
            let Some((b, e)) = self.0.get(r) else { break };
            if drop(*b, e) {
                self.2.count(Tally::key(e), false);
            } else {
                self.0.swap(w, r);
                w += 1;
            }
        }
        self.0.drain(w..hi);
    }

    /// Appends without keeping the order (recovery); [`sort`](Registry::sort)
    /// before any lookup.
    pub fn push_unsorted(&mut self, block: u64, entry: Entry) -> Result<(), Refusal> {
        self.0.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
        self.2.count(Tally::key(&entry), true);
        self.0.push((block, entry));
        self.mark_all();
        Ok(())
    }

    /// Restores the order after [`push_unsorted`](Registry::push_unsorted).
    pub fn sort(&mut self) {
        self.0.sort_unstable_by_key(|&(b, _)| b);
        self.mark_all();
    }

    /// Sets every metadata entry's `children` to the number of entries
    /// naming it as parent (recovery; the registry must be sorted).
    pub fn count_children(&mut self) {
        for i in 0..self.0.len() {
            let Some(&(_, Entry { parent: Some((p, _)), .. })) = self.0.get(i) else { continue };
            if let Some(mut pe) = self.get_mut(p) {
                pe.children += 1;
            }
        }
    }

    /// Removes the entries of `blocks` (sorted; a block without an entry
    /// is skipped) in one pass: each later entry moves once.
    pub fn remove_sorted(&mut self, blocks: &[u64]) {
        let Some(&first) = blocks.first() else { return };
        let lo = self.0.partition_point(|&(b, _)| b < first);
        self.mark(lo, self.0.len());
        let (tally, mut k) = (&mut self.2, 0);
        self.0.retain(|(b, e)| {
            while blocks.get(k).is_some_and(|g| g < b) {
                k += 1;
            }
            let gone = blocks.get(k) == Some(b);
            if gone {
                tally.count(Tally::key(e), false);
            }
            !gone
        });
    }

    pub fn iter(&self) -> impl Iterator<Item = (u64, &Entry)> {
        self.0.iter().map(|(b, e)| (*b, e))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
