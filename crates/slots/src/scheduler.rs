//! The per-CPU scheduler: the slot protocol, tick by tick.

use core::fmt;

use crate::config::Config;
use crate::exposed::VectorHeader;
use crate::exposed::env_field;
use crate::ledger::Ledger;
use crate::policy::{Decision, Envs, Reason, Vacancy, decide, decide_rest};
use crate::spare::Spare;
use crate::time_slot::TimeSlot;
use crate::vector::SlotVector;
use crate::{DEFAULT_SLOTS, DEFAULT_SPARE};
use oxok_abi::env_id::EnvId;

/// What the kernel must do after a [`Scheduler`] call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing: whoever runs (or the idle loop) continues.
    Continue,
    /// Deliver the slot-end upcall to `env`, the running environment; it
    /// keeps running (in its handler) and should save what it needs and
    /// yield within the grace period.
    SlotEnd {
        /// The running environment.
        env: EnvId,
    },
    /// The running environment changes.
    Switch(Switch),
}

/// A change of running environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// The environment that stops running, if one was, and why.
    pub out: Option<Out>,
    /// The slot that now runs (the same slot for a donation or for lending
    /// the rest of an idle slot).
    pub slot: TimeSlot,
    /// Who runs now: upcall its slot-start entry; `None`: idle.
    pub decision: Decision,
}

/// An environment that stops running.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Out {
    /// The environment.
    pub env: EnvId,
    /// How its turn ended.
    pub end: End,
}

/// How a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It yielded (or blocked) before its deadline; its registers were saved
    /// by the yield. `excess` ticks past its slot's end were charged as debt
    /// (critical-section deferral or grace); strikes reset.
    Yielded {
        /// Ticks charged.
        excess: u32,
    },
    /// It had not yielded when the grace period expired: preempted (the
    /// kernel saves its registers), `excess` ticks charged as debt, one
    /// more strike.
    Overrun {
        /// Ticks charged.
        excess: u32,
        /// Consecutive overruns so far (below `max_strikes`).
        strikes: u32,
    },
    /// Overran `max_strikes` times in a row: the kernel must destroy it and
    /// log why (this value's `Display` is the reason). Its slots are already
    /// freed and its spare-time request dropped.
    Destroy {
        /// Ticks charged by the last overrun.
        excess: u32,
        /// Consecutive overruns.
        strikes: u32,
    },
    /// It was removed ([`Scheduler::remove`]) or no longer has a CPU ledger.
    Removed,
}

impl fmt::Display for End {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            End::Yielded { excess } => write!(f, "yielded ({excess} ticks past its slot charged)"),
            End::Overrun { excess, strikes } => {
                write!(f, "ignored its slot end: preempted, {excess} ticks charged, strike {strikes}")
            }
            End::Destroy { excess, strikes } => write!(
                f,
                "ignored its slot end {strikes} times in a row (last overrun {excess} ticks): CPU slots revoked"
            ),
            End::Removed => f.write_str("removed"),
        }
    }
}

/// Where the running environment is in its turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Before the end of its budget.
    Running,
    /// Past the end; the critical-section flag defers the slot-end upcall.
    Deferred,
    /// The slot-end upcall was delivered when `elapsed` was `at`.
    Ending { at: u32 },
}

/// The CPU scheduler of one CPU: its slot vector, its spare-time
/// requesters and the slot clock. `N` slots (default [`DEFAULT_SLOTS`]), up
/// to `M` spare-time requesters (default [`DEFAULT_SPARE`]).
///
/// Slots run in index order, round and round. A slot lasts as long as its
/// turn: it starts when the previous one ends (by a yield or a preemption)
/// and runs the decided budget. See the crate documentation for the policy
/// and for when the kernel calls [`tick`](Self::tick),
/// [`yielded`](Self::yielded) and [`remove`](Self::remove).
#[derive(Clone, Debug)]
pub struct Scheduler<const N: usize = DEFAULT_SLOTS, const M: usize = DEFAULT_SPARE> {
    /// Slot ownership. The kernel changes it directly (allocation, free,
    /// give); changes take effect at the next slot boundary.
    pub vector: SlotVector<N>,
    /// Spare-time requesters.
    pub spare: Spare<M>,
    config: Config,
    /// The current slot.
    slot: TimeSlot,
    /// Ticks since the current turn's slot started.
    elapsed: u32,
    /// Value of `elapsed` at which the running environment's budget ends
    /// (or, when idle, the slot ends).
    end: u32,
    running: Option<EnvId>,
    reason: Reason,
    phase: Phase,
    /// Times slot 0 started.
    rounds: u64,
}

impl<const N: usize, const M: usize> Scheduler<N, M> {
    /// A scheduler with all slots free and nothing running, just before slot
    /// 0: the first [`start`](Self::start) or [`tick`](Self::tick) begins
    /// slot 0. `config` is [sanitized](Config::sanitized).
    pub const fn new(config: Config) -> Scheduler<N, M> {
        Self::with_slots(config, N)
    }

    /// As [`new`](Self::new) with `slots` slots in use (clamped to `1..=N`):
    /// the count a kernel sets at boot.
    pub const fn with_slots(config: Config, slots: usize) -> Scheduler<N, M> {
        let vector = SlotVector::with_len(slots);
        let last = TimeSlot(vector.len() - 1);
        Scheduler {
            vector,
            spare: Spare::new(),
            config: config.sanitized(),
            slot: last,
            elapsed: 0,
            end: 0,
            running: None,
            reason: Reason::Idle(Vacancy::Unowned),
            phase: Phase::Running,
            rounds: 0,
        }
    }

    /// The configuration in force.
    pub const fn config(&self) -> Config {
        self.config
    }

    /// The current slot.
    pub const fn slot(&self) -> TimeSlot {
        self.slot
    }

    /// The running environment (`None`: idle).
    pub const fn running(&self) -> Option<EnvId> {
        self.running
    }

    /// How the running environment got the CPU (or why it idles).
    pub const fn reason(&self) -> Reason {
        self.reason
    }

    /// Ticks since the current slot started.
    pub const fn elapsed(&self) -> u32 {
        self.elapsed
    }

    /// Ticks left before the slot-end upcall (0 once it is due).
    pub const fn remaining(&self) -> u32 {
        self.end.saturating_sub(self.elapsed)
    }

    /// The exposed header row.
    pub const fn header(&self) -> VectorHeader {
        let c = &self.config;
        VectorHeader {
            slots: if self.vector.len() > u32::MAX as usize { u32::MAX } else { self.vector.len() as u32 },
            ticks_per_slot: c.ticks_per_slot,
            grace_ticks: c.grace_ticks,
            critical_grace_ticks: c.critical_grace_ticks,
            max_strikes: c.max_strikes,
            current: if self.slot.0 > u32::MAX as usize { u32::MAX } else { self.slot.0 as u32 },
            running: env_field(self.running),
            reason: self.reason.code(),
            rounds: self.rounds,
        }
    }

    /// If nothing runs, ends the current (idle) slot now and begins the next
    /// one; the kernel calls it once at boot. Otherwise `Continue`.
    pub fn start(&mut self, envs: &mut impl Envs) -> Step {
        match self.running {
            Some(_) => Step::Continue,
            None => Step::Switch(self.advance(None, envs)),
        }
    }

    /// A timer tick: the tick that just ended is charged to the running
    /// environment, then the slot protocol advances:
    ///
    /// - running, budget not used up: `Continue`;
    /// - budget used up: if the running environment owns the next slot too
    ///   (and has no debt) its turn simply goes on into that slot
    ///   (`Continue`); else if its critical-section flag is set (and
    ///   deferral is enabled) the slot end is deferred (`Continue`); else
    ///   `SlotEnd`;
    /// - deferred: `SlotEnd` once the flag is clear or the deferral has
    ///   lasted `critical_grace_ticks`;
    /// - slot-end delivered `grace_ticks` ago and no yield: overrun —
    ///   `Switch` with `End::Overrun` or `End::Destroy`;
    /// - idle: `Switch` at the end of the slot; before that, `Switch` if the
    ///   owner or a spare-time requester became able to use the rest.
    pub fn tick(&mut self, envs: &mut impl Envs) -> Step {
        self.elapsed = self.elapsed.saturating_add(1);
        let Some(env) = self.running else {
            if self.elapsed >= self.end {
                return Step::Switch(self.advance(None, envs));
            }
            return self.fill(envs);
        };
        match envs.ledger(env) {
            Some(a) => a.ran_tick(),
            None => return Step::Switch(self.advance(Some(Out { env, end: End::Removed }), envs)),
        }
        let c = self.config;
        let past = self.elapsed.saturating_sub(self.end);
        let phase = self.phase;
        match phase {
            Phase::Running if self.elapsed < self.end => Step::Continue,
            Phase::Running if self.merge(env, envs) => Step::Continue,
            Phase::Running if c.critical_grace_ticks > 0 && envs.critical(env) => {
                self.phase = Phase::Deferred;
                if let Some(a) = envs.ledger(env) {
                    a.deferred();
                }
                Step::Continue
            }
            Phase::Deferred if past < c.critical_grace_ticks && envs.critical(env) => Step::Continue,
            Phase::Running | Phase::Deferred => {
                self.phase = Phase::Ending { at: self.elapsed };
                Step::SlotEnd { env }
            }
            Phase::Ending { at } if self.elapsed.saturating_sub(at) < c.grace_ticks => Step::Continue,
            Phase::Ending { .. } => {
                let destroy = envs.ledger(env).is_some_and(|a| a.overran(past, c.max_strikes));
                let strikes = envs.ledger(env).map_or(0, |a| a.strikes());
                let end = if destroy {
                    self.vector.release_all(env);
                    self.spare.cancel(env);
                    End::Destroy { excess: past, strikes }
                } else {
                    End::Overrun { excess: past, strikes }
                };
                Step::Switch(self.advance(Some(Out { env, end }), envs))
            }
        }
    }

    /// The running environment `env` yields (the yield call, or it blocks,
    /// e.g. on a wakeup predicate): ticks past its slot's end are charged,
    /// strikes reset. With `to` = a runnable environment other than `env`
    /// and time left in the slot, `to` runs the rest of the slot (directed
    /// yield, `Reason::Donated`); otherwise the next slot begins. If `env`
    /// is not the running environment nothing happens (`Continue`).
    pub fn yielded(&mut self, env: EnvId, to: Option<EnvId>, envs: &mut impl Envs) -> Step {
        if self.running != Some(env) {
            return Step::Continue;
        }
        if let Some(to) = to
            && self.donate(env, to, envs)
        {
            let decision = Decision { run: Some(to), reason: Reason::Donated, budget: self.end - self.elapsed };
            let out = Some(Out { env, end: End::Yielded { excess: 0 } });
            return Step::Switch(Switch { out, slot: self.slot, decision });
        }
        let excess = self.elapsed.saturating_sub(self.end);
        if let Some(a) = envs.ledger(env) {
            a.yielded(excess);
        }
        Step::Switch(self.advance(Some(Out { env, end: End::Yielded { excess } }), envs))
    }

    /// The directed half of [`Scheduler::yielded`] alone: if `env` is
    /// running with time left in its slot and `to` (another environment)
    /// can run, `to` runs the rest of the slot (`Reason::Donated`, the
    /// slot's end unchanged; `env` yielded with no excess) and the answer
    /// is true — the switch `yielded` would return is `env` out
    /// (`End::Yielded` with no excess), `to` in, this slot, the time left.
    /// Otherwise nothing changes (false). A protected control transfer's
    /// fast path takes this, so that a transfer that cannot be a donation
    /// goes the general way with nothing half done.
    pub fn donate(&mut self, env: EnvId, to: EnvId, envs: &mut impl Envs) -> bool {
        if !self.may_donate(env, to) {
            return false;
        }
        let Some(ledger) = envs.runnable_ledger(to) else { return false };
        ledger.donated();
        // Before the end of its slot: nothing past it to charge.
        if let Some(a) = envs.ledger(env) {
            a.yielded(0);
        }
        // The slot's end stays: `to` runs what is left of it.
        self.run(Some(to), Reason::Donated);
        true
    }

    /// Whether `env` may give the rest of its slot to `to` now: it is
    /// running, with time left, and `to` is another environment (whether
    /// `to` can run is the caller's question).
    #[inline]
    pub fn may_donate(&self, env: EnvId, to: EnvId) -> bool {
        self.running == Some(env) && to != env && self.elapsed < self.end
    }

    /// [`Scheduler::donate`] for a caller that has checked
    /// [`Scheduler::may_donate`] and that `to` can run, and holds both
    /// ledgers: the same changes, with no look-up.
    #[inline(always)]
    pub fn donate_between(&mut self, to: EnvId, from: &mut impl Ledger, into: &mut impl Ledger) {
        into.donated();
        from.yielded(0);
        self.run(Some(to), Reason::Donated);
    }

    /// Environments may have become runnable between ticks (a sleeper woke
    /// on a device interrupt): with nothing running, the rest of the idle
    /// slot goes to the owner or a spare-time requester that can use it now
    /// (as at a tick, without charging one); otherwise `Continue`.
    pub fn woke(&mut self, envs: &mut impl Envs) -> Step {
        match self.running {
            Some(_) => Step::Continue,
            None => self.fill(envs),
        }
    }

    /// Environment `env` is gone (exited or destroyed): its slots are freed
    /// and its spare-time request dropped; if it was running, the next slot
    /// begins (`End::Removed`). Idempotent.
    pub fn remove(&mut self, env: EnvId, envs: &mut impl Envs) -> Step {
        self.vector.release_all(env);
        self.spare.cancel(env);
        if self.running == Some(env) {
            Step::Switch(self.advance(Some(Out { env, end: End::Removed }), envs))
        } else {
            Step::Continue
        }
    }

    /// Ends the current slot and begins the next one.
    fn advance(&mut self, out: Option<Out>, envs: &mut impl Envs) -> Switch {
        self.next_slot();
        let decision = decide(self.slot, &self.vector, &mut self.spare, envs, &self.config);
        self.begin(decision);
        Switch { out, slot: self.slot, decision }
    }

    /// The slot after the current one, round the vector.
    fn next(&self) -> TimeSlot {
        TimeSlot((self.slot.0 + 1) % self.vector.len())
    }

    /// Moves the clock to the start of the next slot.
    fn next_slot(&mut self) {
        self.slot = self.next();
        if self.slot.0 == 0 {
            self.rounds = self.rounds.saturating_add(1);
        }
        self.elapsed = 0;
    }

    /// `decision` runs from now, in the current slot.
    fn begin(&mut self, decision: Decision) {
        self.end = self.elapsed.saturating_add(decision.budget);
        self.run(decision.run, decision.reason);
    }

    /// `run` runs from now for `reason`, until the slot's end as it is.
    #[inline]
    fn run(&mut self, run: Option<EnvId>, reason: Reason) {
        self.running = run;
        self.reason = reason;
        self.phase = Phase::Running;
        self.vector.note_use(self.slot, run, reason.code());
    }

    /// At the end of an owner's budget: if it also owns the next slot and
    /// has no debt, its turn continues into that slot without upcalls.
    fn merge(&mut self, env: EnvId, envs: &mut impl Envs) -> bool {
        if self.reason != Reason::Owner || self.vector.owner(self.next()) != Some(env) {
            return false;
        }
        let Some(a) = envs.ledger(env) else { return false };
        if a.debt() != 0 {
            return false;
        }
        a.started(false);
        self.next_slot();
        self.begin(Decision { run: Some(env), reason: Reason::Owner, budget: self.config.ticks_per_slot });
        true
    }

    /// An idle slot: lend its rest if someone can use it now.
    fn fill(&mut self, envs: &mut impl Envs) -> Step {
        let Reason::Idle(vacancy) = self.reason else { return Step::Continue };
        let rest = self.end.saturating_sub(self.elapsed);
        match decide_rest(self.slot, rest, vacancy, &self.vector, &mut self.spare, envs) {
            Some(decision) => {
                self.begin(decision);
                Step::Switch(Switch { out: None, slot: self.slot, decision })
            }
            None => Step::Continue,
        }
    }
}

impl<const N: usize, const M: usize> Default for Scheduler<N, M> {
    fn default() -> Scheduler<N, M> {
        Scheduler::new(Config::DEFAULT)
    }
}
