//! Frame numbers and physical addresses as types of their own, and the one
//! place they are converted into each other and to and from raw words.
//!
//! A [`Pfn`] names a frame (its index in the frame table); a [`PhysAddr`]
//! is a byte address in physical memory. The exposed tables, page-table
//! entries and the call ABI stay raw words (the contract is words): a
//! word becomes one of these types where the kernel decodes it, once.

use super::PAGE_SIZE;

/// A physical frame number: the frame at byte address `pfn * PAGE_SIZE`,
/// and its index in the frame table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Pfn(u64);

/// A physical byte address.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct PhysAddr(u64);

impl Pfn {
    /// The frame a word names (a capability component, a table row, a
    /// program's argument). Any word is a frame number; whether the frame
    /// exists is the frame table's answer ([`super::frame::Frames::entry`]).
    #[inline]
    pub const fn from_word(word: u64) -> Pfn {
        Pfn(word)
    }

    /// The frame at table index `index`.
    #[inline]
    pub const fn from_index(index: usize) -> Pfn {
        Pfn(index as u64)
    }

    /// The frame number as a word (capability components, tables, logs).
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The frame's index in the frame table; `None` when the number does
    /// not fit a `usize`.
    #[inline]
    pub fn index(self) -> Option<usize> {
        usize::try_from(self.0).ok()
    }

    /// The address of the frame's first byte.
    #[inline]
    pub const fn addr(self) -> PhysAddr {
        PhysAddr(self.0.wrapping_mul(PAGE_SIZE))
    }
}

impl PhysAddr {
    /// The physical address a word holds (a page-table entry's address
    /// bits, a boot structure, a device register).
    #[inline]
    pub const fn new(word: u64) -> PhysAddr {
        PhysAddr(word)
    }

    /// The frame address a page-table entry holds (its address bits).
    #[inline]
    pub const fn of_entry(entry: u64) -> PhysAddr {
        PhysAddr(entry & oxok_abi::layout::pte::ADDRESS_MASK)
    }

    /// The address as a word (page-table entries, device registers, logs).
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }

    /// The frame that holds this address.
    #[inline]
    pub const fn pfn(self) -> Pfn {
        Pfn(self.0 / PAGE_SIZE)
    }

    /// True if the address starts a frame.
    #[inline]
    pub const fn is_frame_aligned(self) -> bool {
        self.0.is_multiple_of(PAGE_SIZE)
    }

    /// The address `bytes` further on.
    #[inline]
    pub const fn offset(self, bytes: u64) -> PhysAddr {
        PhysAddr(self.0 + bytes)
    }
}

impl core::fmt::LowerHex for Pfn {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::LowerHex::fmt(&self.0, f)
    }
}

impl core::fmt::LowerHex for PhysAddr {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        core::fmt::LowerHex::fmt(&self.0, f)
    }
}
