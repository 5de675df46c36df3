//! The boot-time parameters of the slot clock.

/// Slot-clock parameters, all in timer ticks (the periodic timer fires once a
/// tick). Set at boot; the scheduler keeps a [sanitized](Config::sanitized)
/// copy. The kernel boots with 4 ms slots and 2 ms of deferral at its
/// timer's rate (`kernel/src/slots.rs`, `defaults_at`): these defaults at
/// 1000 Hz, one tick of each at its default 250 Hz.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Length of a slot: an owner whose slot starts with no debt runs this
    /// many ticks before its slot-end upcall. Default 4 (so a 32-slot vector
    /// is a 128 ms round at 1000 Hz). At least 1.
    pub ticks_per_slot: u32,
    /// After the slot-end upcall is delivered, ticks the environment has to
    /// save what it needs and yield before it is preempted and charged with
    /// an overrun. Default 1. At least 1.
    pub grace_ticks: u32,
    /// Longest the critical-section flag can defer the slot-end upcall, in
    /// ticks past the slot's end. The deferred ticks are charged as debt.
    /// Default 2; 0 disables deferral (the flag is ignored).
    pub critical_grace_ticks: u32,
    /// Consecutive overruns after which the environment is to be destroyed.
    /// Default 3. At least 1.
    pub max_strikes: u32,
}

impl Config {
    /// The documented defaults: 4-tick slots, 1 tick of grace, critical
    /// sections defer the slot end by at most 2 ticks, 3 strikes.
    pub const DEFAULT: Config = Config { ticks_per_slot: 4, grace_ticks: 1, critical_grace_ticks: 2, max_strikes: 3 };

    /// This configuration with every field that must be at least 1 raised to
    /// 1 (`ticks_per_slot`, `grace_ticks`, `max_strikes`).
    pub const fn sanitized(self) -> Config {
        Config {
            ticks_per_slot: if self.ticks_per_slot == 0 { 1 } else { self.ticks_per_slot },
            grace_ticks: if self.grace_ticks == 0 { 1 } else { self.grace_ticks },
            critical_grace_ticks: self.critical_grace_ticks,
            max_strikes: if self.max_strikes == 0 { 1 } else { self.max_strikes },
        }
    }

    /// The most ticks one turn can last past its start without a yield:
    /// the slot, the longest critical-section deferral and the grace period
    /// — the bound the robust critical section guarantees. (A run of
    /// adjacent slots of one owner is one turn of that many slots, plus the
    /// same deferral and grace.)
    pub const fn longest_run(&self) -> u64 {
        let c = self.sanitized();
        c.ticks_per_slot as u64 + c.critical_grace_ticks as u64 + c.grace_ticks as u64
    }
}

impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}
