//! Environments that asked for spare time.

use crate::NO_ENV;
use crate::error::SlotError;
use crate::policy::Envs;

/// Up to `M` environments that asked for spare time on this CPU: slots that
/// are unowned, whose owner is not runnable, or whose owner forfeits them
/// to repay debt are lent to them, round robin.
#[derive(Clone, Debug)]
pub struct Spare<const M: usize> {
    /// Requesters; [`NO_ENV`] marks an empty entry.
    envs: [u32; M],
    /// The entry the next round-robin search starts at.
    next: usize,
}

impl<const M: usize> Spare<M> {
    /// An empty list.
    pub const fn new() -> Spare<M> {
        Spare { envs: [NO_ENV; M], next: 0 }
    }

    /// Adds `env` (already present: nothing changes). Errors: `BadEnv`
    /// (env 0), `SpareFull`.
    pub fn request(&mut self, env: u32) -> Result<(), SlotError> {
        if env == NO_ENV {
            return Err(SlotError::BadEnv);
        }
        if self.contains(env) {
            return Ok(());
        }
        let e = self.envs.iter_mut().find(|e| **e == NO_ENV).ok_or(SlotError::SpareFull)?;
        *e = env;
        Ok(())
    }

    /// Removes `env`; returns whether it was there.
    pub fn cancel(&mut self, env: u32) -> bool {
        if env == NO_ENV {
            return false;
        }
        match self.envs.iter_mut().find(|e| **e == env) {
            Some(e) => {
                *e = NO_ENV;
                true
            }
            None => false,
        }
    }

    /// Whether `env` asked for spare time.
    pub fn contains(&self, env: u32) -> bool {
        env != NO_ENV && self.envs.contains(&env)
    }

    /// The requesters, in list order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.envs.iter().copied().filter(|&e| e != NO_ENV)
    }

    /// Picks the next requester, round robin from where the last pick left
    /// off, that is runnable, has a CPU ledger, and is not `skip`.
    ///
    /// With `ticks_per_slot` = `Some(s)` (a whole slot is being lent) each
    /// candidate first repays debt ([`CpuLedger`](crate::CpuLedger) rules): a
    /// candidate whose turn is forfeited is passed over; the pick runs
    /// its possibly shortened budget. With `None` (the rest of a slot is
    /// being lent) only candidates without debt qualify and nothing is
    /// charged; the budget is `rest`. Returns (env, budget).
    pub(crate) fn pick(
        &mut self,
        envs: &mut impl Envs,
        ticks_per_slot: Option<u32>,
        rest: u32,
        skip: Option<u32>,
    ) -> Option<(u32, u32)> {
        for k in 0..M {
            let i = (self.next + k) % M;
            let Some(&env) = self.envs.get(i) else { continue };
            if env == NO_ENV || Some(env) == skip || !envs.runnable(env) {
                continue;
            }
            let Some(ledger) = envs.ledger(env) else { continue };
            let budget = match ticks_per_slot {
                Some(s) => ledger.start_turn(s),
                None if ledger.debt() == 0 => Some(rest),
                None => None,
            };
            if let Some(budget) = budget {
                ledger.started(true);
                self.next = (i + 1) % M;
                return Some((env, budget));
            }
        }
        None
    }
}

impl<const M: usize> Default for Spare<M> {
    fn default() -> Spare<M> {
        Spare::new()
    }
}
