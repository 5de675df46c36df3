//! Where in the vector a new slot goes.
//!
//! Position in the vector is time: slot `i` runs after slot `i - 1`, and the
//! vector repeats. An environment after throughput asks for slots next to
//! its own ([`Placement::Near`]), so it runs longer stretches with fewer
//! switches (adjacent slots of one owner run as one stretch, with no
//! slot-end/slot-start upcalls in between); one after latency asks for slots
//! far from its own ([`Placement::Spread`]), so it never waits long.

use crate::error::SlotError;
use crate::time_slot::TimeSlot;
use crate::vector::Slot;
use oxok_abi::env_id::EnvId;

/// Which free slot [`SlotVector::alloc`](crate::SlotVector::alloc) takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// The lowest-numbered free slot.
    Any,
    /// Exactly slot `i`: `OutOfRange` if `i` is not in the vector, `Taken`
    /// if it is owned.
    At(TimeSlot),
    /// The first free slot at or after `i`, going round the vector (`i`,
    /// `i + 1`, …, `len - 1`, `0`, …, `i - 1`). Passing one of the caller's
    /// own slots (owned, so skipped) extends its run. `OutOfRange` if `i` is
    /// not in the vector.
    Near(TimeSlot),
    /// The free slot whose nearest slot of the same owner is farthest away
    /// (distance measured round the vector); ties go to the lowest index. An
    /// owner with no slots gets the lowest-numbered free slot. Repeated
    /// `Spread` requests space an owner's slots evenly: with 32 slots and
    /// slot 0 owned, they come out 16, 8, 24, 4, 12, …
    Spread,
}

/// Distance between slots `a` and `b` (both `< len`) round a vector of
/// `len` slots.
pub(crate) fn cyclic_distance(a: usize, b: usize, len: usize) -> usize {
    let d = a.abs_diff(b);
    d.min(len.saturating_sub(d))
}

/// The free slot of `slots` that `placement` chooses for `owner`.
pub(crate) fn find(slots: &[Slot], owner: EnvId, placement: Placement) -> Result<TimeSlot, SlotError> {
    let len = slots.len();
    let free = |i: usize| slots.get(i).is_some_and(|s| s.owner.is_none());
    let i = match placement {
        Placement::Any => (0..len).find(|&i| free(i)).ok_or(SlotError::Full),
        Placement::At(TimeSlot(i)) if i >= len => Err(SlotError::OutOfRange),
        Placement::At(TimeSlot(i)) if free(i) => Ok(i),
        Placement::At(_) => Err(SlotError::Taken),
        Placement::Near(TimeSlot(i)) if i >= len => Err(SlotError::OutOfRange),
        Placement::Near(TimeSlot(i)) => (0..len).map(|k| (i + k) % len).find(|&j| free(j)).ok_or(SlotError::Full),
        Placement::Spread => spread(slots, owner),
    }?;
    Ok(TimeSlot(i))
}

/// [`Placement::Spread`]: maximise the distance to `owner`'s nearest slot.
fn spread(slots: &[Slot], owner: EnvId) -> Result<usize, SlotError> {
    let len = slots.len();
    let nearest_own = |f: usize| {
        slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.owner == Some(owner))
            .map(|(o, _)| cyclic_distance(f, o, len))
            .min()
            .unwrap_or(0)
    };
    let mut best: Option<(usize, usize)> = None; // (distance, index)
    for (f, _) in slots.iter().enumerate().filter(|(_, s)| s.owner.is_none()) {
        let d = nearest_own(f);
        if best.is_none_or(|(bd, _)| d > bd) {
            best = Some((d, f));
        }
    }
    best.map(|(_, i)| i).ok_or(SlotError::Full)
}
