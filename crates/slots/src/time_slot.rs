//! The CPU time slot: a position in one CPU's slot vector.

use core::fmt;

/// A CPU time slot: a position in a CPU's slot vector, as a slot
/// capability, `slot_alloc`'s placement, the exposed slot vector and the
/// policy name it. Never a capability slot nor an environment-table row.
/// Whether a vector has it is the vector's business: every
/// [`SlotVector`](crate::SlotVector) operation refuses (or answers `None`
/// for) a slot past its end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimeSlot(pub usize);

impl TimeSlot {
    /// The slot a program's number names, if a vector of the kernel's
    /// capacity ([`DEFAULT_SLOTS`](crate::DEFAULT_SLOTS), the exposed
    /// vector's rows) has it.
    pub fn from_word(n: u64) -> Option<TimeSlot> {
        usize::try_from(n).ok().filter(|&i| i < crate::DEFAULT_SLOTS).map(TimeSlot)
    }

    /// Its number, as programs see it.
    pub const fn number(self) -> u64 {
        self.0 as u64
    }
}

impl fmt::Display for TimeSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}
