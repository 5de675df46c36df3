//! Lists of items by owner, threaded through a table of links.
//!
//! The kernel keeps, for every environment, the set of frames it owns: the
//! abort protocol picks victims from it and the reaper frees what is left
//! in it when the environment ends. A set in a heap-allocated tree cost
//! hundreds of instructions per frame and kernel heap besides. Here the set
//! is a circular doubly linked list threaded through one [`Link`] per item
//! (carved out with the frame table at boot), with one [`Head`] per owner:
//! adding, removing, counting and "whose list is it on" take a few
//! instructions and no allocation.
//!
//! Every operation is total: an item or owner out of range, adding an item
//! that is already listed, removing one that is not — each is refused or
//! ignored, never a panic, and a list's length is always exact. Iteration is
//! bounded by that length, so even links damaged by a bug elsewhere cannot
//! make a walk run forever.

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

/// No item: the end of a walk, an empty list's first item.
const NIL: u32 = u32::MAX;

/// One item's place in its owner's list (12 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Link {
    prev: u32,
    next: u32,
    /// The owner whose list holds the item, or [`NIL`].
    owner: u32,
}

impl Link {
    /// An item on no list.
    pub const UNLISTED: Link = Link { prev: NIL, next: NIL, owner: NIL };
}

/// One owner's list: its first item and its length (8 bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Head {
    first: u32,
    len: u32,
}

impl Head {
    /// An empty list.
    pub const EMPTY: Head = Head { first: NIL, len: 0 };
}

/// Why [`Lists::add`] refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The item or the owner is out of range.
    OutOfRange,
    /// The item is on a list already (its owner's, or another's).
    Listed,
}

/// The lists of every owner, over borrowed storage: `links[i]` is item
/// `i`'s place, `heads[o]` owner `o`'s list.
pub struct Lists<'a> {
    links: &'a mut [Link],
    heads: &'a mut [Head],
}

impl<'a> Lists<'a> {
    /// Lists over `links` and `heads`, all made empty.
    pub fn new(links: &'a mut [Link], heads: &'a mut [Head]) -> Lists<'a> {
        links.fill(Link::UNLISTED);
        heads.fill(Head::EMPTY);
        Lists { links, heads }
    }

    /// Puts `item` last on `owner`'s list; refused if either is out of
    /// range or the item is on a list already.
    pub fn add(&mut self, owner: usize, item: usize) -> Result<(), Refused> {
        if item >= self.links.len() || owner >= self.heads.len() || item >= NIL as usize || owner >= NIL as usize {
            return Err(Refused::OutOfRange);
        }
        if self.links[item].owner != NIL {
            return Err(Refused::Listed);
        }
        let head = self.heads[owner];
        let me = item as u32;
        let link = if head.len == 0 {
            self.heads[owner].first = me;
            Link { prev: me, next: me, owner: owner as u32 }
        } else {
            let first = head.first;
            let last = self.links[first as usize].prev;
            self.links[last as usize].next = me;
            self.links[first as usize].prev = me;
            Link { prev: last, next: first, owner: owner as u32 }
        };
        self.links[item] = link;
        self.heads[owner].len = head.len + 1;
        Ok(())
    }

    /// Takes `item` off its list; the owner it was listed under, or `None`
    /// if it was on none (or is out of range).
    pub fn remove(&mut self, item: usize) -> Option<usize> {
        let link = *self.links.get(item)?;
        let owner = link.owner as usize;
        let head = *self.heads.get(owner)?;
        if head.len <= 1 {
            self.heads[owner] = Head::EMPTY;
        } else {
            self.links[link.prev as usize].next = link.next;
            self.links[link.next as usize].prev = link.prev;
            self.heads[owner] =
                Head { first: if head.first == item as u32 { link.next } else { head.first }, len: head.len - 1 };
        }
        self.links[item] = Link::UNLISTED;
        Some(owner)
    }

    /// The owner whose list holds `item`, if any.
    pub fn owner(&self, item: usize) -> Option<usize> {
        self.links.get(item).map(|l| l.owner).filter(|&o| o != NIL).map(|o| o as usize)
    }

    /// How many items `owner`'s list holds (0 for an owner out of range).
    pub fn len(&self, owner: usize) -> usize {
        self.heads.get(owner).map_or(0, |h| h.len as usize)
    }

    /// True if `owner`'s list holds nothing.
    pub fn is_empty(&self, owner: usize) -> bool {
        self.len(owner) == 0
    }

    /// The first item of `owner`'s list (the one listed longest).
    pub fn first(&self, owner: usize) -> Option<usize> {
        self.heads.get(owner).filter(|h| h.len != 0).map(|h| h.first as usize)
    }

    /// `owner`'s items, first listed first.
    pub fn iter(&self, owner: usize) -> Iter<'_> {
        self.walk(owner, false)
    }

    /// `owner`'s items, last listed first.
    pub fn iter_rev(&self, owner: usize) -> Iter<'_> {
        self.walk(owner, true)
    }

    fn walk(&self, owner: usize, backward: bool) -> Iter<'_> {
        let head = self.heads.get(owner).copied().unwrap_or(Head::EMPTY);
        let at = match (head.len, backward) {
            (0, _) => NIL,
            (_, false) => head.first,
            (_, true) => self.links.get(head.first as usize).map_or(NIL, |l| l.prev),
        };
        Iter { links: self.links, at, left: head.len, backward }
    }
}

/// A walk along one owner's list, at most as many steps as its length.
pub struct Iter<'l> {
    links: &'l [Link],
    at: u32,
    left: u32,
    backward: bool,
}

impl Iterator for Iter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        let link = self.links.get(self.at as usize)?;
        let item = self.at as usize;
        self.left -= 1;
        self.at = if self.backward { link.prev } else { link.next };
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left as usize))
    }
}
