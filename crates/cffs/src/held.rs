//! A metadata change that waits in the library file system's disk (the
//! libOS's `XnDisk`): the last `modify` of one block, made while the file
//! system allows it ([`Held::allow`]), kept here instead of going to the
//! kernel at once. The next change of that block takes it along — an
//! `alloc` or `free` proposes an image built from what this side sees, the
//! held one — so creating a file and then giving it its first block is one
//! checked change (`xn_alloc`) instead of two (`xn_modify`, then
//! `xn_alloc`).
//!
//! A `free` may wait the same way, and frees of one block whose extents
//! meet (a directory's small files removed in the order they were made)
//! become one extent: removing the files of a directory block is one
//! `xn_free` instead of one each. A held free keeps its blocks allocated in
//! XN's free map until it goes, so nobody reuses them early. The disk holds
//! only frees of blocks already durable: XN keeps such a block on its
//! will-free list until a durable write of its parent anyway (unless the
//! parent was not written since the block was allocated), and that write
//! sends the held free first, so holding one delays reuse little.
//!
//! Until then this side reads the block from the held image, and the
//! kernel's cached copy is the one before the change. Nothing else can
//! differ: a `modify` owns exactly what the block owned, and a held free's
//! blocks stay allocated, so the free map, the registry and every `owns`
//! answer are those before the change, and XN checks the whole change when
//! it goes (the held image's `owns` against the old content, and `acl`
//! over it). A held change goes to the kernel on its own (`xn_modify` or
//! `xn_free`) before anything reads the kernel's copy — a write-back of the
//! block — when the file system modifies or frees in another block,
//! allocates in this one after a held free, or frees an extent that does
//! not meet the held one, and at the end of the request after the one that
//! made it ([`Held::aged`]).

use alloc::vec::Vec;

use oxok_abi::xn::MAX_EXTENT_CALL;
use oxok_xn::Extent;

use crate::layout::{BSIZE, Block};

/// The held change, if any.
pub struct Held {
    /// The block it changes.
    block: Option<u64>,
    /// Its image (the allocation kept once made, for the next one).
    image: Vec<u8>,
    /// The blocks it frees (a held `free`), if any.
    freed: Option<Extent>,
    /// Requests ended since it was made.
    age: u8,
    /// Whether a `modify` may be held now.
    allowed: bool,
}

impl Default for Held {
    fn default() -> Held {
        Held::new()
    }
}

impl Held {
    /// Nothing held, holding not allowed.
    pub const fn new() -> Held {
        Held { block: None, image: Vec::new(), freed: None, age: 0, allowed: false }
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

    /// The blocks the held change frees, if it is a free.
    pub fn freed(&self) -> Option<Extent> {
        self.block.and(self.freed)
    }

    /// Holds `new` as the content of `block` (which must be the block held,
    /// or none held) if holding is allowed and the room for the image
    /// exists: true if held. It replaces what was held of `block` (and a
    /// held free stays one: `new` was made from its image).
    pub fn hold(&mut self, block: u64, new: &Block) -> bool {
        if !self.allowed || self.block.is_some_and(|b| b != block) || !self.room() {
            return false;
        }
        if self.block.is_none() {
            self.freed = None;
        }
        self.keep(block, new);
        true
    }

    /// Holds the free of `ext` from `block`, whose content becomes `new`,
    /// if holding is allowed, the room for the image exists and either
    /// nothing is held or what is held is of `block` and frees nothing or
    /// an extent of the same type that `ext` meets, together at most
    /// [`MAX_EXTENT_CALL`] blocks (one call): true if held.
    pub fn hold_free(&mut self, block: u64, new: &Block, ext: Extent) -> bool {
        if !self.allowed || ext.len == 0 || ext.len > MAX_EXTENT_CALL || !self.room() {
            return false;
        }
        let freed = match (self.block, self.freed) {
            (None, _) => ext,
            (Some(b), _) if b != block => return false,
            (Some(_), None) => ext,
            (Some(_), Some(f)) => match merged(f, ext) {
                Some(m) => m,
                None => return false,
            },
        };
        self.freed = Some(freed);
        self.keep(block, new);
        true
    }

    /// The held image of `block`, to change in place as [`hold`] of the
    /// changed content would: when holding is allowed and `block` is the
    /// one held, or nothing is held and `fill` gives the block's content
    /// (copied into the image once). `None`: hold nothing, change nothing.
    ///
    /// [`hold`]: Held::hold
    pub fn edit(&mut self, block: u64, fill: Option<&Block>) -> Option<&mut Block> {
        if !self.allowed || !self.room() {
            return None;
        }
        match (self.block, fill) {
            (Some(b), _) if b == block => self.age = 0,
            (None, Some(content)) => {
                self.freed = None;
                self.keep(block, content);
            }
            _ => return None,
        }
        <&mut Block>::try_from(self.image.as_mut_slice()).ok()
    }

    /// Whether the image has its room (made once).
    fn room(&mut self) -> bool {
        self.image.capacity() >= BSIZE as usize || self.image.try_reserve_exact(BSIZE as usize).is_ok()
    }

    fn keep(&mut self, block: u64, new: &Block) {
        self.image.clear();
        self.image.extend_from_slice(new);
        self.block = Some(block);
        self.age = 0;
    }

    /// Forgets what is held of `block` (a change that went to the kernel
    /// took it along).
    pub fn absorbed(&mut self, block: u64) {
        if self.block == Some(block) {
            self.block = None;
        }
    }

    /// Takes the held change out to send it: its block, image and the
    /// blocks it frees (give the image back with
    /// [`put_back`](Held::put_back)).
    pub fn take(&mut self) -> Option<(u64, Vec<u8>, Option<Extent>)> {
        let block = self.block.take()?;
        Some((block, core::mem::take(&mut self.image), self.freed))
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

/// `a` and `b` as one extent, if they are of one type, meet, and make one
/// call's worth at most.
fn merged(a: Extent, b: Extent) -> Option<Extent> {
    let len = a.len.checked_add(b.len).filter(|&l| l <= MAX_EXTENT_CALL)?;
    if a.ty != b.ty {
        return None;
    }
    if a.start.checked_add(a.len) == Some(b.start) {
        Some(Extent::new(a.start, len, a.ty))
    } else if b.start.checked_add(b.len) == Some(a.start) {
        Some(Extent::new(b.start, len, a.ty))
    } else {
        None
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
        let (b, image, freed) = h.take().expect("held");
        assert_eq!((b, image[0], freed), (7, 4, None));
        assert_eq!(h.block(), None);
        h.put_back(Some(b), image);
        assert_eq!(h.image(7).map(|b| b[9]), Some(4));
        let (_, image, _) = h.take().expect("held");
        h.put_back(None, image);
        assert_eq!(h.block(), None);
    }

    #[test]
    fn frees_that_meet_become_one_extent_and_others_wait_their_turn() {
        let mut h = Held::new();
        assert!(!h.hold_free(7, &img(1), Extent::new(100, 1, 3)), "not allowed");
        h.allow(true);
        assert!(h.hold_free(7, &img(1), Extent::new(100, 1, 3)));
        assert!(h.hold_free(7, &img(2), Extent::new(101, 2, 3)), "after it");
        assert!(h.hold_free(7, &img(3), Extent::new(99, 1, 3)), "before it");
        assert_eq!(h.freed(), Some(Extent::new(99, 4, 3)));
        assert!(!h.hold_free(7, &img(4), Extent::new(104, 1, 3)), "a gap");
        assert!(!h.hold_free(7, &img(4), Extent::new(103, 1, 2)), "another type");
        assert!(!h.hold_free(8, &img(4), Extent::new(103, 1, 3)), "another block");
        assert!(!h.hold_free(7, &img(4), Extent::new(103, MAX_EXTENT_CALL - 3, 3)), "more than one call");
        assert!(h.hold_free(7, &img(5), Extent::new(103, MAX_EXTENT_CALL - 4, 3)), "one call's worth");
        assert_eq!(h.image(7).map(|b| b[0]), Some(5));
        // A modify of the block keeps the free (its image was made from it).
        assert!(h.hold(7, &img(6)));
        assert_eq!(h.freed(), Some(Extent::new(99, MAX_EXTENT_CALL, 3)));
        let (b, image, freed) = h.take().expect("held");
        assert_eq!((b, image[0], freed), (7, 6, Some(Extent::new(99, MAX_EXTENT_CALL, 3))));
        h.put_back(None, image);
        assert_eq!(h.freed(), None);
        // A new modify after the free went holds no free.
        assert!(h.hold(7, &img(7)));
        assert_eq!(h.freed(), None);
    }

    #[test]
    fn a_free_after_a_held_modify_of_its_block_holds_both() {
        let mut h = Held::new();
        h.allow(true);
        assert!(h.hold(7, &img(1)));
        assert!(h.hold_free(7, &img(2), Extent::new(50, 1, 3)));
        assert_eq!((h.freed(), h.image(7).map(|b| b[0])), (Some(Extent::new(50, 1, 3)), Some(2)));
        assert!(!h.hold_free(7, &img(2), Extent::new(60, 0, 3)), "an empty extent is no free");
    }

    #[test]
    fn an_edit_changes_the_held_image_in_place_as_a_hold_of_the_result_would() {
        let mut h = Held::new();
        assert!(h.edit(7, Some(&img(1))).is_none(), "not allowed");
        h.allow(true);
        assert!(h.edit(7, None).is_none(), "nothing held and nothing to fill it with");
        // Nothing held: the cached content goes in once, then changes.
        let image = h.edit(7, Some(&img(1))).expect("held");
        image[5] = 9;
        assert_eq!(h.image(7).map(|b| (b[0], b[5])), Some((1, 9)));
        // Held: changed where it is; the content offered is not used.
        h.edit(7, Some(&img(3))).expect("held")[6] = 8;
        assert_eq!(h.image(7).map(|b| (b[0], b[5], b[6])), Some((1, 9, 8)));
        assert!(h.edit(8, Some(&img(2))).is_none(), "another block waits until this one went");
        // A change makes it young again, as a hold does.
        assert!(!h.aged());
        h.edit(7, None).expect("held")[0] = 4;
        assert!(!h.aged(), "the request of the edit ends");
        assert!(h.aged());
        // A held free stays one; a fresh edit after it went holds none.
        let mut h = Held::new();
        h.allow(true);
        assert!(h.hold_free(7, &img(1), Extent::new(50, 1, 3)));
        h.edit(7, None).expect("held")[1] = 2;
        assert_eq!(h.freed(), Some(Extent::new(50, 1, 3)));
        let (_, image, _) = h.take().expect("held");
        h.put_back(None, image);
        h.edit(7, Some(&img(5))).expect("held");
        assert_eq!(h.freed(), None);
    }
}
