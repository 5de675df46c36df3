//! `cap_grant`, `cap_drop`, `cap_info`.

use super::Cx;
use super::check::{cap_error, cap_in, env_cap, rights_arg};
use crate::env::count_frame_ref;
use oxok_abi::Error;
use oxok_cap::Rights;

/// Copies a capability (with at most its rights) into another list.
pub fn cap_grant(cx: &mut Cx<'_>, slot: u64, env_slot: u64, rights: u64) -> Result<[u64; 1], Error> {
    let rights = rights_arg(rights)?;
    let caller = cx.caller;
    let source = cap_in(&mut cx.k.envs, caller, slot)?;
    if !source.rights.contains(Rights::GRANT) {
        return Err(Error::Denied);
    }
    let target = env_cap(&mut cx.k.envs, caller, env_slot, Rights::WRITE)?;
    let copy = source.derive(&[], rights).map_err(cap_error)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let slot = env.caps.insert(copy).map_err(cap_error)?;
    count_frame_ref(&copy, 1);
    Ok([slot as u64])
}

/// Empties a slot of the caller's list.
pub fn cap_drop(cx: &mut Cx<'_>, slot: u64) -> Result<[u64; 0], Error> {
    if slot == 0 {
        return Err(Error::Invalid);
    }
    let cap = cx.env()?.caps.remove(slot).map_err(cap_error)?;
    count_frame_ref(&cap, -1);
    if let Some(pfn) = crate::env::frame_of_cap(&cap) {
        cx.k.envs.collect(pfn);
    }
    Ok([])
}

/// Kind, number and rights of a capability.
pub fn cap_info(cx: &mut Cx<'_>, slot: u64) -> Result<[u64; 3], Error> {
    let cap = cap_in(&mut cx.k.envs, cx.caller, slot)?;
    let comps = cap.name.components();
    let kind = comps.first().copied().unwrap_or(0);
    let number = match (kind, comps) {
        (2, [_, index, generation]) => (generation << 10) | index,
        (_, [_, n, ..]) => *n,
        _ => 0,
    };
    Ok([kind, number, u64::from(cap.rights.bits())])
}
