//! A metadata change that waits in the library file system's disk (the
//! libOS's `XnDisk`): the last `modify` of one
//! block, made while the file system asked for it ([`Held::allow`]), kept
//! here instead of going to the kernel at once. The next change of that
//! block takes it along — an `alloc` or `free` proposes an image built
//! from what this side sees, the held one — so creating a file and then
//! giving it its first block is one checked change (`xn_alloc`) instead of
//! two (`xn_modify`, then `xn_alloc`).
//!
//! Until then this side reads the block from the held image, and the
//! kernel's cached copy is the one before the change. Nothing else can
//! differ: a `modify` owns exactly what the block owned, so the free map,
//! the registry and every `owns` answer are the same with or without it,
//! and XN still checks the whole change when it goes (the held image's
//! `owns` against the old content, and `acl` over it). A held change goes
//! to the kernel on its own (`xn_modify`) before anything reads the
//! kernel's copy — a write-back of the block — when the file system
//! changes another block the same way, and at the end of the request after
//! the one that made it ([`Held::aged`]).

use alloc::vec::Vec;

use crate::layout::{BSIZE, Block};

/// The held change, if any.
pub struct Held {
    /// The block it changes.
    block: Option<u64>,
    /// Its image (the allocation kept once made, for the next one).
    image: Vec<u8>,
    /// Requests ended since it was made.
    age: u8,
    /// Whether a `modify` may be held now.
    allowed: bool,
}

impl Held {
    /// Nothing held, holding not allowed.
    pub const fn new() -> Held {
        Held { block: None, image: Vec::new(), age: 0, allowed: false }
    }

    /// Allows holding the next changes (or not).
    pub fn allow(&mut self, on: bool) {
        self.allowed = on;
    }

    /// The block held, if any.
    pub fn block(&self) -> Option<u64> {
        self.block
    }

    /// The held image of `block`, if `block` is the one held.
    pub fn image(&self, block: u64) -> Option<&Block> {
        match self.block {
            Some(b) if b == block => self.image.as_slice().try_into().ok(),
            _ => None,
        }
    }

    /// Holds `new` as the content of `block` (which must be the block held,
    /// or none held) if holding is allowed and the room for the image
    /// exists: true if held. It replaces what was held of `block`.
    pub fn hold(&mut self, block: u64, new: &Block) -> bool {
        if !self.allowed || self.block.is_some_and(|b| b != block) {
            return false;
        }
        if self.image.capacity() < BSIZE as usize && self.image.try_reserve_exact(BSIZE as usize).is_err() {
            return false;
        }
        self.image.clear();
        self.image.extend_from_slice(new);
        self.block = Some(block);
        self.age = 0;
        true
    }

    /// Forgets what is held of `block` (a change that went to the kernel
    /// took it along).
    pub fn absorbed(&mut self, block: u64) {
        if self.block == Some(block) {
            self.block = None;
        }
    }

    /// Takes the held change out to send it: its block and image (give the
    /// image back with [`put_back`](Held::put_back)).
    pub fn take(&mut self) -> Option<(u64, Vec<u8>)> {
        let block = self.block.take()?;
        Some((block, core::mem::take(&mut self.image)))
    }

    /// Gives back an image taken with [`take`](Held::take): held again as
    /// it was when `block` is `Some` (it could not be sent), kept for the
    /// next change otherwise.
    pub fn put_back(&mut self, block: Option<u64>, image: Vec<u8>) {
        self.image = image;
        self.block = block;
    }

    /// A request ended: true if the change held is from an earlier one and
    /// must go now.
    pub fn aged(&mut self) -> bool {
        if self.block.is_none() {
            return false;
        }
        self.age = self.age.saturating_add(1);
        self.age > 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn img(byte: u8) -> Block {
        [byte; BSIZE as usize]
    }

    #[test]
    fn nothing_is_held_unless_allowed_and_one_block_at_a_time() {
        let mut h = Held::new();
        assert!(!h.hold(7, &img(1)));
        h.allow(true);
        assert!(h.hold(7, &img(1)));
        assert!(h.hold(7, &img(2)), "a later change of the same block replaces it");
        assert_eq!(h.image(7).map(|b| b[0]), Some(2));
        assert!(!h.hold(8, &img(3)), "another block must wait until this one went");
        assert!(h.image(8).is_none());
        h.absorbed(7);
        assert_eq!(h.block(), None);
        assert!(h.hold(8, &img(3)));
    }

    #[test]
    fn a_change_goes_at_the_end_of_the_request_after_the_one_that_made_it() {
        let mut h = Held::new();
        h.allow(true);
        assert!(h.hold(7, &img(1)));
        assert!(!h.aged(), "the request that made it ends");
        assert!(h.aged(), "the next one ends: it goes");
        assert!(h.hold(7, &img(2)));
        assert!(!h.aged(), "a new change starts again");
    }

    #[test]
    fn a_change_that_could_not_go_is_held_again() {
        let mut h = Held::new();
        h.allow(true);
        assert!(h.hold(7, &img(4)));
        let (b, image) = h.take().expect("held");
        assert_eq!((b, image[0]), (7, 4));
        assert_eq!(h.block(), None);
        h.put_back(Some(b), image);
        assert_eq!(h.image(7).map(|b| b[9]), Some(4));
        let (_, image) = h.take().expect("held");
        h.put_back(None, image);
        assert_eq!(h.block(), None);
    }
}
