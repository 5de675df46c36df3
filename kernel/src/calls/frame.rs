//! `frame_alloc`, `frame_free`, `frame_revoke`.

use super::Cx;
use super::args::{EnvCap, FrameCap, FrameChoice};
use crate::account;
use crate::arch::cpu;
use crate::env::count_frame_ref;
use crate::env::{EnvId, Revocation};
use crate::mem::frame;
use oxok_abi::Error;
use oxok_cap::{Cap, Name, Rights};

/// Allocates a frame (any, or by number) with a full capability.
pub fn frame_alloc(cx: &mut Cx<'_>, pfn: FrameChoice) -> Result<[u64; 2], Error> {
    let caller = cx.caller;
    alloc_owned_by(cx, caller, pfn)
}

/// Allocates a frame owned by another environment; the capability is the
/// caller's. The frame is charged to the owner's account, which must be the
/// caller's own or one nested inside it: a caller spends only budget it is
/// itself inside of, so it cannot escape its limits by charging someone
/// else.
pub fn frame_alloc_for(cx: &mut Cx<'_>, env_slot: EnvCap, pfn: FrameChoice) -> Result<[u64; 2], Error> {
    let owner = env_slot.with(Rights::WRITE)?;
    let theirs = cx.k.envs.get(owner).ok_or(Error::BadEnv)?.account;
    if !account::within(theirs, cx.env()?.account) {
        return Err(Error::Denied);
    }
    alloc_owned_by(cx, owner, pfn)
}

/// Check, then perform (seL4's decode/invoke). The check refuses with
/// nothing changed: the caller's capability list has room, the owner's
/// account takes the frame (a charge guard, given back on any refusal
/// after it), and, last, the frame is taken (and put on the owner's list
/// of owned frames). The perform half cannot fail: the capability goes
/// into the slot found free, and the owner's account keeps the charge.
fn alloc_owned_by(cx: &mut Cx<'_>, owner: EnvId, choice: FrameChoice) -> Result<[u64; 2], Error> {
    let owner_account = cx.k.envs.get(owner).ok_or(Error::BadEnv)?.account;
    let me = cx.k.envs.get(cx.caller).ok_or(Error::BadEnv)?;
    let vacancy = crate::env::cap_vacancy(&mut me.caps)?;
    let charge = account::Charge::owned(owner_account)?;
    let pa = match choice {
        FrameChoice::Any => frame::with(|f| f.alloc(owner.raw())).ok_or(Error::NoMemory)?,
        FrameChoice::At(pfn) => frame::with(|f| f.alloc_at(pfn, owner.raw()))?,
    };
    // Perform: nothing below can fail.
    let pfn = pa.pfn();
    let generation = frame::with(|f| f.entry(pfn).map_or(0, |e| e.generation));
    let cap = Cap::new(Name::frame(pfn.raw(), u64::from(generation)), super::check::RWG);
    let slot = me.caps.fill(vacancy, cap);
    count_frame_ref(&cap, 1);
    // The owner pays for it (the allocator put it on the owner's list).
    charge.commit();
    if let Some(env) = cx.k.envs.get(owner) {
        env.publish();
    }
    Ok([slot as u64, pfn.raw()])
}

/// Frees a frame the caller owns and maps nowhere.
pub fn frame_free(cx: &mut Cx<'_>, slot: FrameCap) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let pfn = slot.with(super::check::RWG)?;
    let entry = frame::with(|f| f.entry(pfn).copied()).ok_or(Error::BadCap)?;
    if entry.owner != caller.raw() {
        return Err(Error::Denied);
    }
    if entry.maps != 0 {
        return Err(Error::Busy);
    }
    let env = cx.env()?;
    // Perform: nothing below can fail.
    // Freed, it leaves the caller's list of owned frames.
    frame::with(|f| f.free(pfn.addr()));
    let _ = env.caps.remove(slot.slot.0);
    account::uncharge_frames(env.account, 1);
    if let Some(r) = env.revoke.as_mut() {
        r.owed = r.owed.saturating_sub(1);
        if r.owed == 0 {
            env.revoke = None;
        }
    }
    env.publish();
    Ok([])
}

/// Starts a revocation request against an environment.
pub fn frame_revoke(cx: &mut Cx<'_>, env_slot: EnvCap, count: u64, deadline: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if count == 0 {
        env.revoke = None;
        env.publish();
    } else {
        let deadline = cpu::rdtsc().saturating_add(deadline);
        env.revoke = Some(Revocation { owed: u32::try_from(count).unwrap_or(u32::MAX), deadline, notified: false });
        log::info!("env {target} ({}): asked to give back {count} frames", env.name);
        env.publish();
        cx.k.revoking.note(deadline);
    }
    Ok([])
}
