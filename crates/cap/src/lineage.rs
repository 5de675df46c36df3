//! Derivation lineage: which capability each capability was derived from,
//! so that one capability's whole subtree can be revoked.
//!
//! Every capability list slot carries, beside its [`Cap`], a [`Lineage`]:
//! the ids of the derivation nodes from the oldest ancestor down to the
//! capability itself. Ids come from a counter the caller (the kernel) owns
//! and never reuses. A capability minted from nothing has an empty lineage
//! until something is first derived from it; then it gets its own id.
//! [`derive_child`] makes a child whose lineage is the parent's plus a
//! fresh id, so the child — and everything later derived from the child,
//! in any list — names the parent's id before its own.
//! [`revoke_derived`] removes every capability whose lineage holds an id
//! before its last: exactly the strict descendants of that node.

use crate::{Cap, CapError, CapList, Rights};

/// The most derivation nodes a lineage records: a capability can be at
/// most `MAX_LINEAGE - 1` derivations below the first one derived from.
pub const MAX_LINEAGE: usize = 8;

/// The derivation path of a capability: node ids, oldest ancestor first,
/// the capability's own node last. Empty for a capability nothing was ever
/// derived from (it has no node yet).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Lineage {
    len: u8,
    ids: [u64; MAX_LINEAGE],
}

impl Lineage {
    /// No node: a freshly minted capability.
    pub const EMPTY: Lineage = Lineage { len: 0, ids: [0; MAX_LINEAGE] };

    /// The node ids, oldest first.
    pub fn ids(&self) -> &[u64] {
        self.ids.get(..self.len as usize).unwrap_or(&[])
    }

    /// The capability's own node id, if it has one.
    pub fn node(&self) -> Option<u64> {
        self.ids().last().copied()
    }

    /// The lineage of a child with node `id`, or [`CapError::TooDeep`]
    /// when this one is already [`MAX_LINEAGE`] long.
    pub fn child(&self, id: u64) -> Result<Lineage, CapError> {
        let len = self.len as usize;
        if len >= MAX_LINEAGE {
            return Err(CapError::TooDeep);
        }
        let mut ids = self.ids;
        let slot = ids.get_mut(len).ok_or(CapError::TooDeep)?;
        *slot = id;
        Ok(Lineage { len: self.len + 1, ids })
    }

    /// Whether node `id` is a strict ancestor: it appears before the
    /// capability's own node.
    pub fn descends_from(&self, id: u64) -> bool {
        let ids = self.ids();
        ids.split_last().is_some_and(|(_, ancestors)| ancestors.contains(&id))
    }
}

/// Derives a child of the capability in `from`'s slot `slot` with
/// `rights` (a subset of the source's, same name) and returns it with its
/// lineage, ready for [`CapList::insert_derived`] into any list. The source
/// is given a node id first if it has none; ids are taken from `next_id`
/// (pre-incremented, so never 0), which the caller keeps for all lists.
///
/// Needs no right on the source: a child can only have less. Errors,
/// checked in this order (nothing changes on any of them):
/// [`CapError::BadSlot`] / [`CapError::EmptySlot`]; [`CapError::Widen`];
/// [`CapError::TooDeep`] when the source is [`MAX_LINEAGE`] - 1 levels deep
/// already.
pub fn derive_child<const N: usize>(
    from: &mut CapList<N>,
    slot: u64,
    rights: Rights,
    next_id: &mut u64,
) -> Result<(Cap, Lineage), CapError> {
    derive_child_with(from, slot, None, rights, next_id)
}

/// [`derive_child`] from a list whose slot 0 is implied
/// ([`CapList::with_first_implied`]): `own` is the capability its owner
/// implies there (ignored for any other slot, or once slot 0 holds a
/// stored one). The source's node goes into the list's lineage records;
/// slot 0 stays implied.
pub fn derive_child_with<const N: usize>(
    from: &mut CapList<N>,
    slot: u64,
    own: Option<&Cap>,
    rights: Rights,
    next_id: &mut u64,
) -> Result<(Cap, Lineage), CapError> {
    let source = from.source(slot, own)?;
    child_below(from, slot, source, &[], rights, next_id)
}

/// Narrows the capability in `from`'s slot `slot`: a child whose name is
/// the source's extended by the one component `component`, with `rights`
/// (a subset of the source's), recorded as derived from the source as
/// [`derive_child`] records it, so revoking the source takes it back. This
/// is how authority over a part of a name is minted from authority over
/// the whole: from `/8` (every principal) the holder makes `/8/p` (one).
///
/// Unlike [`derive_child`] it needs [`Rights::GRANT`] on the source: the
/// child is a new, narrower authority the holder may hand out. Errors,
/// checked in this order (nothing changes on any of them):
/// [`CapError::BadSlot`] / [`CapError::EmptySlot`]; [`CapError::Denied`]
/// without grant; [`CapError::Widen`]; [`CapError::TooDeep`] when the
/// source's name has [`MAX_DEPTH`](crate::MAX_DEPTH) components already
/// or its lineage is [`MAX_LINEAGE`] - 1 levels deep.
pub fn narrow_child<const N: usize>(
    from: &mut CapList<N>,
    slot: u64,
    component: u64,
    rights: Rights,
    next_id: &mut u64,
) -> Result<(Cap, Lineage), CapError> {
    narrow_child_with(from, slot, None, component, rights, next_id)
}

/// [`narrow_child`] from a list whose slot 0 is implied, `own` being that
/// capability (as [`derive_child_with`]).
pub fn narrow_child_with<const N: usize>(
    from: &mut CapList<N>,
    slot: u64,
    own: Option<&Cap>,
    component: u64,
    rights: Rights,
    next_id: &mut u64,
) -> Result<(Cap, Lineage), CapError> {
    let source = from.source(slot, own)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(CapError::Denied);
    }
    child_below(from, slot, source, &[component], rights, next_id)
}

/// The shared body of [`derive_child_with`] and [`narrow_child_with`]: a
/// child of `source` (what `from`'s slot `slot` holds) named the source's
/// name followed by `suffix`, with `rights`, and its lineage.
fn child_below<const N: usize>(
    from: &mut CapList<N>,
    slot: u64,
    source: Cap,
    suffix: &[u64],
    rights: Rights,
    next_id: &mut u64,
) -> Result<(Cap, Lineage), CapError> {
    let child_cap = source.derive(suffix, rights)?;
    let mut lineage = from.lineage(slot)?;
    let fresh = lineage.node().is_none();
    let needed = if fresh { 2 } else { lineage.ids().len() + 1 };
    if needed > MAX_LINEAGE {
        return Err(CapError::TooDeep);
    }
    if fresh {
        *next_id = next_id.wrapping_add(1);
        lineage = lineage.child(*next_id)?;
        from.set_lineage(slot, lineage)?;
    }
    *next_id = next_id.wrapping_add(1);
    let child = lineage.child(*next_id)?;
    Ok((child_cap, child))
}

/// Removes from `list` every capability derived, directly or through any
/// number of derivations, from node `node` (see [`Lineage::descends_from`]),
/// calling `removed` with each before it goes, and returns how many.
pub fn revoke_derived<const N: usize>(list: &mut CapList<N>, node: u64, removed: impl FnMut(&Cap)) -> usize {
    list.remove_descendants(node, removed)
}
