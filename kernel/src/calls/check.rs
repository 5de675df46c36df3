//! Capability checks shared by the call handlers: the kernel half of every
//! secure binding. Users name capabilities by slot; the capabilities
//! themselves live only in kernel memory, so they cannot be forged.

use super::args::{CapSlot, EnvCap, FrameCap};
use crate::env::{Env, EnvId, EnvTable, env_name};
use crate::mem::addr::Pfn;
use crate::mem::frame;
use oxok_abi::Error;
use oxok_cap::{Cap, CapError, Kind, Rights};

/// Read, write and grant: what a fresh frame or slot capability carries
/// (call means nothing for them).
pub const RWG: Rights = Rights::READ.union(Rights::WRITE).union(Rights::GRANT);

/// The ABI error for a capability failure (mapping documented in
/// `oxok_cap`).
pub fn cap_error(e: CapError) -> Error {
    match e {
        CapError::BadSlot | CapError::EmptySlot | CapError::WrongName => Error::BadCap,
        CapError::Denied | CapError::Widen => Error::Denied,
        CapError::Full => Error::NoMemory,
        CapError::TooDeep | CapError::BadRights => Error::Invalid,
    }
}

/// The capability in `caller`'s slot `slot` (a copy).
pub fn cap_in(envs: &mut EnvTable, caller: EnvId, slot: u64) -> Result<Cap, Error> {
    CapSlot(slot).read(envs, caller, |cap| Ok(*cap))
}

/// Checks that `caller`'s slot `slot` names a live frame with `need`;
/// returns the frame number.
pub fn frame_cap(envs: &mut EnvTable, caller: EnvId, slot: u64, need: Rights) -> Result<Pfn, Error> {
    FrameCap::find(envs, caller, CapSlot(slot))?.with(need)
}

/// Checks that `caller`'s slot `slot` grants `need` on frame `pfn`: either
/// a capability for that frame, or a capability for the environment that
/// owns it (an environment's name covers the frames it owns).
pub fn owned_frame_cap(envs: &mut EnvTable, caller: EnvId, slot: CapSlot, pfn: Pfn, need: Rights) -> Result<(), Error> {
    let cap = slot.cap(envs, caller)?;
    match cap.name.kind() {
        Some(Kind::Env) => {
            let owner = EnvCap::find(envs, caller, slot)?.with(need)?;
            let entry = frame::with(|f| f.entry(pfn).copied()).ok_or(Error::BadCap)?;
            if entry.owner == owner.raw() { Ok(()) } else { Err(Error::BadCap) }
        }
        _ => {
            if FrameCap::find(envs, caller, slot)?.with(need)? == pfn {
                Ok(())
            } else {
                Err(Error::BadCap)
            }
        }
    }
}

/// The environment id a capability names (`BadCap`: not an environment
/// capability). Checks no right and not whether the environment lives.
pub fn env_of(cap: &Cap) -> Result<EnvId, Error> {
    match (cap.name.kind(), cap.name.components()) {
        (Some(Kind::Env), &[_, row, generation]) => EnvId::from_parts(row, generation).ok_or(Error::BadCap),
        _ => Err(Error::BadCap),
    }
}

/// Checks that `caller`'s slot `slot` holds a capability for environment
/// `target` with the call right (`BadCap`: empty, another resource or a
/// stale generation; `Denied`: no call right).
pub fn call_cap(envs: &mut EnvTable, caller: EnvId, slot: CapSlot, target: EnvId) -> Result<(), Error> {
    call_cap_of(envs.get(caller).ok_or(Error::BadEnv)?, slot, target)
}

/// [`call_cap`] for a caller already in hand.
#[inline(always)]
pub fn call_cap_of(caller: &Env, slot: CapSlot, target: EnvId) -> Result<(), Error> {
    if slot.0 == 0 && caller.caps.first_implied() {
        return call_right(&caller.own_cap(), target);
    }
    call_right(caller.caps.get(slot.0).map_err(cap_error)?, target)
}

/// Whether `cap` lets its holder call `target`.
#[inline(always)]
fn call_right(cap: &Cap, target: EnvId) -> Result<(), Error> {
    // The usual credential names the callee exactly: its rights decide,
    // with no guard name built. Any other (one covering many
    // environments) goes through the general check.
    if cap.name.is_numbered(Kind::Env, target.row() as u64, u64::from(target.generation())) {
        return if cap.rights.contains(Rights::CALL) { Ok(()) } else { Err(Error::Denied) };
    }
    oxok_cap::check(cap, &env_name(target), Rights::CALL).map_err(cap_error)
}
