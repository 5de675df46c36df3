//! Moving authority between lists: grant, derive-into-list.

use crate::{CapError, CapList, Rights};

/// Copies the capability in `from`'s slot `slot` into the first free slot of
/// `to`, with `rights` (which may be fewer than the source's), and returns
/// the new slot number. The source is unchanged.
///
/// The source must hold [`Rights::GRANT`]. Whether the copy does too is up to
/// `rights`: without it, the receiver can use but not pass on the copy.
///
/// Errors, checked in this order: [`CapError::BadSlot`] /
/// [`CapError::EmptySlot`] for the source slot; [`CapError::Denied`] if the
/// source lacks `GRANT`; [`CapError::Widen`] if `rights` is not a subset of
/// the source's rights; [`CapError::Full`] if `to` has no free slot. On any
/// error neither list changes.
pub fn grant<const N: usize, const M: usize>(
    from: &CapList<N>,
    slot: u64,
    to: &mut CapList<M>,
    rights: Rights,
) -> Result<usize, CapError> {
    let source = from.get(slot)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(CapError::Denied);
    }
    let copy = source.derive(&[], rights)?;
    to.insert(copy)
}

/// Derives a child of the capability in `list`'s slot `slot` (see
/// [`Cap::derive`](crate::Cap::derive)) and puts it into the first free slot
/// of the same list, returning that slot's number.
///
/// Needs no particular right. Errors, checked in this order:
/// [`CapError::BadSlot`] / [`CapError::EmptySlot`]; [`CapError::Widen`];
/// [`CapError::TooDeep`]; [`CapError::Full`]. On any error the list does not
/// change.
pub fn derive_into<const N: usize>(
    list: &mut CapList<N>,
    slot: u64,
    suffix: &[u64],
    rights: Rights,
) -> Result<usize, CapError> {
    let child = list.get(slot)?.derive(suffix, rights)?;
    list.insert(child)
}
