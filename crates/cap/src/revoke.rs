//! Revocation by name.

use crate::{CapList, Name};

/// Removes from `list` every capability whose name `name` covers (`name` is
/// a prefix of, or equal to, the capability's name) and returns how many
/// were removed.
///
/// The kernel calls this on every list when a resource dies (its physical
/// name, e.g. [`Name::frame`]) or an environment is destroyed
/// ([`Name::env`]). Capabilities on broader names (such as the kernel's
/// [`Name::kind_root`] ones) are untouched, as are capabilities on other
/// generations of the same resource (those are already stale).
pub fn revoke_matching<const N: usize>(list: &mut CapList<N>, name: &Name) -> usize {
    list.remove_where(|cap| name.is_prefix_of(&cap.name))
}
