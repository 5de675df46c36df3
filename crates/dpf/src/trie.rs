//! Every installed filter merged into one trie (DPF's decision tree).
//!
//! A filter is a path from the root: one edge per atom, in the filter's
//! canonical order, ending at a node that *accepts* it. A node's outgoing
//! edges are grouped by what they test: all edges that test the same field
//! (offset, size, mask) are one **hash node** keyed by the field's value, so
//! a thousand listeners on different UDP ports cost one field read and one
//! hash lookup at that node, not a thousand comparisons; a shift is a group
//! with a single child. Demultiplexing walks the trie depth first, reading
//! each group's field once and following at most one edge per group.

use alloc::vec::Vec;

use oxok_abi::filter::MAX_ATOMS;

use crate::filter::{Atom, Field, Filter};
use crate::hash::{NoMemory, Table};

const NONE: u32 = u32::MAX;

#[derive(Debug)]
enum Group {
    Eq { field: Field, table: Table },
    Shift { field: Field, scale: u8, child: u32 },
}

impl Group {
    fn tests(&self, atom: &Atom) -> bool {
        match (self, atom) {
            (Group::Eq { field, .. }, Atom::Eq { field: f, .. }) => field == f,
            (Group::Shift { field, scale, .. }, Atom::Shift { field: f, scale: s }) => field == f && scale == s,
            _ => false,
        }
    }

    fn is_empty(&self) -> bool {
        matches!(self, Group::Eq { table, .. } if table.len() == 0)
    }
}

#[derive(Debug, Default)]
struct Node {
    /// The filter (its table slot) whose path ends here.
    accept: Option<u32>,
    groups: Vec<Group>,
    next_free: u32,
}

/// The merged trie. Stores table slots, knows nothing of owners.
#[derive(Debug)]
pub(crate) struct Trie {
    nodes: Vec<Node>,
    free: u32,
    mult: u64,
}

/// A filter's path through the trie: `(node, group index)` per edge walked.
struct Path {
    edges: [(u32, usize); MAX_ATOMS],
    len: usize,
    /// The last node reached.
    reached: u32,
    /// Whether every atom had an edge.
    complete: bool,
}

impl Trie {
    pub(crate) const fn new(seed: u64) -> Trie {
        // splitmix64's finaliser: any seed gives a well-mixed odd multiplier.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Trie { nodes: Vec::new(), free: NONE, mult: (z ^ (z >> 31)) | 1 }
    }

    /// Nodes in use (the root included once anything was inserted).
    pub(crate) fn node_count(&self) -> usize {
        let mut free = 0;
        let mut f = self.free;
        while f != NONE {
            free += 1;
            f = self.nodes[f as usize].next_free;
        }
        self.nodes.len() - free
    }

    fn alloc(&mut self) -> Result<u32, NoMemory> {
        #[cfg(test)]
        inject::take()?;
        if self.free != NONE {
            let n = self.free;
            self.free = self.nodes[n as usize].next_free;
            self.nodes[n as usize].next_free = NONE;
            return Ok(n);
        }
        if self.nodes.len() >= NONE as usize - 1 {
            return Err(NoMemory);
        }
        self.nodes.try_reserve(1).map_err(|_| NoMemory)?;
        self.nodes.push(Node { accept: None, groups: Vec::new(), next_free: NONE });
        Ok(self.nodes.len() as u32 - 1)
    }

    fn release(&mut self, n: u32) {
        let node = &mut self.nodes[n as usize];
        node.accept = None;
        node.groups = Vec::new();
        node.next_free = self.free;
        self.free = n;
    }

    /// Adds `f`'s path ending in `slot`. The caller guarantees no installed
    /// filter has the same path (the overlap check refuses duplicates). On
    /// failure the trie is as before.
    pub(crate) fn insert(&mut self, f: &Filter, slot: u32) -> Result<(), NoMemory> {
        if self.nodes.is_empty() {
            self.alloc()?;
        }
        let mut cur = 0u32;
        for a in f.atoms() {
            match self.step(cur, a) {
                Ok(next) => cur = next,
                Err(e) => {
                    self.prune(f);
                    return Err(e);
                }
            }
        }
        debug_assert!(self.nodes[cur as usize].accept.is_none());
        self.nodes[cur as usize].accept = Some(slot);
        Ok(())
    }

    /// Follows (creating if needed) the edge for `a` out of node `cur`.
    fn step(&mut self, cur: u32, a: &Atom) -> Result<u32, NoMemory> {
        let gi = match self.nodes[cur as usize].groups.iter().position(|g| g.tests(a)) {
            Some(gi) => gi,
            None => {
                let group = match *a {
                    Atom::Eq { field, .. } => Group::Eq { field, table: Table::default() },
                    Atom::Shift { field, scale } => Group::Shift { field, scale, child: self.alloc()? },
                };
                #[cfg(test)]
                let injected = inject::take().is_err();
                #[cfg(not(test))]
                let injected = false;
                let groups = &mut self.nodes[cur as usize].groups;
                if injected || groups.try_reserve(1).is_err() {
                    if let Group::Shift { child, .. } = group {
                        self.release(child);
                    }
                    return Err(NoMemory);
                }
                groups.push(group);
                groups.len() - 1
            }
        };
        let value = match (&self.nodes[cur as usize].groups[gi], *a) {
            (Group::Shift { child, .. }, _) => return Ok(*child),
            (Group::Eq { table, .. }, Atom::Eq { value, .. }) => match table.get(value, self.mult) {
                Some(child) => return Ok(child),
                None => value,
            },
            (Group::Eq { .. }, Atom::Shift { .. }) => return Err(NoMemory), // `tests` rules this out
        };
        let child = self.alloc()?;
        let mult = self.mult;
        if let Group::Eq { table, .. } = &mut self.nodes[cur as usize].groups[gi]
            && (inject_fails() || table.insert(value, child, mult).is_err())
        {
            self.release(child);
            return Err(NoMemory);
        }
        Ok(child)
    }

    fn path(&self, f: &Filter) -> Path {
        let mut p = Path { edges: [(0, 0); MAX_ATOMS], len: 0, reached: 0, complete: false };
        if self.nodes.is_empty() {
            return p;
        }
        for a in f.atoms() {
            let node = &self.nodes[p.reached as usize];
            let Some(gi) = node.groups.iter().position(|g| g.tests(a)) else { return p };
            let next = match (&node.groups[gi], a) {
                (Group::Shift { child, .. }, _) => *child,
                (Group::Eq { table, .. }, Atom::Eq { value, .. }) => match table.get(*value, self.mult) {
                    Some(c) => c,
                    None => return p,
                },
                _ => return p,
            };
            p.edges[p.len] = (p.reached, gi);
            p.len += 1;
            p.reached = next;
        }
        p.complete = true;
        p
    }

    /// Removes `f`'s path, which must end in `slot`; false (and nothing
    /// changed) if it does not.
    pub(crate) fn remove(&mut self, f: &Filter, slot: u32) -> bool {
        let p = self.path(f);
        if !p.complete || self.nodes[p.reached as usize].accept != Some(slot) {
            return false;
        }
        self.nodes[p.reached as usize].accept = None;
        self.prune(f);
        true
    }

    /// Frees the nodes along `f`'s path that no longer lead anywhere, from
    /// the bottom up, and drops empty groups where the path stops.
    fn prune(&mut self, f: &Filter) {
        if self.nodes.is_empty() {
            return;
        }
        let p = self.path(f);
        self.nodes[p.reached as usize].groups.retain(|g| !g.is_empty());
        let mut node = p.reached;
        for i in (0..p.len).rev() {
            let n = &self.nodes[node as usize];
            if n.accept.is_some() || !n.groups.is_empty() {
                break;
            }
            let (parent, gi) = p.edges[i];
            let mult = self.mult;
            let groups = &mut self.nodes[parent as usize].groups;
            let drop_group = match (&mut groups[gi], f.atoms()[i]) {
                (Group::Eq { table, .. }, Atom::Eq { value, .. }) => {
                    table.remove(value, mult);
                    table.len() == 0
                }
                _ => true,
            };
            if drop_group {
                groups.swap_remove(gi);
            }
            self.release(node);
            node = parent;
        }
    }

    /// The best accepting slot for `packet`: `rank(slot)` gives a slot's
    /// depth in its refinement chain (deeper wins) and whether it has no
    /// refinements (then nothing better can match and the walk stops).
    /// Also returns the number of nodes visited.
    pub(crate) fn demux(&self, packet: &[u8], rank: &dyn Fn(u32) -> (u32, bool)) -> (Option<u32>, usize) {
        let mut w = Walk { packet, rank, best: None, visits: 0 };
        if !self.nodes.is_empty() {
            self.visit(0, 0, &mut w);
        }
        (w.best.map(|b| b.0), w.visits)
    }

    /// Returns true to stop the walk.
    fn visit(&self, n: u32, base: usize, w: &mut Walk<'_>) -> bool {
        w.visits += 1;
        let node = &self.nodes[n as usize];
        if let Some(slot) = node.accept {
            let (depth, leaf) = (w.rank)(slot);
            if w.best.is_none_or(|b| depth > b.1) {
                w.best = Some((slot, depth));
            }
            if leaf {
                return true;
            }
        }
        for g in &node.groups {
            let stop = match g {
                Group::Eq { field, table } => match field.read(w.packet, base).and_then(|v| table.get(v, self.mult)) {
                    Some(child) => self.visit(child, base, w),
                    None => false,
                },
                Group::Shift { field, scale, child } => match field.read(w.packet, base) {
                    Some(v) => self.visit(*child, base.saturating_add((v as usize).saturating_mul(*scale as usize)), w),
                    None => false,
                },
            };
            if stop {
                return true;
            }
        }
        false
    }
}

struct Walk<'a> {
    packet: &'a [u8],
    rank: &'a dyn Fn(u32) -> (u32, bool),
    best: Option<(u32, u32)>,
    visits: usize,
}

/// Whether the injected allocation failure hits here (tests only).
#[cfg(test)]
fn inject_fails() -> bool {
    inject::take().is_err()
}

#[cfg(not(test))]
#[inline(always)]
fn inject_fails() -> bool {
    false
}

/// Allocation failures on demand, for the rollback tests: every allocation
/// point in `insert` spends one unit of the budget, and fails when none is
/// left.
#[cfg(test)]
pub(crate) mod inject {
    use core::sync::atomic::{AtomicUsize, Ordering};

    use crate::hash::NoMemory;

    pub(crate) static BUDGET: AtomicUsize = AtomicUsize::new(usize::MAX);

    pub(crate) fn take() -> Result<(), NoMemory> {
        BUDGET.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| b.checked_sub(1)).map(|_| ()).map_err(|_| NoMemory)
    }
}

#[cfg(test)]
mod tests {
    use core::sync::atomic::Ordering;

    use super::inject::BUDGET;
    use crate::{Dpf, InstallError, build};

    /// An insert that runs out of memory at any of its allocation points
    /// leaves the table and the trie exactly as they were.
    #[test]
    fn failed_inserts_roll_back() {
        let filters = [
            build::udp(1).build().unwrap(),
            build::udp(2).build().unwrap(),
            build::tcp_listen(2).build().unwrap(),
            build::arp().build().unwrap(),
            build::Builder::new().eq16(12, 0x88b5).shift(1, 1, 0x0f, 2).eq8(3, 3).build().unwrap(),
            build::Builder::new().eq16(12, 0x88b5).shift(1, 1, 0x0f, 2).eq8(3, 4).build().unwrap(),
        ];
        let mut failures = 0;
        for k in 0..filters.len() {
            for budget in 0..12 {
                let mut dpf: Dpf<usize> = Dpf::new(16, 3);
                for (i, f) in filters[..k].iter().enumerate() {
                    dpf.insert(*f, i, None).unwrap();
                }
                let nodes = dpf.node_count();
                BUDGET.store(budget, Ordering::SeqCst);
                let r = dpf.insert(filters[k], k, None);
                BUDGET.store(usize::MAX, Ordering::SeqCst);
                match r {
                    Err(e) => {
                        assert_eq!(e, InstallError::NoMemory);
                        failures += 1;
                        // (the root, once made, stays)
                        let now = dpf.node_count();
                        assert!(now == nodes || (nodes == 0 && now == 1), "filter {k}, budget {budget}: {now}");
                        assert_eq!(dpf.len(), k);
                        dpf.insert(filters[k], k, None).unwrap();
                    }
                    Ok(_) => assert!(budget > 0 || k > 0),
                }
                let ids: alloc::vec::Vec<_> = dpf.iter().map(|i| i.id).collect();
                for id in ids {
                    dpf.remove(id).unwrap();
                }
                assert!(dpf.node_count() <= 1);
            }
        }
        assert!(failures > 20, "{failures}");
    }
}
