//! Per-environment time accounting: debt, strikes and run statistics.

pub use crate::exposed::RunRow;

/// What the CPU policy knows about one environment: its row of the exposed
/// run table ([`RunRow`]), kept nowhere else. The kernel's ledgers *are*
/// the table programs read (Xok's principle: the kernel's bookkeeping,
/// exposed), so nothing is copied out after a change and an environment's
/// record holds none of it. The kernel resets a row when it makes an
/// environment (`env` set, every counter 0) and lends it to the policy
/// through [`Envs::ledger`](crate::Envs::ledger); only the policy changes
/// it, through [`Ledger`].
///
/// - *Debt* is ticks the environment ran past the end of its slots (critical
///   section deferral, grace, overrun). It is repaid at the start of its
///   next turns: a turn with debt ≥ the slot length is forfeited (debt −=
///   slot length); a turn with smaller debt is shortened by the debt (debt
///   := 0). So over time an environment runs exactly its slots' worth.
/// - *Strikes* count consecutive overruns; any yield before the deadline
///   resets them.
pub type CpuLedger = RunRow;

/// Run statistics of one environment: the counters of its [`CpuLedger`],
/// as one value. All counters saturate.
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

/// The policy's rules for a [`CpuLedger`].
pub trait Ledger {
    /// Ticks still to be repaid.
    fn debt(&self) -> u64;
    /// Consecutive overruns so far.
    fn strikes(&self) -> u32;
    /// Run statistics.
    fn stats(&self) -> RunStats;
    /// A turn of `ticks_per_slot` ticks starts: repays debt first. Returns
    /// the ticks the environment may run, or `None` if the turn is
    /// forfeited (debt ≥ `ticks_per_slot`; the debt drops by
    /// `ticks_per_slot`).
    fn start_turn(&mut self, ticks_per_slot: u32) -> Option<u32>;
    /// One tick ran.
    fn ran_tick(&mut self);
    /// Counts an owned slot (`spare` false) or a spare slot started.
    fn started(&mut self, spare: bool);
    /// Counts a donated slot remainder received.
    fn donated(&mut self);
    /// Counts a critical-section deferral.
    fn deferred(&mut self);
    /// It yielded before its deadline, `excess` ticks past its slot's end:
    /// the excess becomes debt; strikes reset.
    fn yielded(&mut self, excess: u32);
    /// It was preempted at its deadline, `excess` ticks past its slot's end:
    /// the excess becomes debt and a strike is recorded. Returns true if it
    /// now has `max_strikes` consecutive overruns (it is to be destroyed).
    fn overran(&mut self, excess: u32, max_strikes: u32) -> bool;
}

/// Adds one to a saturating counter.
fn count(c: &mut u64) {
    *c = c.saturating_add(1);
}

impl Ledger for RunRow {
    fn debt(&self) -> u64 {
        self.debt
    }

    fn strikes(&self) -> u32 {
        self.strikes
    }

    fn stats(&self) -> RunStats {
        RunStats {
            ticks: self.ticks,
            slots: self.slots,
            spare_slots: self.spare_slots,
            donated: self.donated,
            forfeits: self.forfeits,
            overruns: self.overruns,
            deferrals: self.deferrals,
        }
    }

    fn start_turn(&mut self, ticks_per_slot: u32) -> Option<u32> {
        let slot = u64::from(ticks_per_slot);
        if self.debt >= slot {
            self.debt -= slot;
            count(&mut self.forfeits);
            None
        } else {
            // debt < slot ≤ u32::MAX, so the difference fits.
            let budget = u32::try_from(slot - self.debt).unwrap_or(0);
            self.debt = 0;
            Some(budget)
        }
    }

    fn ran_tick(&mut self) {
        count(&mut self.ticks);
    }

    fn started(&mut self, spare: bool) {
        count(if spare { &mut self.spare_slots } else { &mut self.slots });
    }

    fn donated(&mut self) {
        count(&mut self.donated);
    }

    fn deferred(&mut self) {
        count(&mut self.deferrals);
    }

    fn yielded(&mut self, excess: u32) {
        self.debt = self.debt.saturating_add(u64::from(excess));
        self.strikes = 0;
    }

    fn overran(&mut self, excess: u32, max_strikes: u32) -> bool {
        self.debt = self.debt.saturating_add(u64::from(excess));
        self.strikes = self.strikes.saturating_add(1);
        count(&mut self.overruns);
        self.strikes >= max_strikes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debt_shortens_then_forfeits() {
        let mut a = CpuLedger::default();
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
        let mut a = CpuLedger::default();
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
        let mut a = CpuLedger::default();
        for _ in 0..10 {
            a.yielded(u32::MAX);
        }
        assert!(a.start_turn(u32::MAX).is_none());
        assert_eq!(a.start_turn(0), None);
    }
}
