//! state-batch: Fluke's "prompt and correct" export of an environment in
//! the middle of a `page_batch`. A child runs one batch of 32768 unmap
//! records over 32768 pages mapping one frame (the kernel restarts it every
//! `SysInfo::restart_records` records — `BATCH_STEP` unless the kernel word
//! `restart_records=` says otherwise — each time back in user mode with
//! `rip` on the `syscall`). The parent stops it part-way (`env_stop`), exports its
//! state — the same call with `rsi` at the next record and `rdx` the
//! records left — and imports it into a fresh environment given the same
//! memory (the code, the same record pages, the pages not unmapped yet).
//! Both are then let go: each finishes the rest of the batch and exits
//! with status 0, and every mapping of the frame is gone. Four such
//! children are caught; each stop must be a multiple of the granularity
//! (and, when it and the default do not divide each other, one of them off
//! the default's points: the knob took effect).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, BATCH_STEP, Call, ENV_ZOMBIE, EnvState, MapEntry};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

const N: usize = 32768;
const RECORD: u64 = size_of::<MapEntry>() as u64;
const TARGET_VA: u64 = 0x3000_0000_0000;
const REC_VA: u64 = 0x3100_0000_0000;
const CODE_VA: u64 = 0x3200_0000_0000;
const SCRATCH: u64 = 0x3300_0000_0000;
const FLAGS_IF: u64 = 1 << 9;
const FLAGS_RESERVED: u64 = 1 << 1;
const ATTEMPTS: usize = 16;
/// Mid-batch stops wanted (one per successful attempt).
const STOPS: usize = 4;

/// `syscall` (the batch, registers from the state); `mov rdi, rax`;
/// `movabs rax, env_exit`; `syscall`; `jmp $`.
fn child_code() -> [u8; 24] {
    let mut c = [0u8; 24];
    c[..5].copy_from_slice(&[0x0f, 0x05, 0x48, 0x89, 0xc7]);
    c[5..7].copy_from_slice(&[0x48, 0xb8]);
    c[7..15].copy_from_slice(&Call::env_exit.number().to_le_bytes());
    c[15..19].copy_from_slice(&[0x0f, 0x05, 0xeb, 0xfe]);
    c
}

struct Setup {
    code: u64,
    frame: u64,
    pfn: u64,
    /// Page-aligned start of the unmap records in this program's memory.
    records: u64,
}

fn get(slot: u64) -> Option<EnvState> {
    let mut st = EnvState::default();
    sys::env_get_state(slot, &raw mut st as u64).ok().map(|_| st)
}

/// Gives `env` the code, the record pages (shared read-only) and the
/// frame at the target pages `from..N`.
fn build(t: &mut Checks, s: &Setup, env: u64, from: usize) {
    t.expect(sys::page_map(env, s.code, CODE_VA, 0), Ok([]), "map the code");
    let pages = (N as u64 * RECORD).div_ceil(PAGE_SIZE);
    let shares: Vec<MapEntry> = (0..pages)
        .map(|i| MapEntry::share(REC_VA + i * PAGE_SIZE, s.records + i * PAGE_SIZE, pte::NO_EXECUTE))
        .collect();
    t.check(sys::page_batch(env, shares.as_ptr() as u64, shares.len() as u64).is_ok(), "share the records");
    let maps: Vec<MapEntry> =
        (from..N).map(|i| MapEntry::map(TARGET_VA + i as u64 * PAGE_SIZE, s.frame, pte::NO_EXECUTE)).collect();
    t.check(sys::page_batch(env, maps.as_ptr() as u64, maps.len() as u64).is_ok(), "map the target pages");
}

fn maps(pfn: u64) -> u64 {
    exposed::frame_entry(pfn).map_or(u64::MAX, |e| u64::from(e.maps))
}

/// Waits (bounded) until the child's row says it ended; its exit status.
fn wait_end(id: u64) -> Option<u64> {
    for _ in 0..200_000 {
        match exposed::env_entry(id) {
            Some(e) if e.status == ENV_ZOMBIE => return Some(e.exit_status),
            None => return None,
            _ => {
                let _ = sys::yield_cpu(0);
            }
        }
    }
    None
}

/// One attempt: a child caught mid-batch, exported and imported. `None`
/// if the child was not caught in the middle (it had not started or had
/// finished): the caller tries again.
fn attempt(t: &mut Checks, s: &Setup, stops: &mut Vec<u64>) -> Option<()> {
    let [c, cid] = sys::env_create().ok()?;
    build(t, s, c, 0);
    t.expect(maps(s.pfn), N as u64, "the frame is mapped at every target page");
    let mut st = EnvState::new();
    st.regs.rip = CODE_VA;
    st.regs.rflags = FLAGS_IF | FLAGS_RESERVED;
    st.regs.rax = Call::page_batch.number();
    st.regs.rdi = 0;
    st.regs.rsi = REC_VA;
    st.regs.rdx = N as u64;
    t.expect(sys::env_set_state(c, &raw const st as u64), Ok([]), "set the batch");
    t.expect(sys::env_run(c), Ok([]), "run it");
    // Let it run a little, then stop it: it is in the middle if some but
    // not all of its records took effect.
    let mut caught = None;
    for _ in 0..100_000 {
        let _ = sys::yield_cpu(0);
        let _ = sys::env_stop(c, 1);
        let Some(now) = get(c) else { break };
        if now.regs.rdx > 0 && now.regs.rdx < N as u64 {
            caught = Some(now);
            break;
        }
        if now.regs.rip != CODE_VA || exposed::env_entry(cid).is_none_or(|e| e.status == ENV_ZOMBIE) {
            break;
        }
        let _ = sys::env_stop(c, 0);
    }
    let Some(mid) = caught else {
        let _ = sys::env_destroy(c);
        return None;
    };
    let left = mid.regs.rdx as usize;
    let done = N - left;
    println!("state-batch: stopped after {done} of {N} records ({left} left)");
    stops.push(done as u64);
    t.expect(
        (mid.regs.rip, mid.regs.rax, mid.regs.rdi, mid.regs.rsi),
        (CODE_VA, Call::page_batch.number(), 0, REC_VA + done as u64 * RECORD),
        "a caller mid-batch exports the same call on the syscall, rsi at the next record",
    );
    t.expect(maps(s.pfn), left as u64, "exactly the records before rsi took effect");
    // The twin: the same memory as the original has now, the same state.
    let [f, fid] = sys::env_create().ok()?;
    build(t, s, f, done);
    t.expect(sys::env_set_state(f, &raw const mid as u64), Ok([]), "import the state into a fresh environment");
    t.expect(get(f).map(|g| g.regs), Some(mid.regs), "the twin's registers are the exported ones");
    t.expect(maps(s.pfn), 2 * left as u64, "the twin maps what the original still does");
    t.expect(sys::env_run(f), Ok([]), "run the twin");
    t.expect(sys::env_stop(c, 0), Ok([]), "let the original go on");
    t.expect(wait_end(cid), Some(0), "the original finishes the batch and exits 0");
    t.expect(wait_end(fid), Some(0), "the twin finishes the batch and exits 0");
    t.expect(maps(s.pfn), 0, "both unmapped every remaining page: no mapping left");
    t.expect(sys::env_reap(c), Ok([0]), "reap the original");
    t.expect(sys::env_reap(f), Ok([0]), "reap the twin");
    Some(())
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("state-batch");
    let Ok([code, _]) = sys::frame_alloc(ANY_FRAME) else {
        println!("state-batch: FAIL frame for the code");
        return 1;
    };
    t.expect(sys::page_map(0, code, SCRATCH, pte::WRITABLE | pte::NO_EXECUTE), Ok([]), "map the code frame here");
    for (i, w) in child_code().chunks(8).enumerate() {
        let mut b = [0u8; 8];
        b[..w.len()].copy_from_slice(w);
        mem::write(SCRATCH + 8 * i as u64, u64::from_le_bytes(b));
    }
    t.expect(sys::page_unmap(0, SCRATCH), Ok([]), "unmap it here");
    let Ok([frame, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("state-batch: FAIL the target frame");
        return 1;
    };
    // The unmap records, page-aligned in this program's heap.
    let per_page = (PAGE_SIZE / RECORD) as usize;
    let mut store: Vec<MapEntry> = Vec::with_capacity(N + per_page);
    let skip =
        (0..per_page).find(|&k| (store.as_ptr() as u64 + k as u64 * RECORD).is_multiple_of(PAGE_SIZE)).unwrap_or(0);
    store.extend((0..skip).map(|_| MapEntry::unmap(0)));
    store.extend((0..N).map(|i| MapEntry::unmap(TARGET_VA + i as u64 * PAGE_SIZE)));
    let records = store.as_ptr() as u64 + skip as u64 * RECORD;
    let s = Setup { code, frame, pfn, records };
    // Attempts until the child was caught at `STOPS` points (each attempt
    // catches it once, or not at all if it was not in the middle).
    let mut stops: Vec<u64> = Vec::new();
    for _ in 0..ATTEMPTS {
        let _ = attempt(&mut t, &s, &mut stops);
        if stops.len() >= STOPS {
            break;
        }
    }
    let done = stops.len() >= STOPS;
    // Every stop is at a restart point: a multiple of the granularity.
    let step = exposed::restart_records();
    println!("state-batch: caught at {} points, restart granularity {step} records", stops.len());
    t.check(stops.iter().all(|d| d.is_multiple_of(step)), "every stop is at a restart point");
    if !step.is_multiple_of(BATCH_STEP) && !BATCH_STEP.is_multiple_of(step) {
        // The knob took effect: the default's points would not all be these.
        t.check(stops.iter().any(|d| !d.is_multiple_of(BATCH_STEP)), "a stop between the default's restart points");
    }
    t.check(done, "the child was caught in the middle of its batch at enough points");
    t.expect(sys::frame_free(frame), Ok([]), "free the target frame");
    drop(store);
    t.finish()
}
