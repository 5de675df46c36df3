//! Wakeup predicates: `pred_install`, `pred_param`, `env_sleep`.

use super::Cx;
use super::args::EnvCap;
use crate::account;
use crate::env::Pred;
use crate::mem::user;
use alloc::boxed::Box;
use oxok_abi::pred::{MAX_BYTES, PARAMS};
use oxok_abi::{ENV_SLEEPING, Error, PREDICATES};
use oxok_account::Amount;
use oxok_cap::Rights;

fn pred_index(index: u64) -> Result<usize, Error> {
    usize::try_from(index).ok().filter(|&i| i < PREDICATES).ok_or(Error::Invalid)
}

/// Verifies and installs a predicate.
pub fn pred_install(cx: &mut Cx<'_>, env_slot: EnvCap, index: u64, code: u64, len: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let index = pred_index(index)?;
    let len = usize::try_from(len).ok().filter(|&l| l > 0 && l <= MAX_BYTES).ok_or(Error::Invalid)?;
    let mut bytes = [0u8; MAX_BYTES];
    user::copy_from_user(&cx.env()?.space, code, &mut bytes[..len])?;
    let program = oxok_pred::verify(&bytes[..len]).map_err(|_| Error::Invalid)?;
    crate::mem::heap::reserve(size_of::<Pred>())?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let room = env.handlers.make_room()?;
    if room.preds[index].is_none() {
        // A new record: the target's account pays for it.
        account::charge_amount(env.account, Amount::heap(account::PRED_HEAP))?;
        env.heap_charged += account::PRED_HEAP;
    }
    room.preds[index] = Some(Box::new(Pred::new(program, [0; PARAMS], bytes, len)));
    crate::env::publish_heap();
    crate::sleep::changed(cx.k, target);
    Ok([])
}

/// Changes one parameter of an installed predicate.
pub fn pred_param(cx: &mut Cx<'_>, env_slot: EnvCap, index: u64, param: u64, value: u64) -> Result<[u64; 0], Error> {
    let target = env_slot.with(Rights::WRITE)?;
    let index = pred_index(index)?;
    let param = usize::try_from(param).ok().filter(|&p| p < PARAMS).ok_or(Error::Invalid)?;
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let pred = env.handlers.room_mut().and_then(|r| r.preds[index].as_deref_mut()).ok_or(Error::NotFound)?;
    pred.params[param] = value;
    crate::sleep::changed(cx.k, target);
    Ok([])
}

/// Returns the first predicate of `mask` that holds, or sleeps until one
/// does (the evaluation that wakes the caller completes this call:
/// `crate::sleep`).
pub fn env_sleep(cx: &mut Cx<'_>, mask: u64) -> Result<[u64; 1], Error> {
    if mask == 0 || mask >> PREDICATES != 0 {
        return Err(Error::Invalid);
    }
    let me = cx.caller;
    let frame = *cx.frame;
    let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
    for i in 0..PREDICATES {
        if mask & (1 << i) != 0 && env.handlers.pred(i).is_none() {
            return Err(Error::NotFound);
        }
    }
    match env.first_true(mask) {
        Ok(Some(i)) => Ok([i as u64]),
        Err(_) => Err(Error::BadAddress),
        Ok(None) => {
            // It may wait for disk writes the driver still holds as an open
            // run: they go now.
            crate::xn::kick();
            // Asleep: the saved state is "about to call env_sleep(mask)".
            let env = cx.k.envs.get(me).ok_or(Error::BadEnv)?;
            let regs = env.regs_mut();
            *regs = frame;
            regs.rip -= 2;
            env.status = ENV_SLEEPING;
            env.publish();
            // Listed once however often it sleeps (a new sleep replaces
            // the entry: the mask or deadline may differ); the queue was
            // sized for every environment at boot, so this never allocates.
            crate::sleep::list(cx.k, me);
            crate::sched::give_up(cx.k, cx.frame, me, None);
            cx.replaced = true;
            Ok([0])
        }
    }
}
