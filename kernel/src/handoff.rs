//! The direct hand-off of the CPU from the running environment to another
//! within its slot — the common case of a directed yield (`yield_cpu`)
//! and of a protected control transfer's call and reply (`pct_call`,
//! `pct_reply`) — done in one pass over the two environments, each looked
//! up once (Aegis's and seL4's fast paths). The generated dispatch tries
//! [`handed`] ahead of each call's general arm.
//!
//! It applies when nothing is pending (`sched::pending`), the caller (the
//! current environment) is the scheduler's choice with time left in its
//! slot (`Scheduler::may_donate`), the x87/SSE unit and the bases are the
//! caller's under eager switching (`fpu::hand_over_ready`), and every
//! check of the call passes. Then the changes are exactly those of the
//! general way (the call's own, through the functions the general path
//! uses, then `sched::donate`): the scheduler's donation with both CPU
//! ledgers in hand, the exposed slot use, the unit and bases handed over,
//! the address space, both exposed statuses, and `current`. Anything else
//! — an error included — goes the general way, which checks again and
//! answers; nothing is changed before the fast path knows it finishes.

use crate::arch::trapframe::TrapFrame;
use crate::calls::args::CapSlot;
use crate::calls::check::call_cap_of;
use crate::calls::pct;
use crate::env::{Env, EnvId, Pair};
use crate::sched::publish_status;
use crate::slots::Sched;
use crate::state::Kernel;
use oxok_abi::{Call, ENV_RUNNABLE, ENV_RUNNING, Error};

/// Whether `me`, the current environment, may hand the CPU to `to` here,
/// before any look at either environment: nothing pending, `me` running
/// with time left, the unit its own.
#[inline(always)]
fn ready(k: &Kernel, me: EnvId, to: EnvId) -> bool {
    debug_assert_eq!(k.current, Some(me));
    !crate::sched::pending(k) && k.sched.may_donate(me, to) && crate::fpu::hand_over_ready(me)
}

/// The directed yield from `me`, the current environment (its registers
/// in `frame`), to `to` with the capability in `slot`, if [`ready`]: `to`
/// must be able to run (`Busy`) and the capability must let `me` call it
/// (its errors); then `me` is saved runnable with `rax` 0 and `to` runs on
/// the rest of the slot, its registers in `frame`. `None`, nothing
/// changed: the general way (not ready, or `to` not alive).
#[inline(always)]
fn directed_yield(
    k: &mut Kernel,
    frame: &mut TrapFrame,
    me: EnvId,
    to: EnvId,
    slot: CapSlot,
) -> Option<Result<(), Error>> {
    if !ready(k, me, to) {
        return None;
    }
    let Kernel { envs, sched, current, slot_start, .. } = k;
    let pair = envs.pair(me, to)?;
    if !crate::slots::could_run(pair.to) {
        return Some(Err(Error::Busy));
    }
    if let Err(e) = call_cap_of(pair.from, slot, to) {
        return Some(Err(e));
    }
    frame.rax = 0;
    pair.from.save_regs(frame);
    pair.from.status = ENV_RUNNABLE;
    publish_status(pair.from);
    let into = switch(sched, slot_start, current, pair);
    frame.copy_from(into.regs());
    Some(Ok(()))
}

/// The fast path of `call` if it has one (a directed yield, a protected
/// control transfer's call and reply), ahead of its general dispatch arm:
/// true if it handed the CPU over (`frame` holds the environment now
/// current; the full exit follows). False, nothing changed: the general
/// way, which checks again and answers. With `call` a constant, as in
/// each arm, this is nothing at all for the other calls.
#[inline(always)]
pub fn handed(call: Call, k: &mut Kernel, frame: &mut TrapFrame, me: EnvId) -> bool {
    match call {
        Call::yield_cpu => matches!(yield_word(k, frame, me), Some(Ok(()))),
        Call::pct_call => call_word(k, frame, me).is_some(),
        Call::pct_reply => reply_word(k, frame, me).is_some(),
        _ => false,
    }
}

/// [`directed_yield`] for the target word in `frame.rdi`, if it names
/// another environment (`None` otherwise: the general way).
#[inline(always)]
fn yield_word(k: &mut Kernel, frame: &mut TrapFrame, me: EnvId) -> Option<Result<(), Error>> {
    let word = frame.rdi;
    let to = EnvId::decode(word & u64::from(u32::MAX))?;
    directed_yield(k, frame, me, to, CapSlot(word >> 32))
}

/// The synchronous protected control transfer from `me`, the current
/// environment (its registers, the message, in `frame`), to the target
/// word in `frame.rdi`, when [`ready`] and every check of `pct_call`
/// passes: `me` waits for the reply with a fresh ticket, the callee
/// starts serving and runs its entry with the message at once. `None`,
/// nothing changed: the general way, which checks again and answers.
#[inline(always)]
fn call_word(k: &mut Kernel, frame: &mut TrapFrame, me: EnvId) -> Option<()> {
    let word = frame.rdi;
    let to = EnvId::decode(word & u64::from(u32::MAX))?;
    if !ready(k, me, to) {
        return None;
    }
    let Kernel { envs, sched, current, slot_start, .. } = k;
    let pair = envs.pair(me, to)?;
    let entry = pct::entry_of(pair.to).ok()?;
    call_cap_of(pair.from, CapSlot(word >> 32), to).ok()?;
    let ticket = pct::next_ticket();
    pct::start_wait(pair.from, frame, to, ticket);
    pct::start_serving(pair.to, Some((me, ticket)));
    // The message is the frame: written in place for the callee.
    frame.into_message(entry, pct::SYNC, u64::from(me));
    switch(sched, slot_start, current, pair);
    Some(())
}

/// `pct_reply` from `me`, the current environment (the reply in `frame`),
/// to the caller of the call it serves (`frame.rdi` that caller or
/// `PCT_OWED`), when [`ready`] and that caller still waits for it with
/// the call's ticket and can run: `me` stops serving, the caller's
/// `pct_wait` completes with the reply and it runs at once. `None`,
/// nothing changed: the general way.
#[inline(always)]
fn reply_word(k: &mut Kernel, frame: &mut TrapFrame, me: EnvId) -> Option<()> {
    let named = frame.rdi;
    let (first, ticket) = k.envs.get(me)?.pct_caller?;
    if named != oxok_abi::PCT_OWED && named != u64::from(first) {
        return None;
    }
    if !ready(k, me, first) {
        return None;
    }
    let Kernel { envs, sched, current, slot_start, .. } = k;
    let pair = envs.pair(me, first)?;
    let waits = pair.to.waiting_for == Some(me) && pair.to.wait_ticket == ticket;
    if !pair.from.pct.serving() || !waits || pair.to.stopped {
        return None;
    }
    pct::stop_serving(pair.from);
    pct::end_wait(pair.to);
    pct::completed(frame, pair.to.regs(), me);
    switch(sched, slot_start, current, pair);
    Some(())
}

/// Hands the CPU from `pair.from` (its registers and status already saved)
/// to `pair.to`, which the caller found able to run, after [`ready`]:
/// `pair.to` is current when this returns, and returned.
#[inline(always)]
fn switch<'a>(sched: &mut Sched, slot_start: &mut bool, current: &mut Option<EnvId>, pair: Pair<'a>) -> &'a mut Env {
    let Pair { from, to, from_ledger, to_ledger } = pair;
    let id = to.id;
    sched.donate_between(id, from_ledger, to_ledger);
    log::trace!("slot {}: {} donates to {id}", sched.slot().number(), from.id);
    crate::slots::publish_donation(sched.slot(), id);
    *slot_start = false;
    crate::fpu::hand_over(from, to);
    to.space.activate();
    to.status = ENV_RUNNING;
    to.runs += 1;
    publish_status(to);
    *current = Some(id);
    #[cfg(feature = "model-process")]
    crate::model::loaded(id);
    to
}
