//! `env_limit`, `env_limit_slots`, `env_limit_heap`, `account_info`:
//! resource accounts (see `crate::account`).

use super::Cx;
use super::args::EnvCap;
use crate::account;
use oxok_abi::{ACCOUNT_ENVS, ACCOUNT_FRAMES, ACCOUNT_HEAP, ACCOUNT_SLOTS, Error};
use oxok_account::Amount;
use oxok_cap::Rights;

/// Moves an environment into a new sub-account of its account.
pub fn env_limit(cx: &mut Cx<'_>, env_slot: EnvCap, frames: u64, envs: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    // The table may grow by a row.
    crate::mem::heap::reserve(1024)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let usage = env.charged();
    let limit = Amount::new(frames, envs).with_slots(oxok_account::UNLIMITED).with_heap(oxok_account::UNLIMITED);
    let new = account::with(|a| a.split(env.account, limit, usage)).map_err(account::error)?;
    log::debug!("env {target} ({}): account {} -> {new} (limits {frames} frames, {envs} envs)", env.name, env.account);
    env.account = new;
    env.publish();
    Ok([])
}

/// Usage and limit of an environment's account.
pub fn account_info(cx: &mut Cx<'_>, env_slot: EnvCap, kind: u64) -> Result<[u64; 3], Error> {
    let target = env_slot.with(Rights::READ)?;
    let id = cx.k.envs.get(target).ok_or(Error::BadEnv)?.account;
    let info = account::with(|a| a.info(id)).ok_or(Error::BadEnv)?;
    let (used, limit) = match kind {
        ACCOUNT_FRAMES => (info.used.frames, info.limit.frames),
        ACCOUNT_ENVS => (info.used.envs, info.limit.envs),
        ACCOUNT_SLOTS => (info.used.slots, info.limit.slots),
        ACCOUNT_HEAP => (info.used.heap, info.limit.heap),
        _ => return Err(Error::Invalid),
    };
    Ok([used, limit, u64::from(id)])
}

/// Moves an environment into a new sub-account limited to `slots` CPU
/// time slots (frames and environments limited only by the ancestors).
pub fn env_limit_slots(cx: &mut Cx<'_>, env_slot: EnvCap, slots: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    crate::mem::heap::reserve(1024)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let usage = env.charged();
    let limit = Amount::UNLIMITED.with_slots(slots);
    let new = account::with(|a| a.split(env.account, limit, usage)).map_err(account::error)?;
    log::debug!("env {target} ({}): account {} -> {new} (limit {slots} slots)", env.name, env.account);
    env.account = new;
    env.publish();
    Ok([])
}

/// Moves an environment into a new sub-account limited to `bytes` bytes of
/// kernel heap (everything else limited only by the ancestors).
pub fn env_limit_heap(cx: &mut Cx<'_>, env_slot: EnvCap, bytes: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    crate::mem::heap::reserve(1024)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let usage = env.charged();
    let limit = Amount::UNLIMITED.with_heap(bytes);
    let new = account::with(|a| a.split(env.account, limit, usage)).map_err(account::error)?;
    log::debug!("env {target} ({}): account {} -> {new} (limit {bytes} heap bytes)", env.name, env.account);
    env.account = new;
    env.publish();
    Ok([])
}
