//! CPU slot calls: `slot_alloc`, `slot_free`, `slot_give`, `slot_spare`.
//! A slot capability names `(cpu 0, index, generation)`; the generation
//! changes whenever the slot changes hands, so a capability is checked
//! against the vector's current generation before anything else.

use super::Cx;
use super::args::{CapSlot, EnvCap};
use super::check::cap_error;
use crate::account;
use crate::slots;
use oxok_abi::{Error, slot_placement};
use oxok_cap::{Cap, Kind, Name, Rights};
use oxok_slots::{Placement, SlotError, TimeSlot};

/// The ABI error for a slot-vector refusal.
fn slot_error(e: SlotError) -> Error {
    match e {
        SlotError::OutOfRange => Error::Invalid,
        SlotError::Taken => Error::Busy,
        SlotError::Full | SlotError::SpareFull => Error::NoMemory,
        SlotError::NotOwner => Error::Denied,
    }
}

/// The time slot a placement's argument names (`Invalid` past the
/// vector's end).
fn slot_arg(arg: u64) -> Result<TimeSlot, Error> {
    TimeSlot::from_word(arg).ok_or(Error::Invalid)
}

/// Checks that the caller's capability in `slot` names a time slot of CPU
/// 0 at its current generation, with `need`; returns the time slot.
fn slot_cap(cx: &mut Cx<'_>, slot: CapSlot, need: Rights) -> Result<TimeSlot, Error> {
    let cap = slot.cap(&mut cx.k.envs, cx.caller)?;
    let comps = cap.name.components();
    if cap.name.kind() != Some(Kind::Slot) || comps.len() != 4 || comps[1] != 0 {
        return Err(Error::BadCap);
    }
    let time_slot = TimeSlot::from_word(comps[2]).ok_or(Error::BadCap)?;
    let generation = u32::try_from(comps[3]).map_err(|_| Error::BadCap)?;
    if !cx.k.sched.vector.is_current(time_slot, generation) {
        return Err(Error::BadCap);
    }
    oxok_cap::check(&cap, &Name::slot(0, comps[2], comps[3]), need).map_err(cap_error)?;
    Ok(time_slot)
}

/// A full capability for `time_slot` at its current generation.
fn new_cap(cx: &Cx<'_>, time_slot: TimeSlot) -> Cap {
    let generation = cx.k.sched.vector.generation(time_slot).unwrap_or(0);
    Cap::new(Name::slot(0, time_slot.number(), u64::from(generation)), super::check::RWG)
}

/// Allocates a time slot by placement. Check, then perform: the caller's
/// list has room, its account takes the slot (a charge guard) and, last,
/// the vector gives one; then the capability fills the room found.
pub fn slot_alloc(cx: &mut Cx<'_>, placement: u64, arg: u64) -> Result<[u64; 2], Error> {
    let placement = match placement {
        slot_placement::ANY => Placement::Any,
        slot_placement::AT => Placement::At(slot_arg(arg)?),
        slot_placement::NEAR => Placement::Near(slot_arg(arg)?),
        slot_placement::SPREAD => Placement::Spread,
        _ => return Err(Error::Invalid),
    };
    let caller = cx.caller;
    let vacancy = crate::env::cap_vacancy(&mut cx.env()?.caps)?;
    let account = cx.env()?.account;
    let charge = account::Charge::slots(account, 1)?;
    let time_slot = cx.k.sched.vector.alloc(caller, placement).map_err(slot_error)?;
    // Perform: nothing below can fail.
    let cap = new_cap(cx, time_slot);
    let env = cx.env()?;
    let slot = env.caps.fill(vacancy, cap);
    charge.commit();
    env.slots += 1;
    slots::publish_vector(&cx.k.sched);
    Ok([slot as u64, time_slot.number()])
}

/// Frees a slot the caller owns.
pub fn slot_free(cx: &mut Cx<'_>, slot_cap_slot: CapSlot) -> Result<[u64; 0], Error> {
    // Check, then perform: the capability and the caller's row first; the
    // vector's own check is its last refusal and changes nothing when it
    // refuses; nothing after it can fail.
    let time_slot = slot_cap(cx, slot_cap_slot, Rights::WRITE)?;
    let caller = cx.caller;
    cx.env()?;
    cx.k.sched.vector.free(time_slot, caller).map_err(slot_error)?;
    let env = cx.env()?;
    let _ = env.caps.remove(slot_cap_slot.0);
    account::uncharge_slots(env.account, 1);
    env.slots = env.slots.saturating_sub(1);
    slots::publish_vector(&cx.k.sched);
    Ok([])
}

/// Gives a slot the caller owns to another environment. Check, then
/// perform: every refusal (the capability, the receiver's list, ownership,
/// the receiver's account) comes before anything changes; the account
/// transfer is the last check and changes only when it succeeds.
pub fn slot_give(cx: &mut Cx<'_>, slot_cap_slot: CapSlot, env_slot: EnvCap) -> Result<[u64; 1], Error> {
    let time_slot = slot_cap(cx, slot_cap_slot, Rights::WRITE)?;
    let caller = cx.caller;
    let target = env_slot.with(Rights::WRITE)?;
    let (to_account, vacancy) = {
        let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
        (env.account, crate::env::cap_vacancy(&mut env.caps)?)
    };
    let gift = cx.k.sched.vector.check_give(time_slot, caller, target).map_err(slot_error)?;
    // The receiver's account pays from now on (and must have room); a move
    // into a nested account is not counted twice.
    account::transfer_slots(cx.env()?.account, to_account, 1)?;
    // Perform: nothing below can fail.
    cx.k.sched.vector.hand_over(gift);
    let cap = new_cap(cx, time_slot);
    if let Some(me) = cx.k.envs.get(caller) {
        let _ = me.caps.remove(slot_cap_slot.0);
        me.slots = me.slots.saturating_sub(1);
    }
    let mut given = 0;
    if let Some(env) = cx.k.envs.get(target) {
        env.slots += 1;
        given = env.caps.fill(vacancy, cap);
    }
    slots::publish_vector(&cx.k.sched);
    Ok([given as u64])
}

/// Asks for (or stops asking for) spare time for an environment.
pub fn slot_spare(cx: &mut Cx<'_>, env_slot: EnvCap, on: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    if on != 0 {
        cx.k.sched.spare.request(target).map_err(slot_error)?;
    } else {
        cx.k.sched.spare.cancel(target);
    }
    Ok([])
}
