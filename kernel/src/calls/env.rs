//! Environment calls: exit, self, create, destroy, run, state export
//! (Fluke), upcall registration.

use super::Cx;
use super::args::{CapSlot, EnvCap};
use crate::env::env_name;
use crate::mem::user;
use oxok_abi::layout::USER_TOP;
use oxok_abi::{EXIT_PROGRAM_BITS, Error, upcall};
use oxok_cap::{Cap, Rights};

/// Ends the caller.
pub fn env_exit(cx: &mut Cx<'_>, code: u64) -> Result<[u64; 0], Error> {
    let id = cx.caller;
    let name = cx.env()?.name.clone();
    log::info!("env {id} ({name}) exited with status {}", code as u32 as i32);
    crate::sched::kill(cx.k, id, code & EXIT_PROGRAM_BITS);
    Ok([])
}

/// The caller's id.
pub fn env_self(cx: &mut Cx<'_>) -> Result<[u64; 1], Error> {
    Ok([u64::from(cx.caller)])
}

/// Creates an empty environment; the caller gets a full capability to it.
pub fn env_create(cx: &mut Cx<'_>) -> Result<[u64; 2], Error> {
    let caller = cx.caller;
    // Check, then perform: the capability's slot first; creating the
    // environment (the account's and the table's refusals) is the last
    // check, and filling the slot cannot fail.
    let (name, vacancy) = {
        let env = cx.env()?;
        let vacancy = crate::env::cap_vacancy(&mut env.caps)?;
        // A child is named after its creator until it is given a program.
        let base = env.name.split('.').next().unwrap_or("");
        (alloc::format!("{base}.child"), vacancy)
    };
    let child = cx.k.envs.create(&name, Some(caller))?;
    let mut slot = 0;
    if let Some(env) = cx.k.envs.get(caller) {
        slot = env.caps.fill(vacancy, Cap::new(env_name(child), Rights::ALL));
    }
    log::debug!("env {caller} created env {child}");
    Ok([slot as u64, u64::from(child)])
}

/// Destroys an environment.
pub fn env_destroy(cx: &mut Cx<'_>, env_slot: EnvCap) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let target = env_slot.with(Rights::WRITE)?;
    log::info!("env {target} destroyed by env {caller}");
    crate::sched::kill(cx.k, target, oxok_abi::EXIT_KILLED | 0xff);
    // Destroyed by its creator: nobody is left to wait for it, reap at once.
    let _ = cx.k.envs.take_zombie(caller, target);
    if target != caller {
        let _ = cx.env()?.caps.remove(env_slot.slot.0);
    }
    Ok([])
}

/// Makes an environment runnable.
pub fn env_run(cx: &mut Cx<'_>, env_slot: EnvCap) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if env.status == oxok_abi::ENV_CREATED {
        crate::sched::make_runnable(cx.k, target)?;
    }
    Ok([])
}

/// Sets one upcall entry.
pub fn upcall_register(cx: &mut Cx<'_>, env_slot: EnvCap, kind: u64, entry: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let kind = usize::try_from(kind).ok().filter(|&k| k < upcall::KINDS).ok_or(Error::Invalid)?;
    if entry >= USER_TOP {
        return Err(Error::Invalid);
    }
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    // Accepting calls needs room for the state a call interrupts (made
    // once; the account paid for it when the environment was made).
    if kind == upcall::PCT as usize && entry != 0 {
        env.pct.make_room()?;
    }
    env.handlers.set_upcall(kind, entry)?;
    Ok([])
}

/// Renames an environment.
pub fn env_rename(cx: &mut Cx<'_>, env_slot: EnvCap, ptr: u64, len: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let len = usize::try_from(len).ok().filter(|&l| l <= 32).ok_or(Error::Invalid)?;
    let mut buf = [0u8; 32];
    user::copy_from_user(&cx.env()?.space, ptr, &mut buf[..len])?;
    let name = core::str::from_utf8(&buf[..len]).map_err(|_| Error::Invalid)?;
    crate::mem::heap::reserve(64)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    env.name = alloc::boxed::Box::from(name);
    env.publish();
    Ok([])
}

/// Reaps an ended child: its exit status.
pub fn env_reap(cx: &mut Cx<'_>, env_slot: CapSlot) -> Result<[u64; 1], Error> {
    let cap = env_slot.cap(&mut cx.k.envs, cx.caller)?;
    let id = super::check::env_of(&cap)?;
    // The right, not the family tree: reaping ends the row, which needs
    // write on the environment (as destroying it does).
    oxok_cap::check(&cap, &crate::env::env_name(id), Rights::WRITE).map_err(super::check::cap_error)?;
    if cx.k.envs.alive(id) {
        return Err(Error::Busy);
    }
    let parent = cx.k.envs.zombie_parent(id).ok_or(Error::BadEnv)?;
    let status = cx.k.envs.take_zombie(parent, id)?;
    let _ = cx.env()?.caps.remove(env_slot.0);
    Ok([status])
}
