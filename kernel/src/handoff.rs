//! The direct hand-off of the CPU from the running environment to another
//! within its slot: the common case of a directed yield (and of a
//! protected control transfer), done in one pass over the two
//! environments, each looked up once (Aegis's and seL4's fast paths).
//!
//! It applies when nothing is pending (`sched::pending`), the caller is
//! current and the scheduler's choice with time left in its slot
//! (`Scheduler::may_donate`), and the x87/SSE unit and the bases are the
//! caller's under eager switching (`fpu::hand_over_ready`). Then the
//! changes are exactly those of the general way (`sched::donate` after
//! the caller's state is saved): the scheduler's donation with both CPU
//! ledgers in hand, the exposed slot use, the unit and bases handed over,
//! the address space, both exposed statuses, and `current`. Anything else
//! goes the general way.

use crate::arch::trapframe::TrapFrame;
use crate::calls::args::CapSlot;
use crate::calls::check::call_cap_of;
use crate::env::{EnvId, Pair};
use crate::sched::publish_status;
use crate::slots::Sched;
use crate::state::Kernel;
use oxok_abi::{ENV_RUNNABLE, ENV_RUNNING, Error};

/// Whether `me`, the current environment, may hand the CPU to `to` here,
/// before any look at either environment: nothing pending, `me` running
/// with time left, the unit its own.
#[inline(always)]
pub fn ready(k: &Kernel, me: EnvId, to: EnvId) -> bool {
    debug_assert_eq!(k.current, Some(me));
    !crate::sched::pending(k) && k.sched.may_donate(me, to) && crate::fpu::hand_over_ready(me)
}

/// The directed yield from `me`, the current environment (its registers
/// in `frame`), to `to` with
/// the capability in `slot`, if [`ready`]: `to` must be able to run
/// (`Busy`) and the capability must let `me` call it (its errors);
/// then `me` is saved runnable with `rax` 0 and `to` runs on the rest of
/// the slot, its registers in `frame`. `None`, nothing changed: the
/// general way (not ready, or `to` not alive).
#[inline(always)]
pub fn directed_yield(
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
    let Pair { from, to: into, from_ledger, to_ledger } = pair;
    from.save_regs(frame);
    from.status = ENV_RUNNABLE;
    publish_status(from);
    switch(sched, slot_start, current, Pair { from, to: into, from_ledger, to_ledger });
    frame.copy_from(into.regs());
    Some(Ok(()))
}

/// [`directed_yield`] for the target word in `frame.rdi`, if it names
/// another environment (`None` otherwise: the general way).
#[inline(always)]
pub fn yield_word(k: &mut Kernel, frame: &mut TrapFrame, me: EnvId) -> Option<Result<(), Error>> {
    let word = frame.rdi;
    let to = EnvId::decode(word & u64::from(u32::MAX))?;
    directed_yield(k, frame, me, to, CapSlot(word >> 32))
}

/// Hands the CPU from `pair.from` (its registers and status already saved)
/// to `pair.to`, which the caller found able to run, after [`ready`]:
/// `pair.to` is current when this returns.
#[inline(always)]
fn switch(sched: &mut Sched, slot_start: &mut bool, current: &mut Option<EnvId>, pair: Pair<'_>) {
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
}
