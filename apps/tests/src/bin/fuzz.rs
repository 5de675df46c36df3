//! fuzz: the system-call fuzzer (see `oxok_tests::fuzz`).
//!
//! * `fuzz drive CALLS SEED [SCALE]` — the driver (a boot program beside
//!   `fuzz-victim`): spawns sandboxes that issue CALLS random calls in
//!   chunks, each in an account of its own, then the directed probes;
//!   prints calls per outcome and per call, and its verdict. A sandbox that
//!   ends early (its own hostile call ended it) is replaced by the next.
//!   The probes scale to SCALE (default CALLS).
//! * `fuzz sandbox VA N SEED` — N random calls; counters in the page the
//!   driver shared at VA.
//! * `fuzz probe NAME SCALE` — one directed probe.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::string::String;
use core::sync::atomic::Ordering;
use oxok_libos::abi::layout::ENV_TABLE_ROWS;
use oxok_libos::abi::{Error, contract};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::shm::Region;
use oxok_libos::{Args, exposed, println, proc, process, upcall};
use oxok_tests::fuzz::probes::PROBES;
use oxok_tests::fuzz::table::TABLE;
use oxok_tests::fuzz::{self, MAX_CODE, SEEN_CALLS, W_CALL, W_CALLS, W_ERR, W_LAST, W_OK, W_SEEN, W_UNKNOWN, WORDS};

oxok_libos::main!(main);

/// Calls per sandbox.
const CHUNK: u64 = 2000;
/// Frames and environments a sandbox may hold beyond what it was started with.
const SANDBOX_FRAMES: u64 = 160;
const SANDBOX_ENVS: u64 = 6;
/// Sandboxes in a row that may end before issuing a single call.
const MAX_BARREN: u32 = 3;

fn num(args: &Args, i: usize) -> u64 {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(0)
}

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("drive") => drive(num(&args, 2), num(&args, 3), args.get(4).and_then(|s| s.parse().ok())),
        Some("sandbox") => {
            sandbox(u64::from_str_radix(args.get(2).unwrap_or("0"), 16).unwrap_or(0), num(&args, 3), num(&args, 4))
        }
        Some("probe") => probe(args.get(2).unwrap_or(""), num(&args, 3)),
        _ => {
            println!("fuzz: usage: fuzz drive CALLS SEED");
            2
        }
    }
}

/// The victim's id: a boot program named `fuzz-victim`.
fn victim() -> Option<u64> {
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
    let end = exposed::rdtsc().saturating_add(hz.saturating_mul(10));
    loop {
        let found = (0..ENV_TABLE_ROWS).filter_map(exposed::env_row).find_map(|r| {
            let n = r.name.iter().position(|&b| b == 0).unwrap_or(r.name.len());
            (&r.name[..n] == b"fuzz-victim" && r.parent == 0).then_some(u64::from(r.id))
        });
        if found.is_some() || exposed::rdtsc() > end {
            return found;
        }
        let _ = oxok_libos::sys::yield_cpu(0);
    }
}

/// Seconds since `start` (TSC).
fn secs(start: u64) -> u64 {
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz).max(1);
    exposed::rdtsc().wrapping_sub(start) / hz
}

fn drive(calls: u64, seed: u64, scale: Option<u64>) -> i32 {
    let mut failures = 0u32;
    let start = exposed::rdtsc();
    let Some(victim) = victim() else {
        println!("fuzz: FAIL no fuzz-victim running beside the driver");
        return 1;
    };
    let Ok(page) = Region::create(1) else {
        println!("fuzz: FAIL cannot create the counter page");
        return 1;
    };
    let words = page.words();
    let mut totals = [0u64; WORDS];
    let (mut done, mut chunk, mut early, mut barren) = (0u64, 0u64, 0u64, 0u32);
    println!("fuzz: {calls} random calls, seed {seed}, {} calls in the table, victim {victim}", TABLE.len());
    while done < calls {
        for w in &words[..WORDS] {
            w.store(0, Ordering::Relaxed);
        }
        let n = (calls - done).min(CHUNK);
        let chunk_seed = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(chunk).rotate_left(17) ^ seed;
        let argv = [
            String::from("fuzz"),
            String::from("sandbox"),
            format!("{:x}", page.va()),
            format!("{n}"),
            format!("{chunk_seed}"),
        ];
        let argv: [&str; 5] = [&argv[0], &argv[1], &argv[2], &argv[3], &argv[4]];
        let child = match exec::spawn("fuzz", &argv) {
            Ok(c) => c,
            Err(e) => {
                println!("fuzz: FAIL spawn of sandbox {chunk}: {e}");
                return 1;
            }
        };
        if let Err(e) = page.share(child.slot, true) {
            println!("fuzz: FAIL sharing the counter page: {e}");
            return 1;
        }
        let status = exec::wait(child);
        let issued = words[W_CALLS].load(Ordering::Relaxed);
        for (i, (t, w)) in totals.iter_mut().zip(words.iter()).enumerate() {
            let w = w.load(Ordering::Relaxed);
            *t = if i >= W_SEEN { *t | w } else { *t + w };
        }
        if status != Ok(ExitStatus::Exited(0)) {
            early += 1;
            let last = words[W_LAST].load(Ordering::Relaxed) as usize;
            let during = last.checked_sub(1).and_then(|i| TABLE.get(i)).map_or("none", |(c, _)| c.name());
            println!(
                "fuzz: sandbox {chunk} (seed {chunk_seed}) ended {status:?} after {issued} calls; call in flight: {during}"
            );
        }
        barren = if issued == 0 { barren + 1 } else { 0 };
        if barren >= MAX_BARREN {
            println!("fuzz: FAIL {barren} sandboxes in a row issued no call");
            return 1;
        }
        if !proc::alive(victim) {
            println!("fuzz: FAIL isolation break: the victim is gone after sandbox {chunk}");
            return 1;
        }
        done += issued;
        chunk += 1;
        if chunk % 50 == 0 {
            println!("fuzz: {done} calls so far");
        }
    }
    report(&totals, chunk, early, secs(start));
    for (name, _) in PROBES {
        let t = exposed::rdtsc();
        failures += u32::from(!run_probe(name, scale.unwrap_or(calls)));
        println!("fuzz: probe {name} took {} s", secs(t));
    }
    if !proc::alive(victim) {
        println!("fuzz: FAIL isolation break: the victim is gone after the probes");
        failures += 1;
    }
    println!("fuzz: isolation breaks {}", u32::from(!proc::alive(victim)));
    if failures == 0 {
        println!("fuzz: ok ({done} calls)");
        0
    } else {
        println!("fuzz: FAIL {failures} probes failed");
        1
    }
}

/// Prints the counts: by outcome, then by call.
fn report(totals: &[u64; WORDS], sandboxes: u64, early: u64, secs: u64) {
    println!(
        "fuzz: {} calls in {sandboxes} sandboxes ({early} ended early by their own calls) in {secs} s",
        totals[W_CALLS]
    );
    let mut line = format!("fuzz: outcomes: ok {}", totals[W_OK]);
    for code in 1..=MAX_CODE {
        let n = totals[W_ERR + code];
        if n != 0 {
            let name = Error::from_code(code as u64).map_or("?", |e| e.text());
            line.push_str(&format!(", {name} ({code}) {n}"));
        }
    }
    line.push_str(&format!(", unknown status {}", totals[W_UNKNOWN]));
    println!("{line}");
    let mut line = String::from("fuzz: per call:");
    for (i, (call, _)) in TABLE.iter().enumerate() {
        line.push_str(&format!(" {} {}", call.name(), totals[W_CALL + i.min(255)]));
    }
    println!("{line}");
    undocumented(totals);
}

/// Checks every error a call returned against its contract in
/// `abi/src/calls.rs` (`oxok_abi::contract::allows`; issue 10: documentation
/// and behaviour agree): an error the contract does not allow is printed,
/// and counted.
fn undocumented(totals: &[u64; WORDS]) {
    let mut n = 0;
    for (i, (call, _)) in TABLE.iter().enumerate().take(SEEN_CALLS) {
        for code in 1..=MAX_CODE as u64 {
            if totals[W_SEEN + i] & (1 << code) == 0 {
                continue;
            }
            match Error::from_code(code) {
                Some(e) if contract::allows(*call, e) => {}
                e => {
                    println!("fuzz: undocumented: {} returned {} ({code})", call.name(), e.map_or("?", Error::name));
                    n += 1;
                }
            }
        }
    }
    println!("fuzz: undocumented errors {n}");
}

/// Runs probe `name` in a process of its own; true if it passed.
fn run_probe(name: &str, scale: u64) -> bool {
    let scale = format!("{scale}");
    let child = match exec::spawn("fuzz", &["fuzz", "probe", name, &scale]) {
        Ok(c) => c,
        Err(e) => {
            println!("fuzz: FAIL spawn of probe {name}: {e}");
            return false;
        }
    };
    match exec::wait(child) {
        Ok(ExitStatus::Exited(0)) => true,
        other => {
            println!("fuzz: FAIL probe {name} ended {other:?}");
            false
        }
    }
}

fn sandbox(va: u64, calls: u64, seed: u64) -> i32 {
    let Ok(page) = Region::attach(va, 1, 100_000) else {
        println!("fuzz: FAIL sandbox: no counter page at {va:#x}");
        return 3;
    };
    // Owning a time slot (a fuzzed slot_alloc) means answering slot ends.
    if upcall::install_slot_handlers().is_err() {
        println!("fuzz: FAIL sandbox: slot handlers");
        return 3;
    }
    let used = process::usage(0).map_or(0, |u| u.frames);
    if let Err(e) = process::limit(0, used + SANDBOX_FRAMES, SANDBOX_ENVS) {
        println!("fuzz: FAIL sandbox: env_limit: {e}");
        return 3;
    }
    match fuzz::run(page.words(), calls, seed) {
        Ok(()) => 0,
        Err(e) => {
            println!("fuzz: FAIL sandbox set-up: {e}");
            3
        }
    }
}

fn probe(name: &str, scale: u64) -> i32 {
    let Some((_, f)) = PROBES.iter().find(|(n, _)| *n == name) else {
        println!("fuzz: FAIL no probe {name}");
        return 2;
    };
    match f(scale) {
        Ok(figure) => {
            println!("fuzz: probe {name}: {figure}");
            0
        }
        Err(why) => {
            println!("fuzz: FAIL probe {name}: {why}");
            1
        }
    }
}
