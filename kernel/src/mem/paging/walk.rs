//! Bounded, restartable walks over an address space's user half: the
//! abort protocol's sweep and the teardown of a destroyed environment.

use super::{AddressSpace, ENTRIES, USER_SLOTS, indices, read_entry, write_entry};
use crate::arch::cpu;
use crate::mem::frame;
use oxok_abi::layout::pte;

impl AddressSpace {
    /// One bounded step of a walk over the user half: from `cursor` on,
    /// for every present page `f(va, entry)` decides whether the mapping
    /// is removed (true: the entry is cleared, its TLB entry flushed if
    /// this space is current). Each last-level table examined costs one
    /// unit of `budget`; skipping absent entries is free (every upper table
    /// holds at least one lower one, so at most ~1,300 absent entries are
    /// skipped per unit). Returns true when the walk is complete.
    pub fn sweep_step(&mut self, cursor: &mut u64, budget: &mut usize, mut f: impl FnMut(u64, u64) -> bool) -> bool {
        const GIB: u64 = 1 << 30;
        const PML4_SPAN: u64 = 1 << 39;
        let end = (USER_SLOTS as u64) << 39;
        let current = cpu::cr3() == self.root;
        while *cursor < end {
            let va = *cursor;
            let [i4, i3, i2, _] = indices(va);
            let e4 = read_entry(self.root, i4);
            if e4 & pte::PRESENT == 0 {
                *cursor = (va | (PML4_SPAN - 1)) + 1;
                continue;
            }
            let e3 = read_entry(e4 & pte::ADDRESS_MASK, i3);
            if e3 & pte::PRESENT == 0 {
                *cursor = (va | (GIB - 1)) + 1;
                continue;
            }
            let e2 = read_entry(e3 & pte::ADDRESS_MASK, i2);
            if e2 & pte::PRESENT != 0 {
                if *budget == 0 {
                    return false;
                }
                *budget -= 1;
                let pt = e2 & pte::ADDRESS_MASK;
                for i1 in 0..ENTRIES {
                    let e1 = read_entry(pt, i1);
                    let page = va | ((i1 as u64) << 12);
                    if e1 & pte::PRESENT != 0 && f(page, e1) {
                        write_entry(pt, i1, 0);
                        if current {
                            cpu::invlpg(page);
                        }
                    }
                }
            }
            *cursor = va + (1 << 21);
        }
        true
    }

    /// Tears down the whole user half at once (see [`Self::teardown_step`]).
    pub fn destroy(self, mut leaf: impl FnMut(u64, u64)) {
        let mut cursor = 0;
        let mut space = self;
        while !space.teardown_step(&mut cursor, usize::MAX, &mut leaf) {}
    }

    /// One bounded step of tearing down the user half: from `cursor` on,
    /// calls `leaf(va, entry)` for every present page and frees each
    /// page-table frame once passed. Each last-level table examined costs
    /// one unit of `budget` (absent entries are skipped for free, as in
    /// [`Self::sweep_step`]). Returns true when everything, the PML4
    /// included, is freed.
    pub fn teardown_step(&mut self, cursor: &mut u64, mut budget: usize, mut leaf: impl FnMut(u64, u64)) -> bool {
        const GIB: u64 = 1 << 30;
        const PML4_SPAN: u64 = 1 << 39;
        let end = (USER_SLOTS as u64) << 39;
        self.deactivate();
        while *cursor < end {
            let va = *cursor;
            let [i4, i3, i2, _] = indices(va);
            let e4 = read_entry(self.root, i4);
            if e4 & pte::PRESENT == 0 {
                *cursor = (va | (PML4_SPAN - 1)) + 1;
                continue;
            }
            let pdpt = e4 & pte::ADDRESS_MASK;
            let e3 = read_entry(pdpt, i3);
            if e3 & pte::PRESENT != 0 {
                let pd = e3 & pte::ADDRESS_MASK;
                let e2 = read_entry(pd, i2);
                if e2 & pte::PRESENT != 0 {
                    if budget == 0 {
                        return false;
                    }
                    budget -= 1;
                    let pt = e2 & pte::ADDRESS_MASK;
                    for i1 in 0..ENTRIES {
                        let e1 = read_entry(pt, i1);
                        if e1 & pte::PRESENT != 0 {
                            leaf(va | ((i1 as u64) << 12), e1);
                        }
                    }
                    write_entry(pd, i2, 0);
                    frame::with(|f| f.free(pt));
                    self.tables = self.tables.saturating_sub(1);
                }
                *cursor = va + (1 << 21);
                if i2 == ENTRIES - 1 {
                    write_entry(pdpt, i3, 0);
                    frame::with(|f| f.free(pd));
                    self.tables = self.tables.saturating_sub(1);
                }
            } else {
                *cursor = (va | (GIB - 1)) + 1;
            }
            if cursor.is_multiple_of(PML4_SPAN) {
                write_entry(self.root, i4, 0);
                frame::with(|f| f.free(pdpt));
                self.tables = self.tables.saturating_sub(1);
            }
        }
        if self.root != 0 {
            frame::with(|f| f.free(self.root));
            self.root = 0;
        }
        true
    }
}
