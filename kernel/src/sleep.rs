//! Sleepers on wakeup predicates (`env_sleep`), kept in an
//! [`oxok_sleepq::SleepQueue`] so that a tick never evaluates them all:
//! a sleeper whose predicates are pure deadlines on the clock page's tick
//! counter (`oxok_pred::Program::deadline`) is keyed by that tick and
//! looked at only when it comes; any other is a watcher, and each tick
//! evaluates at most [`WATCH_BUDGET`] watchers round robin. An environment
//! ending (its row of the exposed table changes: a parent may wait for
//! that) evaluates its creator at once and the watchers as a tick does
//! ([`ended`]). A device's interrupt (packets in
//! rings, disk completions published) evaluates only the watchers whose
//! predicates read something a device's work can change — not those that
//! read only the environment table and the clock ([`wake_for_devices`]).
//! Each sleeper is listed at most once; the queue's memory is taken at
//! boot, so listing never allocates.
//!
//! A sleeper found to hold is woken with its `env_sleep` completed: its
//! registers say the call returned the index of the predicate that held,
//! so it does not enter the kernel again to evaluate it once more.

use crate::env::{self, Env, EnvId};
use crate::state::Kernel;
use oxok_abi::layout::{CLOCK, Clock};
use oxok_abi::{ENV_RUNNABLE, ENV_SLEEPING, Error, PREDICATES};
use oxok_sleepq::{SleepQueue, untouched_by_devices};

/// Watchers evaluated per tick (and per plain yield) at most.
pub const WATCH_BUDGET: usize = 32;

/// The clock page's tick counter, as environments read it.
const TICKS_WORD: u64 = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;

/// The kernel's sleepers.
pub struct Sleepers {
    queue: SleepQueue,
}

impl Sleepers {
    /// An empty set with room for every environment-table row.
    pub fn new() -> Sleepers {
        Sleepers { queue: SleepQueue::new(env::MAX_ENVS) }
    }

    /// True if nobody sleeps.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

/// The tick from which `env`'s sleep on `mask` ends, if every predicate in
/// the mask is a pure deadline.
fn deadline(env: &Env, mask: u64) -> Option<u64> {
    let mut earliest: Option<u64> = None;
    for (i, pred) in env.handlers.preds().iter().enumerate().take(PREDICATES) {
        if mask & (1 << i) == 0 {
            continue;
        }
        let p = pred.as_deref()?;
        let t = p.program.deadline(&p.params, TICKS_WORD)?;
        earliest = Some(earliest.map_or(t, |e| e.min(t)));
    }
    earliest
}

/// Whether a device's work can change what `env`'s predicates in `mask`
/// read (true for a slot that is empty: nothing is known of it).
fn devices_concern(env: &Env, mask: u64) -> bool {
    env.handlers.preds().iter().enumerate().take(PREDICATES).any(|(i, pred)| {
        mask & (1 << i) != 0 && pred.as_deref().is_none_or(|p| !p.program.reads_only(&p.params, untouched_by_devices))
    })
}

/// Lists sleeping environment `id` (its mask in `regs.rdi`), replacing any
/// entry it had.
pub fn list(k: &mut Kernel, id: EnvId) {
    let Some(env) = k.envs.get(id) else { return };
    let mask = env.regs().rdi;
    let queue = &mut k.sleepers.queue;
    env.sleep_listed = match deadline(env, mask) {
        Some(t) => queue.insert(id.row(), id, Some(t)),
        None => queue.insert_watcher(id.row(), id, devices_concern(env, mask)),
    };
}

/// Takes `id` off the list (it ended, or its state was replaced).
pub fn unlist(k: &mut Kernel, id: EnvId) {
    let row = id.row();
    if k.sleepers.queue.listed(row) == Some(id) {
        k.sleepers.queue.remove(row);
    }
    if let Some(env) = k.envs.get(id) {
        env.sleep_listed = false;
    }
}

/// A predicate or parameter of `id` changed: if it sleeps, its key may
/// have too.
pub fn changed(k: &mut Kernel, id: EnvId) {
    if k.envs.get(id).is_some_and(|e| e.status == ENV_SLEEPING && e.sleep_listed) {
        list(k, id);
    }
}

/// What evaluating one sleeper found.
#[derive(PartialEq, Eq)]
enum Verdict {
    /// Gone, or no longer asleep: drop the entry.
    Gone,
    /// Woken (made runnable): drop the entry.
    Woken,
    /// Still asleep.
    Asleep,
}

/// Evaluates sleeper `id`; a predicate that holds (or reads what it may
/// not) makes it runnable with its `env_sleep` completed: the index of the
/// first predicate that holds in `rdi`, or `BadAddress`.
fn evaluate(k: &mut Kernel, id: EnvId) -> Verdict {
    let Some(env) = k.envs.get(id) else { return Verdict::Gone };
    if env.status != ENV_SLEEPING {
        env.sleep_listed = false;
        return Verdict::Gone;
    }
    let result = match env.first_true(env.regs().rdi) {
        Ok(None) => return Verdict::Asleep,
        Ok(Some(i)) => Ok(i as u64),
        Err(_) => Err(Error::BadAddress),
    };
    // Its saved state is "about to call `env_sleep`": step over the
    // `syscall` and write what the call returns.
    let regs = env.regs_mut();
    regs.rip += 2;
    match result {
        Ok(index) => {
            regs.rax = 0;
            regs.rdi = index;
        }
        Err(e) => regs.rax = e.code(),
    }
    env.status = ENV_RUNNABLE;
    env.sleep_listed = false;
    env.publish();
    Verdict::Woken
}

/// One scheduling point's look at the sleepers: every deadline sleeper
/// whose tick has come, and up to `budget` watchers (round robin).
pub fn wake(k: &mut Kernel, budget: usize) {
    wake_due(k);
    walk(k, budget, false);
}

/// A device interrupt's look at the sleepers, once its work is done: as
/// [`wake`] with [`WATCH_BUDGET`], but a watcher that reads only what no
/// device's work changes is passed over unevaluated (the next tick or plain
/// yield looks at it).
pub fn wake_for_devices(k: &mut Kernel) {
    wake_due(k);
    walk(k, WATCH_BUDGET, true);
}

/// Every deadline sleeper whose tick has come.
fn wake_due(k: &mut Kernel) {
    let now = crate::timer::ticks();
    while let Some((row, id)) = k.sleepers.queue.pop_due(now) {
        if evaluate(k, id) == Verdict::Asleep {
            // Its deadline came but it does not hold: it reads the clock
            // some other way than its key says. Watch it from now on.
            if let Some(env) = k.envs.get(id) {
                env.sleep_listed = k.sleepers.queue.insert(row, id, None);
            }
        }
    }
}

/// Up to `budget` watchers evaluated, round robin; with `devices_only`,
/// those a device's work cannot concern are passed over. One step per
/// watcher listed at most.
fn walk(k: &mut Kernel, budget: usize, devices_only: bool) {
    let mut left = budget;
    for _ in 0..k.sleepers.queue.watchers() {
        if left == 0 {
            break;
        }
        let Some((row, id, devices)) = k.sleepers.queue.next_watch_flagged() else { break };
        if devices_only && !devices {
            continue;
        }
        left -= 1;
        if evaluate(k, id) != Verdict::Asleep {
            k.sleepers.queue.remove(row);
        }
    }
}

/// An environment ended (its row of the exposed table turned zombie or
/// empty): its creator, which may wait for that, is evaluated at once if
/// it sleeps; the other watchers as at a tick ([`wake`] with
/// [`WATCH_BUDGET`], round robin), never all of them — an end once
/// evaluated every watcher, up to every row's four predicates of 63 reads
/// each, on the kernel entry that ended one environment.
pub fn ended(k: &mut Kernel, creator: Option<EnvId>) {
    if let Some(p) = creator {
        let row = p.row();
        if k.sleepers.queue.listed(row) == Some(p) && evaluate(k, p) != Verdict::Asleep {
            k.sleepers.queue.remove(row);
        }
    }
    wake(k, WATCH_BUDGET);
}
