//! The CPU slot vector of Oxok, after Aegis (SOSP'95 §5.1) and Xok
//! (SOSP'97): pure, deterministic logic the kernel glues to the periodic
//! APIC timer.
//!
//! `no_std`, no `unsafe`, no allocation, no panics on anything a caller
//! controls: time slots may come straight from user registers (out of
//! range → [`SlotError::OutOfRange`] or `None`). Environments are named by
//! their ids ([`EnvId`](oxok_abi::env_id::EnvId), decoded once by the
//! contract's codec where a program's word enters the kernel) and slots by
//! [`TimeSlot`]; only the [`exposed`] rows hold numbers (an id's, or 0 for
//! none).
//!
//! # The model
//!
//! Each CPU has a [`SlotVector`] of `N` time slots ([`DEFAULT_SLOTS`] = 32).
//! Position is time: slots run in index order, round and round. An
//! environment owns slots through capabilities naming (cpu, slot,
//! generation); the generation changes whenever a slot changes hands, so
//! old capabilities go stale. It chooses where its slots go
//! ([`Placement`]): next to its own for throughput (adjacent owned slots run
//! as one stretch, with no slot-end/slot-start upcalls between them), spread
//! out for latency. Slots can be freed and given to another environment.
//!
//! Time is counted in timer ticks. The clock ([`Scheduler`]) starts each
//! slot when the previous turn ends, so a slot lasts as long as its turn;
//! position bounds how long an environment waits, and an environment that
//! runs over delays the others' turns without shortening them.
//!
//! # The policy (defaults in [`Config::DEFAULT`])
//!
//! - **Slot start** ([`decide`]). The owner runs if it is runnable; it
//!   first repays *debt* (ticks it ran past earlier slot ends): debt ≥ slot
//!   length forfeits the slot (debt −= slot length), smaller debt shortens it
//!   (debt := 0). Otherwise (unowned, owner not runnable, owner forfeited)
//!   the slot is lent to the next runnable environment that asked for spare
//!   time ([`Spare`], round robin, same debt rule; a forfeiting owner is
//!   never lent its own slot); otherwise the CPU idles. An idle slot is
//!   offered again at each tick, for the rest of the slot: to its owner if it
//!   became runnable (without debt, not having forfeited), or to a debt-free
//!   spare-time requester.
//! - **Slot end.** When its budget (`ticks_per_slot` = 4 less debt) is used
//!   up, the running environment gets the slot-end upcall and must yield
//!   within `grace_ticks` = 1 tick. If its critical-section flag is set at
//!   that moment, the upcall is deferred while the flag stays set, but at
//!   most `critical_grace_ticks` = 2 ticks: a critical section cannot hold
//!   the CPU for more than `ticks_per_slot + critical_grace_ticks +
//!   grace_ticks` ticks per slot.
//! - **Charging.** Every tick run past the budget (deferral, grace,
//!   overrun) becomes debt, repaid from the next turns as above; so in the
//!   long run each environment gets exactly the ticks of the slots it owns
//!   (plus spare time it asked for).
//! - **Overrun.** No yield when the grace expires: the environment is
//!   preempted anyway (the kernel saves its registers), charged, and gets a
//!   strike. A yield before the deadline resets strikes. `max_strikes` = 3
//!   consecutive overruns: [`End::Destroy`] — the scheduler frees its slots
//!   and the kernel destroys it, logging the `End`'s `Display` as reason.
//! - **Unowned slots** idle unless someone asked for spare time; so do slots
//!   whose owner is blocked or in debt.
//! - **Directed yield** donates the rest of the current slot to a runnable
//!   environment (no spare-time request needed, nothing charged at the
//!   donation), which then faces the same slot end.
//! - **Granularity.** Ticks are charged whole to whoever runs when the
//!   timer fires; a turn that starts mid-tick (after a yield) has a short
//!   first tick. Shares are exact in ticks, approximate in cycles.
//!
//! Per-environment state is a [`CpuLedger`] (debt, strikes, [`RunStats`]):
//! the environment's row of the exposed run table itself, which the kernel
//! lends through [`Envs`] and the policy changes through [`Ledger`]. The
//! other [`exposed`] rows are what the kernel copies into read-only pages.
//!
//! # How the kernel drives it
//!
//! ```text
//! boot:        sched = Scheduler::<32, 16>::new(config from cmdline)
//!              apply(sched.start(&mut envs))
//! every timer tick (from user mode or from the idle loop):
//!              apply(sched.tick(&mut envs))
//! yield call:  (save caller's registers) apply(sched.yielded(cur, target, &mut envs))
//! block/sleep: apply(sched.yielded(cur, None, &mut envs))
//! exit/destroy of env e: apply(sched.remove(e, &mut envs))
//! slot calls:  sched.vector.alloc/free/give (capability checked first,
//!              generation from sched.vector.generation(i));
//!              sched.spare.request/cancel
//!
//! apply(step):
//!   Continue              -> return to whoever runs (or keep idling)
//!   SlotEnd { env }       -> upcall env's slot-end entry (env keeps running)
//!   Switch(sw)            ->
//!     match sw.out:  Yielded  -> registers already saved
//!                    Overrun  -> save the trap frame into the env
//!                    Destroy  -> destroy env, log "{end}"
//!                    Removed  -> nothing
//!     match sw.decision.run: Some(e) -> upcall e's slot-start entry
//!                            None    -> idle until the next tick
//! ```

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod config;
mod error;
pub mod exposed;
mod ledger;
mod placement;
mod policy;
mod scheduler;
mod spare;
mod time_slot;
mod vector;

pub use config::Config;
pub use error::SlotError;
pub use ledger::{CpuLedger, Ledger, RunStats};
pub use placement::Placement;
pub use policy::{Decision, Envs, Reason, Vacancy, decide};
pub use scheduler::{End, Out, Scheduler, Step, Switch};
pub use spare::Spare;
pub use time_slot::TimeSlot;
pub use vector::{Gift, SlotVector};

/// The kernel's default number of slots per CPU.
pub const DEFAULT_SLOTS: usize = oxok_abi::layout::SLOT_VECTOR_SLOTS;

/// The kernel's default capacity of the spare-time request list.
pub const DEFAULT_SPARE: usize = 16;
