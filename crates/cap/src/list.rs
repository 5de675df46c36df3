//! Capability lists: the capabilities an environment holds, named by slot.

use crate::{Cap, CapError, Lineage, Name, Rights, check};
use alloc::vec::Vec;

/// An empty slot of a [`CapList`], found by [`CapList::vacancy`] and
/// filled by [`CapList::fill`]: an insert split into a check that changes
/// nothing and a change that cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vacancy(usize);

/// An environment's capability list: up to `N` slots, each empty or
/// holding one [`Cap`]. The kernel uses `N = 64`.
///
/// The list lives in kernel memory; this is what makes capabilities
/// unforgeable. User code refers to a capability only by its slot number,
/// which arrives as a raw `u64` from a register and is checked here
/// ([`CapError::BadSlot`] when out of range, [`CapError::EmptySlot`] when
/// nothing is there), never trusted.
///
/// Its memory grows with use: an empty list holds none, and room for more
/// slots is taken (fallibly: [`CapError::Full`] when memory is short) by
/// [`CapList::vacancy`] and [`CapList::insert_at`], in steps that double
/// (1, 2, 4, … `N` slots). Slots past the room taken are empty. A list
/// never gives memory back until it is dropped.
#[derive(Clone, Debug)]
pub struct CapList<const N: usize> {
    /// Slots `0..entries.len()`; every later slot is empty.
    entries: Vec<Entry>,
}

/// One slot: its capability and the capability's derivation lineage
/// ([`Lineage::EMPTY`] when the slot is empty or nothing was derived from
/// or to it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    cap: Option<Cap>,
    lineage: Lineage,
}

impl Entry {
    const EMPTY: Entry = Entry { cap: None, lineage: Lineage::EMPTY };
}

impl<const N: usize> CapList<N> {
    /// How many slots the list has.
    pub const CAPACITY: usize = N;

    /// An empty list (it holds no memory).
    pub const fn new() -> CapList<N> {
        CapList { entries: Vec::new() }
    }

    /// The slot index for a raw slot number, if it is in range.
    fn index(slot: u64) -> Result<usize, CapError> {
        usize::try_from(slot).ok().filter(|&i| i < N).ok_or(CapError::BadSlot)
    }

    /// Makes room for slot `i` (`i < N`): the entries grow, by doubling,
    /// to cover it. [`CapError::Full`] if the memory cannot be had (the
    /// list is unchanged).
    fn cover(&mut self, i: usize) -> Result<(), CapError> {
        if i < self.entries.len() {
            return Ok(());
        }
        let want = Self::room_for(i);
        if want > self.entries.capacity() {
            self.entries.try_reserve_exact(want - self.entries.len()).map_err(|_| CapError::Full)?;
        }
        // The room is reserved: this does not allocate.
        self.entries.resize(want, Entry::EMPTY);
        Ok(())
    }

    /// Puts `cap` into the first empty slot and returns that slot's number,
    /// or [`CapError::Full`] if there is none.
    pub fn insert(&mut self, cap: Cap) -> Result<usize, CapError> {
        self.insert_derived(cap, Lineage::EMPTY)
    }

    /// Puts `cap` with its derivation `lineage` (from
    /// [`derive_child`](crate::derive_child)) into the first empty slot and
    /// returns that slot's number, or [`CapError::Full`] if there is none.
    pub fn insert_derived(&mut self, cap: Cap, lineage: Lineage) -> Result<usize, CapError> {
        let at = self.vacancy().ok_or(CapError::Full)?;
        Ok(self.fill_derived(at, cap, lineage))
    }

    /// The first empty slot, if any (with its memory taken, so that
    /// filling it cannot fail): the check half of an insert, which changes
    /// no slot. [`CapList::fill`] is the half that cannot fail. `None` when
    /// every slot is full, or when the list must grow and memory is short.
    pub fn vacancy(&mut self) -> Option<Vacancy> {
        let i = self.first_empty();
        if i >= N {
            return None;
        }
        self.cover(i).ok()?;
        Some(Vacancy(i))
    }

    /// Bytes [`CapList::vacancy`] would take to grow the list now (0 if it
    /// has room for its first empty slot, or is full): what a kernel
    /// checks its heap for first.
    pub fn growth(&self) -> usize {
        let i = self.first_empty();
        if i < self.entries.len() || i >= N {
            return 0;
        }
        Self::room_for(i).saturating_sub(self.entries.capacity()) * Self::SLOT_BYTES
    }

    /// The first empty slot (the room taken, when every slot with room is
    /// full).
    fn first_empty(&self) -> usize {
        self.entries.iter().position(|e| e.cap.is_none()).unwrap_or(self.entries.len())
    }

    /// The slots' room a list grows to for slot `i`: doubling, at most `N`.
    fn room_for(i: usize) -> usize {
        (i + 1).next_power_of_two().min(N).max(i + 1)
    }

    /// Puts `cap` into the slot `at` found by [`CapList::vacancy`] (with no
    /// change to the list in between) and returns its number.
    pub fn fill(&mut self, at: Vacancy, cap: Cap) -> usize {
        self.fill_derived(at, cap, Lineage::EMPTY)
    }

    /// [`CapList::fill`] with the child's derivation `lineage` (from
    /// [`derive_child`](crate::derive_child)): the half of
    /// [`CapList::insert_derived`] that cannot fail.
    pub fn fill_derived(&mut self, at: Vacancy, cap: Cap, lineage: Lineage) -> usize {
        if let Some(e) = self.entries.get_mut(at.0) {
            *e = Entry { cap: Some(cap), lineage };
        }
        at.0
    }

    /// The derivation lineage of the capability in slot `slot`.
    ///
    /// Errors: as for [`CapList::get`].
    pub fn lineage(&self, slot: u64) -> Result<Lineage, CapError> {
        self.get(slot)?;
        let i = Self::index(slot)?;
        self.entries.get(i).map(|e| e.lineage).ok_or(CapError::BadSlot)
    }

    /// Sets the lineage of the capability in slot `slot` (errors as for
    /// [`CapList::get`]).
    pub(crate) fn set_lineage(&mut self, slot: u64, lineage: Lineage) -> Result<(), CapError> {
        self.get(slot)?;
        let i = Self::index(slot)?;
        self.entries.get_mut(i).ok_or(CapError::BadSlot)?.lineage = lineage;
        Ok(())
    }

    /// Removes every capability derived from node `node` (see
    /// [`revoke_derived`](crate::revoke_derived)).
    pub(crate) fn remove_descendants(&mut self, node: u64, mut removed: impl FnMut(&Cap)) -> usize {
        let mut count = 0;
        for e in &mut self.entries {
            if e.lineage.descends_from(node) {
                if let Some(cap) = e.cap.take() {
                    removed(&cap);
                    count += 1;
                }
                e.lineage = Lineage::EMPTY;
            }
        }
        count
    }

    /// Puts `cap` into slot `slot`, returning what was there before (a list
    /// owner may overwrite its own slots), or [`CapError::BadSlot`] if the
    /// slot is out of range ([`CapError::Full`] if the list had to grow to
    /// reach it and memory is short; nothing changed).
    pub fn insert_at(&mut self, slot: u64, cap: Cap) -> Result<Option<Cap>, CapError> {
        let i = Self::index(slot)?;
        self.cover(i)?;
        let e = self.entries.get_mut(i).ok_or(CapError::BadSlot)?;
        let old = e.cap.replace(cap);
        e.lineage = Lineage::EMPTY;
        Ok(old)
    }

    /// The capability in slot `slot`.
    ///
    /// Errors: [`CapError::BadSlot`] if out of range (any `u64`, including
    /// `u64::MAX`, is safe to pass), [`CapError::EmptySlot`] if empty.
    #[inline]
    pub fn get(&self, slot: u64) -> Result<&Cap, CapError> {
        // Every slot with room is below `N`: one bounds test finds a held
        // capability; which error a miss is comes out of line.
        match usize::try_from(slot).ok().and_then(|i| self.entries.get(i)) {
            Some(Entry { cap: Some(cap), .. }) => Ok(cap),
            _ => Err(Self::miss(slot)),
        }
    }

    /// Why slot `slot` holds nothing: out of range, or empty.
    #[cold]
    fn miss(slot: u64) -> CapError {
        match Self::index(slot) {
            Ok(_) => CapError::EmptySlot,
            Err(e) => e,
        }
    }

    /// Takes the capability out of slot `slot`, leaving it empty.
    ///
    /// Errors: as for [`CapList::get`].
    pub fn remove(&mut self, slot: u64) -> Result<Cap, CapError> {
        let i = Self::index(slot)?;
        let e = self.entries.get_mut(i).ok_or(CapError::EmptySlot)?;
        let cap = e.cap.take().ok_or(CapError::EmptySlot)?;
        e.lineage = Lineage::EMPTY;
        Ok(cap)
    }

    /// The occupied slots, in slot order, as `(slot, capability)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Cap)> + '_ {
        self.entries.iter().enumerate().filter_map(|(i, e)| e.cap.as_ref().map(|c| (i, c)))
    }

    /// How many slots are occupied.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether no slot is occupied.
    pub fn is_empty(&self) -> bool {
        self.entries.iter().all(|e| e.cap.is_none())
    }

    /// Whether every slot is occupied.
    pub fn is_full(&self) -> bool {
        self.entries.len() == N && self.entries.iter().all(|e| e.cap.is_some())
    }

    /// Slots the list has memory for (empty or not): what it costs, in
    /// [`CapList::SLOT_BYTES`] each.
    pub fn room(&self) -> usize {
        self.entries.capacity()
    }

    /// Bytes one slot's room takes.
    pub const SLOT_BYTES: usize = core::mem::size_of::<Entry>();

    /// The first slot holding a capability that passes the guard `guard`
    /// for `need` (see [`check`]), if any. For libOS-style "find me a
    /// credential" searches and for kernel diagnostics; calls themselves
    /// name their slot explicitly.
    pub fn find_dominating(&self, guard: &Name, need: Rights) -> Option<usize> {
        self.iter().find(|(_, cap)| check(cap, guard, need).is_ok()).map(|(i, _)| i)
    }

    /// Removes every capability for which `doomed` returns true and returns
    /// how many were removed. See [`revoke_matching`](crate::revoke_matching)
    /// for the usual predicate.
    pub fn remove_where(&mut self, mut doomed: impl FnMut(&Cap) -> bool) -> usize {
        let mut removed = 0;
        for e in &mut self.entries {
            if e.cap.as_ref().is_some_and(&mut doomed) {
                *e = Entry::EMPTY;
                removed += 1;
            }
        }
        removed
    }

    /// Empties every slot (the memory stays).
    pub fn clear(&mut self) {
        self.entries.iter_mut().for_each(|e| *e = Entry::EMPTY);
    }
}

impl<const N: usize> PartialEq for CapList<N> {
    /// Equal when every slot holds the same capability and lineage (the
    /// room each has taken does not matter).
    fn eq(&self, other: &CapList<N>) -> bool {
        let longer = self.entries.len().max(other.entries.len());
        (0..longer)
            .all(|i| self.entries.get(i).unwrap_or(&Entry::EMPTY) == other.entries.get(i).unwrap_or(&Entry::EMPTY))
    }
}

impl<const N: usize> Eq for CapList<N> {}

impl<const N: usize> Default for CapList<N> {
    /// An empty list.
    fn default() -> CapList<N> {
        CapList::new()
    }
}
