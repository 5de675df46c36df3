//! `slot_alloc` placements (its `placement` argument).

/// The lowest-numbered free slot (`arg` ignored).
pub const ANY: u64 = 0;
/// Exactly slot `arg` (`Busy` if owned).
pub const AT: u64 = 1;
/// The first free slot at or after `arg`, going round the vector: pass one
/// of your own slots to get the next adjacent one (adjacent owned slots run
/// as one stretch, without slot-end/slot-start upcalls between them).
pub const NEAR: u64 = 2;
/// The free slot farthest from the caller's own slots (`arg` ignored):
/// repeated requests space them evenly, for latency.
pub const SPREAD: u64 = 3;
