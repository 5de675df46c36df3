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

/// A workload run on a recording disk.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The durable image after the setup, when recording began.
    pub initial: Vec<crate::layout::Block>,
    /// Every write, flush and allocation of the workload.
    pub events: Vec<crate::host::Event>,
    /// Each operation's span of events and its effect on expectations.
    pub steps: Vec<Step>,
}

/// Runs the setup, then `ops` and a final `sync` (unless `ops` ends with
/// one) while recording; `Err` if the file system and the model disagree
/// or the run fails.
pub fn record(ops: &[Op]) -> Result<Recorded, String> {
    let mut m = Model::default();
    let disk = MemDisk::blank(DISK_BLOCKS, OWNER, 0xa5).map_err(|e| format!("blank disk: {e}"))?;
    let mut fs = Fs::mkfs(disk, OWNER).map_err(|e| format!("mkfs: {e}"))?;
    for (i, op) in SETUP.iter().enumerate() {
        apply(&mut fs, &mut m, op, i).map_err(|e| format!("setup: {e}"))?;
    }
    let mut disk = fs.into_disk();
    let initial = disk.image().to_vec();
    disk.record();
    let (mut fs, _) = Fs::mount(disk, OWNER).map_err(|e| format!("mount: {e}"))?;
    let mut steps = vec![Step { start: 0, end: 0, touched: Vec::new(), renamed: None, durable: all_facts(&m) }];
    let last = (ops.last() != Some(&Op::Sync)).then_some(Op::Sync);
    for (i, op) in ops.iter().chain(last.as_ref()).enumerate() {
        let start = fs.disk().event_count();
        let before = touched(&m, op);
        let ok = apply(&mut fs, &mut m, op, SETUP.len() + i)?;
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
    Ok(Recorded { initial, events: disk.events().to_vec(), steps })
}

/// Checks every crash state of a recorded run into `t`.
pub fn check(r: &Recorded, label: &str, t: &mut Totals) {
    let out = check_run(&r.initial, &r.events, &r.steps, OWNER);
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

/// Runs one workload and checks its crash states into `t`.
pub fn run_one(ops: &[Op], t: &mut Totals) {
    t.workloads += 1;
    let label = ops.iter().map(|o| o.to_string()).collect::<Vec<_>>().join("; ");
    match record(ops) {
        Ok(r) => check(&r, &label, t),
        Err(e) => {
            t.model += 1;
            t.note(format!("[{label}] {e}"));
        }
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
