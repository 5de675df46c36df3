//! The slot vector's exposed rows: what the kernel copies into the
//! read-only slot-vector and run-statistics pages ([`SLOT_VECTOR`],
//! [`RUN_STATS`]). The policy crate `oxok-slots` fills them; they are
//! defined here, in the contract, so that policy crates depend on `abi`
//! and never the reverse.
//!
//! Plain `#[repr(C)]` rows of `u32`/`u64` with no padding (sizes asserted
//! below). Environment id 0 means "none".
//!
//! [`SLOT_VECTOR`]: crate::layout::SLOT_VECTOR
//! [`RUN_STATS`]: crate::layout::RUN_STATS

use crate::env_id::EnvId;

/// A row's environment field: the id's number, 0 for none (no id is 0:
/// generations start at 1).
pub const fn env_field(env: Option<EnvId>) -> u32 {
    match env {
        Some(id) => id.raw(),
        None => 0,
    }
}

/// The slot has not run since boot.
pub const USE_NONE: u32 = 0;
/// Its owner ran it.
pub const USE_OWNER: u32 = 1;
/// It was lent as spare time.
pub const USE_SPARE: u32 = 2;
/// The CPU idled.
pub const USE_IDLE: u32 = 3;
/// Its rest was donated by a directed yield.
pub const USE_DONATED: u32 = 4;

/// One slot of the vector.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct SlotRow {
    /// Owning environment; 0: free.
    pub owner: u32,
    /// Changes whenever the owner changes; a slot capability names it.
    pub generation: u32,
    /// The environment that last started running in the slot; 0: idle or
    /// never run.
    pub last_env: u32,
    /// How it got the slot: a `USE_*` code.
    pub last_use: u32,
}

/// Per-environment run statistics and CPU debt: the kernel's CPU ledger of
/// the environment itself (`oxok_slots::CpuLedger`, changed through
/// `oxok_slots::Ledger`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct RunRow {
    /// The environment; 0: empty row.
    pub env: u32,
    /// Consecutive overruns.
    pub strikes: u32,
    /// Ticks still to be repaid.
    pub debt: u64,
    /// Ticks run.
    pub ticks: u64,
    /// Owned slots run.
    pub slots: u64,
    /// Slots received as spare time.
    pub spare_slots: u64,
    /// Slot remainders received by directed yield.
    pub donated: u64,
    /// Turns forfeited to repay debt.
    pub forfeits: u64,
    /// Overruns, ever.
    pub overruns: u64,
    /// Critical-section deferrals of the slot end.
    pub deferrals: u64,
}

/// The vector's parameters and where the clock is.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct VectorHeader {
    /// Number of slots.
    pub slots: u32,
    /// The slot policy's `Config::ticks_per_slot`.
    pub ticks_per_slot: u32,
    /// The slot policy's `Config::grace_ticks`.
    pub grace_ticks: u32,
    /// The slot policy's `Config::critical_grace_ticks`.
    pub critical_grace_ticks: u32,
    /// The slot policy's `Config::max_strikes`.
    pub max_strikes: u32,
    /// The current slot.
    pub current: u32,
    /// The running environment; 0: idle.
    pub running: u32,
    /// How it got the slot: a `USE_*` code.
    pub reason: u32,
    /// Times slot 0 has started.
    pub rounds: u64,
}

const _: () = assert!(core::mem::size_of::<SlotRow>() == 4 * 4);
const _: () = assert!(core::mem::align_of::<SlotRow>() == 4);
const _: () = assert!(core::mem::size_of::<RunRow>() == 2 * 4 + 8 * 8);
const _: () = assert!(core::mem::align_of::<RunRow>() == 8);
const _: () = assert!(core::mem::size_of::<VectorHeader>() == 8 * 4 + 8);
const _: () = assert!(core::mem::align_of::<VectorHeader>() == 8);
