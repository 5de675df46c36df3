//! The filter table: installed filters with their owners and refinement
//! links, the overlap rule enforced on insert, and demultiplexing.

use alloc::vec::Vec;
use core::fmt;

use oxok_abi::filter::{MAX_REFINE_DEPTH, reject};

use crate::filter::Filter;
use crate::shape::Shape;
use crate::trie::Trie;

/// The name of an installed filter: a table index and the generation of
/// that index, so the name of a removed filter never matches its successor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FilterId {
    index: u32,
    generation: u32,
}

impl FilterId {
    /// The table index.
    pub fn index(self) -> u32 {
        self.index
    }

    /// The generation of the index.
    pub fn generation(self) -> u32 {
        self.generation
    }

    /// One word: generation in the high half, index in the low half.
    pub fn to_u64(self) -> u64 {
        (self.generation as u64) << 32 | self.index as u64
    }

    /// The inverse of [`to_u64`](Self::to_u64) (any word decodes; a stale or
    /// invented one simply names no installed filter).
    pub fn from_u64(v: u64) -> FilterId {
        FilterId { index: v as u32, generation: (v >> 32) as u32 }
    }
}

/// Why [`Dpf::insert`] refused a filter; the table is unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InstallError {
    /// The filter could accept a packet that `with` accepts, and `with` is
    /// not the filter it refines (nor one that one refines).
    Overlap {
        /// An installed filter it may overlap.
        with: FilterId,
    },
    /// The filter named as refined is not installed.
    NoSuchFilter,
    /// The filter is not provably a strict subset of the one it refines.
    NotRefinement,
    /// The refinement chain would exceed `MAX_REFINE_DEPTH`.
    TooDeep,
    /// The table holds its capacity of filters.
    Full,
    /// No memory for the trie nodes.
    NoMemory,
}

impl InstallError {
    /// The stable code ([`oxok_abi::filter::reject`]).
    pub fn code(self) -> u64 {
        match self {
            InstallError::Overlap { .. } => reject::OVERLAP,
            InstallError::NoSuchFilter => reject::NO_SUCH_FILTER,
            InstallError::NotRefinement => reject::NOT_REFINEMENT,
            InstallError::TooDeep => reject::TOO_DEEP,
            InstallError::Full => reject::FULL,
            InstallError::NoMemory => reject::NO_MEMORY,
        }
    }
}

impl fmt::Display for InstallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filter refused: {self:?}")
    }
}

#[derive(Debug)]
struct Entry<O> {
    filter: Filter,
    owner: O,
    /// The index of the filter this one refines.
    parent: Option<u32>,
    /// 0 for a filter that refines nothing; parent's depth + 1 otherwise.
    depth: u32,
    /// Installed filters that name this one as the one they refine.
    children: u32,
}

#[derive(Debug)]
struct Slot<O> {
    generation: u32,
    entry: Option<Entry<O>>,
}

/// An installed filter as the table shows it (see [`Dpf::iter`]).
#[derive(Clone, Copy, Debug)]
pub struct Installed<'a, O> {
    /// Its name.
    pub id: FilterId,
    /// Who receives what it accepts.
    pub owner: &'a O,
    /// The filter.
    pub filter: &'a Filter,
    /// The filter it refines.
    pub refines: Option<FilterId>,
}

/// The installed filters of one network interface, merged into one trie.
/// `O` is whatever the kernel records as the owner (an environment id).
#[derive(Debug)]
pub struct Dpf<O> {
    slots: Vec<Slot<O>>,
    free: Vec<u32>,
    len: usize,
    capacity: usize,
    trie: Trie,
}

impl<O> Dpf<O> {
    /// An empty table holding at most `capacity` filters. `seed` keys the
    /// hash nodes (pick it unpredictably, e.g. from the TSC at boot).
    /// Allocates nothing until the first insert (`const`, so it can
    /// initialise a `static`).
    pub const fn new(capacity: usize, seed: u64) -> Dpf<O> {
        let capacity = if capacity > u32::MAX as usize - 1 { u32::MAX as usize - 1 } else { capacity };
        Dpf { slots: Vec::new(), free: Vec::new(), len: 0, capacity, trie: Trie::new(seed) }
    }

    /// Installed filters.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no filter is installed.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Trie nodes in use (for tests and statistics).
    pub fn node_count(&self) -> usize {
        self.trie.node_count()
    }

    fn entry(&self, id: FilterId) -> Option<&Entry<O>> {
        let slot = self.slots.get(id.index as usize)?;
        if slot.generation != id.generation {
            return None;
        }
        slot.entry.as_ref()
    }

    fn id_of(&self, index: u32) -> FilterId {
        FilterId { index, generation: self.slots[index as usize].generation }
    }

    fn used(&self) -> impl Iterator<Item = (u32, &Entry<O>)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| Some((i as u32, s.entry.as_ref()?)))
    }

    /// The installed filter `id`, or `None`.
    pub fn get(&self, id: FilterId) -> Option<Installed<'_, O>> {
        let e = self.entry(id)?;
        Some(Installed { id, owner: &e.owner, filter: &e.filter, refines: e.parent.map(|p| self.id_of(p)) })
    }

    /// Every installed filter, in table order (the exposed filter table).
    pub fn iter(&self) -> impl Iterator<Item = Installed<'_, O>> {
        self.used().map(|(i, e)| Installed {
            id: self.id_of(i),
            owner: &e.owner,
            filter: &e.filter,
            refines: e.parent.map(|p| self.id_of(p)),
        })
    }

    /// Installs `filter` for `owner`.
    ///
    /// Without `refines`, the filter must be disjoint from every installed
    /// filter: refused with [`InstallError::Overlap`] unless the overlap
    /// check proves no packet can satisfy both. With `refines: Some(r)` (the
    /// kernel has checked the caller's capability for `r`), the filter must
    /// be provably a strict subset of `r`, and disjoint from every installed
    /// filter except `r` and the filters `r` refines, transitively. Work is
    /// bounded by the table's size times `MAX_ATOMS`.
    pub fn insert(&mut self, filter: Filter, owner: O, refines: Option<FilterId>) -> Result<FilterId, InstallError> {
        let shape = Shape::of(&filter).ok_or(InstallError::NotRefinement)?;
        let mut ancestors = [u32::MAX; MAX_REFINE_DEPTH];
        let mut depth = 0;
        if let Some(r) = refines {
            let parent = self.entry(r).ok_or(InstallError::NoSuchFilter)?;
            let wider = Shape::of(&parent.filter).ok_or(InstallError::NotRefinement)?;
            if !shape.within(&wider) || shape.same(&wider) {
                return Err(InstallError::NotRefinement);
            }
            depth = parent.depth as usize + 1;
            if depth >= MAX_REFINE_DEPTH {
                return Err(InstallError::TooDeep);
            }
            let mut a = Some(r.index);
            for slot in ancestors.iter_mut() {
                let Some(i) = a else { break };
                *slot = i;
                a = self.slots[i as usize].entry.as_ref().and_then(|e| e.parent);
            }
        }
        for (i, e) in self.used() {
            if ancestors.contains(&i) {
                continue;
            }
            let disjoint = Shape::of(&e.filter).is_none_or(|other| shape.disjoint(&other));
            if !disjoint {
                return Err(InstallError::Overlap { with: self.id_of(i) });
            }
        }
        if self.len >= self.capacity {
            return Err(InstallError::Full);
        }
        let index = match self.free.last() {
            Some(&i) => i,
            None => {
                self.slots.try_reserve(1).map_err(|_| InstallError::NoMemory)?;
                self.free.try_reserve(self.slots.len() + 1).map_err(|_| InstallError::NoMemory)?;
                self.slots.push(Slot { generation: 0, entry: None });
                self.free.push(self.slots.len() as u32 - 1);
                self.slots.len() as u32 - 1
            }
        };
        self.trie.insert(&filter, index).map_err(|_| InstallError::NoMemory)?;
        self.free.pop();
        let parent = refines.map(|r| r.index);
        if let Some(p) = parent.and_then(|p| self.slots[p as usize].entry.as_mut()) {
            p.children += 1;
        }
        self.slots[index as usize].entry = Some(Entry { filter, owner, parent, depth: depth as u32, children: 0 });
        self.len += 1;
        Ok(self.id_of(index))
    }

    /// Removes filter `id`, returning its owner. Filters that refined it now
    /// refine the filter it refined (they are still subsets of that one, and
    /// still disjoint from everything else). `None` if `id` is not installed.
    pub fn remove(&mut self, id: FilterId) -> Option<O> {
        self.entry(id)?;
        let index = id.index;
        let slot = &mut self.slots[index as usize];
        let e = slot.entry.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        let removed = self.trie.remove(&e.filter, index);
        debug_assert!(removed);
        // `free` has room for every slot (reserved when the slot was made).
        self.free.push(index);
        self.len -= 1;
        if let Some(p) = e.parent.and_then(|p| self.slots[p as usize].entry.as_mut()) {
            p.children = p.children - 1 + e.children;
        }
        if e.children > 0 {
            for s in self.slots.iter_mut() {
                if let Some(c) = s.entry.as_mut().filter(|c| c.parent == Some(index)) {
                    c.parent = e.parent;
                }
            }
            // Everything below the removed filter moves up one level.
            for i in 0..self.slots.len() {
                let mut d = 0;
                let mut a = self.slots[i].entry.as_ref().and_then(|c| c.parent);
                while let Some(p) = a {
                    d += 1;
                    a = self.slots[p as usize].entry.as_ref().and_then(|c| c.parent);
                }
                if let Some(c) = self.slots[i].entry.as_mut() {
                    c.depth = d;
                }
            }
        }
        Some(e.owner)
    }

    /// Removes every filter whose owner satisfies `pred` (an environment
    /// ending); returns how many.
    pub fn remove_where(&mut self, mut pred: impl FnMut(&O) -> bool) -> usize {
        let mut n = 0;
        for i in 0..self.slots.len() {
            let hit = self.slots[i].entry.as_ref().is_some_and(|e| pred(&e.owner));
            if hit && self.remove(self.id_of(i as u32)).is_some() {
                n += 1;
            }
        }
        n
    }

    /// The filter that takes `packet`: among installed filters that accept
    /// it (at most one refinement chain, by the overlap rule), the most
    /// specific. Never panics; a field past the end of the packet does not
    /// match.
    pub fn demux(&self, packet: &[u8]) -> Option<(FilterId, &O)> {
        self.demux_counted(packet).0
    }

    /// [`demux`](Self::demux), also returning the number of trie nodes
    /// visited (the cost, for tests and statistics).
    pub fn demux_counted(&self, packet: &[u8]) -> (Option<(FilterId, &O)>, usize) {
        let rank = |i: u32| match self.slots.get(i as usize).and_then(|s| s.entry.as_ref()) {
            Some(e) => (e.depth, e.children == 0),
            None => (0, false),
        };
        let (best, visits) = self.trie.demux(packet, &rank);
        let found = best.and_then(|i| Some((self.id_of(i), &self.slots[i as usize].entry.as_ref()?.owner)));
        (found, visits)
    }
}
