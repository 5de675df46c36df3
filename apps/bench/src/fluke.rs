//! `bench fluke [quick]`: the workloads of Fluke's tables (OSDI'99 §5),
//! run on each execution model's kernel by `cargo xtask bench --fluke`
//! (`bench/README.md`, "Execution models").
//!
//! - `long_batch_4096`: one `page_batch` of 4096 records (2048 maps of one
//!   frame, then their 2048 unmaps): 64 restart points per call at the
//!   default granularity (4096 / `restart_records=`). The
//!   interrupt model returns to user mode at each and re-issues the call;
//!   the process model goes on in the kernel unless the slot ended; with
//!   the kernel word `restart_every` it restarts through user mode too.
//!   Cycles per call (Fluke's table 3: the cost of restarting).
//! - `preempt_latency_avg`/`_max` (and `_user_` while the other
//!   environment only computes): a slot owner (`bench owner`, one slot, no
//!   spare time) notes the time-stamp counter and the tick count at each of
//!   its slot starts while this program runs `long_batch_4096` calls
//!   without pause. Slot starts are tick-aligned, so the delay of each is
//!   its distance above the lower envelope of time against tick number
//!   (Fluke's table 6); cycles.
//! - Then `kernel_mem_per_env` (table 7) and the memory-, IPC- and
//!   process-heavy workloads of the main bench (table 5).

use crate::params::Counts;
use crate::{envs, ipc, median_of, proc, report, skip, vm};
use alloc::vec::Vec;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::slot_placement::SPREAD;
use oxok_libos::abi::{ANY_FRAME, ENV_ZOMBIE, Error, ExceptionFrame, MapEntry, env_id};
use oxok_libos::exec;
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::{exposed, println, sys};

const RW: u64 = pte::WRITABLE | pte::NO_EXECUTE;
/// Where the long batch maps (clear of every other workload's range).
const LB_BASE: u64 = 0x2500_0000_0000;
/// Maps in the long batch (as many unmaps follow).
const LB_PAGES: usize = 2048;
/// Slot starts the owner records.
const STARTS: [usize; 2] = [40, 16];
/// Long batches per timed batch.
const LONG_OPS: [u32; 2] = [8, 2];

pub fn run(c: &Counts, quick: bool) {
    restart_workloads(c, quick);
    envs::kernel_mem_per_env(c.kernel_mem_envs);
    vm::run(c);
    ipc::run(c);
    proc::run(c);
}

/// `bench fluke restart`: only the workloads the restart granularity
/// (`restart_records=`) changes: `long_batch_4096` and the two latencies.
pub fn restart_workloads(c: &Counts, quick: bool) {
    let q = usize::from(quick);
    match LongBatch::new() {
        Ok(lb) => {
            match median_of(LONG_OPS[q], c.batches, &mut |ops| lb.timed(ops)) {
                Ok(m) => report("long_batch_4096", m, "cycles"),
                Err(e) => skip("long_batch_4096", e),
            }
            latency("preempt_latency_user", STARTS[q], &mut || {
                spin(200_000);
                Ok(())
            });
            latency("preempt_latency", STARTS[q], &mut || lb.once());
            lb.close();
        }
        Err(e) => {
            for name in ["long_batch_4096", "preempt_latency_avg", "preempt_latency_max"] {
                skip(name, e);
            }
        }
    }
}

fn spin(n: u64) {
    let mut x = 0u64;
    for i in 0..n {
        x = core::hint::black_box(x.wrapping_add(i));
    }
}

/// The records of one long batch and the frame they map.
struct LongBatch {
    records: Vec<MapEntry>,
    frame: u64,
}

impl LongBatch {
    fn new() -> Result<LongBatch, Error> {
        let [frame, _] = sys::frame_alloc(ANY_FRAME)?;
        let mut records = Vec::new();
        if records.try_reserve_exact(2 * LB_PAGES).is_err() {
            let _ = sys::frame_free(frame);
            return Err(Error::NoMemory);
        }
        for i in 0..LB_PAGES {
            records.push(MapEntry::map(LB_BASE + i as u64 * PAGE_SIZE, frame, RW));
        }
        for i in 0..LB_PAGES {
            records.push(MapEntry::unmap(LB_BASE + i as u64 * PAGE_SIZE));
        }
        Ok(LongBatch { records, frame })
    }

    fn once(&self) -> Result<(), Error> {
        sys::page_batch(0, self.records.as_ptr() as u64, self.records.len() as u64).map(|_| ())
    }

    fn timed(&self, ops: u32) -> Result<u64, Error> {
        let t0 = crate::cpu::now();
        for _ in 0..ops {
            self.once()?;
        }
        Ok(crate::cpu::now() - t0)
    }

    fn close(self) {
        let _ = sys::frame_free(self.frame);
    }
}

/// Starts the slot owner and runs `load` until it has recorded `starts`
/// slot starts; reports the average and largest delay as `NAME_avg`,
/// `NAME_max`.
fn latency(name: &str, starts: usize, load: &mut dyn FnMut() -> Result<(), Error>) {
    let mut n = [0u8; 24];
    let arg = fmt_usize(starts, &mut n);
    let child = match exec::spawn("bench", &["bench", "owner", arg, name]) {
        Ok(c) => c,
        Err(_) => {
            println!("bench: skip {name}_avg the owner did not start");
            return;
        }
    };
    let id = child.id;
    let row = env_id::row(id);
    let alive = || exposed::env_row(row).is_some_and(|r| u64::from(r.id) == id && r.status != ENV_ZOMBIE);
    let mut failed = None;
    while alive() {
        if let Err(e) = load() {
            failed = Some(e);
            break;
        }
    }
    let _ = exec::wait(child);
    if let Some(e) = failed {
        skip(name, e);
    }
}

fn fmt_usize(mut v: usize, buf: &mut [u8; 24]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    core::str::from_utf8(&buf[i..]).unwrap_or("0")
}

/// Most slot starts the owner records.
const MAX_STARTS: usize = 64;
static SEEN: AtomicUsize = AtomicUsize::new(0);
static TSC: [AtomicU64; MAX_STARTS] = [const { AtomicU64::new(0) }; MAX_STARTS];
static TICK: [AtomicU64; MAX_STARTS] = [const { AtomicU64::new(0) }; MAX_STARTS];

fn on_slot_start(_f: &mut ExceptionFrame) -> Outcome {
    let t = crate::cpu::now();
    let i = SEEN.load(Ordering::Relaxed);
    if i < MAX_STARTS {
        TSC[i].store(t, Ordering::Relaxed);
        TICK[i].store(exposed::clock().map_or(0, |c| c.ticks), Ordering::Relaxed);
        SEEN.store(i + 1, Ordering::Relaxed);
    }
    Outcome::Resume
}

/// `bench owner N NAME`: owns one slot, asks for no spare time, records
/// `N` slot starts (the first is dropped: it may start mid-slot), and
/// reports `NAME_avg` and `NAME_max`.
pub fn owner(starts: usize, name: &str) -> i32 {
    let starts = starts.clamp(4, MAX_STARTS);
    upcall::set_handler(Kind::SlotStart, on_slot_start);
    if upcall::install_slot_handlers().is_err() {
        return 1;
    }
    let Ok([slot, _]) = sys::slot_alloc(SPREAD, 0) else { return 1 };
    if sys::slot_spare(0, 0).is_err() {
        return 1;
    }
    while SEEN.load(Ordering::Relaxed) < starts {
        core::hint::spin_loop();
    }
    let _ = sys::slot_spare(0, 1);
    let _ = sys::slot_free(slot);
    let mut t = [0f64; MAX_STARTS];
    let mut k = [0f64; MAX_STARTS];
    for i in 1..starts {
        t[i - 1] = TSC[i].load(Ordering::Relaxed) as f64;
        k[i - 1] = TICK[i].load(Ordering::Relaxed) as f64;
    }
    let (avg, max) = delays(&t[..starts - 1], &k[..starts - 1]);
    println!("bench: {name}_avg {avg:.0} cycles");
    println!("bench: {name}_max {max:.0} cycles");
    0
}

/// Average and largest height of the points (`k`, `t`) above the line
/// through the lowest point of each half (time against tick number: the
/// ticks' own pace, whatever the counter's rate).
fn delays(t: &[f64], k: &[f64]) -> (f64, f64) {
    let n = t.len();
    if n < 2 {
        return (0.0, 0.0);
    }
    let hz = exposed::clock().map_or(1.0, |c| c.tsc_hz as f64 / c.tick_hz.max(1) as f64);
    let r: Vec<f64> = (0..n).map(|i| t[i] - hz * (k[i] - k[0])).collect();
    let low = |range: core::ops::Range<usize>| range.min_by(|&a, &b| r[a].total_cmp(&r[b])).unwrap_or(0);
    let (a, b) = (low(0..n / 2), low(n / 2..n));
    let slope = if k[b] != k[a] { (r[b] - r[a]) / (k[b] - k[a]) } else { 0.0 };
    let mut sum = 0.0;
    let mut max = 0.0f64;
    for i in 0..n {
        let d = (r[i] - (r[a] + slope * (k[i] - k[a]))).max(0.0);
        sum += d;
        max = max.max(d);
    }
    (sum / n as f64, max)
}
