//! `cap_grant`, `cap_drop`, `cap_info`, `cap_derive`, `cap_narrow`,
//! `cap_revoke`, and `pct_grant` (a grant into the list of the caller
//! being served).

use super::Cx;
use super::args::{CapSlot, EnvCap};
use super::check::cap_error;
use crate::env::{Env, EnvId, count_frame_ref};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::Error;
use oxok_cap::{Cap, Lineage, Rights};

/// The last derivation node id handed out (`oxok_cap::derive_child`); ids
/// are never reused. Only changed under the kernel lock.
pub(super) static LAST_NODE: AtomicU64 = AtomicU64::new(0);

/// A child of the capability in `env`'s slot `slot` (its implied own
/// capability for slot 0), with `rights` — named one component below it
/// with `narrow` (`oxok_cap::narrow_child_with`, which needs grant) — and
/// its lineage. The last refusal of a derivation; what it changes is the
/// source's lineage only, when the source had no node yet.
pub(super) fn derive_in(
    env: &mut Env,
    slot: CapSlot,
    narrow: Option<u64>,
    rights: Rights,
) -> Result<(Cap, Lineage), Error> {
    crate::env::derivation_room(&env.caps)?;
    let own = env.own_cap();
    let mut next = LAST_NODE.load(Ordering::Relaxed);
    let child = match narrow {
        None => oxok_cap::derive_child_with(&mut env.caps, slot.0, Some(&own), rights, &mut next),
        Some(c) => oxok_cap::narrow_child_with(&mut env.caps, slot.0, Some(&own), c, rights, &mut next),
    }
    .map_err(cap_error)?;
    LAST_NODE.store(next, Ordering::Relaxed);
    Ok(child)
}

/// Copies a capability (with at most its rights) into another list.
pub fn cap_grant(cx: &mut Cx<'_>, slot: CapSlot, env_slot: EnvCap, rights: Rights) -> Result<[u64; 1], Error> {
    let source = slot.cap(&mut cx.k.envs, cx.caller)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(Error::Denied);
    }
    let target = env_slot.with(Rights::WRITE)?;
    grant_into(cx, slot, &source, target, rights)
}

/// Copies the capability in `slot` into the list of the caller being
/// served (the transfer's caller consented by calling).
pub fn pct_grant(cx: &mut Cx<'_>, slot: CapSlot, rights: Rights) -> Result<[u64; 1], Error> {
    let me = cx.caller;
    let (target, ticket) = cx.env()?.pct_caller.ok_or(Error::Invalid)?;
    if !cx.k.envs.get(target).is_some_and(|e| e.waiting_for == Some(me) && e.wait_ticket == ticket) {
        return Err(Error::BadEnv);
    }
    let source = slot.cap(&mut cx.k.envs, me)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(Error::Denied);
    }
    grant_into(cx, slot, &source, target, rights)
}

/// The shared end of `cap_grant` and `pct_grant`: `source` (the caller's
/// capability in `slot`, checked for grant) copied into `target`'s list.
/// Check, then perform: the target's free slot is found first, the
/// derivation (whose depth limit is the last refusal) changes only the
/// source's lineage and only when it succeeds, and the fill cannot fail.
fn grant_into(cx: &mut Cx<'_>, slot: CapSlot, source: &Cap, target: EnvId, rights: Rights) -> Result<[u64; 1], Error> {
    source.derive(&[], rights).map_err(cap_error)?;
    let vacancy = crate::env::cap_vacancy_derived(&mut cx.k.envs.get(target).ok_or(Error::BadEnv)?.caps)?;
    // The copy is a child of the source: `cap_revoke` on the source (or on
    // anything it was derived from) takes it back.
    let (copy, lineage) = derive_in(cx.env()?, slot, None, rights)?;
    // Perform: nothing below can fail (the target was found above, in this
    // same entry).
    let mut slot = 0;
    if let Some(env) = cx.k.envs.get(target) {
        slot = env.caps.fill_derived(vacancy, copy, lineage);
        count_frame_ref(&copy, 1);
    }
    Ok([slot as u64])
}

/// Empties a slot of the caller's list.
pub fn cap_drop(cx: &mut Cx<'_>, slot: CapSlot) -> Result<[u64; 0], Error> {
    if slot.0 == 0 {
        return Err(Error::Invalid);
    }
    let cap = cx.env()?.caps.remove(slot.0).map_err(cap_error)?;
    count_frame_ref(&cap, -1);
    if let Some(pfn) = crate::env::frame_of_cap(&cap) {
        cx.k.envs.collect(pfn);
    }
    Ok([])
}

/// Kind, number and rights of a capability.
pub fn cap_info(cx: &mut Cx<'_>, slot: CapSlot) -> Result<[u64; 3], Error> {
    let cap = slot.cap(&mut cx.k.envs, cx.caller)?;
    Ok(describe(&cap))
}

/// `cap_info`'s answer for `cap`: kind, number and rights.
pub fn describe(cap: &Cap) -> [u64; 3] {
    let comps = cap.name.components();
    let kind = comps.first().copied().unwrap_or(0);
    let number = match (kind, comps) {
        // A principal: `p` for `/8/p`; 0 for `/8` (every principal) and
        // for names below a principal, which act as none.
        (8, [_, p]) => *p,
        (8, _) => 0,
        (2, [_, row, generation]) => crate::env::EnvId::from_parts(*row, *generation).map_or(0, u64::from),
        // A time slot: its index in the vector (the name's second
        // component is the CPU).
        (3, [_, _cpu, index, _]) => *index,
        (_, [_, n, ..]) => *n,
        _ => 0,
    };
    [kind, number, u64::from(cap.rights.bits())]
}

/// Derives a child with fewer rights into the caller's own list.
pub fn cap_derive(cx: &mut Cx<'_>, slot: CapSlot, rights: Rights) -> Result<[u64; 1], Error> {
    slot.cap(&mut cx.k.envs, cx.caller)?.derive(&[], rights).map_err(cap_error)?;
    // Check, then perform, as `grant_into`: deriving fills no slot, so the
    // vacancy found first stays free.
    let vacancy = crate::env::cap_vacancy_derived(&mut cx.env()?.caps)?;
    let (child, lineage) = derive_in(cx.env()?, slot, None, rights)?;
    let mut new = 0;
    if let Some(env) = cx.k.envs.get(cx.caller) {
        new = env.caps.fill_derived(vacancy, child, lineage);
        count_frame_ref(&child, 1);
    }
    Ok([new as u64])
}

/// Derives a child named one component below the source into the
/// caller's own list (`/8` narrowed by `p` is principal `p`).
pub fn cap_narrow(cx: &mut Cx<'_>, slot: CapSlot, component: u64, rights: Rights) -> Result<[u64; 1], Error> {
    let source = slot.cap(&mut cx.k.envs, cx.caller)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(Error::Denied);
    }
    source.derive(&[component], rights).map_err(cap_error)?;
    // Check, then perform, as `cap_derive`: the vacancy first; the
    // derivation's last refusal (the lineage depth) changes nothing.
    let vacancy = crate::env::cap_vacancy_derived(&mut cx.env()?.caps)?;
    let env = cx.env()?;
    let (child, lineage) = derive_in(env, slot, Some(component), rights)?;
    let new = env.caps.fill_derived(vacancy, child, lineage);
    count_frame_ref(&child, 1);
    Ok([new as u64])
}

/// Removes everything derived from the capability in `slot`, from every
/// environment's list. One pass over the table (at most `MAX_ENVS` lists of
/// `CAP_SLOTS` slots, each a comparison of at most `MAX_LINEAGE` words): a
/// constant bound, done in one entry so that nothing derived from the
/// capability can move into a list the pass has already left.
///
/// No frame needs collecting afterwards: everything removed has the name of
/// the capability in `slot`, which stays.
pub fn cap_revoke(cx: &mut Cx<'_>, slot: CapSlot) -> Result<[u64; 1], Error> {
    let lineage = cx.env()?.caps.lineage(slot.0).map_err(cap_error)?;
    let Some(node) = lineage.node() else { return Ok([0]) };
    let mut removed = 0u64;
    for env in cx.k.envs.envs_mut() {
        removed += oxok_cap::revoke_derived(&mut env.caps, node, |cap| count_frame_ref(cap, -1)) as u64;
    }
    Ok([removed])
}
