//! A mapping in two halves: [`AddressSpace::leaf_for`] finds a page's
//! entry, making the page tables above it — the half that can fail — and
//! [`Leaf::fill`] writes the entry, which cannot. A caller checks
//! everything else between the two (a frame taken, a charge), so a refusal
//! leaves every mapping as it was; tables made on the way stay, counted in
//! [`AddressSpace::tables`], as every table does until the space is torn
//! down.

use super::{AddressSpace, read_entry, walk_making, write_entry};
use crate::arch::cpu;
use crate::mem::access::Mappable;
use crate::mem::addr::PhysAddr;
use oxok_abi::Error;
use oxok_abi::layout::pte;

/// The entry of one user page of an address space, with every table above
/// it present: found by [`AddressSpace::leaf_for`] and written by
/// [`Leaf::fill`]. It borrows the space, so nothing can tear the tables
/// down in between.
pub struct Leaf<'a> {
    space: &'a mut AddressSpace,
    table: PhysAddr,
    index: usize,
    va: u64,
    made: u64,
    /// The entry when found (the space is borrowed until the fill).
    current: u64,
}

impl AddressSpace {
    /// The entry of the page at `va`, making the tables above it, each
    /// once `charge` agreed to pay for it: `BadAddress` outside the user
    /// range or when unaligned, `charge`'s refusal, or `NoMemory` when a
    /// table frame is out (the tables made before it stay).
    pub fn leaf_for(&mut self, va: u64, charge: impl FnMut() -> Result<(), Error>) -> Result<Leaf<'_>, Error> {
        crate::mem::user_page(va)?;
        let mut made = 0;
        let walked = walk_making(self.root, va, pte::PRESENT | pte::WRITABLE | pte::USER, &mut made, charge);
        self.tables += made;
        let (table, index) = walked?;
        let current = read_entry(table, index);
        Ok(Leaf { space: self, table, index, va, made, current })
    }
}

impl Leaf<'_> {
    /// The entry there now, if present.
    pub fn entry(&self) -> Option<u64> {
        (self.current & pte::PRESENT != 0).then_some(self.current)
    }

    /// The page-table frames [`AddressSpace::leaf_for`] made for it (0 to 3).
    pub fn made(&self) -> u64 {
        self.made
    }

    /// Maps `frame` there with `flags` (`WRITABLE`, `NO_EXECUTE`, libOS
    /// bits; `PRESENT | USER` implied), replacing what was mapped; returns
    /// the replaced entry. Cannot fail.
    pub fn fill(self, frame: Mappable, flags: u64) -> Option<u64> {
        let old = self.entry();
        let allowed = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;
        let pa = PhysAddr::of_entry(frame.pa().raw());
        write_entry(self.table, self.index, pa.raw() | (flags & allowed) | pte::PRESENT | pte::USER);
        if old.is_some() && self.space.is_current() {
            cpu::invlpg(self.va);
        }
        old
    }
}
