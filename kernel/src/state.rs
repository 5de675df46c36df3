//! The kernel's global state, behind one lock. Every entry from user mode
//! (system call or exception) takes it, does its work, and drops it before
//! returning to user mode; the kernel never holds it while user code runs.

use crate::env::{EnvId, EnvTable};
use alloc::boxed::Box;
use alloc::collections::VecDeque;
use alloc::vec::Vec;
use spin::Mutex;

/// Everything the kernel tracks beyond frames and page tables.
pub struct Kernel {
    /// All environments.
    pub envs: EnvTable,
    /// The environment whose registers are on the kernel stack right now.
    pub current: Option<EnvId>,
    /// The CPU scheduler: slot vector, spare-time requesters, slot clock.
    pub sched: Box<crate::slots::Sched>,
    /// The last timer tick the scheduler was given.
    pub ticked: u64,
    /// The scheduler just started an owned slot: deliver the owner's
    /// slot-start upcall when it is loaded.
    pub slot_start: bool,
    /// The boot archive (the first boot module).
    pub archive: &'static [u8],
    /// Free frames once the kernel was up, before any environment existed:
    /// with every environment gone, the count must be back here.
    pub baseline_free_frames: usize,
    /// Kernel heap bytes in use at the same moment: with every environment
    /// gone, the heap must be back here (within [`crate::sched::HEAP_SLACK`]).
    pub baseline_heap: usize,
    /// Environments asleep on wakeup predicates.
    pub sleepers: Box<crate::sleep::Sleepers>,
    /// The abort protocol's progress (one bounded, restartable round at a
    /// time; see `revoke`).
    pub revoking: Box<crate::revoke::Repossess>,
    /// Boot programs not started yet, in steps (see `cmdline`).
    pub steps: VecDeque<Vec<crate::cmdline::Program>>,
}

static KERNEL: Mutex<Option<Kernel>> = Mutex::new(None);

/// Installs the kernel state (once, at boot).
pub fn init(k: Kernel) {
    *KERNEL.lock() = Some(k);
}

/// Runs `f` with the kernel state locked.
#[inline]
pub fn with<R>(f: impl FnOnce(&mut Kernel) -> R) -> R {
    let mut guard = KERNEL.lock();
    match guard.as_mut() {
        Some(k) => f(k),
        None => panic!("kernel state used before init"),
    }
}
