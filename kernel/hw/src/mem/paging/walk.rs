//! Bounded, restartable walks over an address space's user half: the
//! abort protocol's sweep and the teardown of a destroyed environment.

use super::{AddressSpace, ENTRIES, USER_SLOTS, indices, read_entry, unlink_table, write_entry};
use crate::arch::cpu;
use crate::mem::addr::{Pfn, PhysAddr};
use crate::mem::frame;
use oxok_abi::layout::pte;

/// The root of a space whose tables are all freed (frame 0 is never a
/// table: the firmware's, never handed out).
const NO_ROOT: PhysAddr = PhysAddr::new(0);

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
        let current = self.is_current();
        while *cursor < end {
            let va = *cursor;
            let [i4, i3, i2, _] = indices(va);
            let e4 = read_entry(self.root, i4);
            if e4 & pte::PRESENT == 0 {
                *cursor = (va | (PML4_SPAN - 1)) + 1;
                continue;
            }
            let e3 = read_entry(PhysAddr::of_entry(e4), i3);
            if e3 & pte::PRESENT == 0 {
                *cursor = (va | (GIB - 1)) + 1;
                continue;
            }
            let e2 = read_entry(PhysAddr::of_entry(e3), i2);
            if e2 & pte::PRESENT != 0 {
                if *budget == 0 {
                    return false;
                }
                *budget -= 1;
                let pt = PhysAddr::of_entry(e2);
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
    /// [`Self::sweep_step`]; each table is scanned once, only in the spans
    /// its entry's summary names, absent entries eight at a time). Returns
    /// true when everything, the PML4 included, is freed.
    pub fn teardown_step(&mut self, cursor: &mut u64, mut budget: usize, mut leaf: impl FnMut(u64, u64)) -> bool {
        let end = (USER_SLOTS as u64) << 39;
        self.deactivate();
        while *cursor < end {
            let [from4, first3, first2, _] = indices(*cursor);
            let Some(i4) = next_present(self.root, from4, ALL).filter(|&i| i < USER_SLOTS) else { break };
            if i4 != from4 {
                // Past a run of absent slots: from the start of this one.
                *cursor = (i4 as u64) << 39;
                continue;
            }
            let base4 = (i4 as u64) << 39;
            let e4 = read_entry(self.root, i4);
            let pdpt = PhysAddr::of_entry(e4);
            let mut i3 = next_present(pdpt, first3, pte::summary(e4));
            while let Some(j3) = i3 {
                let base3 = base4 | ((j3 as u64) << 30);
                let e3 = read_entry(pdpt, j3);
                let pd = PhysAddr::of_entry(e3);
                let mut i2 = next_present(pd, if j3 == first3 { first2 } else { 0 }, pte::summary(e3));
                while let Some(j2) = i2 {
                    let base2 = base3 | ((j2 as u64) << 21);
                    if budget == 0 {
                        *cursor = base2;
                        return false;
                    }
                    budget -= 1;
                    let e2 = read_entry(pd, j2);
                    let (pt, spans) = (PhysAddr::of_entry(e2), pte::summary(e2));
                    let mut i1 = next_present(pt, 0, spans);
                    while let Some(j1) = i1 {
                        leaf(base2 | ((j1 as u64) << 12), read_entry(pt, j1));
                        i1 = next_present(pt, j1 + 1, spans);
                    }
                    unlink_table(pd, j2);
                    frame::with(|f| f.free(pt));
                    self.tables = self.tables.saturating_sub(1);
                    i2 = next_present(pd, j2 + 1, pte::summary(e3));
                }
                unlink_table(pdpt, j3);
                frame::with(|f| f.free(pd));
                self.tables = self.tables.saturating_sub(1);
                i3 = next_present(pdpt, j3 + 1, pte::summary(e4));
            }
            unlink_table(self.root, i4);
            frame::with(|f| f.free(pdpt));
            self.tables = self.tables.saturating_sub(1);
            *cursor = base4 + (1 << 39);
        }
        *cursor = end;
        if self.root != NO_ROOT {
            super::hints::forget(self.root);
            frame::with(|f| f.free(self.root));
            self.root = NO_ROOT;
        }
        true
    }
}

impl Drop for AddressSpace {
    /// Ownership ends: a space dropped while it still holds page tables (a
    /// path that did not hand it to a bounded teardown, such as an
    /// environment's build refused after its space was made) is torn down
    /// here, each page still mapped released through the kernel's
    /// [`super::on_leaf_release`]. A destroyed environment's space reaches
    /// here already torn down, in bounded steps, by the reaper
    /// ([`Self::teardown_step`]), and costs nothing more.
    fn drop(&mut self) {
        if self.root == NO_ROOT {
            return;
        }
        let release = super::LEAF_RELEASE.get().copied();
        let mut cursor = 0;
        while !self.teardown_step(&mut cursor, usize::MAX, |_va, entry| {
            if let Some(release) = release {
                release(entry);
            }
        }) {}
    }
}

/// A summary that rules nothing out (for the PML4, which has none).
const ALL: u8 = u8::MAX;

/// The first present entry at index `from` or later in the table at
/// `table`, if any, looking only in the spans `summary` names (see
/// `pte::summary`); runs of absent entries are skipped eight per test.
fn next_present(table: PhysAddr, from: usize, summary: u8) -> Option<usize> {
    let mut i = from;
    while i < ENTRIES {
        let span = i / pte::SUMMARY_SPAN;
        if summary & (1 << span) == 0 {
            i = (span + 1) * pte::SUMMARY_SPAN;
            continue;
        }
        if i.is_multiple_of(8) {
            let any: u64;
            // SAFETY: entries `i..i + 8` (i is a multiple of 8 below 512) lie
            // in the page-table frame `table`, which the kernel owns and the
            // direct map covers; the block only reads them.
            unsafe {
                core::arch::asm!(
                    "mov {a}, [{p}]",
                    "or {a}, [{p} + 8]",
                    "or {a}, [{p} + 16]",
                    "or {a}, [{p} + 24]",
                    "or {a}, [{p} + 32]",
                    "or {a}, [{p} + 40]",
                    "or {a}, [{p} + 48]",
                    "or {a}, [{p} + 56]",
                    p = in(reg) crate::mem::phys::virt(table) + (i as u64) * 8,
                    a = out(reg) any,
                    options(nostack, readonly),
                );
            }
            if any & pte::PRESENT == 0 {
                i += 8;
                continue;
            }
        }
        if read_entry(table, i) & pte::PRESENT != 0 {
            return Some(i);
        }
        i += 1;
    }
    None
}

impl AddressSpace {
    /// Sets `flags` (`WRITABLE`, `NO_EXECUTE`, libOS bits; `PRESENT |
    /// USER` implied) on every present page of `[va, va + pages pages)`,
    /// one pass over each last-level table. Before a page gains write,
    /// `may_write(pfn)` must allow it; the first refusal stops the walk.
    /// Returns how many pages (present or not) were passed, and the
    /// refusal if one stopped it. `va` must be page-aligned and the range
    /// below `USER_TOP` (the caller checks).
    pub fn protect_range(
        &mut self,
        va: u64,
        pages: u64,
        flags: u64,
        mut may_write: impl FnMut(Pfn) -> Result<(), oxok_abi::Error>,
    ) -> (u64, Result<(), oxok_abi::Error>) {
        let allowed = pte::WRITABLE | pte::NO_EXECUTE | pte::LIBOS_BITS;
        let current = self.is_current();
        let mut done = 0;
        while done < pages {
            let at = va + done * crate::mem::PAGE_SIZE;
            let [i4, i3, i2, i1] = indices(at);
            // Pages left in this last-level table.
            let span = ((ENTRIES - i1) as u64).min(pages - done);
            let mut t = self.root;
            let mut present = true;
            for i in [i4, i3, i2] {
                let e = read_entry(t, i);
                if e & pte::PRESENT == 0 || e & pte::HUGE != 0 {
                    present = false;
                    break;
                }
                t = PhysAddr::of_entry(e);
            }
            if present {
                for k in 0..span as usize {
                    let old = read_entry(t, i1 + k);
                    if old & pte::PRESENT == 0 {
                        continue;
                    }
                    if flags & pte::WRITABLE != 0
                        && old & pte::WRITABLE == 0
                        && let Err(e) = may_write(PhysAddr::of_entry(old).pfn())
                    {
                        return (done + k as u64, Err(e));
                    }
                    let new = PhysAddr::of_entry(old).raw() | (flags & allowed) | pte::PRESENT | pte::USER;
                    if new != old {
                        write_entry(t, i1 + k, new);
                        if current {
                            cpu::invlpg(at + (k as u64) * crate::mem::PAGE_SIZE);
                        }
                    }
                }
            }
            done += span;
        }
        (done, Ok(()))
    }
}
