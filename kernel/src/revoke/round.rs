//! One round of the abort protocol as a restartable job (see `revoke`).

use super::ROUND;
use crate::arch::cpu;
use crate::env::{EnvId, EnvTable, MAX_ENVS, frame_of_cap};
use crate::mem::addr::{Pfn, PhysAddr};
use crate::mem::frame;
use core::mem::offset_of;
use oxok_abi::frames::{OWNER_ORPHAN, OWNER_REVOKING};
use oxok_abi::layout::{AppArea, REPOSSESS_SLOTS, REPOSSESSED_SLOTS};

/// Candidates one round considers.
const CANDIDATES: usize = REPOSSESS_SLOTS + 2 * ROUND;
/// What the candidate and victim arrays hold past their counts.
const NO_FRAME: Pfn = Pfn::from_word(0);
/// Owned frames examined for unmapped ones when a round starts.
const UNMAPPED_LOOKS: usize = 256;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Phase {
    Idle,
    /// Counting the target's own mappings of the candidates.
    Count,
    /// Removing every mapping of the victims, environment by environment.
    Sweep,
}

/// The abort protocol's state: at most one round in progress, with its
/// restart point (which environment row, which address).
pub struct Repossess {
    phase: Phase,
    target: Option<EnvId>,
    /// Frames the target owed when the round started.
    owed: u64,
    /// Candidates, sorted by frame number, with the order they were found
    /// in, whether listed, and the target's own mappings of each.
    cand: [Pfn; CANDIDATES],
    order: [u16; CANDIDATES],
    listed: [bool; CANDIDATES],
    own: [u32; CANDIDATES],
    ncand: usize,
    /// Victims in the order taken, and (sorted) for lookups.
    victims: [Pfn; ROUND],
    first_va: [u64; ROUND],
    sorted: [(Pfn, u8); ROUND],
    nvict: usize,
    row: usize,
    cursor: u64,
    /// Where the next search for a due revocation starts.
    next_row: usize,
    /// No deadline passes before this TSC value (so most entries skip the
    /// search).
    earliest: u64,
}

impl Repossess {
    /// No round in progress.
    pub fn new() -> Repossess {
        Repossess {
            phase: Phase::Idle,
            target: None,
            owed: 0,
            cand: [NO_FRAME; CANDIDATES],
            order: [0; CANDIDATES],
            listed: [false; CANDIDATES],
            own: [0; CANDIDATES],
            ncand: 0,
            victims: [NO_FRAME; ROUND],
            first_va: [0; ROUND],
            sorted: [(NO_FRAME, 0); ROUND],
            nvict: 0,
            row: 0,
            cursor: 0,
            next_row: 0,
            earliest: u64::MAX,
        }
    }

    /// A revocation with this deadline was requested.
    pub fn note(&mut self, deadline: u64) {
        self.earliest = self.earliest.min(deadline);
    }

    /// True when no round is in progress and no environment has a
    /// revocation outstanding: every request lowers `earliest`
    /// ([`Self::note`]), and only a search that finds none owed raises it
    /// back to `u64::MAX`. Then [`Self::step`] would do nothing and no
    /// environment has an upcall to be told of.
    pub fn quiet(&self) -> bool {
        self.phase == Phase::Idle && self.earliest == u64::MAX
    }

    /// See `revoke::step`.
    pub fn step(&mut self, envs: &mut EnvTable, budget: usize) -> bool {
        let mut budget = budget;
        if self.phase == Phase::Idle && !self.start(envs) {
            return true;
        }
        if self.phase == Phase::Count {
            if !self.count(envs, &mut budget) {
                return false;
            }
            self.choose(envs);
        }
        if self.phase == Phase::Sweep {
            if !self.sweep(envs, &mut budget) {
                return false;
            }
            self.finish(envs);
        }
        false
    }

    /// Finds an environment whose deadline has passed with frames owed and
    /// gathers the candidates; true if a round started.
    fn start(&mut self, envs: &mut EnvTable) -> bool {
        let now = cpu::rdtsc();
        if now < self.earliest {
            return false;
        }
        let mut earliest = u64::MAX;
        for i in 0..MAX_ENVS {
            let row = (self.next_row + i) % MAX_ENVS;
            let Some(env) = envs.by_row(row) else { continue };
            let Some(r) = env.revoke else { continue };
            if r.owed == 0 {
                continue;
            }
            if now < r.deadline {
                earliest = earliest.min(r.deadline);
                continue;
            }
            self.next_row = (row + 1) % MAX_ENVS;
            self.target = Some(env.id);
            self.owed = u64::from(r.owed);
            self.ncand = 0;
            let id = env.id;
            // Without an application area it offers nothing first.
            let area = env.app_area.as_ref();
            let listed = area.map_or(0, |a| a.read_u64(offset_of!(AppArea, repossess_count)) as usize);
            for i in 0..listed.min(REPOSSESS_SLOTS) {
                let pfn = Pfn::from_word(area.map_or(0, |a| a.read_u64(offset_of!(AppArea, repossess) + i * 8)));
                if frame::with(|f| f.entry(pfn).is_some_and(|e| e.owner == id.raw())) {
                    self.add(pfn, true);
                }
            }
            // Then unmapped frames among those it has owned longest, then
            // the ones it got last.
            frame::with(|f| {
                let mut unmapped = 0;
                for pfn in f.owned(id.row()).take(UNMAPPED_LOOKS) {
                    if unmapped < ROUND && f.entry(pfn).is_some_and(|e| e.maps == 0) {
                        self.add(pfn, false);
                        unmapped += 1;
                    }
                }
                for pfn in f.owned_newest(id.row()).take(ROUND) {
                    self.add(pfn, false);
                }
            });
            // Sorted by frame number for the walks' lookups.
            let n = self.ncand;
            let mut idx: [usize; CANDIDATES] = core::array::from_fn(|i| i);
            idx[..n].sort_unstable_by_key(|&i| self.cand[i]);
            let (cand, order, listed) = (self.cand, self.order, self.listed);
            for (k, &i) in idx[..n].iter().enumerate() {
                self.cand[k] = cand[i];
                self.order[k] = order[i];
                self.listed[k] = listed[i];
                self.own[k] = 0;
            }
            self.phase = Phase::Count;
            self.cursor = 0;
            return true;
        }
        self.earliest = earliest;
        false
    }

    fn add(&mut self, pfn: Pfn, listed: bool) {
        if self.ncand >= CANDIDATES || self.cand[..self.ncand].contains(&pfn) {
            return;
        }
        self.cand[self.ncand] = pfn;
        self.order[self.ncand] = self.ncand as u16;
        self.listed[self.ncand] = listed;
        self.ncand += 1;
    }

    /// Counts the target's own mappings of the candidates (bounded steps).
    fn count(&mut self, envs: &mut EnvTable, budget: &mut usize) -> bool {
        let Some(env) = self.target.and_then(|t| envs.get(t)) else {
            self.phase = Phase::Idle;
            return true;
        };
        let (cand, n) = (&self.cand, self.ncand);
        let own = &mut self.own;
        env.space.sweep_step(&mut self.cursor, budget, |_va, e| {
            if let Ok(i) = cand[..n].binary_search(&PhysAddr::of_entry(e).pfn()) {
                own[i] = own[i].saturating_add(1);
            }
            false
        })
    }

    /// Picks the victims and takes them from the target: from here on no
    /// one can map them anew.
    fn choose(&mut self, envs: &mut EnvTable) {
        self.phase = Phase::Idle;
        let Some(env) = self.target.and_then(|t| envs.get(t)) else { return };
        let id = env.id;
        // What is still owed now (the target may have paid meanwhile).
        let owed = env.revoke.map_or(0, |r| u64::from(r.owed));
        let want = owed.min(ROUND as u64) as usize;
        // Preference: (class, order found).
        let mut keys = [(u8::MAX, 0u16, 0usize); CANDIDATES];
        for (i, key) in keys.iter_mut().enumerate().take(self.ncand) {
            let Some(e) = frame::with(|f| f.entry(self.cand[i]).copied()) else { continue };
            if e.owner != id.raw() {
                continue;
            }
            let only_mine = e.maps <= self.own[i];
            let class = match () {
                _ if self.listed[i] && only_mine => 0,
                _ if e.maps == 0 => 1,
                _ if only_mine => 2,
                _ => 3,
            };
            *key = (class, self.order[i], i);
        }
        keys[..self.ncand].sort_unstable();
        self.nvict = 0;
        for &(class, _, i) in keys[..self.ncand].iter().take(want) {
            if class == u8::MAX {
                break;
            }
            let pfn = self.cand[i];
            self.victims[self.nvict] = pfn;
            self.first_va[self.nvict] = 0;
            self.nvict += 1;
            crate::account::uncharge_frames(env.account, 1);
            frame::with(|f| {
                f.set_owner(pfn, OWNER_REVOKING);
                if let Some(e) = f.entry_mut(pfn) {
                    e.generation = e.generation.saturating_add(1);
                    e.refs = 0;
                }
            });
        }
        let victims = &self.victims[..self.nvict];
        env.caps.remove_where(|c| frame_of_cap(c).is_some_and(|p| victims.contains(&p)));
        env.publish();
        for (k, &pfn) in victims.iter().enumerate() {
            self.sorted[k] = (pfn, k as u8);
        }
        self.sorted[..self.nvict].sort_unstable();
        self.row = 0;
        self.cursor = 0;
        self.phase = Phase::Sweep;
    }

    /// Removes every mapping of the victims from every environment
    /// (bounded steps, restartable at `row`/`cursor`).
    fn sweep(&mut self, envs: &mut EnvTable, budget: &mut usize) -> bool {
        let n = self.nvict;
        while self.row < MAX_ENVS {
            if let Some(env) = envs.by_row(self.row) {
                let is_target = Some(env.id) == self.target;
                let (sorted, first_va) = (&self.sorted, &mut self.first_va);
                let done = env.space.sweep_step(&mut self.cursor, budget, |va, e| {
                    let pfn = PhysAddr::of_entry(e).pfn();
                    let Ok(k) = sorted[..n].binary_search_by_key(&pfn, |&(p, _)| p) else { return false };
                    let i = sorted[k].1 as usize;
                    if is_target && first_va[i] == 0 {
                        first_va[i] = va;
                    }
                    frame::with(|f| {
                        if let Some(fe) = f.entry_mut(pfn) {
                            fe.maps = fe.maps.saturating_sub(1);
                        }
                    });
                    true
                });
                if !done {
                    return false;
                }
            }
            self.row += 1;
            self.cursor = 0;
        }
        true
    }

    /// Frees (or orphans) the victims, records them for the target and
    /// settles its debt.
    fn finish(&mut self, envs: &mut EnvTable) {
        self.phase = Phase::Idle;
        let n = self.nvict;
        for &pfn in &self.victims[..n] {
            let held = frame::with(|f| match f.entry(pfn) {
                Some(e) if e.owner == OWNER_REVOKING && e.maps == 0 => {
                    f.free(pfn.addr());
                    false
                }
                // Still in a dying environment's tables, or pinned.
                Some(e) if e.owner == OWNER_REVOKING => {
                    f.set_owner(pfn, OWNER_ORPHAN);
                    true
                }
                _ => false,
            });
            if held && let Some(target) = self.target {
                unbind_pinning(envs, target, pfn);
            }
        }
        let Some(env) = self.target.and_then(|t| envs.get(t)) else { return };
        // The record in its application area, if it has one (the row's
        // count below is kept either way).
        if let Some(area) = env.app_area.as_ref() {
            let mut recorded = area.read_u64(offset_of!(AppArea, repossessed_count)) as usize;
            for (&pfn, &va) in self.victims[..n].iter().zip(&self.first_va[..n]) {
                if recorded < REPOSSESSED_SLOTS {
                    let off = offset_of!(AppArea, repossessed) + recorded * 16;
                    area.write(off, &pfn.raw().to_le_bytes());
                    area.write(off + 8, &va.to_le_bytes());
                }
                recorded += 1;
            }
            area.write(offset_of!(AppArea, repossessed_count), &(recorded as u64).to_le_bytes());
        }
        env.repossessed = env.repossessed.saturating_add(n as u32);
        log::info!(
            "env {} ({}): revocation deadline passed; abort protocol took {n} of {} frames",
            env.id,
            env.name,
            self.owed
        );
        if let Some(r) = env.revoke.as_mut() {
            r.owed = r.owed.saturating_sub(u32::try_from(n).unwrap_or(u32::MAX));
            // A round that found fewer than it could take found all there is.
            if r.owed == 0 || n < ROUND {
                env.revoke = None;
            }
        }
        env.publish();
    }
}

/// A victim a ring of the target pins (the pin counts as a mapping, which
/// the sweep leaves): the ring goes with it — unbound, its filters removed,
/// every pin dropped — so the victim, an orphan now, is freed, not left
/// uncharged while the device still writes into it. The target sees its
/// ring gone as it sees its frames gone.
fn unbind_pinning(envs: &mut EnvTable, target: EnvId, pfn: Pfn) {
    if let Ok(Some(id)) = crate::net::with(|net| Ok(net.ring_pinning(target, pfn)))
        && crate::net::unbind_ring(envs, target, id).is_ok()
    {
        log::info!("env {target}: ring {id:#x} unbound: the abort protocol took a frame it pinned");
    }
}
