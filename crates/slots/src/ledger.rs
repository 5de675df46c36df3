//! Per-environment time accounting: debt, strikes and run statistics.

use crate::exposed::RunRow;
use oxok_abi::env_id::EnvId;

/// Run statistics of one environment (exposed read-only as a
/// [`RunRow`]). All counters saturate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Timer ticks during which it was the running environment.
    pub ticks: u64,
    /// Owned slots it started running (adjacent owned slots run as one
    /// stretch still count one each).
    pub slots: u64,
    /// Slots lent to it as spare time.
    pub spare_slots: u64,
    /// Slot remainders donated to it by a directed yield.
    pub donated: u64,
    /// Turns it forfeited to repay debt (owned slots skipped, or spare-time
    /// turns passed over).
    pub forfeits: u64,
    /// Times it was preempted for not yielding within the grace period.
    pub overruns: u64,
    /// Times its critical-section flag deferred a slot-end upcall.
    pub deferrals: u64,
}

/// What the CPU policy knows about one environment. The kernel keeps one in
/// each environment (a plain value, `CpuLedger::new()` at creation) and hands
/// it to the policy through [`Envs::ledger`](crate::Envs::ledger); only
/// the policy changes it.
///
/// - *Debt* is ticks the environment ran past the end of its slots (critical
///   section deferral, grace, overrun). It is repaid at the start of its
///   next turns: a turn with debt ≥ the slot length is forfeited (debt −=
///   slot length); a turn with smaller debt is shortened by the debt (debt
///   := 0). So over time an environment runs exactly its slots' worth.
/// - *Strikes* count consecutive overruns; any yield before the deadline
///   resets them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuLedger {
    debt: u64,
    strikes: u32,
    stats: RunStats,
}

impl CpuLedger {
    /// A new environment's ledger: no debt, no strikes, zero statistics.
    pub const fn new() -> CpuLedger {
        CpuLedger {
            debt: 0,
            strikes: 0,
            stats: RunStats { ticks: 0, slots: 0, spare_slots: 0, donated: 0, forfeits: 0, overruns: 0, deferrals: 0 },
        }
    }

    /// Ticks still to be repaid.
    pub const fn debt(&self) -> u64 {
        self.debt
    }

    /// Consecutive overruns so far.
    pub const fn strikes(&self) -> u32 {
        self.strikes
    }

    /// Run statistics.
    pub const fn stats(&self) -> &RunStats {
        &self.stats
    }

    /// The exposed row for this ledger, as environment `env`.
    pub const fn row(&self, env: EnvId) -> RunRow {
        let s = &self.stats;
        RunRow {
            env: env.raw(),
            strikes: self.strikes,
            debt: self.debt,
            ticks: s.ticks,
            slots: s.slots,
            spare_slots: s.spare_slots,
            donated: s.donated,
            forfeits: s.forfeits,
            overruns: s.overruns,
            deferrals: s.deferrals,
        }
    }

    /// A turn of `ticks_per_slot` ticks starts: repays debt first. Returns
    /// the ticks the environment may run, or `None` if the turn is
    /// forfeited (debt ≥ `ticks_per_slot`; the debt drops by
    /// `ticks_per_slot`).
    pub(crate) fn start_turn(&mut self, ticks_per_slot: u32) -> Option<u32> {
        let slot = u64::from(ticks_per_slot);
        if self.debt >= slot {
            self.debt -= slot;
            self.stats.forfeits = self.stats.forfeits.saturating_add(1);
            None
        } else {
            // debt < slot ≤ u32::MAX, so the difference fits.
            let budget = u32::try_from(slot - self.debt).unwrap_or(0);
            self.debt = 0;
            Some(budget)
        }
    }

    /// One tick ran.
    pub(crate) fn ran_tick(&mut self) {
        self.stats.ticks = self.stats.ticks.saturating_add(1);
    }

    /// Counts an owned slot (`spare` false) or a spare slot started.
    pub(crate) fn started(&mut self, spare: bool) {
        let c = if spare { &mut self.stats.spare_slots } else { &mut self.stats.slots };
        *c = c.saturating_add(1);
    }

    /// Counts a donated slot remainder received.
    pub(crate) fn donated(&mut self) {
        self.stats.donated = self.stats.donated.saturating_add(1);
    }

    /// Counts a critical-section deferral.
    pub(crate) fn deferred(&mut self) {
        self.stats.deferrals = self.stats.deferrals.saturating_add(1);
    }

    /// It yielded before its deadline, `excess` ticks past its slot's end:
    /// the excess becomes debt; strikes reset.
    pub(crate) fn yielded(&mut self, excess: u32) {
        self.debt = self.debt.saturating_add(u64::from(excess));
        self.strikes = 0;
    }

    /// It was preempted at its deadline, `excess` ticks past its slot's end:
    /// the excess becomes debt and a strike is recorded. Returns true if it
    /// now has `max_strikes` consecutive overruns (it is to be destroyed).
    pub(crate) fn overran(&mut self, excess: u32, max_strikes: u32) -> bool {
        self.debt = self.debt.saturating_add(u64::from(excess));
        self.strikes = self.strikes.saturating_add(1);
        self.stats.overruns = self.stats.overruns.saturating_add(1);
        self.strikes >= max_strikes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debt_shortens_then_forfeits() {
        let mut a = CpuLedger::new();
        assert_eq!(a.start_turn(4), Some(4));
        a.yielded(1);
        assert_eq!(a.debt(), 1);
        assert_eq!(a.start_turn(4), Some(3));
        assert_eq!(a.debt(), 0);
        a.yielded(9);
        assert_eq!(a.start_turn(4), None);
        assert_eq!(a.start_turn(4), None);
        assert_eq!(a.debt(), 1);
        assert_eq!(a.start_turn(4), Some(3));
        assert_eq!(a.stats().forfeits, 2);
    }

    #[test]
    fn strikes_are_consecutive() {
        let mut a = CpuLedger::new();
        assert!(!a.overran(1, 3));
        assert!(!a.overran(1, 3));
        a.yielded(0);
        assert_eq!(a.strikes(), 0);
        assert!(!a.overran(1, 3));
        assert!(!a.overran(1, 3));
        assert!(a.overran(1, 3));
        assert_eq!(a.stats().overruns, 5);
        assert_eq!(a.debt(), 5);
    }

    #[test]
    fn saturates() {
        let mut a = CpuLedger::new();
        for _ in 0..10 {
            a.yielded(u32::MAX);
        }
        assert!(a.start_turn(u32::MAX).is_none());
        assert_eq!(a.start_turn(0), None);
    }
}
