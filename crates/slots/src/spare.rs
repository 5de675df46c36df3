//! Environments that asked for spare time.

use crate::error::SlotError;
use crate::policy::Envs;
use oxok_abi::env_id::EnvId;

/// Up to `M` environments that asked for spare time on this CPU: slots that
/// are unowned, whose owner is not runnable, or whose owner forfeits them
/// to repay debt are lent to them, round robin.
#[derive(Clone, Debug)]
pub struct Spare<const M: usize> {
    /// Requesters; `None` marks an empty entry.
    envs: [Option<EnvId>; M],
    /// The entry the next round-robin search starts at.
    next: usize,
}

impl<const M: usize> Spare<M> {
    /// An empty list.
    pub const fn new() -> Spare<M> {
        Spare { envs: [None; M], next: 0 }
    }

    /// Adds `env` (already present: nothing changes). Errors: `SpareFull`.
    pub fn request(&mut self, env: EnvId) -> Result<(), SlotError> {
        if self.contains(env) {
            return Ok(());
        }
        let e = self.envs.iter_mut().find(|e| e.is_none()).ok_or(SlotError::SpareFull)?;
        *e = Some(env);
        Ok(())
    }

    /// Removes `env`; returns whether it was there.
    pub fn cancel(&mut self, env: EnvId) -> bool {
        match self.envs.iter_mut().find(|e| **e == Some(env)) {
            Some(e) => {
                *e = None;
                true
            }
            None => false,
        }
    }

    /// Whether `env` asked for spare time.
    pub fn contains(&self, env: EnvId) -> bool {
        self.envs.contains(&Some(env))
    }

    /// The requesters, in list order.
    pub fn iter(&self) -> impl Iterator<Item = EnvId> + '_ {
        self.envs.iter().flatten().copied()
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
        skip: Option<EnvId>,
    ) -> Option<(EnvId, u32)> {
        for k in 0..M {
            let i = (self.next + k) % M;
            let Some(&Some(env)) = self.envs.get(i) else { continue };
            if Some(env) == skip || !envs.runnable(env) {
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
