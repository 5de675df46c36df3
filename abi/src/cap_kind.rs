//! Resource kinds as `cap_info` reports them (the first component of a
//! capability's hierarchical name).

/// A physical frame.
pub const FRAME: u64 = 1;
/// An environment.
pub const ENV: u64 = 2;
/// A CPU time slot.
pub const SLOT: u64 = 3;
/// The console.
pub const CONSOLE: u64 = 7;
/// A principal (`/8/p`: acting as `p` for XN; `/8` is every principal).
pub const PRINCIPAL: u64 = 8;
