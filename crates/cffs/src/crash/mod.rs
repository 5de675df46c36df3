//! The crash-consistency harness (CrashMonkey/ACE on the host): run a
//! workload on a recording [`MemDisk`], then check every crash state of
//! its write log ([`states`]) against the expectations of a reference
//! model ([`oracle`], [`model`]). [`run_all`] runs every sequence of up
//! to `depth` operations from the pool ([`workload::pool`]); as in ACE,
//! each ends with a persistence point (a final `sync`), so that its
//! changes reach the disk in some order.

pub mod dmlog;
pub mod guest;
pub mod model;
pub mod oracle;
pub mod states;
pub mod workload;

use model::Model;
use oracle::{Step, all_facts, step_of, touched};
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

    /// Adds another set of totals.
    pub fn add(&mut self, o: &Totals) {
        self.workloads += o.workloads;
        self.states += o.states;
        self.lost += o.lost;
        self.dangling += o.dangling;
        self.fsck += o.fsck;
        self.model += o.model;
        self.examples.extend(o.examples.iter().cloned());
    }

    /// Keeps `what` among the first problems.
    pub fn note(&mut self, what: String) {
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
    record_after(&SETUP, ops)
}

/// [`record`] from another setup (which should end with a sync).
pub fn record_after(setup: &[Op], ops: &[Op]) -> Result<Recorded, String> {
    record_from(&prepare(setup)?, ops)
}

/// The durable state after a setup, to start many workloads from.
#[derive(Clone, Debug)]
pub struct Prepared {
    image: Vec<crate::layout::Block>,
    model: Model,
    ops: usize,
}

/// Runs `setup` (which should end with a sync) on a fresh file system.
pub fn prepare(setup: &[Op]) -> Result<Prepared, String> {
    let mut m = Model::default();
    let disk = MemDisk::blank(DISK_BLOCKS, OWNER, 0xa5).map_err(|e| format!("blank disk: {e}"))?;
    let mut fs = Fs::mkfs(disk, OWNER).map_err(|e| format!("mkfs: {e}"))?;
    for (i, op) in setup.iter().enumerate() {
        apply(&mut fs, &mut m, op, i).map_err(|e| format!("setup: {e}"))?;
    }
    fs.sync().map_err(|e| format!("setup: {e}"))?;
    Ok(Prepared { image: fs.into_disk().image().to_vec(), model: m, ops: setup.len() })
}

/// [`record`] from a prepared state (reopened as after a reboot).
pub fn record_from(p: &Prepared, ops: &[Op]) -> Result<Recorded, String> {
    let mut m = p.model.clone();
    let initial = p.image.clone();
    let (mut disk, _) = MemDisk::open(initial.clone(), OWNER).map_err(|e| format!("open: {e}"))?;
    disk.record();
    let (mut fs, _) = Fs::mount(disk, OWNER).map_err(|e| format!("mount: {e}"))?;
    let mut steps = vec![Step { start: 0, end: 0, touched: Vec::new(), renamed: None, durable: all_facts(&m) }];
    let last = (ops.last() != Some(&Op::Sync)).then_some(Op::Sync);
    for (i, op) in ops.iter().chain(last.as_ref()).enumerate() {
        let start = fs.disk().event_count();
        let before = touched(&m, op);
        let ok = apply(&mut fs, &mut m, op, p.ops + i)?;
        steps.push(step_of(&m, op, ok, before, start, fs.disk().event_count()));
    }
    let disk = fs.into_disk();
    Ok(Recorded { initial, events: disk.events().to_vec(), steps })
}

/// Checks every crash state of a recorded run into `t`.
pub fn check(r: &Recorded, label: &str, t: &mut Totals) {
    tally(check_run(&r.initial, &r.events, &r.steps, OWNER), label, t);
}

/// Adds what one run's crash states found to `t`.
pub fn tally(out: states::Outcome, label: &str, t: &mut Totals) {
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

/// Runs one workload from a prepared state and checks its crash states
/// into `t`.
pub fn run_one(from: &Prepared, ops: &[Op], t: &mut Totals) {
    t.workloads += 1;
    let label = ops.iter().map(|o| o.to_string()).collect::<Vec<_>>().join("; ");
    match record_from(from, ops) {
        Ok(r) => check(&r, &label, t),
        Err(e) => {
            t.model += 1;
            t.note(format!("[{label}] {e}"));
        }
    }
}

/// Every workload of `1..=depth` operations from the pool, after
/// `setup`, whose index (in enumeration order) is `≡ shard (mod shards)`.
pub fn run_all(setup: &[Op], depth: usize, shard: usize, shards: usize, t: &mut Totals) {
    let prepared = match prepare(setup) {
        Ok(p) => p,
        Err(e) => {
            t.model += 1;
            return t.note(e);
        }
    };
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
            let ops = nth(&pool, len, n);
            run_one(&prepared, &ops, t);
        }
    }
}

/// The `n`-th sequence of `len` operations from `pool` (`n` below
/// `pool.len()^len`; the first operation varies fastest).
pub fn nth(pool: &[Op], len: usize, n: usize) -> Vec<Op> {
    let mut k = n;
    (0..len)
        .filter_map(|_| {
            let o = pool.get(k % pool.len().max(1)).cloned();
            k /= pool.len().max(1);
            o
        })
        .collect()
}
