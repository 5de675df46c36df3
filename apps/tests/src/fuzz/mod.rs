//! The system-call fuzzer (`cargo xtask fuzz`, scenario `fuzz-short`): a
//! sandboxed environment issues random calls from the call table with
//! hostile arguments ([`run`]); directed probes scale one resource to its
//! limit ([`probes`]). Counts go to a page shared with the driver
//! (`apps/tests/src/bin/fuzz.rs`), word by word as laid out below, so they
//! survive a sandbox that ends early.

pub mod probes;
mod raw;
pub mod shape;
pub mod table;
pub mod values;

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, CAP_SLOTS, cap_kind};
use oxok_libos::sys;
use table::{TABLE, kind_of};
use values::{DATA, DATA_PAGES, World};

/// Counter word: calls issued.
pub const W_CALLS: usize = 0;
/// Counter word: calls that returned 0.
pub const W_OK: usize = 1;
/// Counter words: calls that returned error code `c` are counted at
/// `W_ERR + c` (codes 1..=`MAX_CODE`).
pub const W_ERR: usize = 2;
/// Highest error code counted on its own.
pub const MAX_CODE: usize = 24;
/// Counter word: calls that returned a status no `Error` has.
pub const W_UNKNOWN: usize = W_ERR + MAX_CODE + 1;
/// Counter word: the call in flight (table index + 1), 0 between calls.
pub const W_LAST: usize = W_UNKNOWN + 1;
/// Counter words: calls of table index `i` are counted at `W_CALL + i`.
pub const W_CALL: usize = 64;
/// Counter words: the error codes call `i` returned, one bit per code
/// (`1 << code`), at `W_SEEN + i`; the driver ORs them, never adds.
pub const W_SEEN: usize = W_CALL + 256;
/// Calls with a word of their own at `W_SEEN`.
pub const SEEN_CALLS: usize = 512 - W_SEEN;
/// Words the driver reads (one page holds 512).
pub const WORDS: usize = W_SEEN + SEEN_CALLS;

/// Maps the fuzzer's buffer (`DATA`, writable) in the caller.
fn map_data() -> Result<(), oxok_libos::abi::Error> {
    for i in 0..DATA_PAGES {
        let [slot, _] = sys::frame_alloc(ANY_FRAME)?;
        sys::page_map(0, slot, DATA + i * PAGE_SIZE, pte::WRITABLE | pte::NO_EXECUTE)?;
    }
    Ok(())
}

/// Issues `calls` random calls with seed `seed`, counting into `counters`.
/// Ends by destroying every environment it holds a capability for.
pub fn run(counters: &[AtomicU64], calls: u64, seed: u64) -> Result<(), oxok_libos::abi::Error> {
    map_data()?;
    let mut w = World::new(seed);
    let mut issued = 0;
    while issued < calls {
        let (call, names) = TABLE[w.rng.index(TABLE.len())];
        let mut a = [0u64; 6];
        for (slot, name) in a.iter_mut().zip(names.iter()) {
            *slot = w.value(kind_of(name));
        }
        // Registers a call does not read hold garbage too.
        for slot in a.iter_mut().skip(names.len()) {
            *slot = w.rng.next();
        }
        if !shape::prepare(&mut w, call, &mut a) {
            continue;
        }
        let index = TABLE.iter().position(|(c, _)| *c == call).unwrap_or(0);
        counters[W_LAST].store(index as u64 + 1, Ordering::Relaxed);
        let extra = [w.rng.next(), w.rng.next(), w.rng.next(), w.rng.next(), w.rng.next(), w.rng.next()];
        let r = raw::syscall(call.number(), a, extra);
        counters[W_LAST].store(0, Ordering::Relaxed);
        count(counters, index, r.status);
        track(&mut w, call, r.status, &a, &r.values);
        issued += 1;
    }
    release(&w);
    Ok(())
}

/// Counts one call's outcome.
fn count(counters: &[AtomicU64], index: usize, status: u64) {
    let word = match status {
        0 => W_OK,
        c if (1..=MAX_CODE as u64).contains(&c) => W_ERR + c as usize,
        _ => W_UNKNOWN,
    };
    counters[word].fetch_add(1, Ordering::Relaxed);
    if (W_ERR..=W_ERR + MAX_CODE).contains(&word) && index < SEEN_CALLS {
        counters[W_SEEN + index].fetch_or(1 << status, Ordering::Relaxed);
    }
    counters[W_CALL + index.min(255)].fetch_add(1, Ordering::Relaxed);
    counters[W_CALLS].fetch_add(1, Ordering::Relaxed);
}

/// Remembers the environments the fuzzer created and destroyed.
fn track(w: &mut World, call: oxok_libos::abi::Call, status: u64, a: &[u64; 6], out: &[u64; 3]) {
    use oxok_libos::abi::Call;
    if status != 0 {
        return;
    }
    match call {
        Call::env_create => w.children.push((out[0], out[1])),
        Call::env_destroy | Call::env_reap => {
            if let Some(i) = w.children.iter().position(|c| c.0 == a[0]) {
                let (_, id) = w.children.swap_remove(i);
                w.stale_ids.push(id);
            }
        }
        _ => {}
    }
}

/// Destroys every other environment the fuzzer holds a capability for.
fn release(w: &World) {
    for s in 1..CAP_SLOTS as u64 {
        if let Ok([kind, number, _]) = sys::cap_info(s)
            && kind == cap_kind::ENV
            && number != w.me
            && w.reserved & (1 << s) == 0
        {
            let _ = sys::env_destroy(s);
        }
    }
}
