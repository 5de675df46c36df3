//! Fluke's complete state export: `env_get_state`, `env_set_state`.
//!
//! The state is everything a program could observe of an environment:
//! registers (a call in progress is encoded in them: a restartable call's
//! advanced arguments, a sleeper's `env_sleep`, a waiting caller's
//! `pct_wait`), upcall entries, x87/SSE state, FS/GS bases, the transfer
//! it serves (the interrupted state `pct_reply` resumes) and its wakeup
//! predicates with their parameters.

use super::Cx;
use super::args::EnvCap;
use crate::arch::trapframe::TrapFrame;
use crate::env::{Env, Pred};
use crate::mem::user;
use alloc::boxed::Box;
use oxok_abi::layout::USER_TOP;
use oxok_abi::pred::MAX_BYTES;
use oxok_abi::{ENV_CREATED, ENV_RUNNING, ENV_STATE_VERSION, EnvState, Error, PREDICATES, PctState, PredState};
use oxok_cap::Rights;

/// Reads an environment's complete state.
pub fn env_get_state(cx: &mut Cx<'_>, env_slot: EnvCap, buf: u64) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let target = env_slot.with(Rights::READ)?;
    let live = (target == caller).then(|| cx.frame.regs());
    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    let state = export(env, live);
    let space = &cx.env()?.space;
    user::write_struct(space, buf, &state)?;
    Ok([])
}

fn export(env: &mut Env, live: Option<oxok_abi::Regs>) -> EnvState {
    crate::fpu::sync(env);
    let mut st = EnvState::new();
    st.regs = live.unwrap_or_else(|| env.regs().regs());
    st.upcalls = env.handlers.upcalls();
    (st.fs_base, st.gs_base) = env.ext.bases();
    st.fpu = env.ext.state();
    if let Some(saved) = env.pct_saved().copied() {
        let (caller, ticket) = env.pct_caller.map_or((0, 0), |(c, t)| (u64::from(c), t));
        st.pct = PctState { serving: 1, caller, ticket, saved: saved.regs() };
    }
    for (out, pred) in st.preds.iter_mut().zip(env.handlers.preds().iter()) {
        if let Some(p) = pred.as_deref() {
            out.len = p.len as u64;
            out.params = p.params;
            out.code = p.code;
        }
    }
    st
}

/// A user frame from exported registers, checked as `env_set_state` says.
fn frame_of(regs: &oxok_abi::Regs) -> Result<TrapFrame, Error> {
    let frame = TrapFrame::from_regs(regs).ok_or(Error::Invalid)?;
    if frame.rip >= USER_TOP || frame.rsp >= USER_TOP {
        return Err(Error::Invalid);
    }
    Ok(frame)
}

/// A predicate index's program, verified (`None` for an index with none).
fn pred_of(p: &PredState) -> Result<Option<Box<Pred>>, Error> {
    if p.len == 0 {
        return Ok(None);
    }
    let len = usize::try_from(p.len).ok().filter(|&l| l <= MAX_BYTES).ok_or(Error::Invalid)?;
    let program = oxok_pred::verify(&p.code[..len]).map_err(|_| Error::Invalid)?;
    let mut code = [0u8; MAX_BYTES];
    code[..len].copy_from_slice(&p.code[..len]);
    Ok(Some(Box::new(Pred::new(program, p.params, code, len))))
}

/// Replaces an environment's complete state.
pub fn env_set_state(cx: &mut Cx<'_>, env_slot: EnvCap, buf: u64) -> Result<[u64; 0], Error> {
    let caller = cx.caller;
    let target = env_slot.with(Rights::WRITE)?;
    let state: EnvState = user::read_struct(&cx.env()?.space, buf)?;
    // Everything is checked before anything changes.
    if state.version != ENV_STATE_VERSION {
        return Err(Error::Invalid);
    }
    let frame = frame_of(&state.regs)?;
    if state.upcalls.iter().any(|&u| u >= USER_TOP) {
        return Err(Error::Invalid);
    }
    if !crate::fpu::base_ok(state.fs_base) || !crate::fpu::base_ok(state.gs_base) || !crate::fpu::importable(&state.fpu)
    {
        return Err(Error::Invalid);
    }
    let saved = match state.pct.serving {
        0 => None,
        1 => Some(frame_of(&state.pct.saved)?),
        _ => return Err(Error::Invalid),
    };
    let installed = state.preds.iter().filter(|p| p.len != 0).count();
    // The predicates' records, an FPU image if the target has none, and
    // room for a served call's state if it will serve or accept calls.
    let serves = saved.is_some() || state.upcalls[oxok_abi::upcall::PCT as usize] != 0;
    // And room for the entries and predicates if it has any.
    let handles = installed > 0 || state.upcalls.iter().any(|&u| u != 0);
    crate::mem::heap::reserve(
        installed * size_of::<Pred>()
            + crate::fpu::Extended::IMAGE_HEAP
            + crate::env::PctSave::HEAP
            + crate::env::Handlers::HEAP,
    )?;
    let mut preds: [Option<Box<Pred>>; PREDICATES] = Default::default();
    for (pred, p) in preds.iter_mut().zip(state.preds.iter()) {
        *pred = pred_of(p)?;
    }

    let env = cx.k.envs.get(target).ok_or(Error::BadEnv)?;
    if serves {
        env.pct.make_room()?;
    }
    if handles {
        env.handlers.make_room()?;
    }
    // The predicate records change number: the account pays the
    // difference (refused, nothing changed, beyond its heap limit).
    let (before, after) = (env.handlers.preds().iter().filter(|p| p.is_some()).count() as u64, installed as u64);
    let pred_heap = |n: u64| oxok_account::Amount::heap(n * crate::account::PRED_HEAP);
    if after > before {
        crate::account::charge_amount(env.account, pred_heap(after - before))?;
    } else {
        crate::account::uncharge_amount(env.account, pred_heap(before - after));
    }
    env.heap_charged = env.heap_charged.saturating_sub(pred_heap(before).heap) + pred_heap(after).heap;
    // A reply stays owed only if the environment already owed exactly this
    // one: a serving record moves with the environment, not with a copy.
    let owed = env.pct_caller.filter(|&(c, t)| {
        saved.is_some() && env.pct.serving() && u64::from(c) == state.pct.caller && t == state.pct.ticket
    });
    let image = crate::fpu::Image { fpu: state.fpu, fs_base: state.fs_base, gs_base: state.gs_base };
    match env.ext.image.as_deref_mut() {
        Some(old) => *old = image,
        // Room for it checked above, before anything changed.
        None => env.ext.image = Some(alloc::boxed::Box::new(image)),
    }
    crate::fpu::reload(env);
    // Room made above when there is anything to keep; without one, every
    // entry is 0 and no predicate is installed, as the state says.
    if let Some(room) = env.handlers.room_mut() {
        room.upcalls = state.upcalls;
        room.preds = preds;
    }
    // Room made above when `saved` is some.
    env.pct.set(saved);
    // Sleep and wait end: the new registers say what it does next.
    if !matches!(env.status, ENV_CREATED | ENV_RUNNING) {
        env.status = oxok_abi::ENV_RUNNABLE;
        env.publish();
    }
    super::pct::state_replaced(cx.k, target, owed.is_some());
    // Off the sleeper list: a later `env_sleep` lists it again.
    crate::sleep::unlist(cx.k, target);
    if target == caller {
        *cx.frame = frame;
        cx.replaced = true;
    } else if let Some(env) = cx.k.envs.get(target) {
        *env.regs_mut() = frame;
    }
    Ok([])
}
