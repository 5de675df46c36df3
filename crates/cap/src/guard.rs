//! Guard checks: the secure binding between a capability and a resource.

use crate::{Cap, CapError, CapList, Name, Rights};

/// Checks a presented capability against a resource's guard.
///
/// Every resource the kernel protects carries a guard, its physical
/// [`Name`]. An operation needing `need` on the resource succeeds iff the
/// presented capability's name is a prefix of (or equal to) the guard and its
/// rights include `need`. The kernel performs this check once, when a
/// resource is bound (a frame mapped, a slot allocated, a filter installed),
/// not on every use.
///
/// Errors, checked in this order: [`CapError::WrongName`] if the capability
/// does not cover the guard (another resource, another kind, a stale
/// generation, or a name *below* the resource); [`CapError::Denied`] if it
/// covers it but lacks a needed right.
pub fn check(presented: &Cap, guard: &Name, need: Rights) -> Result<(), CapError> {
    if !presented.name.is_prefix_of(guard) {
        return Err(CapError::WrongName);
    }
    if !presented.rights.contains(need) {
        return Err(CapError::Denied);
    }
    Ok(())
}

/// The kernel's usual path: looks up the capability a caller named by `slot`
/// (a raw register value) in its list and [`check`]s it against `guard`.
/// Returns the capability on success.
///
/// Errors: [`CapError::BadSlot`] / [`CapError::EmptySlot`] from the lookup,
/// then those of [`check`].
pub fn check_slot<'a, const N: usize>(
    list: &'a CapList<N>,
    slot: u64,
    guard: &Name,
    need: Rights,
) -> Result<&'a Cap, CapError> {
    let cap = list.get(slot)?;
    check(cap, guard, need)?;
    Ok(cap)
}
