//! Sleepers on wakeup predicates (`env_sleep`), kept in an
//! [`oxok_sleepq::SleepQueue`] so that a tick never evaluates them all:
//! a sleeper whose predicates are pure deadlines on the clock page's tick
//! counter (`oxok_pred::Program::deadline`) is keyed by that tick and
//! looked at only when it comes; any other is a watcher, and each tick
//! evaluates at most [`WATCH_BUDGET`] watchers round robin. An environment
//! ending (its row of the exposed table changes: a parent may wait for
//! that) evaluates every watcher once. Each sleeper is listed at most once;
//! the queue's memory is taken at boot, so listing never allocates.

use crate::env::{self, Env, EnvId};
use crate::state::Kernel;
use alloc::vec::Vec;
use oxok_abi::layout::{CLOCK, Clock};
use oxok_abi::{ENV_RUNNABLE, ENV_SLEEPING, Error, PREDICATES};
use oxok_sleepq::SleepQueue;

/// Watchers evaluated per tick (and per plain yield) at most.
pub const WATCH_BUDGET: usize = 32;

/// The clock page's tick counter, as environments read it.
const TICKS_WORD: u64 = CLOCK + core::mem::offset_of!(Clock, ticks) as u64;

/// The kernel's sleepers.
pub struct Sleepers {
    queue: SleepQueue,
    /// Room for one pass over every watcher (taken at boot).
    scratch: Vec<(usize, EnvId)>,
}

impl Sleepers {
    /// An empty set with room for every environment-table row.
    pub fn new() -> Sleepers {
        Sleepers { queue: SleepQueue::new(env::MAX_ENVS), scratch: Vec::with_capacity(env::MAX_ENVS) }
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

/// Lists sleeping environment `id` (its mask in `regs.rdi`), replacing any
/// entry it had.
pub fn list(k: &mut Kernel, id: EnvId) {
    let Some(env) = k.envs.get(id) else { return };
    let key = deadline(env, env.regs().rdi);
    env.sleep_listed = k.sleepers.queue.insert(id.row(), id, key);
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
/// not) makes it runnable. A woken sleeper re-executes `env_sleep`, which
/// returns the predicate that holds; a bad read instead completes the call
/// with `BadAddress`.
fn evaluate(k: &mut Kernel, id: EnvId) -> Verdict {
    let Some(env) = k.envs.get(id) else { return Verdict::Gone };
    if env.status != ENV_SLEEPING {
        env.sleep_listed = false;
        return Verdict::Gone;
    }
    let wake = match env.first_true(env.regs().rdi) {
        Ok(Some(_)) => true,
        Ok(None) => false,
        Err(_) => {
            let regs = env.regs_mut();
            regs.rip += 2;
            regs.rax = Error::BadAddress.code();
            true
        }
    };
    if !wake {
        return Verdict::Asleep;
    }
    env.status = ENV_RUNNABLE;
    env.sleep_listed = false;
    env.publish();
    Verdict::Woken
}

/// One scheduling point's look at the sleepers: every deadline sleeper
/// whose tick has come, and up to `budget` watchers (round robin).
pub fn wake(k: &mut Kernel, budget: usize) {
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
    let n = k.sleepers.queue.watchers().min(budget);
    for _ in 0..n {
        let Some((row, id)) = k.sleepers.queue.next_watch() else { break };
        if evaluate(k, id) != Verdict::Asleep {
            k.sleepers.queue.remove(row);
        }
    }
}

/// Evaluates every watcher once (an event that may have changed what any
/// of them reads), and the deadlines that came.
pub fn wake_all(k: &mut Kernel) {
    let mut scratch = core::mem::take(&mut k.sleepers.scratch);
    k.sleepers.queue.watchers_into(&mut scratch);
    for &(row, id) in &scratch {
        let woke = evaluate(k, id) != Verdict::Asleep;
        if woke && k.sleepers.queue.listed(row) == Some(id) {
            k.sleepers.queue.remove(row);
        }
    }
    k.sleepers.scratch = scratch;
    wake(k, 0);
}
