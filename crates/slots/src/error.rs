//! Errors from slot-vector and spare-list operations.

use core::fmt;

/// Why a slot-vector or spare-time operation was refused. Every refusal
/// leaves the state unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlotError {
    /// The slot index is not below the vector's length.
    OutOfRange,
    /// [`Placement::At`](crate::Placement::At) named a slot that is owned.
    Taken,
    /// No slot is free.
    Full,
    /// The environment does not own that slot (or the slot is free).
    NotOwner,
    /// The spare-time request list has no room.
    SpareFull,
}

impl fmt::Display for SlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SlotError::OutOfRange => "slot index out of range",
            SlotError::Taken => "slot already owned",
            SlotError::Full => "no free slot",
            SlotError::NotOwner => "slot not owned by that environment",
            SlotError::SpareFull => "spare-time request list full",
        })
    }
}
