//! Capability lists: the capabilities an environment holds, named by slot.

use crate::{Cap, CapError, Lineage, Name, Rights, check};

/// An empty slot of a [`CapList`], found by [`CapList::vacancy`] and
/// filled by [`CapList::fill`]: an insert split into a check that changes
/// nothing and a change that cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vacancy(usize);

/// An environment's capability list: `N` slots, each empty or holding one
/// [`Cap`]. The kernel uses `N = 64`.
///
/// The list lives in kernel memory; this is what makes capabilities
/// unforgeable. User code refers to a capability only by its slot number,
/// which arrives as a raw `u64` from a register and is checked here
/// ([`CapError::BadSlot`] when out of range, [`CapError::EmptySlot`] when
/// nothing is there), never trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CapList<const N: usize> {
    slots: [Option<Cap>; N],
    /// Each slot's derivation lineage ([`Lineage::EMPTY`] when the slot is
    /// empty or nothing was derived from or to it).
    lineage: [Lineage; N],
}

impl<const N: usize> CapList<N> {
    /// How many slots the list has.
    pub const CAPACITY: usize = N;

    /// An empty list.
    pub const fn new() -> CapList<N> {
        CapList { slots: [None; N], lineage: [Lineage::EMPTY; N] }
    }

    /// The slot index for a raw slot number, if it is in range.
    fn index(slot: u64) -> Result<usize, CapError> {
        usize::try_from(slot).ok().filter(|&i| i < N).ok_or(CapError::BadSlot)
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

    /// The first empty slot, if any: the check half of an insert, which
    /// changes nothing. [`CapList::fill`] is the half that cannot fail.
    pub fn vacancy(&self) -> Option<Vacancy> {
        self.slots.iter().position(Option::is_none).map(Vacancy)
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
        if let Some(slot) = self.slots.get_mut(at.0) {
            *slot = Some(cap);
        }
        if let Some(l) = self.lineage.get_mut(at.0) {
            *l = lineage;
        }
        at.0
    }

    /// The derivation lineage of the capability in slot `slot`.
    ///
    /// Errors: as for [`CapList::get`].
    pub fn lineage(&self, slot: u64) -> Result<Lineage, CapError> {
        self.get(slot)?;
        let i = Self::index(slot)?;
        self.lineage.get(i).copied().ok_or(CapError::BadSlot)
    }

    /// Sets the lineage of the capability in slot `slot` (errors as for
    /// [`CapList::get`]).
    pub(crate) fn set_lineage(&mut self, slot: u64, lineage: Lineage) -> Result<(), CapError> {
        self.get(slot)?;
        let i = Self::index(slot)?;
        *self.lineage.get_mut(i).ok_or(CapError::BadSlot)? = lineage;
        Ok(())
    }

    /// Removes every capability derived from node `node` (see
    /// [`revoke_derived`](crate::revoke_derived)).
    pub(crate) fn remove_descendants(&mut self, node: u64, mut removed: impl FnMut(&Cap)) -> usize {
        let mut count = 0;
        for (slot, lineage) in self.slots.iter_mut().zip(self.lineage.iter_mut()) {
            if lineage.descends_from(node) {
                if let Some(cap) = slot.take() {
                    removed(&cap);
                    count += 1;
                }
                *lineage = Lineage::EMPTY;
            }
        }
        count
    }

    /// Puts `cap` into slot `slot`, returning what was there before (a list
    /// owner may overwrite its own slots), or [`CapError::BadSlot`] if the
    /// slot is out of range.
    pub fn insert_at(&mut self, slot: u64, cap: Cap) -> Result<Option<Cap>, CapError> {
        let i = Self::index(slot)?;
        let entry = self.slots.get_mut(i).ok_or(CapError::BadSlot)?;
        let old = entry.replace(cap);
        if let Some(l) = self.lineage.get_mut(i) {
            *l = Lineage::EMPTY;
        }
        Ok(old)
    }

    /// The capability in slot `slot`.
    ///
    /// Errors: [`CapError::BadSlot`] if out of range (any `u64`, including
    /// `u64::MAX`, is safe to pass), [`CapError::EmptySlot`] if empty.
    pub fn get(&self, slot: u64) -> Result<&Cap, CapError> {
        let i = Self::index(slot)?;
        self.slots.get(i).ok_or(CapError::BadSlot)?.as_ref().ok_or(CapError::EmptySlot)
    }

    /// Takes the capability out of slot `slot`, leaving it empty.
    ///
    /// Errors: as for [`CapList::get`].
    pub fn remove(&mut self, slot: u64) -> Result<Cap, CapError> {
        let i = Self::index(slot)?;
        let cap = self.slots.get_mut(i).ok_or(CapError::BadSlot)?.take().ok_or(CapError::EmptySlot)?;
        if let Some(l) = self.lineage.get_mut(i) {
            *l = Lineage::EMPTY;
        }
        Ok(cap)
    }

    /// The occupied slots, in slot order, as `(slot, capability)`.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Cap)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| s.as_ref().map(|c| (i, c)))
    }

    /// How many slots are occupied.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|s| s.is_some()).count()
    }

    /// Whether no slot is occupied.
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// Whether every slot is occupied.
    pub fn is_full(&self) -> bool {
        self.slots.iter().all(Option::is_some)
    }

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
        for (slot, lineage) in self.slots.iter_mut().zip(self.lineage.iter_mut()) {
            if slot.as_ref().is_some_and(&mut doomed) {
                *slot = None;
                *lineage = Lineage::EMPTY;
                removed += 1;
            }
        }
        removed
    }

    /// Empties every slot.
    pub fn clear(&mut self) {
        self.slots = [None; N];
        self.lineage = [Lineage::EMPTY; N];
    }
}

impl<const N: usize> Default for CapList<N> {
    /// An empty list.
    fn default() -> CapList<N> {
        CapList::new()
    }
}
