//! Who runs in a slot: the decision taken at each slot boundary.

use crate::config::Config;
use crate::exposed::{USE_DONATED, USE_IDLE, USE_OWNER, USE_SPARE};
use crate::ledger::{CpuLedger, Ledger};
use crate::spare::Spare;
use crate::time_slot::TimeSlot;
use crate::vector::SlotVector;
use oxok_abi::env_id::EnvId;

/// The kernel's view of its environments, as the policy needs it. The
/// kernel implements it over its environment table (ids of environments
/// that have ended are simply not runnable and have no CPU ledger).
pub trait Envs {
    /// Whether `env` exists and could run now (not blocked, not sleeping on
    /// a wakeup predicate that is false, not being destroyed).
    fn runnable(&mut self, env: EnvId) -> bool;
    /// Whether `env`'s robust critical-section flag (in its application
    /// area) is set.
    fn critical(&mut self, env: EnvId) -> bool;
    /// `env`'s CPU ledger, or `None` if there is no such environment.
    fn ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger>;
    /// `env`'s CPU ledger if it is [`Envs::runnable`], else `None`: one
    /// question where a table can answer both with one look (the default
    /// asks both).
    fn runnable_ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger> {
        if self.runnable(env) { self.ledger(env) } else { None }
    }
}

/// Why the owner of a slot is not the one running in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vacancy {
    /// Nobody owns the slot.
    Unowned,
    /// The owner is not runnable (or no longer exists).
    OwnerBlocked,
    /// The owner forfeited the slot to repay debt from earlier overruns.
    OwnerInDebt,
}

/// How the environment running in a slot got it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// It owns the slot.
    Owner,
    /// The slot was lent to it as spare time.
    Spare(Vacancy),
    /// Nobody runs: the CPU idles until the next tick.
    Idle(Vacancy),
    /// The environment running in the slot donated the rest of it by a
    /// directed yield.
    Donated,
}

impl Reason {
    /// The exposed `USE_*` code.
    pub const fn code(self) -> u32 {
        match self {
            Reason::Owner => USE_OWNER,
            Reason::Spare(_) => USE_SPARE,
            Reason::Idle(_) => USE_IDLE,
            Reason::Donated => USE_DONATED,
        }
    }
}

/// Who runs in a slot (or the rest of it), and for how long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The environment to run (give it the slot-start upcall); `None`: idle.
    pub run: Option<EnvId>,
    /// Why.
    pub reason: Reason,
    /// Ticks it may run before its slot-end upcall (after debt repayment);
    /// for an idle slot, the ticks until the next slot.
    pub budget: u32,
}

/// The decision at the start of slot `slot` (the kernel normally lets the
/// [`Scheduler`](crate::Scheduler) call this):
///
/// 1. If the slot has an owner that is runnable, the owner repays debt
///    ([`CpuLedger`] rules): with debt < slot length it runs a slot shortened
///    by its debt (`Reason::Owner`); otherwise it forfeits the slot.
/// 2. Otherwise (unowned, owner blocked, or forfeited) the slot is lent to
///    the next runnable spare-time requester, round robin, which repays its
///    own debt the same way (requesters whose turn is forfeited are passed
///    over; an owner that just forfeited the slot is never lent it).
/// 3. Otherwise the CPU idles for the slot (`budget` = slot length).
///
/// Debt is only repaid when the environment could run, so an owner that is
/// blocked carries its debt to a later slot. An out-of-range `slot` is
/// treated as unowned.
pub fn decide<const N: usize, const M: usize>(
    slot: TimeSlot,
    vector: &SlotVector<N>,
    spare: &mut Spare<M>,
    envs: &mut impl Envs,
    config: &Config,
) -> Decision {
    let s = config.sanitized().ticks_per_slot;
    let owner = vector.owner(slot);
    let vacancy = match owner {
        None => Vacancy::Unowned,
        Some(o) if !envs.runnable(o) => Vacancy::OwnerBlocked,
        Some(o) => match envs.ledger(o) {
            None => Vacancy::OwnerBlocked,
            Some(a) => match a.start_turn(s) {
                Some(budget) => {
                    a.started(false);
                    return Decision { run: Some(o), reason: Reason::Owner, budget };
                }
                None => Vacancy::OwnerInDebt,
            },
        },
    };
    let skip = if vacancy == Vacancy::OwnerInDebt { owner } else { None };
    match spare.pick(envs, Some(s), s, skip) {
        Some((env, budget)) => Decision { run: Some(env), reason: Reason::Spare(vacancy), budget },
        None => Decision { run: None, reason: Reason::Idle(vacancy), budget: s },
    }
}

/// The decision for the `rest` ticks left of slot `slot`, which has been
/// idle (for `vacancy`): the owner if it became runnable, has no debt and
/// did not forfeit the slot; else a debt-free runnable spare-time requester;
/// else `None` (stay idle). Nothing is charged.
pub(crate) fn decide_rest<const N: usize, const M: usize>(
    slot: TimeSlot,
    rest: u32,
    vacancy: Vacancy,
    vector: &SlotVector<N>,
    spare: &mut Spare<M>,
    envs: &mut impl Envs,
) -> Option<Decision> {
    let owner = vector.owner(slot);
    if let Some(o) = owner
        && vacancy != Vacancy::OwnerInDebt
        && envs.runnable(o)
        && let Some(a) = envs.ledger(o)
        && a.debt() == 0
    {
        a.started(false);
        return Some(Decision { run: Some(o), reason: Reason::Owner, budget: rest });
    }
    let skip = if vacancy == Vacancy::OwnerInDebt { owner } else { None };
    let vacancy = match owner {
        None => Vacancy::Unowned,
        Some(_) if vacancy == Vacancy::OwnerInDebt => Vacancy::OwnerInDebt,
        Some(_) => Vacancy::OwnerBlocked,
    };
    spare.pick(envs, None, rest, skip).map(|(env, budget)| Decision {
        run: Some(env),
        reason: Reason::Spare(vacancy),
        budget,
    })
}
