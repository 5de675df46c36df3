//! Visible revocation and the abort protocol (Aegis §3.3).
//!
//! `frame_revoke` records a request (frames owed, TSC deadline). The next
//! time the environment enters the kernel or is given the CPU, the kernel
//! delivers the revocation upcall (if one is registered) once. Freeing
//! frames pays the debt. Once the deadline has passed with frames still
//! owed, the abort protocol takes them — enforced from every kernel entry
//! and every timer tick, whatever the target is doing (running, asleep,
//! never started).
//!
//! The protocol works in *rounds* of at most [`ROUND`] frames, one round
//! at a time, each a bounded, restartable job kept here (Fluke's rule: no
//! kernel entry does more than [`STEP_BUDGET`] page tables of it, and no
//! step allocates):
//!
//! 1. **Choose.** Candidates are the frames the target lists in its
//!    repossession vector (application area), up to [`ROUND`] of its
//!    frames that nothing maps, and its [`ROUND`] highest-numbered frames.
//!    Its own page tables are walked (bounded steps) to count its own
//!    mappings of each. Taken first: listed frames only it maps, then
//!    unmapped frames, then frames only it maps (highest first), and only
//!    then frames another environment maps too — sharing a frame with an
//!    accomplice does not keep it.
//! 2. **Sweep.** The chosen frames stop being the target's (its account is
//!    uncharged, its capabilities for them dropped, their generation
//!    advanced so every other capability naming them is stale; owner
//!    `OWNER_REVOKING`, which `page_batch` SHARE refuses), so no new
//!    mapping of them can appear. Then every environment's page tables are
//!    walked in bounded steps, removing every mapping of them.
//! 3. **Finish.** Each frame is freed (or, if a dying environment's tables
//!    still map it, orphaned: the last unmapping frees it) and recorded —
//!    frame number and the target's page address — in the target's
//!    application area, where it reads what it lost. A frame one of the
//!    target's packet rings pins takes the ring with it: the ring is
//!    unbound (its filters removed, its pins dropped) and the frame freed.

use crate::arch::cpu;
use crate::arch::trapframe::TrapFrame;
use crate::env::EnvId;
use crate::state::Kernel;
use crate::upcall::{self, Event};
use oxok_abi::upcall as kinds;

mod round;
pub use round::Repossess;

/// Most frames one round takes.
pub const ROUND: usize = 32;
/// Last-level page tables one kernel entry (system call or timer tick)
/// walks for the abort protocol.
pub const STEP_BUDGET: usize = 32;

/// Whether anything of the protocol is pending: a round in progress, or
/// an environment that owes frames (notified or not). While nothing is,
/// [`enforce`] and [`step`] would do nothing, so kernel entries skip them
/// (see `sched::pending`).
pub fn pending(k: &Kernel) -> bool {
    !k.revoking.quiet()
}

/// Checks `id`'s pending revocation at a kernel entry: delivers the upcall
/// once. (The deadline itself is enforced by [`step`].)
pub fn enforce(k: &mut Kernel, id: EnvId, frame: &mut TrapFrame) {
    let Some(env) = k.envs.get(id) else { return };
    let Some(mut r) = env.revoke else { return };
    if r.owed == 0 {
        env.revoke = None;
        env.publish();
        return;
    }
    if !r.notified && cpu::rdtsc() < r.deadline {
        r.notified = true;
        env.revoke = Some(r);
        let ev = Event {
            kind: kinds::REVOCATION,
            vector: kinds::VECTOR_REVOCATION,
            error: u64::from(r.owed),
            addr: r.deadline,
        };
        if let Err(why) = upcall::deliver(env, frame, &ev) {
            log::debug!("env {id}: revocation upcall not delivered ({why}); the deadline still holds");
        }
    }
}

/// Advances the abort protocol by at most `budget` page tables: starts a
/// round for an environment whose deadline has passed, or continues the
/// one in progress. True when no round is in progress and none was due.
pub fn step(k: &mut Kernel, budget: usize) -> bool {
    let Kernel { revoking, envs, .. } = k;
    revoking.step(envs, budget)
}

/// Finishes every round that is due (when the machine halts or a new boot
/// step starts: nothing else runs then).
pub fn drain(k: &mut Kernel) {
    while !step(k, usize::MAX) {}
}
