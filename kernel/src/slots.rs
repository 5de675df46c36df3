//! Glue between the kernel and `oxok-slots`: the scheduler type, the
//! policy's view of the environment table, the boot-time configuration and
//! the exposed slot vector.
//!
//! The kernel keeps one [`Sched`] (CPU 0) in its state, and each
//! environment's [`CpuLedger`](oxok_slots::CpuLedger) is its row of the
//! exposed run table (`EnvTable::ledger`): the scheduler changes the row
//! programs read, and nothing is copied after a switch. Everything that
//! changes who runs goes through the scheduler (see `sched`): timer ticks
//! (from user mode and from the idle loop), yields, sleeps, protected
//! control transfers (modelled as donations of the rest of the slot), exits
//! and destruction.
//!
//! **Unowned slots** (and slots whose owner cannot run or forfeits them to
//! repay debt) are lent, round robin, to runnable environments that asked
//! for spare time; with none, the CPU idles until the next tick. Every
//! environment asks for spare time when it becomes runnable (boot programs,
//! `env_run`), so programs that never use slot calls share the CPU round
//! robin in one-slot turns (4 ms by default); `slot_spare(env, 0)` opts out.
//!
//! The policy takes and gives environment ids ([`EnvId`]) and CPU time
//! slots ([`TimeSlot`], the policy's own type) as they are: nothing is
//! decoded again on the way in or out.

use crate::env::{EnvId, EnvTable, MAX_ENVS};
use crate::mem::exposed;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_abi::layout::{AppArea, SLOT_VECTOR_SLOTS, SlotRow};
use oxok_abi::{ENV_RUNNABLE, ENV_RUNNING};
use oxok_slots::{Config, CpuLedger, Envs, Scheduler, TimeSlot};

/// Spare-time requesters the kernel can hold: every environment.
pub const SPARE: usize = MAX_ENVS;

/// The kernel's per-CPU scheduler.
pub type Sched = Scheduler<SLOT_VECTOR_SLOTS, SPARE>;

/// The policy's view of the environment table.
pub struct View<'a>(pub &'a mut EnvTable);

/// Alive (given), runnable or running, not waiting for a reply, not
/// stopped.
#[inline(always)]
pub fn could_run(e: &crate::env::Env) -> bool {
    matches!(e.status, ENV_RUNNABLE | ENV_RUNNING) && e.waiting_for.is_none() && !e.stopped
}

impl Envs for View<'_> {
    /// Alive, runnable or running, not waiting for a reply, not stopped.
    fn runnable(&mut self, env: EnvId) -> bool {
        self.0.get(env).is_some_and(|e| could_run(e))
    }

    /// `AppArea::critical` (offset 0 of its application-area frame; an
    /// environment without one has no critical sections).
    fn critical(&mut self, env: EnvId) -> bool {
        const _: () = assert!(core::mem::offset_of!(AppArea, critical) == 0);
        self.0.get(env).and_then(|e| e.app_area.as_ref()).is_some_and(|a| a.read_u64(0) != 0)
    }

    fn ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger> {
        self.0.ledger(env)
    }

    /// One look at the environment for both questions.
    fn runnable_ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger> {
        self.0.ledger_if(env, could_run)
    }
}

/// The vector's owner-change count when it was last published whole
/// (`u64::MAX` before the first time, which no count reaches first).
static PUBLISHED_OWNERS: AtomicU64 = AtomicU64::new(u64::MAX);

/// Copies the vector's header and rows into the exposed page.
pub fn publish_vector(s: &Sched) {
    let mut rows = [SlotRow::default(); SLOT_VECTOR_SLOTS];
    s.vector.rows(&mut rows);
    exposed::set_slot_vector(s.header(), &rows);
    PUBLISHED_OWNERS.store(s.vector.owner_changes(), Ordering::Relaxed);
}

/// After the scheduler began a turn in `slot` (a switch, or an owner's
/// turn running on into its next slot): the header and that slot's row
/// (who last used it, and how) are all that changed, unless some slot
/// changed owner since the vector was last published whole — then the
/// whole vector is.
pub fn publish_turn(s: &Sched, slot: TimeSlot) {
    if PUBLISHED_OWNERS.load(Ordering::Relaxed) != s.vector.owner_changes() {
        return publish_vector(s);
    }
    if let Some(row) = s.vector.row(slot) {
        exposed::set_slot_row(s.header(), slot.0, row);
    }
}

/// After a donation within slot `slot` to `to` (a directed yield or a
/// protected control transfer): the scheduler changed only who runs and
/// why (the header's `running` and `reason`) and who used that slot last
/// and how (its row's `last_env` and `last_use`) — `to`, donated, in both
/// — so only those are written; the rest is as last published.
#[inline]
pub fn publish_donation(slot: TimeSlot, to: EnvId) {
    exposed::set_slot_use(slot.0, to.raw(), oxok_slots::Reason::Donated.code());
}

/// A slot's length by default, in milliseconds.
const SLOT_MS: u64 = 4;
/// How long a critical section may defer a slot's end by default, in
/// milliseconds.
const CRITICAL_MS: u64 = 2;

/// The slot clock's defaults at `hz` timer ticks a second: slots of
/// [`SLOT_MS`] and deferrals of [`CRITICAL_MS`], rounded up to whole ticks
/// (at 1000 Hz [`Config::DEFAULT`]; at the default 250 Hz one tick each).
pub fn defaults_at(hz: u64) -> Config {
    let ticks = |ms: u64| u32::try_from(ms.saturating_mul(hz).div_ceil(1000).max(1)).unwrap_or(u32::MAX);
    Config { ticks_per_slot: ticks(SLOT_MS), critical_grace_ticks: ticks(CRITICAL_MS), ..Config::DEFAULT }
}

/// The scheduler configuration the command line asks for, starting from
/// [`defaults_at`] the timer's rate.
pub fn config_word(c: &mut Config, word: &str) -> bool {
    let Some((key, value)) = word.split_once('=') else { return false };
    let field = match key {
        "slot_ticks" => &mut c.ticks_per_slot,
        "slot_grace" => &mut c.grace_ticks,
        "critical_grace" => &mut c.critical_grace_ticks,
        "strikes" => &mut c.max_strikes,
        _ => return false,
    };
    let min = if key == "critical_grace" { 0 } else { 1 };
    match value.parse::<u32>() {
        Ok(v) if (min..=1000).contains(&v) => *field = v,
        _ => log::warn!("cmdline: {key} must be {min}..=1000; keeping {}", *field),
    }
    true
}
