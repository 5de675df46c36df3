//! The frame table: one [`FrameEntry`] per physical frame, indexed by frame
//! number. The kernel keeps it; the protection-core issue maps it read-only
//! into every environment at [`layout`](crate::layout)`::FRAME_TABLE`.

/// What the kernel knows about one physical frame.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct FrameEntry {
    /// [`OWNER_FREE`], [`OWNER_KERNEL`], [`OWNER_RESERVED`], or the id of the
    /// owning environment (always ≥ [`OWNER_FIRST_ENV`]).
    pub owner: u32,
    /// Bumped every time the frame is freed, so stale names stop matching.
    pub generation: u32,
    /// Page-table entries (in all address spaces) that map the frame.
    pub maps: u32,
    /// Capabilities or kernel references that keep the frame alive.
    pub refs: u32,
}

/// The frame is free.
pub const OWNER_FREE: u32 = 0;
/// The kernel uses the frame (its image, page tables, heap, tables).
pub const OWNER_KERNEL: u32 = 1;
/// Not RAM, or RAM the firmware keeps.
pub const OWNER_RESERVED: u32 = 2;
/// The owner was destroyed while other environments still mapped the
/// frame; it is freed when the last mapping goes.
pub const OWNER_ORPHAN: u32 = 3;
/// Freeing the frame would have wrapped its generation: it is out of use for
/// good, so no stale capability naming it can ever match a new owner.
pub const OWNER_RETIRED: u32 = 4;
/// The abort protocol is taking the frame from its owner: every mapping of
/// it, in every environment, is being removed; nothing may map it anew.
pub const OWNER_REVOKING: u32 = 5;
/// Environment ids start here.
pub const OWNER_FIRST_ENV: u32 = 0x100;
