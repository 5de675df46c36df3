//! Capability lists: the capabilities an environment holds, named by slot.

use crate::{Cap, CapError, Lineage, Name, Rights, check};
use alloc::vec::Vec;

/// An empty slot of a [`CapList`], found by [`CapList::vacancy`] and
/// filled by [`CapList::fill`]: an insert split into a check that changes
/// nothing and a change that cannot fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vacancy(usize);

/// An empty slot with room for a derived capability's lineage too, found by
/// [`CapList::vacancy_derived`] and filled by [`CapList::fill_derived`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DerivedVacancy(usize);

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
///
/// Lineages (`crate::lineage`) are kept apart from the slots, one record
/// per capability that has one, in room that also doubles as it is taken
/// ([`CapList::vacancy_derived`], and a derivation from a capability that
/// had no node yet): a list of capabilities minted from nothing — an
/// environment's own, a frame just allocated — pays nothing for them.
#[derive(Clone, Debug)]
pub struct CapList<const N: usize> {
    /// Slots `0..slots.len()`; every later slot is empty.
    slots: Vec<Option<Cap>>,
    /// The lineage of each occupied slot that has a non-empty one, in no
    /// order; every other slot's is [`Lineage::EMPTY`].
    lineages: Vec<Tagged>,
    /// Whether slot 0 holds its owner's own capability, kept outside the
    /// list ([`CapList::with_first_implied`]).
    first_implied: bool,
}

/// A slot's lineage, in [`CapList::lineages`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Tagged {
    slot: usize,
    lineage: Lineage,
}

impl<const N: usize> CapList<N> {
    /// How many slots the list has.
    pub const CAPACITY: usize = N;

    /// An empty list (it holds no memory).
    pub const fn new() -> CapList<N> {
        CapList { slots: Vec::new(), lineages: Vec::new(), first_implied: false }
    }

    /// An empty list whose slot 0 holds a capability its owner implies
    /// rather than stores: the kernel's environment, whose own capability
    /// its id names. The list takes no memory for it; slot 0 reads as
    /// empty here ([`CapList::get`]), no vacancy is ever slot 0, and the
    /// owner answers for it ([`CapList::first_implied`],
    /// [`CapList::source`]) until it is overwritten
    /// ([`CapList::insert_at`]). Its lineage is kept as any slot's
    /// ([`derive_child_with`](crate::derive_child_with)).
    pub const fn with_first_implied() -> CapList<N> {
        CapList { slots: Vec::new(), lineages: Vec::new(), first_implied: N > 0 }
    }

    /// Whether slot 0 holds the owner's implied capability
    /// ([`CapList::with_first_implied`]).
    #[inline]
    pub const fn first_implied(&self) -> bool {
        self.first_implied
    }

    /// The capability in slot `slot`, where slot 0's implied one is `own`
    /// (as [`CapList::get`] for every other slot; [`CapError::EmptySlot`]
    /// for an implied slot 0 without `own`).
    pub fn source(&self, slot: u64, own: Option<&Cap>) -> Result<Cap, CapError> {
        if slot == 0 && self.first_implied { own.copied().ok_or(CapError::EmptySlot) } else { self.get(slot).copied() }
    }

    /// Whether slot `slot` holds a capability, stored or implied (errors
    /// as for [`CapList::get`] when not).
    fn holds(&self, slot: u64) -> Result<(), CapError> {
        if slot == 0 && self.first_implied { Ok(()) } else { self.get(slot).map(|_| ()) }
    }

    /// The slot index for a raw slot number, if it is in range.
    fn index(slot: u64) -> Result<usize, CapError> {
        usize::try_from(slot).ok().filter(|&i| i < N).ok_or(CapError::BadSlot)
    }

    /// Makes room for slot `i` (`i < N`): the slots grow, by doubling,
    /// to cover it. [`CapError::Full`] if the memory cannot be had (the
    /// list is unchanged).
    fn cover(&mut self, i: usize) -> Result<(), CapError> {
        if i < self.slots.len() {
            return Ok(());
        }
        let want = Self::room_for(i);
        if want > self.slots.capacity() {
            self.slots.try_reserve_exact(want - self.slots.len()).map_err(|_| CapError::Full)?;
        }
        // The room is reserved: this does not allocate.
        self.slots.resize(want, None);
        Ok(())
    }

    /// Puts `cap` into the first empty slot and returns that slot's number,
    /// or [`CapError::Full`] if there is none.
    pub fn insert(&mut self, cap: Cap) -> Result<usize, CapError> {
        let at = self.vacancy().ok_or(CapError::Full)?;
        Ok(self.fill(at, cap))
    }

    /// Puts `cap` with its derivation `lineage` (from
    /// [`derive_child`](crate::derive_child)) into the first empty slot and
    /// returns that slot's number, or [`CapError::Full`] if there is none.
    pub fn insert_derived(&mut self, cap: Cap, lineage: Lineage) -> Result<usize, CapError> {
        let at = self.vacancy_derived().ok_or(CapError::Full)?;
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

    /// [`CapList::vacancy`] for a derived capability: also takes the room
    /// for two lineage records, the child's and its source's, which a
    /// derivation from this same list may record first
    /// ([`derive_child`](crate::derive_child) on a capability with no node
    /// yet).
    pub fn vacancy_derived(&mut self) -> Option<DerivedVacancy> {
        let Vacancy(i) = self.vacancy()?;
        self.take_lineage_room(DERIVED_SPARE).ok()?;
        Some(DerivedVacancy(i))
    }

    /// Bytes [`CapList::vacancy`] would take to grow the list now (0 if it
    /// has room for its first empty slot, or is full): what a kernel
    /// checks its heap for first.
    pub fn growth(&self) -> usize {
        let i = self.first_empty();
        if i < self.slots.len() || i >= N {
            return 0;
        }
        Self::room_for(i).saturating_sub(self.slots.capacity()) * Self::SLOT_BYTES
    }

    /// Bytes [`CapList::vacancy_derived`] would take now.
    pub fn growth_derived(&self) -> usize {
        self.growth() + self.lineage_growth(DERIVED_SPARE)
    }

    /// Bytes it would take to have room for `spare` more lineage records
    /// than the list holds (0 when it has it).
    pub fn lineage_growth(&self, spare: usize) -> usize {
        Self::lineage_room_for(self.lineages.len() + spare).saturating_sub(self.lineages.capacity())
            * Self::LINEAGE_BYTES
    }

    /// Takes the room for `spare` more lineage records, doubling.
    fn take_lineage_room(&mut self, spare: usize) -> Result<(), CapError> {
        let want = Self::lineage_room_for(self.lineages.len() + spare);
        if want > self.lineages.capacity() {
            self.lineages.try_reserve_exact(want - self.lineages.len()).map_err(|_| CapError::Full)?;
        }
        Ok(())
    }

    /// The lineage room a list grows to for `records`: doubling from 2, at
    /// most one per slot (and never less than asked for).
    fn lineage_room_for(records: usize) -> usize {
        if records == 0 { 0 } else { records.next_power_of_two().clamp(2, N.max(2)).max(records) }
    }

    /// The first empty slot (the room taken, when every slot with room is
    /// full).
    fn first_empty(&self) -> usize {
        let from = usize::from(self.first_implied);
        self.slots.iter().skip(from).position(Option::is_none).map_or(self.slots.len().max(from), |i| i + from)
    }

    /// The slots' room a list grows to for slot `i`: doubling, at most `N`.
    fn room_for(i: usize) -> usize {
        (i + 1).next_power_of_two().min(N).max(i + 1)
    }

    /// Puts `cap` into the slot `at` found by [`CapList::vacancy`] (with no
    /// change to the list in between) and returns its number.
    pub fn fill(&mut self, at: Vacancy, cap: Cap) -> usize {
        if let Some(e) = self.slots.get_mut(at.0) {
            *e = Some(cap);
        }
        at.0
    }

    /// Puts `cap` with its derivation `lineage` (from
    /// [`derive_child`](crate::derive_child)) into the slot `at` found by
    /// [`CapList::vacancy_derived`]: the half of [`CapList::insert_derived`]
    /// that cannot fail. Between the two, only a derivation from this same
    /// list may change it (its room was taken for that too).
    pub fn fill_derived(&mut self, at: DerivedVacancy, cap: Cap, lineage: Lineage) -> usize {
        self.fill(Vacancy(at.0), cap);
        self.put_lineage(at.0, lineage);
        at.0
    }

    /// Records `lineage` for slot `i` (forgets it when empty). Within the
    /// room taken this does not allocate; the callers took it
    /// ([`CapList::vacancy_derived`], [`CapList::set_lineage`]).
    fn put_lineage(&mut self, i: usize, lineage: Lineage) {
        let empty = lineage.ids().is_empty();
        match self.lineages.iter().position(|t| t.slot == i) {
            Some(at) if empty => {
                self.lineages.swap_remove(at);
            }
            Some(at) => self.lineages[at].lineage = lineage,
            None if empty => {}
            None => self.lineages.push(Tagged { slot: i, lineage }),
        }
    }

    /// The derivation lineage of the capability in slot `slot` (an implied
    /// slot 0's too).
    ///
    /// Errors: as for [`CapList::get`].
    pub fn lineage(&self, slot: u64) -> Result<Lineage, CapError> {
        self.holds(slot)?;
        let i = Self::index(slot)?;
        Ok(self.lineages.iter().find(|t| t.slot == i).map_or(Lineage::EMPTY, |t| t.lineage))
    }

    /// Sets the lineage of the capability in slot `slot` (errors as for
    /// [`CapList::get`], and [`CapError::Full`] when the room for its record
    /// cannot be had; nothing changes on any).
    pub(crate) fn set_lineage(&mut self, slot: u64, lineage: Lineage) -> Result<(), CapError> {
        self.holds(slot)?;
        let i = Self::index(slot)?;
        self.take_lineage_room(1)?;
        self.put_lineage(i, lineage);
        Ok(())
    }

    /// Removes every capability derived from node `node` (see
    /// [`revoke_derived`](crate::revoke_derived)).
    pub(crate) fn remove_descendants(&mut self, node: u64, mut removed: impl FnMut(&Cap)) -> usize {
        let mut count = 0;
        let slots = &mut self.slots;
        self.lineages.retain(|t| {
            if !t.lineage.descends_from(node) {
                return true;
            }
            if let Some(cap) = slots.get_mut(t.slot).and_then(Option::take) {
                removed(&cap);
                count += 1;
            }
            false
        });
        count
    }

    /// Forgets slot `i`'s lineage (the slot was emptied or overwritten).
    #[inline]
    fn forget_lineage(&mut self, i: usize) {
        if let Some(at) = self.lineages.iter().position(|t| t.slot == i) {
            self.lineages.swap_remove(at);
        }
    }

    /// Puts `cap` into slot `slot`, returning what was there before (a list
    /// owner may overwrite its own slots), or [`CapError::BadSlot`] if the
    /// slot is out of range ([`CapError::Full`] if the list had to grow to
    /// reach it and memory is short; nothing changed).
    pub fn insert_at(&mut self, slot: u64, cap: Cap) -> Result<Option<Cap>, CapError> {
        let i = Self::index(slot)?;
        self.cover(i)?;
        let old = self.slots.get_mut(i).ok_or(CapError::BadSlot)?.replace(cap);
        self.forget_lineage(i);
        if i == 0 {
            self.first_implied = false;
        }
        Ok(old)
    }

    /// The capability in slot `slot`.
    ///
    /// Errors: [`CapError::BadSlot`] if out of range (any `u64`, including
    /// `u64::MAX`, is safe to pass), [`CapError::EmptySlot`] if empty (so
    /// is slot 0 while its capability is implied: the owner answers for
    /// it).
    #[inline]
    pub fn get(&self, slot: u64) -> Result<&Cap, CapError> {
        // Every slot with room is below `N`: one bounds test finds a held
        // capability; which error a miss is comes out of line.
        match usize::try_from(slot).ok().and_then(|i| self.slots.get(i)) {
            Some(Some(cap)) => Ok(cap),
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
        let cap = self.slots.get_mut(i).and_then(Option::take).ok_or(CapError::EmptySlot)?;
        self.forget_lineage(i);
        Ok(cap)
    }

    /// The occupied slots, in slot order, as `(slot, capability)` (slot 0's
    /// implied capability is not among them).
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Cap)> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, e)| e.as_ref().map(|c| (i, c)))
    }

    /// How many slots hold a stored capability.
    pub fn len(&self) -> usize {
        self.iter().count()
    }

    /// Whether no slot holds a stored capability.
    pub fn is_empty(&self) -> bool {
        self.slots.iter().all(Option::is_none)
    }

    /// Whether every slot is occupied (slot 0 by its implied capability
    /// or a stored one).
    pub fn is_full(&self) -> bool {
        self.slots.len() == N && self.slots.iter().skip(usize::from(self.first_implied)).all(Option::is_some)
    }

    /// Slots the list has memory for (empty or not): what its slots cost,
    /// in [`CapList::SLOT_BYTES`] each.
    pub fn room(&self) -> usize {
        self.slots.capacity()
    }

    /// Lineage records the list has memory for: what its lineages cost, in
    /// [`CapList::LINEAGE_BYTES`] each.
    pub fn lineage_room(&self) -> usize {
        self.lineages.capacity()
    }

    /// Bytes one slot's room takes.
    pub const SLOT_BYTES: usize = core::mem::size_of::<Option<Cap>>();

    /// Bytes one lineage record's room takes.
    pub const LINEAGE_BYTES: usize = core::mem::size_of::<Tagged>();

    /// The most bytes a list's slots and lineages can take: what an
    /// account is charged for one.
    pub const MOST_BYTES: usize = N * (Self::SLOT_BYTES + Self::LINEAGE_BYTES);

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
        for e in &mut self.slots {
            if e.as_ref().is_some_and(&mut doomed) {
                *e = None;
                removed += 1;
            }
        }
        let slots = &self.slots;
        self.lineages.retain(|t| slots.get(t.slot).is_some_and(Option::is_some));
        removed
    }

    /// Empties every slot, slot 0's implied capability too (the memory
    /// stays).
    pub fn clear(&mut self) {
        self.slots.iter_mut().for_each(|e| *e = None);
        self.lineages.clear();
        self.first_implied = false;
    }
}

/// Lineage records [`CapList::vacancy_derived`] makes room for.
const DERIVED_SPARE: usize = 2;

impl<const N: usize> PartialEq for CapList<N> {
    /// Equal when every slot holds the same capability and lineage (the
    /// room each has taken, and the order lineages are kept in, do not
    /// matter).
    fn eq(&self, other: &CapList<N>) -> bool {
        let longer = self.slots.len().max(other.slots.len());
        let slot = |l: &CapList<N>, i: usize| l.slots.get(i).copied().flatten();
        self.first_implied == other.first_implied
            && (0..longer).all(|i| slot(self, i) == slot(other, i))
            && (0..longer as u64).all(|i| self.lineage(i).ok() == other.lineage(i).ok())
    }
}

impl<const N: usize> Eq for CapList<N> {}

impl<const N: usize> Default for CapList<N> {
    /// An empty list.
    fn default() -> CapList<N> {
        CapList::new()
    }
}
