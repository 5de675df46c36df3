//! Capability checks shared by the call handlers: the kernel half of every
//! secure binding. Users name capabilities by slot; the capabilities
//! themselves live only in kernel memory, so they cannot be forged.

use crate::env::{EnvId, EnvTable, env_name};
use crate::mem::frame;
use oxok_abi::Error;
use oxok_abi::frames::{OWNER_FREE, OWNER_KERNEL, OWNER_RESERVED, OWNER_RETIRED, OWNER_REVOKING};
use oxok_cap::{Cap, CapError, Kind, Name, Rights};

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

/// Rights from a user's `rights` argument (`oxok_abi::rights` bits).
pub fn rights_arg(bits: u64) -> Result<Rights, Error> {
    u8::try_from(bits).ok().and_then(Rights::from_bits).ok_or(Error::Invalid)
}

/// The capability in `caller`'s slot `slot` (a copy).
pub fn cap_in(envs: &mut EnvTable, caller: EnvId, slot: u64) -> Result<Cap, Error> {
    let env = envs.get(caller).ok_or(Error::BadEnv)?;
    env.caps.get(slot).copied().map_err(cap_error)
}

/// Checks that `caller`'s slot `slot` names a live frame with `need`;
/// returns the frame number.
pub fn frame_cap(envs: &mut EnvTable, caller: EnvId, slot: u64, need: Rights) -> Result<u64, Error> {
    let cap = cap_in(envs, caller, slot)?;
    let comps = cap.name.components();
    if cap.name.kind() != Some(Kind::Frame) || comps.len() != 3 {
        return Err(Error::BadCap);
    }
    let (pfn, generation) = (comps[1], comps[2]);
    let entry = frame::with(|f| f.entry(pfn).copied()).ok_or(Error::BadCap)?;
    let dead = matches!(entry.owner, OWNER_FREE | OWNER_RESERVED | OWNER_KERNEL | OWNER_RETIRED | OWNER_REVOKING);
    if dead || u64::from(entry.generation) != generation {
        return Err(Error::BadCap);
    }
    oxok_cap::check(&cap, &Name::frame(pfn, generation), need).map_err(cap_error)?;
    Ok(pfn)
}

/// Checks that `caller`'s slot `slot` grants `need` on frame `pfn`: either
/// a capability for that frame, or a capability for the environment that
/// owns it (an environment's name covers the frames it owns).
pub fn owned_frame_cap(envs: &mut EnvTable, caller: EnvId, slot: u64, pfn: u64, need: Rights) -> Result<(), Error> {
    let cap = cap_in(envs, caller, slot)?;
    match cap.name.kind() {
        Some(Kind::Env) => {
            let owner = env_cap(envs, caller, slot, need)?;
            let entry = frame::with(|f| f.entry(pfn).copied()).ok_or(Error::BadCap)?;
            if entry.owner == owner { Ok(()) } else { Err(Error::BadCap) }
        }
        _ => {
            if frame_cap(envs, caller, slot, need)? == pfn {
                Ok(())
            } else {
                Err(Error::BadCap)
            }
        }
    }
}

/// Checks that `caller`'s slot `slot` names a live environment with
/// `need`; returns its id.
pub fn env_cap(envs: &mut EnvTable, caller: EnvId, slot: u64, need: Rights) -> Result<EnvId, Error> {
    let cap = cap_in(envs, caller, slot)?;
    let id = env_of(&cap)?;
    if !envs.alive(id) {
        return Err(Error::BadEnv);
    }
    oxok_cap::check(&cap, &env_name(id), need).map_err(cap_error)?;
    Ok(id)
}

/// The environment id a capability names (`BadCap`: not an environment
/// capability). Checks no right and not whether the environment lives.
pub fn env_of(cap: &Cap) -> Result<EnvId, Error> {
    match (cap.name.kind(), cap.name.components()) {
        (Some(Kind::Env), &[_, row, generation]) => oxok_abi::env_id::from_parts(row, generation).ok_or(Error::BadCap),
        _ => Err(Error::BadCap),
    }
}

/// Splits a control-transfer target word (`oxok_abi::call_target`): the
/// environment id (low 32 bits) and the capability slot (high 32 bits).
pub fn split_target(word: u64) -> (EnvId, u64) {
    (word as u32, word >> 32)
}

/// Checks that `caller`'s slot `slot` holds a capability for environment
/// `target` with the call right (`BadCap`: empty, another resource or a
/// stale generation; `Denied`: no call right).
pub fn call_cap(envs: &mut EnvTable, caller: EnvId, slot: u64, target: EnvId) -> Result<(), Error> {
    let cap = cap_in(envs, caller, slot)?;
    oxok_cap::check(&cap, &env_name(target), Rights::CALL).map_err(cap_error)
}
