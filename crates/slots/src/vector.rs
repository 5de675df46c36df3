//! The slot vector: who owns each time slot of one CPU.

use crate::error::SlotError;
use crate::exposed::{SlotRow, USE_NONE, env_field};
use crate::placement::{self, Placement};
use crate::time_slot::TimeSlot;
use oxok_abi::env_id::EnvId;

/// One time slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    /// The owning environment, if any.
    pub(crate) owner: Option<EnvId>,
    /// Bumped (wrapping) whenever `owner` changes, so a capability naming
    /// (cpu, slot, generation) stops matching once the slot changes hands.
    pub(crate) generation: u32,
    /// The environment that last started running in this slot, if any.
    pub(crate) last_env: Option<EnvId>,
    /// How it got the slot: an [`exposed`](crate::exposed) `USE_*` code.
    pub(crate) last_use: u32,
}

impl Slot {
    const FREE: Slot = Slot { owner: None, generation: 0, last_env: None, last_use: USE_NONE };

    fn row(&self) -> SlotRow {
        SlotRow {
            owner: env_field(self.owner),
            generation: self.generation,
            last_env: env_field(self.last_env),
            last_use: self.last_use,
        }
    }
}

/// The vector of `N` time slots of one CPU (the kernel's default `N` is
/// [`DEFAULT_SLOTS`](crate::DEFAULT_SLOTS)). Ownership only; what runs when
/// is decided by [`decide`](crate::decide) and the
/// [`Scheduler`](crate::Scheduler).
///
/// Every operation is total: a slot from a user register that is out of
/// range gives [`SlotError::OutOfRange`] (or `None`), never a panic.
/// Owners are environment ids ([`EnvId`]), made only by the contract's
/// codec; the exposed rows show a free slot's owner as 0, which no id is.
#[derive(Clone, Debug)]
pub struct SlotVector<const N: usize> {
    slots: [Slot; N],
    /// Slots in use: the first `active` of the `N` (the count set at boot).
    active: usize,
    /// Bumped (wrapping) whenever any slot's owner changes: a publisher
    /// that saw the same count has every row but who last used them.
    owner_changes: u64,
}

impl<const N: usize> SlotVector<N> {
    /// Refuses, at compile time, a vector with no slots.
    const NOT_EMPTY: () = assert!(N > 0, "a slot vector needs at least one slot");

    /// A vector of `N` free slots, all at generation 0.
    pub const fn new() -> SlotVector<N> {
        let () = Self::NOT_EMPTY;
        SlotVector { slots: [Slot::FREE; N], active: N, owner_changes: 0 }
    }

    /// A vector of `len` free slots (clamped to `1..=N`): the slot count a
    /// kernel chooses at boot, within the capacity `N` it was built with.
    pub const fn with_len(len: usize) -> SlotVector<N> {
        let () = Self::NOT_EMPTY;
        let active = if len == 0 {
            1
        } else if len > N {
            N
        } else {
            len
        };
        SlotVector { slots: [Slot::FREE; N], active, owner_changes: 0 }
    }

    /// The number of slots in use.
    pub const fn len(&self) -> usize {
        self.active
    }

    /// Always false: a vector has at least one slot.
    pub const fn is_empty(&self) -> bool {
        self.active == 0
    }

    fn live(&self) -> &[Slot] {
        &self.slots[..self.active]
    }

    fn live_mut(&mut self) -> &mut [Slot] {
        &mut self.slots[..self.active]
    }

    /// The owner of slot `i`; `None` if it is free or `i` is out of range.
    pub fn owner(&self, i: TimeSlot) -> Option<EnvId> {
        self.live().get(i.0).and_then(|s| s.owner)
    }

    /// The generation of slot `i`; `None` if `i` is out of range.
    pub fn generation(&self, i: TimeSlot) -> Option<u32> {
        self.live().get(i.0).map(|s| s.generation)
    }

    /// Whether a capability naming slot `i` at `generation` is still current.
    pub fn is_current(&self, i: TimeSlot, generation: u32) -> bool {
        self.generation(i) == Some(generation)
    }

    /// The number of free slots.
    pub fn free_count(&self) -> usize {
        self.live().iter().filter(|s| s.owner.is_none()).count()
    }

    /// The slots `env` owns, in index order.
    pub fn owned_by(&self, env: EnvId) -> impl Iterator<Item = TimeSlot> + '_ {
        self.live().iter().enumerate().filter(move |(_, s)| s.owner == Some(env)).map(|(i, _)| TimeSlot(i))
    }

    /// The number of slots `env` owns.
    pub fn count_owned(&self, env: EnvId) -> usize {
        self.owned_by(env).count()
    }

    /// Gives `owner` a free slot chosen by `placement` and returns it (its
    /// new generation is [`generation`](Self::generation)). Errors:
    /// `OutOfRange`, `Taken` (`At` an owned slot), `Full`.
    pub fn alloc(&mut self, owner: EnvId, placement: Placement) -> Result<TimeSlot, SlotError> {
        let i = placement::find(self.live(), owner, placement)?;
        self.set_owner(i, Some(owner))?;
        Ok(i)
    }

    /// Frees slot `i`, which `owner` must own (`OutOfRange`, `NotOwner`).
    pub fn free(&mut self, i: TimeSlot, owner: EnvId) -> Result<(), SlotError> {
        self.check_owner(i, owner)?;
        self.set_owner(i, None)
    }

    /// Moves slot `i` from `from`, which must own it, to `to` (`OutOfRange`,
    /// `NotOwner`). The generation changes even if `to == from`, so the
    /// giver's capability goes stale either way.
    pub fn give(&mut self, i: TimeSlot, from: EnvId, to: EnvId) -> Result<(), SlotError> {
        let gift = self.check_give(i, from, to)?;
        self.hand_over(gift);
        Ok(())
    }

    /// The check half of [`SlotVector::give`], which changes nothing (errors
    /// as `give`).
    pub fn check_give(&self, i: TimeSlot, from: EnvId, to: EnvId) -> Result<Gift, SlotError> {
        self.check_owner(i, from)?;
        Ok(Gift { slot: i, to })
    }

    /// The half of [`SlotVector::give`] that cannot fail: `gift` was
    /// checked by [`SlotVector::check_give`] with no change to the vector
    /// in between.
    pub fn hand_over(&mut self, gift: Gift) {
        if let Some(s) = self.live_mut().get_mut(gift.slot.0) {
            s.owner = Some(gift.to);
            s.generation = s.generation.wrapping_add(1);
            self.owner_changes = self.owner_changes.wrapping_add(1);
        }
    }

    /// Frees every slot `env` owns (it was destroyed); returns how many.
    pub fn release_all(&mut self, env: EnvId) -> usize {
        let mut n = 0;
        for s in self.live_mut().iter_mut().filter(|s| s.owner == Some(env)) {
            s.owner = None;
            s.generation = s.generation.wrapping_add(1);
            n += 1;
        }
        self.owner_changes = self.owner_changes.wrapping_add(n as u64);
        n
    }

    /// How many times a slot's owner changed (wrapping): equal counts at
    /// two moments mean the same owners and generations in every row.
    pub fn owner_changes(&self) -> u64 {
        self.owner_changes
    }

    /// Copies the exposed rows of the first `out.len()` slots into `out`;
    /// returns how many rows were written (`min(len, out.len())`).
    pub fn rows(&self, out: &mut [SlotRow]) -> usize {
        let mut n = 0;
        for (row, s) in out.iter_mut().zip(self.live().iter()) {
            *row = s.row();
            n += 1;
        }
        n
    }

    /// The exposed row of slot `i`; `None` if `i` is out of range.
    pub fn row(&self, i: TimeSlot) -> Option<SlotRow> {
        self.live().get(i.0).map(Slot::row)
    }

    /// Records who started running in slot `i` and how.
    pub(crate) fn note_use(&mut self, i: TimeSlot, env: Option<EnvId>, how: u32) {
        if let Some(s) = self.live_mut().get_mut(i.0) {
            s.last_env = env;
            s.last_use = how;
        }
    }

    fn check_owner(&self, i: TimeSlot, owner: EnvId) -> Result<(), SlotError> {
        match self.live().get(i.0) {
            None => Err(SlotError::OutOfRange),
            Some(s) if s.owner == Some(owner) => Ok(()),
            Some(_) => Err(SlotError::NotOwner),
        }
    }

    fn set_owner(&mut self, i: TimeSlot, owner: Option<EnvId>) -> Result<(), SlotError> {
        let s = self.live_mut().get_mut(i.0).ok_or(SlotError::OutOfRange)?;
        s.owner = owner;
        s.generation = s.generation.wrapping_add(1);
        self.owner_changes = self.owner_changes.wrapping_add(1);
        Ok(())
    }
}

/// A move of a slot to another owner, checked by
/// [`SlotVector::check_give`] and done by [`SlotVector::hand_over`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gift {
    slot: TimeSlot,
    to: EnvId,
}

impl<const N: usize> Default for SlotVector<N> {
    fn default() -> SlotVector<N> {
        SlotVector::new()
    }
}
