//! Ordered write-back. XN already refuses to write a block that owns a
//! block not yet durable; the file system adds its own pairs "`first`
//! reaches the disk before `then`" ([`Fs::order`]). `sync` writes in rounds:
//! every dirty block whose XN children and ordered predecessors are durable,
//! then one flush, until nothing is dirty.

use alloc::collections::BTreeSet;
use alloc::string::String;
use alloc::vec::Vec;

use oxok_xn::Refusal;

use super::{Fs, blocks_of};
use crate::FsError;
use crate::disk::Disk;

/// Most rounds one sync takes (the metadata tree is 4 levels deep; extra
/// rounds come only from ordered pairs).
const MAX_ROUNDS: usize = 64;

impl<D: Disk> Fs<D> {
    /// Records that `first` (changed already) must be durable before the
    /// next change to `then` reaches the disk. If either is tainted, or
    /// `then` already waits, through other pairs, for something that waits
    /// for `first`, syncs instead (so the pairs never form a cycle, with
    /// each other or with XN's order).
    pub(crate) fn order(&mut self, first: u64, then: u64) -> Result<(), FsError> {
        if first == then || !self.is_dirty(first) {
            return Ok(());
        }
        // A tainted block is reachable on disk only once its owner is
        // written, which knows nothing of this pair; and a pair could close
        // a cycle with XN's own order (owner after tainted child). Either
        // way, write everything now: `first` is then durable and reachable.
        if self.disk.is_tainted(first) || self.disk.is_tainted(then) || self.waits_for(first, then) {
            return self.sync();
        }
        self.deps.try_reserve(1).map_err(|_| FsError::NoMemory)?;
        self.deps.push((first, then));
        Ok(())
    }

    /// Whether `a` waits (transitively) for `b`.
    fn waits_for(&self, a: u64, b: u64) -> bool {
        let mut stack = Vec::from([a]);
        let mut seen = Vec::new();
        while let Some(x) = stack.pop() {
            if x == b {
                return true;
            }
            if seen.contains(&x) {
                continue;
            }
            seen.push(x);
            stack.extend(self.deps.iter().filter(|&&(_, t)| t == x).map(|&(f, _)| f));
        }
        false
    }

    fn is_dirty(&self, block: u64) -> bool {
        let mut d = Vec::new();
        self.disk.dirty(&mut d);
        d.contains(&block)
    }

    /// Makes everything durable, in an order that never lets the disk
    /// hold a pointer to an uninitialised block or a name of a free inode.
    pub fn sync(&mut self) -> Result<(), FsError> {
        self.write_back(None)
    }

    /// Makes `path`'s data, size and name durable: its blocks, the blocks
    /// holding its inode and its name, the names and inodes of the
    /// directories above it, and — as XN's refusals and the ordered pairs
    /// demand — whatever those must wait for. Other changes may stay in
    /// core.
    pub fn fsync(&mut self, path: &str) -> Result<(), FsError> {
        // The root's inode block owns the blocks of the root directory (a
        // new one may hold the name).
        let mut want = BTreeSet::from([self.sb, self.inode_loc(crate::layout::ROOT_INO)?.block]);
        let parts = super::split(path)?;
        for n in 1..=parts.len() {
            let prefix = parts.get(..n).unwrap_or(&[]).iter().fold(String::new(), |p, c| p + "/" + c);
            let f = self.resolve(&prefix)?.ok_or(FsError::NotFound)?;
            want.insert(f.at.block);
            want.insert(f.inode.block);
            if n == parts.len() && !f.rec.is_dir() {
                want.extend(blocks_of(&f.rec));
            }
        }
        self.write_back(Some(want))
    }

    /// Writes back every dirty block (`None`) or those of `want` and what
    /// they wait for, in rounds separated by flushes.
    fn write_back(&mut self, mut want: Option<BTreeSet<u64>>) -> Result<(), FsError> {
        let mut dirty = Vec::new();
        for _ in 0..MAX_ROUNDS {
            dirty.clear();
            self.disk.dirty(&mut dirty);
            let mut grew = false;
            if let Some(w) = want.as_mut() {
                // Ordered predecessors of wanted blocks are wanted too.
                loop {
                    let before = w.len();
                    let pred: Vec<u64> = self.deps.iter().filter(|&&(_, t)| w.contains(&t)).map(|&(f, _)| f).collect();
                    w.extend(pred.into_iter().filter(|f| dirty.contains(f)));
                    if w.len() == before {
                        break;
                    }
                    grew = true;
                }
            }
            let todo: Vec<u64> =
                dirty.iter().copied().filter(|b| want.as_ref().is_none_or(|w| w.contains(b))).collect();
            if todo.is_empty() {
                if want.is_none() {
                    self.deps.clear();
                    self.vacated.clear();
                }
                return Ok(());
            }
            let mut written = Vec::new();
            let ready: Vec<u64> = todo
                .iter()
                .copied()
                .filter(|&b| !self.deps.iter().any(|&(f, t)| t == b && dirty.contains(&f)))
                .collect();
            // In batches; a block refused for a pointer to a tainted one
            // waits for a later round, the rest go on.
            let mut rest = &ready[..];
            while !rest.is_empty() {
                let (n, r) = self.disk.write_all(rest);
                written.extend_from_slice(&rest[..n.min(rest.len())]);
                match r {
                    Ok(()) => break,
                    Err(Refusal::TaintedPointer { child, .. }) => {
                        if let Some(w) = want.as_mut() {
                            grew |= w.insert(child);
                        }
                        rest = rest.get(n + 1..).unwrap_or(&[]);
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            self.disk.flush()?;
            if written.is_empty() && !grew {
                return Err(FsError::Stuck);
            }
            dirty.clear();
            self.disk.dirty(&mut dirty);
            self.deps.retain(|&(f, _)| dirty.contains(&f));
            self.vacated.retain(|(b, _)| dirty.contains(b));
        }
        Err(FsError::Stuck)
    }
}
