//! [`Frame`]: a buffer-cache frame as XN names it, by number.
//!
//! XN never owns, allocates or reads a frame by itself: the kernel wrapper
//! gives it frame numbers (the cache of a block: [`Xn::insert`],
//! [`Xn::add_root`]) and lends it their contents ([`Frames`]); XN keeps
//! them in its registry and names them back (binds, write and copy plans,
//! evictions, frees). In the kernel a frame number is the hardware crate's
//! `Pfn`, converted to and from this type in one place (the kernel's
//! `xn::cache`); the exposed XN table writes it as a word.
//!
//! [`Xn::insert`]: crate::Xn::insert
//! [`Xn::add_root`]: crate::Xn::add_root
//! [`Frames`]: crate::Frames

/// A frame's number, as the wrapper gave it to XN.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(transparent)]
pub struct Frame(u64);

impl Frame {
    /// The frame a word names (the kernel's frame number, a host test's
    /// key). Any word is a frame number; whether it is one the wrapper can
    /// reach is its [`Frames`](crate::Frames) implementation's answer.
    #[inline]
    pub const fn from_word(word: u64) -> Frame {
        Frame(word)
    }

    /// The frame number as a word (the exposed table, the kernel's `Pfn`).
    #[inline]
    pub const fn raw(self) -> u64 {
        self.0
    }
}
