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
    /// is visited at most once, so the work is bounded by the disk size.
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
        let mut work: Vec<u64> = Vec::new();
        for &r in roots {
            self.template(r.fs.0, r.ty)?;
            if r.block >= self.map.nblocks() {
                return Err(Refusal::OutOfRange(r.block));
            }
            if !self.map.is_free(r.block) {
                let first = self.reg.get(r.block).and_then(|e| e.parent).map(|(p, _)| p);
                push(&mut report.duplicates, Duplicate { block: r.block, first, second: None })?;
                continue;
            }
            let generation = self.new_generation();
            self.reg.insert(r.block, Entry::recovered(r.fs.0, r.ty, generation, None))?;
            self.map.set(r.block, true);
            push(&mut self.roots, r)?;
            push(&mut work, r.block)?;
            report.reachable += 1;
        }
        while let Some(b) = work.pop() {
            let Some(&e) = self.reg.get(b) else { continue };
            if !read(b, buf) {
                push(&mut report.unreadable, b)?;
                continue;
            }
            let Ok(owned) = self.template(e.fs, e.ty).and_then(|t| self.owns_of(t, e.fs, b, buf)) else {
                push(&mut report.unreadable, b)?;
                continue;
            };
            for x in owned.extents() {
                for c in x.blocks() {
                    if !self.map.is_free(c) {
                        let first = self.reg.get(c).and_then(|ce| ce.parent).map(|(p, _)| p);
                        push(&mut report.duplicates, Duplicate { block: c, first, second: Some(b) })?;
                        continue;
                    }
                    let generation = self.new_generation();
                    self.reg.insert(c, Entry::recovered(e.fs, x.ty, generation, Some((b, e.generation))))?;
                    self.map.set(c, true);
                    if let Some(pe) = self.reg.get_mut(b) {
                        pe.children += 1;
                    }
                    report.reachable += 1;
                    if x.ty != DATA {
                        push(&mut work, c)?;
                    }
                }
            }
        }
        Ok(report)
    }
}

fn push<T>(v: &mut Vec<T>, x: T) -> Result<(), Refusal> {
    v.try_reserve(1).map_err(|_| Refusal::NoMemory)?;
    v.push(x);
    Ok(())
}
