//! Round trips between two environments on one CPU.
//!
//! - `rpc_roundtrip`: a protected control transfer round trip
//!   (`pct::call`) to a server environment, the `pct server` test program
//!   started with `exec::spawn`. The argument is one word; the server
//!   answers `[a, b, …]` with `[a + 1, b * 2, …]`, and every reply is
//!   checked (Linux: an 8-byte RPC over two pipes to a forked server).
//! - `pipe_pingpong`: one byte to a partner over a libOS pipe and one byte
//!   back over another; the partner (`pipe-writer echo`, started with
//!   `exec::spawn_with`, the pipes as its fds 0 and 1) adds 1, and every
//!   reply is checked. Waits are directed yields to the partner (the
//!   pipes' own policy). Linux: the same over two pipes to a forked
//!   partner.
//! - `shm_pingpong`: a frame of this environment mapped in both this
//!   environment and the partner (`bench-partner`) holds a counter; this
//!   side makes it odd, the partner makes it even; whoever waits gives the
//!   rest of its slot to the other (`yield_cpu(other)`, a directed yield).
//!   One op is bench → partner → bench (Linux: a `MAP_SHARED` page and
//!   `sched_yield`).
//!
//! Each workload starts its partner first, runs the warm-up and all
//! batches against it, then stops it and waits for it (reaping it), so that
//! later workloads start from the same single environment.

use crate::params::Counts;
use crate::proc::kernel_error;
use crate::{median_of, report, skip};
use core::fmt::{self, Write};
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::ANY_FRAME;
use oxok_libos::abi::layout::pte;
use oxok_libos::exec::{self, Child, ExitStatus, SpawnOptions};
use oxok_libos::fd::{IoError, pipe};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Error, exposed, sys};

pub fn run(c: &Counts) {
    result("rpc_roundtrip", rpc_roundtrip(c));
    result("pipe_pingpong", pipe_pingpong(c));
    result("shm_pingpong", shm_pingpong(c));
}

/// Runs workload `name`'s round trip `n` times, once (`bench loop`), if it
/// is one of this module's: the partner's start and stop are included.
pub fn repeat(name: &str, n: u32) -> Option<Result<u64, Error>> {
    let mut c = Counts::new(true);
    c.batches = 1;
    // `median_of` runs one warm-up batch before the timed one.
    let ops = n.div_ceil(2);
    let r = match name {
        "rpc_roundtrip" => {
            c.rpc_roundtrip = ops;
            rpc_roundtrip(&c)
        }
        "shm_pingpong" => {
            c.shm_pingpong = ops;
            shm_pingpong(&c)
        }
        _ => return None,
    };
    Some(r.map(|m| m as u64))
}

fn result(name: &str, r: Result<f64, Error>) {
    match r {
        Ok(m) => report(name, m, "cycles"),
        Err(e) => skip(name, e),
    }
}

/// The message word 0 that stops `pct server`.
const PCT_STOP: u64 = u64::MAX;
/// Attempts to reach a starting server (or partner) before giving up.
const STARTUP_TRIES: u32 = 100_000;

fn rpc_roundtrip(c: &Counts) -> Result<f64, Error> {
    let child = exec::spawn("pct", &["pct", "server"]).map_err(kernel_error)?;
    let server = child.id;
    // Until the server has registered its entry, calls are refused
    // (`Denied`); give it the CPU and try again.
    let mut ready = Err(Error::Denied);
    for _ in 0..STARTUP_TRIES {
        ready = match pct::call(server, &[0; pct::WORDS]) {
            Ok((_, r)) if r[0] == 1 => Ok(()),
            Ok(_) => Err(Error::Invalid),
            Err(e @ (Error::Denied | Error::Busy)) => {
                let _ = sys::yield_cpu(0);
                Err(e)
            }
            Err(e) => Err(e),
        };
        if !matches!(ready, Err(Error::Denied | Error::Busy)) {
            break;
        }
    }
    let timed = ready.and_then(|()| {
        median_of(c.rpc_roundtrip, c.batches, &mut |ops| {
            let t0 = crate::cpu::now();
            for i in 0..ops {
                let arg = u64::from(i & 0x7f);
                let msg: Msg = [arg, 0, 0, 0, 0, 0, 0, 0, 0];
                let (_, reply) = pct::call(server, &msg)?;
                if reply[0] != arg + 1 {
                    return Err(Error::Invalid);
                }
            }
            Ok(crate::cpu::now() - t0)
        })
    });
    let mut stop: Msg = [0; pct::WORDS];
    stop[0] = PCT_STOP;
    if let Err(e) = pct::send(server, &stop) {
        // It cannot be told to stop (it never started serving): waiting
        // would never end, so destroy it (which also empties its slot).
        let _ = sys::env_destroy(child.slot);
        return Err(timed.err().unwrap_or(e));
    }
    let ended = finish(child);
    let m = timed?;
    ended?;
    Ok(m)
}

/// Waits for a partner to end; it must exit with status 0.
fn finish(child: Child) -> Result<(), Error> {
    match exec::wait(child)? {
        ExitStatus::Exited(0) => Ok(()),
        _ => Err(Error::Invalid),
    }
}

/// The partner of `pipe_pingpong` (`apps/tests/src/bin/pipe-writer.rs`).
const PIPE_PARTNER: &str = "pipe-writer";

fn pipe_pingpong(c: &Counts) -> Result<f64, Error> {
    let (req_r, req_w) = pipe::pipe().map_err(io_error)?;
    let (rep_r, rep_w) = pipe::pipe().map_err(io_error)?;
    let mut opts = SpawnOptions::new();
    opts.stdin(req_r).stdout(rep_w);
    let child = exec::spawn_with(PIPE_PARTNER, &[PIPE_PARTNER, "echo"], &opts).map_err(kernel_error)?;
    drop(opts); // the partner holds those ends now
    let timed = median_of(c.pipe_pingpong, c.batches, &mut |ops| {
        let t0 = crate::cpu::now();
        for i in 0..ops {
            let msg = (i & 0x7f) as u8;
            let mut reply = [0u8; 1];
            let sent = req_w.write(&[msg]).map_err(io_error)?;
            let got = rep_r.read(&mut reply).map_err(io_error)?;
            if sent != 1 || got != 1 || reply[0] != msg + 1 {
                return Err(Error::Invalid);
            }
        }
        Ok(crate::cpu::now() - t0)
    });
    drop(req_w); // end of file: the partner exits
    let ended = finish(child);
    let m = timed?;
    ended?;
    Ok(m)
}

/// A pipe error as a kernel error code for the report.
fn io_error(e: IoError) -> Error {
    match e {
        IoError::Kernel(k) => k,
        IoError::BrokenPipe => Error::BadEnv,
        _ => Error::Invalid,
    }
}

/// Where the shared frame is mapped, in both environments: clear of the
/// other workloads' regions (0x2000_0000_0000…0x24ff_ffff_ffff), the
/// libOS's spawn scratch region (0x5000_0000_0000) and stacks.
const SHM_VA: u64 = 0x2600_0000_0000;
/// The partner program (`apps/tests/src/bin/bench-partner.rs`).
const PARTNER: &str = "bench-partner";
/// Yields to the partner before a round trip counts as lost.
const MAX_YIELDS: u32 = 100_000;

fn shm_pingpong(c: &Counts) -> Result<f64, Error> {
    let [frame, _] = sys::frame_alloc(ANY_FRAME)?;
    let r = sys::page_map(0, frame, SHM_VA, pte::WRITABLE | pte::NO_EXECUTE).and_then(|_| {
        let r = with_partner(c, frame);
        let unmapped = sys::page_unmap(0, SHM_VA);
        let m = r?;
        unmapped?;
        Ok(m)
    });
    let freed = free_frame(frame);
    let m = r?;
    freed?;
    Ok(m)
}

/// Starts the partner, maps the frame (capability slot `frame`, already
/// mapped here at [`SHM_VA`]) into it, times the batches, stops the
/// partner and waits for it.
fn with_partner(c: &Counts, frame: u64) -> Result<f64, Error> {
    let (counter, stop) = shared::words(SHM_VA);
    counter.store(0, Ordering::Release);
    stop.store(0, Ordering::Release);
    let mut va = Text::<24>::new();
    let mut me = Text::<24>::new();
    write!(va, "{SHM_VA:#x}").map_err(|_| Error::Invalid)?;
    write!(me, "{}", exposed::self_id()).map_err(|_| Error::Invalid)?;
    let child = exec::spawn(PARTNER, &[PARTNER, va.as_str(), me.as_str()]).map_err(kernel_error)?;
    let partner = child.id;
    let timed = sys::page_map(child.slot, frame, SHM_VA, pte::WRITABLE | pte::NO_EXECUTE).and_then(|_| {
        median_of(c.shm_pingpong, c.batches, &mut |ops| {
            let t0 = crate::cpu::now();
            for _ in 0..ops {
                let n = counter.load(Ordering::Acquire);
                counter.store(n + 1, Ordering::Release);
                let mut yields = 0;
                while counter.load(Ordering::Acquire) != n + 2 {
                    oxok_libos::callcap::yield_to(partner)?;
                    yields += 1;
                    if yields == MAX_YIELDS {
                        return Err(Error::Busy);
                    }
                }
            }
            Ok(crate::cpu::now() - t0)
        })
    });
    if timed.is_ok() {
        result("predicate_wake", predicate_wake(c, counter));
    }
    stop.store(1, Ordering::Release);
    let ended = finish(child);
    let m = timed?;
    ended?;
    Ok(m)
}

/// Wakeup-predicate latency: the bench writes an odd counter value the
/// partner will bump, and sleeps on a predicate that holds once the word
/// differs from it; the cycles from the write to running again. The kernel
/// evaluates sleepers' predicates at every timer tick, so the figure is
/// bounded by the tick (4 ms at the default 250 Hz) plus the partner's turn.
fn predicate_wake(c: &Counts, counter: &AtomicU64) -> Result<f64, Error> {
    const SLOT: u64 = 1;
    let mut b = oxok_pred::Builder::new();
    b.load_u64(SHM_VA).ne_param(0);
    let code = b.build().map_err(|_| Error::Invalid)?;
    let bytes = code.as_bytes();
    sys::pred_install(0, SLOT, bytes.as_ptr() as u64, bytes.len() as u64)?;
    median_of(c.predicate_wake, c.batches, &mut |ops| {
        let mut total = 0;
        for _ in 0..ops {
            let n = counter.load(Ordering::Acquire);
            sys::pred_param(0, SLOT, 0, n + 1)?;
            let t0 = crate::cpu::now();
            counter.store(n + 1, Ordering::Release);
            sys::env_sleep(1 << SLOT)?;
            total += crate::cpu::now() - t0;
        }
        Ok(total)
    })
}

/// Frees the shared frame once no page table maps it any more (the
/// partner's page tables go in the kernel's bounded reaping steps, which
/// run at kernel entries).
fn free_frame(frame: u64) -> Result<(), Error> {
    for _ in 0..STARTUP_TRIES {
        match sys::frame_free(frame) {
            Err(Error::Busy) => {
                sys::null()?;
            }
            r => return r.map(|_| ()),
        }
    }
    Err(Error::Busy)
}

/// A short string formatted on the stack (the arguments of the partner).
struct Text<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Text<N> {
    fn new() -> Self {
        Text { buf: [0; N], len: 0 }
    }

    fn as_str(&self) -> &str {
        core::str::from_utf8(&self.buf[..self.len]).unwrap_or("")
    }
}

impl<const N: usize> fmt::Write for Text<N> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).filter(|&e| e <= N).ok_or(fmt::Error)?;
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

#[allow(unsafe_code)]
mod shared {
    use core::sync::atomic::AtomicU64;

    /// The counter and the stop flag: the first two words of the page at
    /// `va`.
    pub fn words(va: u64) -> (&'static AtomicU64, &'static AtomicU64) {
        // SAFETY: `shm_pingpong` maps a writable frame at the page-aligned
        // `va` before calling this and unmaps it only after the last use of
        // the references; no Rust object lives there, only these atomics.
        unsafe { (&*(va as *const AtomicU64), &*((va + 8) as *const AtomicU64)) }
    }
}
