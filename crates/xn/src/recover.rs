//! Recovery: after a crash (or at every boot) the free map is rebuilt by
//! running `owns` from the registered roots over every reachable metadata
//! block on disk; a block claimed twice is reported, not followed twice.

use alloc::vec::Vec;

use oxok_abi::xn::{BLOCK_SIZE, DATA};

use crate::registry::Entry;
use crate::{Refusal, Root, Xn};

/// A block claimed by a second owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Duplicate {
    /// The block.
    pub block: u64,
    /// Its first owner (`None`: it is a root).
    pub first: Option<u64>,
    /// The metadata block (or root list, `None`) claiming it again.
    pub second: Option<u64>,
}

/// What recovery found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Report {
    /// Blocks reachable from the roots (now allocated).
    pub reachable: u64,
    /// Blocks owned twice.
    pub duplicates: Vec<Duplicate>,
    /// Metadata blocks that could not be read or whose `owns` failed (their
    /// children are not followed).
    pub unreadable: Vec<u64>,
}

impl Xn {
    /// Rebuilds the registry and free map of a fresh `Xn` (file systems
    /// registered, nothing allocated) from `roots`. `read(block, buf)` fills
    /// `buf` with the block's disk content, or returns false. Every block
    /// is visited at most once, so the work is bounded by the disk size
    /// (time O(n log n) in the reachable blocks).
    pub fn recover(
        &mut self,
        roots: &[Root],
        buf: &mut [u8; BLOCK_SIZE],
        read: &mut impl FnMut(u64, &mut [u8; BLOCK_SIZE]) -> bool,
    ) -> Result<Report, Refusal> {
        if !self.reg.is_empty() || !self.roots.is_empty() {
            return Err(Refusal::Busy(0));
        }
        let mut report = Report::default();
        // (block, fs, type, generation) of metadata still to read.
        let mut work: Vec<(u64, u32, u32, u64)> = Vec::new();
        for &r in roots {
            self.template(r.fs.0, r.ty)?;
            if r.block >= self.map.nblocks() {
                return Err(Refusal::OutOfRange(r.block));
            }
            if !self.map.is_free(r.block) {
                push(&mut report.duplicates, Duplicate { block: r.block, first: None, second: None })?;
                continue;
            }
            let generation = self.new_generation();
            self.reg.push_unsorted(r.block, Entry::recovered(r.fs.0, r.ty, generation, None))?;
            self.map.set(r.block, true);
            push(&mut self.roots, r)?;
            push(&mut work, (r.block, r.fs.0, r.ty, generation))?;
            report.reachable += 1;
        }
        while let Some((b, fs, ty, generation)) = work.pop() {
            if !read(b, buf) {
                push(&mut report.unreadable, b)?;
                continue;
            }
            let Ok(owned) = self.template(fs, ty).and_then(|t| self.owns_of(t, fs, b, buf)) else {
                push(&mut report.unreadable, b)?;
                continue;
            };
            for x in owned.extents() {
                for c in x.blocks() {
                    if !self.map.is_free(c) {
                        push(&mut report.duplicates, Duplicate { block: c, first: None, second: Some(b) })?;
                        continue;
                    }
                    let cg = self.new_generation();
                    self.reg.push_unsorted(c, Entry::recovered(fs, x.ty, cg, Some((b, generation))))?;
                    self.map.set(c, true);
                    report.reachable += 1;
                    if x.ty != DATA {
                        push(&mut work, (c, fs, x.ty, cg))?;
                    }
                }
            }
        }
        // One sort instead of an ordered insert per block.
        self.reg.sort();
        self.reg.count_children();
        for d in &mut report.duplicates {
            d.first = self.reg.get(d.block).and_then(|e| e.parent).map(|(p, _)| p);
        }
        Ok(report)
    }
}

fn push<T>(v: &mut Vec<T>, x: T) -> Result<(), Refusal> {
    v.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
    v.push(x);
    Ok(())
}
