//! Property test: random allocate / write / free / flush / reap sequences on
//! the toy file system (directories whose `owns` lists their children),
//! with crashes at random moments, keep XN's invariants:
//!
//! * in core: the free map is the complement of the registry; the registry
//!   is the blocks reachable from the root plus the will-free list; nothing
//!   is owned twice;
//! * on every sampled crash state (the durable disk plus any subset of the
//!   writes completed or in flight since the last flush, in any order):
//!   recovery finds nothing owned twice and nothing unreadable, every
//!   pointer leads to the content written for it (no persisted pointer to
//!   a tainted block, no pointer to a reused block), and no block reachable
//!   there is free in the running XN;
//! * an exposed copy of the registry rewritten only at the rows
//!   [`Xn::take_changed`] names after each step shows the registry, each
//!   block in one row.

use std::collections::{HashMap, HashSet};

use oxok_abi::xn::{BLOCK_SIZE, DATA};
use oxok_testrng::Rng;
use oxok_xn::{BlockView, Extent, FlushReceipt, Frames, FsId, Refusal, Root, WriteReceipt, Xn};

mod common;
use common::*;

const N: u64 = 40;

struct Model {
    xn: Xn,
    mem: Mem,
    /// Durable disk contents.
    disk: HashMap<u64, Block>,
    /// Writes completed, not known durable: (model epoch, block, content).
    completed: Vec<(u64, u64, Block)>,
    in_flight: Vec<(WriteReceipt, Block)>,
    flushes: Vec<(FlushReceipt, u64)>,
    epoch: u64,
    tag: u32,
    rng: Rng,
    crashes: u64,
    reaped: usize,
    refusals: HashMap<u64, u64>,
    /// The exposed rows as the kernel keeps them: rewritten only where
    /// `take_changed` says (`None`: a free row).
    rows: Vec<Option<(u64, BlockView)>>,
    /// The exposed free map, rewritten only where `take_changed_map` says.
    map: Vec<u64>,
}

impl Model {
    fn new(seed: u64) -> Model {
        let (xn, mem, _) = toy(N);
        let mut m = Model {
            xn,
            mem,
            disk: HashMap::new(),
            completed: Vec::new(),
            in_flight: Vec::new(),
            flushes: Vec::new(),
            epoch: 0,
            tag: 100,
            rng: Rng::new(seed),
            crashes: 0,
            reaped: 0,
            refusals: HashMap::new(),
            rows: Vec::new(),
            map: Vec::new(),
        };
        // The root reaches the disk first.
        let t = m.xn.write_begin(&m.mem, 1).unwrap();
        m.in_flight.push((t, cached(&m.xn, &m.mem, 1)));
        m.complete(0, false);
        m.flush_begin();
        m.flush_done(0);
        m
    }

    /// The in-core tree: (block, type, parent) for every reachable block;
    /// panics if a block is owned twice.
    fn tree(&self) -> Vec<(u64, u32, Option<u64>)> {
        let mut out = vec![(1, DIR, None)];
        let mut seen = HashSet::from([1]);
        let mut i = 0;
        while let Some(&(b, ty, _)) = out.get(i) {
            i += 1;
            if ty == DATA {
                continue;
            }
            for x in self.xn.owns(&self.mem, b).unwrap().extents() {
                for c in x.blocks() {
                    assert!(seen.insert(c), "block {c} owned twice in core");
                    out.push((c, x.ty, Some(b)));
                }
            }
        }
        out
    }

    fn check_core(&self) {
        let tree = self.tree();
        let live: HashSet<u64> = tree.iter().map(|t| t.0).collect();
        let will: HashSet<u64> = self.xn.will_free().iter().copied().collect();
        assert_eq!(will.len(), self.xn.will_free().len());
        for b in 0..N {
            let v = self.xn.block(b);
            assert_eq!(v.is_some(), !self.xn.free_map().is_free(b), "free map vs registry at {b}");
            assert_eq!(v.is_some(), live.contains(&b) || will.contains(&b), "registry vs tree at {b}");
            if let Some(v) = v {
                assert_eq!(v.will_free, will.contains(&b));
                assert!(!(live.contains(&b) && will.contains(&b)));
            }
        }
        for (b, ty, parent) in tree {
            let v = self.xn.block(b).unwrap();
            assert_eq!((v.ty, v.parent), (ty, parent));
        }
    }

    /// Brings the exposed copy up to date from the changed rows only, and
    /// checks it against the whole registry: every block in exactly one
    /// row (the registry here never outgrows the table), each row as its
    /// block's view.
    fn check_rows(&mut self) {
        let len = self.xn.rows();
        for i in self.xn.take_changed().positions(len) {
            let row = self.xn.row(i);
            match self.rows.get_mut(i) {
                Some(r) => *r = row,
                None => {
                    self.rows.resize(i, None);
                    self.rows.push(row);
                }
            }
        }
        assert!(self.rows.len() <= len, "rows past those handed out");
        let mut shown: Vec<(u64, BlockView)> = self.rows.iter().flatten().cloned().collect();
        shown.sort_by_key(|r| r.0);
        let all: Vec<(u64, BlockView)> = self.xn.blocks().collect();
        assert_eq!(shown, all, "rows rewritten where changed vs the registry");
        // The free map's words likewise, and the counts kept as XN goes
        // against counting.
        let words = self.xn.free_map().words().to_vec();
        self.map.resize(words.len(), 0);
        for i in self.xn.take_changed_map().positions(words.len()) {
            self.map[i] = words[i];
        }
        assert_eq!(self.map, words, "free map rewritten where changed");
        let free = (0..N).filter(|&b| self.xn.free_map().is_free(b)).count() as u64;
        assert_eq!(self.xn.free_map().free_count(), free, "free count");
        let mut per_fs = [0u64; 4];
        let (registered, cached) = self.xn.counts(&mut per_fs);
        assert_eq!(registered, all.len() as u64);
        assert_eq!(cached, all.iter().filter(|(_, v)| v.frame.is_some()).count() as u64, "cached count");
        for (fs, n) in per_fs.iter().enumerate() {
            assert_eq!(*n, all.iter().filter(|(_, v)| v.fs.0 as usize == fs).count() as u64, "usage of {fs}");
        }
    }

    fn free_slot(&self, d: u64) -> Option<usize> {
        let c = cached(&self.xn, &self.mem, d);
        (0..ENTRIES).find(|&i| entry(&c, i).1 == 0)
    }

    fn in_flight(&self, b: u64) -> bool {
        self.in_flight.iter().any(|(t, _)| t.block == b)
    }

    fn refusal(&mut self, r: Refusal) {
        *self.refusals.entry(r.code()).or_default() += 1;
    }

    fn alloc(&mut self) {
        let dirs: Vec<u64> = self.tree().iter().filter(|t| t.1 == DIR).map(|t| t.0).collect();
        let d = *self.rng.pick(&dirs);
        let Some(slot) = self.free_slot(d) else { return };
        let free: Vec<u64> = (2..N).filter(|&b| self.xn.free_map().is_free(b)).collect();
        if free.is_empty() {
            return;
        }
        let b = *self.rng.pick(&free);
        let ty = if self.rng.chance(3) { DIR } else { DATA };
        self.tag += 1;
        let tag = self.tag;
        let old = cached(&self.xn, &self.mem, d);
        if self.rng.chance(8) {
            // Hostile: a second pointer slipped in beside the declared one.
            if let (Some(&other), Some(s2)) =
                (free.iter().find(|&&o| o != b), (0..ENTRIES).rev().find(|&i| entry(&old, i).1 == 0 && i != slot))
            {
                let greedy = with_entry(with_entry(old, slot, b, 1, ty, tag), s2, other, 1, DATA, tag);
                let r = self.xn.allocate(&mut self.mem, &[OWNER], d, &greedy, Extent::new(b, 1, ty));
                let want = if self.in_flight(d) { Refusal::InFlight(d) } else { Refusal::OwnsMismatch(d) };
                assert_eq!(r, Err(want));
                self.refusal(want);
                return;
            }
        }
        let new = with_entry(old, slot, b, 1, ty, tag);
        let r = self.xn.allocate(&mut self.mem, &[OWNER], d, &new, Extent::new(b, 1, ty));
        if self.in_flight(d) {
            assert_eq!(r, Err(Refusal::InFlight(d)));
            self.refusal(Refusal::InFlight(d));
            return;
        }
        r.unwrap();
        let f = self.mem.frame();
        self.xn.insert(b, f).unwrap();
        if ty == DIR {
            self.xn.modify(&mut self.mem, &[OWNER], b, &dir(OWNER, u64::from(tag))).unwrap();
        } else {
            self.mem.write(f).unwrap()[8..16].copy_from_slice(&u64::from(tag).to_le_bytes());
            self.xn.mark_dirty(b);
        }
    }

    fn free(&mut self) {
        let dirs: Vec<u64> = self.tree().iter().filter(|t| t.1 == DIR).map(|t| t.0).collect();
        let d = *self.rng.pick(&dirs);
        let old = cached(&self.xn, &self.mem, d);
        let used: Vec<usize> = (0..ENTRIES).filter(|&i| entry(&old, i).1 != 0).collect();
        if used.is_empty() {
            return;
        }
        let slot = *self.rng.pick(&used);
        let (c, _, ty, _) = entry(&old, slot);
        let new = with_entry(old, slot, 0, 0, 0, 0);
        let want = if self.in_flight(d) {
            Err(Refusal::InFlight(d))
        } else if self.in_flight(c) {
            Err(Refusal::InFlight(c))
        } else if ty == DIR && self.xn.owns(&self.mem, c).unwrap().blocks() > 0 {
            Err(Refusal::NotEmpty(c))
        } else {
            Ok(())
        };
        let r = self.xn.free(&mut self.mem, &[OWNER], d, &new, Extent::new(c, 1, ty), &mut |_, _| {});
        assert_eq!(r, want);
        if let Err(e) = r {
            self.refusal(e);
        }
    }

    fn write(&mut self) {
        let live: Vec<u64> = self.tree().iter().map(|t| t.0).collect();
        let b = *self.rng.pick(&live);
        let tainted_child = if self.xn.block(b).unwrap().ty == DIR {
            let owned = self.xn.owns(&self.mem, b).unwrap();
            owned.extents().iter().flat_map(|x| x.blocks()).find(|&c| self.xn.is_tainted(c))
        } else {
            None
        };
        let r = self.xn.write_begin(&self.mem, b);
        match (self.in_flight(b), tainted_child) {
            (true, _) => assert_eq!(r, Err(Refusal::InFlight(b))),
            (false, Some(child)) => assert_eq!(r, Err(Refusal::TaintedPointer { block: b, child })),
            (false, None) => {
                let t = r.unwrap();
                self.in_flight.push((t, cached(&self.xn, &self.mem, b)));
                return;
            }
        }
        self.refusal(r.unwrap_err());
    }

    fn complete(&mut self, i: usize, fail: bool) {
        let (t, content) = self.in_flight.swap_remove(i);
        if fail {
            self.xn.write_failed(t);
            // A failed write may or may not have reached the disk.
            if self.rng.chance(2) {
                return;
            }
        } else {
            self.xn.write_done(t);
        }
        self.completed.push((self.epoch, t.block, content));
    }

    fn flush_begin(&mut self) {
        let t = self.xn.flush_begin();
        self.flushes.push((t, self.epoch));
        self.epoch += 1;
    }

    fn flush_done(&mut self, i: usize) {
        let (t, e) = self.flushes.swap_remove(i);
        self.xn.flush_done(t);
        let (durable, rest): (Vec<_>, Vec<_>) = self.completed.drain(..).partition(|w| w.0 <= e);
        self.completed = rest;
        for (_, b, c) in durable {
            self.disk.insert(b, c);
        }
    }

    /// A crash state: the durable disk plus a random subset of the writes
    /// not known durable, in random order.
    fn crash_disk(&mut self) -> HashMap<u64, Block> {
        let mut disk = self.disk.clone();
        let mut maybe: Vec<(u64, Block)> = self.completed.iter().map(|w| (w.1, w.2)).collect();
        maybe.extend(self.in_flight.iter().map(|(t, c)| (t.block, *c)));
        while !maybe.is_empty() {
            let (b, c) = maybe.swap_remove(self.rng.index(maybe.len()));
            if self.rng.chance(2) {
                disk.insert(b, c);
            }
        }
        disk
    }

    fn check_crash(&mut self) {
        self.crashes += 1;
        let disk = self.crash_disk();
        let mut xn = Xn::new(N).unwrap();
        xn.register_fs(&[&dir_template()]).unwrap();
        let mut buf = [0u8; BLOCK_SIZE];
        let root = Root { fs: FsId(0), block: 1, ty: DIR };
        let report = xn
            .recover(&[root], &mut buf, &mut |b, out| {
                *out = disk.get(&b).copied().unwrap_or([0; BLOCK_SIZE]);
                true
            })
            .unwrap();
        assert!(report.duplicates.is_empty(), "owned twice after a crash: {:?}", report.duplicates);
        assert!(report.unreadable.is_empty());
        // Every pointer on the crash disk leads to the content written for it.
        let mut work = vec![1u64];
        while let Some(d) = work.pop() {
            let content = disk.get(&d).copied().unwrap_or([0; BLOCK_SIZE]);
            for i in 0..ENTRIES {
                let (c, len, ty, tag) = entry(&content, i);
                if len == 0 {
                    continue;
                }
                let child = disk.get(&c).copied().unwrap_or([0; BLOCK_SIZE]);
                assert_eq!(tag_of(&child), u64::from(tag), "dir {d} points to block {c} whose content is not its own");
                if ty == DIR {
                    work.push(c);
                }
            }
        }
        for b in 0..N {
            if !xn.free_map().is_free(b) {
                assert!(!self.xn.free_map().is_free(b), "block {b} reachable after a crash but free now");
            }
        }
    }

    /// One round of a sync: completes every write, writes every live block
    /// it may (children first), flushes, reaps.
    fn sync_round(&mut self) {
        while !self.in_flight.is_empty() {
            self.complete(0, false);
        }
        let order: Vec<u64> = self.tree().iter().rev().map(|t| t.0).collect();
        for b in order {
            if let Ok(t) = self.xn.write_begin(&self.mem, b) {
                self.in_flight.push((t, cached(&self.xn, &self.mem, b)));
                let i = self.in_flight.len() - 1;
                self.complete(i, false);
            }
        }
        self.flush_begin();
        while !self.flushes.is_empty() {
            self.flush_done(0);
        }
        self.reaped += self.xn.reap(usize::MAX);
        self.check_core();
    }

    /// Finishes everything: completes writes, then writes every live block
    /// children first, flushing between rounds, and reaps. Afterwards no
    /// block may be left on the will-free list.
    fn drain(&mut self) {
        for _ in 0..16 {
            self.sync_round();
        }
        assert!(self.xn.will_free().is_empty(), "left on the will-free list: {:?}", self.xn.will_free());
        for b in self.tree().iter().map(|t| t.0) {
            assert!(!self.xn.is_tainted(b), "block {b} still tainted after a full drain");
        }
        self.check_crash();
    }

    fn step(&mut self) {
        match self.rng.below(100) {
            0..20 => self.alloc(),
            20..35 => self.free(),
            35..65 => self.write(),
            65..84 if !self.in_flight.is_empty() => {
                let i = self.rng.index(self.in_flight.len());
                let fail = self.rng.chance(12);
                self.complete(i, fail);
            }
            84..88 if self.flushes.len() < 6 => self.flush_begin(),
            88..91 => self.sync_round(),
            91..96 if !self.flushes.is_empty() => {
                let i = self.rng.index(self.flushes.len());
                self.flush_done(i);
            }
            96..100 => {
                let budget = self.rng.index(16) + 1;
                self.reaped += self.xn.reap(budget);
            }
            _ => {}
        }
    }
}

#[test]
fn random_sequences_keep_the_invariants_in_core_and_across_crashes() {
    let mut totals: HashMap<u64, u64> = HashMap::new();
    let (mut crashes, mut reaped) = (0, 0);
    for seed in 1..=16 {
        let mut m = Model::new(seed * 7919);
        for n in 0..400 {
            m.step();
            m.check_core();
            m.check_rows();
            if n % 5 == 0 {
                m.check_crash();
            }
        }
        m.drain();
        crashes += m.crashes;
        reaped += m.reaped;
        for (k, v) in &m.refusals {
            *totals.entry(*k).or_default() += v;
        }
    }
    // The run exercised the interesting refusals, not only the happy path.
    use oxok_abi::xn::refuse;
    for code in [refuse::OWNS_MISMATCH, refuse::TAINTED_POINTER, refuse::IN_FLIGHT, refuse::NOT_EMPTY] {
        assert!(totals.get(&code).copied().unwrap_or(0) > 5, "refusal {code} seen {:?} times", totals.get(&code));
    }
    assert!(crashes > 1000);
    eprintln!("{crashes} crash states, {reaped} blocks reaped, refusals by code {totals:?}");
    assert!(reaped > 20, "only {reaped} blocks left the will-free list");
}
