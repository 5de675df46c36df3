//! Extents and owned sets: what `owns` emits, in a canonical form that can
//! be compared exactly.

use alloc::vec::Vec;

/// Blocks `start..start + len`, all of type `ty` (`DATA` or a template
/// number of the owning file system).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Extent {
    /// First block.
    pub start: u64,
    /// Number of blocks (≥ 1 in an [`Owned`] set).
    pub len: u64,
    /// Type.
    pub ty: u32,
}

impl Extent {
    /// An extent.
    pub const fn new(start: u64, len: u64, ty: u32) -> Extent {
        Extent { start, len, ty }
    }

    /// One past the last block (saturating).
    pub const fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    /// The blocks, in order.
    pub fn blocks(&self) -> core::ops::Range<u64> {
        self.start..self.end()
    }
}

/// Why a list of extents is not a valid owned set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetError {
    /// Two extents share a block: the same block would be owned twice.
    Overlap(u64),
    /// An extent reaches past the disk (or wraps).
    OutOfRange(u64),
    /// An empty extent, or a type the file system does not have.
    BadType(u64),
    /// No memory.
    NoMemory,
}

/// A set of blocks with their types, in canonical form: sorted,
/// non-overlapping, with adjacent extents of one type merged. Two owned sets
/// hold the same blocks with the same types exactly when they are equal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Owned(Vec<Extent>);

impl Owned {
    /// Canonicalises `extents` for a disk of `nblocks` blocks whose file
    /// system has `types` templates (types `0..=types` are valid).
    pub fn new(mut extents: Vec<Extent>, nblocks: u64, types: u32) -> Result<Owned, SetError> {
        for e in &extents {
            if e.len == 0 || e.ty > types {
                return Err(SetError::BadType(e.start));
            }
            if e.start.checked_add(e.len).is_none_or(|end| end > nblocks) {
                return Err(SetError::OutOfRange(e.start));
            }
        }
        extents.sort_unstable();
        // Merged in place: `kept` extents at the front are the result so far.
        let mut kept: usize = 0;
        for i in 0..extents.len() {
            let e = extents[i];
            match kept.checked_sub(1).map(|l| &mut extents[l]) {
                Some(last) if e.start < last.end() => return Err(SetError::Overlap(e.start)),
                Some(last) if e.start == last.end() && e.ty == last.ty => last.len += e.len,
                _ => {
                    extents[kept] = e;
                    kept += 1;
                }
            }
        }
        extents.truncate(kept);
        Ok(Owned(extents))
    }

    /// A copy, or `NoMemory`.
    pub fn try_clone(&self) -> Result<Owned, SetError> {
        let mut v = Vec::new();
        v.try_reserve_exact(self.0.len()).map_err(|_| SetError::NoMemory)?;
        v.extend_from_slice(&self.0);
        Ok(Owned(v))
    }

    /// The canonical extents.
    pub fn extents(&self) -> &[Extent] {
        &self.0
    }

    /// Total blocks.
    pub fn blocks(&self) -> u64 {
        self.0.iter().map(|e| e.len).sum()
    }

    /// Whether nothing is owned.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The type of `block` in this set, if it is in it.
    pub fn type_of(&self, block: u64) -> Option<u32> {
        let i = self.0.partition_point(|e| e.end() <= block);
        self.0.get(i).filter(|e| e.start <= block).map(|e| e.ty)
    }

    /// This set plus `extra` (which must not overlap it), canonical.
    pub fn with(&self, extra: Extent, nblocks: u64, types: u32) -> Result<Owned, SetError> {
        let mut all = Vec::new();
        all.try_reserve_exact(self.0.len() + 1).map_err(|_| SetError::NoMemory)?;
        all.extend_from_slice(&self.0);
        all.push(extra);
        Owned::new(all, nblocks, types)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    #[test]
    fn a_set_is_sorted_merged_where_it_touches_and_refused_where_it_overlaps() {
        let e = Extent::new;
        let set = Owned::new(vec![e(10, 2, 0), e(4, 2, 0), e(6, 4, 0), e(12, 1, 1), e(13, 2, 1)], 64, 1).unwrap();
        assert_eq!(set.extents(), [e(4, 8, 0), e(12, 3, 1)], "touching extents of one type merge, of two do not");
        assert_eq!(Owned::new(vec![e(4, 4, 0), e(6, 1, 0)], 64, 1).map(|_| ()), Err(SetError::Overlap(6)));
        assert_eq!(Owned::new(vec![e(4, 0, 0)], 64, 1).map(|_| ()), Err(SetError::BadType(4)));
        assert_eq!(Owned::new(vec![e(60, 5, 0)], 64, 1).map(|_| ()), Err(SetError::OutOfRange(60)));
        assert!(Owned::new(vec![], 64, 1).unwrap().is_empty());
    }
}
