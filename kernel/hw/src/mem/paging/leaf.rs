//! A mapping in two halves: [`AddressSpace::leaf_for`] finds a page's
//! entry, making the page tables above it — the half that can fail — and
//! [`Leaf::fill`] writes the entry, which cannot. A caller checks
//! everything else between the two (a frame taken, a charge), so a refusal
//! leaves every mapping as it was; tables made on the way stay, counted in
//! [`AddressSpace::tables`], as every table does until the space is torn
//! down.

use super::{AddressSpace, UNLINKS, hints, indices, read_entry, walk_making, write_entry};
use crate::arch::cpu;
use crate::mem::access::Mappable;
use crate::mem::addr::PhysAddr;
use core::sync::atomic::Ordering;
use oxok_abi::Error;
use oxok_abi::layout::pte;

/// The last-level table of one span of an address space (the
/// `pte::SUMMARY_SPAN` pages one summary bit covers), as a full walk found
/// it when [`UNLINKS`] was `unlinks`: while no table has been unlinked
/// since, the walk would find the same table (tables above the last level
/// are only ever added), so the next page of the span skips it — a batch
/// of records or a fork's pages go page after page through one table.
/// `marked`: the span's summary bit was set then (and stays set while the
/// table lives), so a mapping there needs no walk to set it.
#[derive(Clone, Copy)]
pub(super) struct LeafHint {
    unlinks: u64,
    /// `va >> SPAN_SHIFT` of the span; `NO_SPAN` for none.
    span: u64,
    table: PhysAddr,
    marked: bool,
}

/// log2 of the bytes one span covers.
const SPAN_SHIFT: u32 = 12 + pte::SUMMARY_SPAN.trailing_zeros();
/// [`LeafHint::span`] of no span (no user address shifts to it).
const NO_SPAN: u64 = u64::MAX;

impl LeafHint {
    /// A hint of nothing.
    pub(super) const NONE: LeafHint = LeafHint { unlinks: 0, span: NO_SPAN, table: PhysAddr::new(0), marked: false };

    /// What a walk to `va` found: its last-level table, and whether the
    /// span's summary bit was set.
    pub(super) fn found(va: u64, table: PhysAddr, marked: bool) -> LeafHint {
        LeafHint { unlinks: UNLINKS.load(Ordering::Relaxed), span: va >> SPAN_SHIFT, table, marked }
    }

    /// The last-level table of `va` if this hint still holds for its span
    /// (and, with `need_mark`, the span's summary bit is known set).
    #[inline(always)]
    pub(super) fn holds(&self, va: u64, need_mark: bool) -> Option<PhysAddr> {
        (self.span == va >> SPAN_SHIFT
            && (self.marked || !need_mark)
            && self.unlinks == UNLINKS.load(Ordering::Relaxed))
        .then_some(self.table)
    }
}

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
    /// table frame is out (the tables made before it stay). Inlined always:
    /// with the hint it is a few loads on every mapping, where a call (the
    /// compiler's choice once more than one mapping path calls it) cost
    /// `fork_4mb_exit_wait` 8 %.
    #[inline(always)]
    pub fn leaf_for(&mut self, va: u64, charge: impl FnMut() -> Result<(), Error>) -> Result<Leaf<'_>, Error> {
        crate::mem::user_page(va)?;
        let mut made = 0;
        let (table, index) = match hints::leaf(self.root, va, true) {
            Some(table) => (table, indices(va)[3]),
            None => {
                let walked = walk_making(self.root, va, pte::PRESENT | pte::WRITABLE | pte::USER, &mut made, charge);
                self.tables += made;
                let (table, index) = walked?;
                hints::set_leaf(self.root, LeafHint::found(va, table, true));
                (table, index)
            }
        };
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

/// The entries of a run of consecutive pages inside one summary span of a
/// last-level table (`pte::SUMMARY_SPAN` pages, 256 KiB), with every table
/// above them present and the span marked: found by
/// [`AddressSpace::leaf_run_for`], written by [`LeafRun::fill`].
pub struct LeafRun<'a> {
    leaf: Leaf<'a>,
    pages: usize,
}

impl AddressSpace {
    /// The entries of the `pages` pages from `va` on, which must lie in one
    /// summary span (`Invalid` otherwise, and for no page), making the
    /// tables above them as [`Self::leaf_for`] does for `va`.
    #[inline(always)]
    pub fn leaf_run_for(
        &mut self,
        va: u64,
        pages: usize,
        charge: impl FnMut() -> Result<(), Error>,
    ) -> Result<LeafRun<'_>, Error> {
        let first = indices(va)[3] % pte::SUMMARY_SPAN;
        if pages == 0 || first + pages > pte::SUMMARY_SPAN {
            return Err(Error::Invalid);
        }
        Ok(LeafRun { leaf: self.leaf_for(va, charge)?, pages })
    }
}

impl LeafRun<'_> {
    /// True if any page of the run is mapped now.
    pub fn any_present(&self) -> bool {
        (0..self.pages).any(|k| read_entry(self.leaf.table, self.leaf.index + k) & pte::PRESENT != 0)
    }

    /// Maps page `k` of the run to `frames[k]` with `flags` (as
    /// [`Leaf::fill`]); the run must be unmapped ([`Self::any_present`]),
    /// so nothing is replaced and no stale translation can exist. Extra
    /// frames are ignored; missing ones leave their pages unmapped.
    pub fn fill(self, frames: &[Mappable], flags: u64) {
        let allowed = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;
        for (k, frame) in frames.iter().take(self.pages).enumerate() {
            let pa = PhysAddr::of_entry(frame.pa().raw());
            write_entry(self.leaf.table, self.leaf.index + k, pa.raw() | (flags & allowed) | pte::PRESENT | pte::USER);
        }
    }
}
