//! Environments that asked for spare time.

use crate::error::SlotError;
use crate::ledger::Ledger;
use crate::policy::Envs;
use oxok_abi::env_id::EnvId;

/// Up to `M` environments that asked for spare time on this CPU: slots that
/// are unowned, whose owner is not runnable, or whose owner forfeits them
/// to repay debt are lent to them, round robin.
///
/// Searches look only below `end`, one past the last occupied entry: the
/// list is as long as the machine's environment table (the kernel's `M`
/// is 1,024), and an idle CPU searches it at every tick.
#[derive(Clone, Debug)]
pub struct Spare<const M: usize> {
    /// Requesters; `None` marks an empty entry.
    envs: [Option<EnvId>; M],
    /// One past the last occupied entry (every entry from it on is `None`).
    end: usize,
    /// The entry the next round-robin search starts at.
    next: usize,
}

impl<const M: usize> Spare<M> {
    /// An empty list.
    pub const fn new() -> Spare<M> {
        Spare { envs: [None; M], end: 0, next: 0 }
    }

    /// The entries that may be occupied.
    fn used(&self) -> &[Option<EnvId>] {
        &self.envs[..self.end]
    }

    /// Adds `env` (already present: nothing changes). Errors: `SpareFull`.
    pub fn request(&mut self, env: EnvId) -> Result<(), SlotError> {
        if self.contains(env) {
            return Ok(());
        }
        let i = self.envs.iter().position(|e| e.is_none()).ok_or(SlotError::SpareFull)?;
        self.envs[i] = Some(env);
        self.end = self.end.max(i + 1);
        Ok(())
    }

    /// Removes `env`; returns whether it was there.
    pub fn cancel(&mut self, env: EnvId) -> bool {
        let Some(i) = self.used().iter().position(|e| *e == Some(env)) else { return false };
        self.envs[i] = None;
        while self.end > 0 && self.envs[self.end - 1].is_none() {
            self.end -= 1;
        }
        true
    }

    /// Whether `env` asked for spare time.
    pub fn contains(&self, env: EnvId) -> bool {
        self.used().contains(&Some(env))
    }

    /// The requesters, in list order.
    pub fn iter(&self) -> impl Iterator<Item = EnvId> + '_ {
        self.used().iter().flatten().copied()
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
        // Entries from `end` on are empty: starting at `next` and going
        // round `end` visits the occupied ones in the order going round `M`
        // would.
        let end = self.end;
        let start = if self.next < end { self.next } else { 0 };
        for k in 0..end {
            let i = (start + k) % end;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CpuLedger;

    /// Environments 0..16 by row; `runnable` a bit mask.
    struct Table {
        runnable: u32,
        ledgers: [CpuLedger; 16],
    }

    impl Envs for Table {
        fn runnable(&mut self, env: EnvId) -> bool {
            self.runnable & (1 << env.row()) != 0
        }
        fn critical(&mut self, _: EnvId) -> bool {
            false
        }
        fn ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger> {
            self.ledgers.get_mut(env.row())
        }
    }

    /// The search as it was before `end`: round all `M` entries.
    fn pick_all<const M: usize>(s: &Spare<M>, runnable: u32, skip: Option<EnvId>) -> Option<EnvId> {
        (0..M)
            .map(|k| (s.next + k) % M)
            .filter_map(|i| s.envs[i])
            .find(|e| Some(*e) != skip && runnable & (1 << e.row()) != 0)
    }

    /// Random requests, cancels and picks (rest-of-slot picks, which
    /// charge nothing): every pick is the one a search of all `M` entries
    /// makes, and `end` is one past the last occupied entry.
    #[test]
    fn searching_below_end_picks_as_searching_everything() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let mut t = Table { runnable: 0, ledgers: core::array::from_fn(|_| CpuLedger::default()) };
        let mut s = Spare::<12>::new();
        for _ in 0..20_000 {
            let env = EnvId::of(1, rand(16) as usize);
            match rand(4) {
                0 => {
                    let _ = s.request(env);
                }
                1 => {
                    s.cancel(env);
                }
                2 => t.runnable = rand(1 << 16) as u32,
                _ => {
                    let skip = (rand(3) == 0).then_some(env);
                    let want = pick_all(&s, t.runnable, skip);
                    assert_eq!(s.pick(&mut t, None, 5, skip).map(|(e, _)| e), want);
                }
            }
            let last = s.envs.iter().rposition(|e| e.is_some()).map_or(0, |i| i + 1);
            assert_eq!(s.end, last);
            assert_eq!(s.iter().count(), s.envs.iter().flatten().count());
        }
    }
}
