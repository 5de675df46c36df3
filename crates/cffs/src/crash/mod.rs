//! The crash-consistency harness (CrashMonkey/ACE on the host): run a
//! workload on a recording [`MemDisk`], then check every crash state of
//! its write log ([`states`]) against the expectations of a reference
//! model ([`oracle`], [`model`]). [`run_all`] runs every sequence of up
//! to `depth` operations from the pool ([`workload::pool`]); as in ACE,
//! each ends with a persistence point (a final `sync`), so that its
//! changes reach the disk in some order.

pub mod model;
pub mod oracle;
pub mod states;
pub mod workload;

use model::Model;
use oracle::{Step, all_facts, file_facts, touched};
use states::{Bug, check_run};
use workload::{Op, SETUP, apply, pool};

use crate::Fs;
use crate::host::MemDisk;

/// Blocks of the harness's disk.
pub const DISK_BLOCKS: u64 = 128;
/// The principal the harness's file system belongs to.
pub const OWNER: u64 = 11;

/// Totals over many workloads.
#[derive(Debug, Default, Clone)]
pub struct Totals {
    /// Workloads run.
    pub workloads: u64,
    /// Crash states checked.
    pub states: u64,
    /// States where fsynced data, a size or a durable name was lost.
    pub lost: u64,
    /// Reachable blocks never written since allocation.
    pub dangling: u64,
    /// States failing XN recovery or fsck.
    pub fsck: u64,
    /// Workloads where the file system and the model disagreed.
    pub model: u64,
    /// The first problems found, with their workload.
    pub examples: Vec<String>,
}

impl Totals {
    /// No problem at all.
    pub fn ok(&self) -> bool {
        self.lost == 0 && self.dangling == 0 && self.fsck == 0 && self.model == 0
    }

    fn note(&mut self, what: String) {
        if self.examples.len() < 20 {
            self.examples.push(what);
        }
    }
}

/// Runs one workload and checks its crash states into `t`.
pub fn run_one(ops: &[Op], t: &mut Totals) {
    t.workloads += 1;
    let names: Vec<String> = ops.iter().map(|o| o.to_string()).collect();
    let label = names.join("; ");
    let mut m = Model::default();
    let disk = match MemDisk::blank(DISK_BLOCKS, OWNER, 0xa5) {
        Ok(d) => d,
        Err(e) => return t.note(format!("[{label}] blank disk: {e}")),
    };
    let mut fs = match Fs::mkfs(disk, OWNER) {
        Ok(fs) => fs,
        Err(e) => return t.note(format!("[{label}] mkfs: {e}")),
    };
    for (i, op) in SETUP.iter().enumerate() {
        if let Err(e) = apply(&mut fs, &mut m, op, i) {
            t.model += 1;
            return t.note(format!("[setup] {e}"));
        }
    }
    let mut disk = fs.into_disk();
    let initial = disk.image().to_vec();
    disk.record();
    let (mut fs, _) = match Fs::mount(disk, OWNER) {
        Ok(x) => x,
        Err(e) => return t.note(format!("[{label}] mount: {e}")),
    };
    let mut steps = vec![Step { start: 0, end: 0, touched: Vec::new(), renamed: None, durable: all_facts(&m) }];
    let last = (ops.last() != Some(&Op::Sync)).then_some(Op::Sync);
    for (i, op) in ops.iter().chain(last.as_ref()).enumerate() {
        let start = fs.disk().event_count();
        let before = touched(&m, op);
        let ok = match apply(&mut fs, &mut m, op, SETUP.len() + i) {
            Ok(ok) => ok,
            Err(e) => {
                t.model += 1;
                return t.note(format!("[{label}] {e}"));
            }
        };
        let durable = match (ok, op) {
            (true, Op::Sync) => all_facts(&m),
            (true, Op::Fsync(p)) => file_facts(&m, p),
            _ => Default::default(),
        };
        let renamed = match (ok, op) {
            (true, Op::Rename(a, b)) => Some((a.to_string(), b.to_string())),
            _ => None,
        };
        let touched = if ok { before } else { Vec::new() };
        steps.push(Step { start, end: fs.disk().event_count(), touched, renamed, durable });
    }
    let disk = fs.into_disk();
    let out = check_run(&initial, disk.events(), &steps, OWNER);
    t.states += out.states;
    for (bug, what) in out.bugs {
        match bug {
            Bug::Lost => t.lost += 1,
            Bug::Dangling => t.dangling += 1,
            Bug::Recovery | Bug::Fsck => t.fsck += 1,
        }
        t.note(format!("[{label}] {what}"));
    }
}

/// Every workload of `1..=depth` operations from the pool whose index
/// (in enumeration order) is `≡ shard (mod shards)`.
pub fn run_all(depth: usize, shard: usize, shards: usize, t: &mut Totals) {
    let pool = pool();
    let mut idx = 0usize;
    for len in 1..=depth {
        let total = pool.len().pow(len as u32);
        for n in 0..total {
            let this = idx;
            idx += 1;
            if shards > 1 && this % shards != shard {
                continue;
            }
            let mut k = n;
            let ops: Vec<Op> = (0..len)
                .map(|_| {
                    let o = pool[k % pool.len()].clone();
                    k /= pool.len();
                    o
                })
                .collect();
            run_one(&ops, t);
        }
    }
}
