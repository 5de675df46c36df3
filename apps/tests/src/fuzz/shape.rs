//! Per-call shaping of the random arguments: what the buffers hold (batch
//! records, predicate bytecode, imported states), and the few calls the
//! fuzzer leaves out because they would legitimately end it or put it to
//! sleep forever.

use super::values::{ARENA, ARENA_PAGES, DATA, DATA_END, World};
use crate::mem;
use oxok_libos::abi::layout::PAGE_SIZE;
use oxok_libos::abi::{Call, EnvState, PREDICATES, PROTECT, SHARE, UNMAP, cap_kind};
use oxok_libos::sys;

/// Fills buffers and adjusts arguments for `call`; false if the call is
/// left out this time (the caller draws another).
///
/// Left out, because they would end or stall the fuzzer itself rather than
/// test the kernel:
/// * `env_exit` (ends the caller, always);
/// * `env_destroy`, `env_set_state` (a random state makes it crash),
///   `frame_revoke` (the abort protocol takes its own code and stack),
///   `upcall_register` (a random entry for its own faults), `env_limit`
///   (a budget below its runtime's needs) on **itself** — on every other
///   environment they are fuzzed;
/// * `slot_spare(…, 0)`: on itself it would never be given time again; on
///   a child it leaves an environment nobody can end if the sandbox dies
///   first (it can run but never gets time, so the machine never halts);
/// * `env_stop(…, 1)`: the same for a child stopped and then orphaned;
/// * `cap_drop` of the slot `env_create` returned for a live child: the
///   fuzzer's only handle on it; an orphan that was never started lives
///   until the machine is idle (a 10⁶-call run filled the environment
///   table with 1008 of them before this rule);
/// * `env_sleep` with a mask naming an installed predicate (random ones
///   may never hold: asleep forever) — masks the kernel must refuse are
///   fuzzed;
/// * unmapping or write-protecting its **own** code, stack or heap pages
///   (`page_unmap`, `page_protect`, `page_batch` records): such addresses
///   are moved into the arena;
/// * `cap_drop` of the capabilities its runtime held before fuzzing.
pub fn prepare(w: &mut World, call: Call, a: &mut [u64; 6]) -> bool {
    match call {
        Call::env_exit => return false,
        Call::env_destroy | Call::env_set_state | Call::frame_revoke | Call::upcall_register | Call::env_limit
            if names_self(w, a[0]) =>
        {
            return false;
        }
        Call::slot_spare if a[1] == 0 => return false,
        Call::env_stop if a[1] == 1 => return false,
        Call::env_sleep => {
            // Only masks with no bit below PREDICATES, or none at all.
            a[0] &= !((1u64 << PREDICATES) - 1);
        }
        Call::cap_drop if a[0] < 64 && w.reserved & (1 << a[0]) != 0 => return false,
        Call::cap_drop if w.children.iter().any(|c| c.0 == a[0]) => return false,
        Call::page_unmap | Call::page_protect => a[1] = away_from_own(w, a[1]),
        _ => {}
    }
    match call {
        Call::page_batch => fill_batch(w),
        Call::pred_install => {
            let insns = fill_pred(w);
            if w.rng.chance(2) {
                a[3] = insns * 16;
            }
        }
        Call::env_set_state => fill_state(w),
        Call::env_rename => fill_bytes(w, 48),
        Call::console_write => console_safe(a),
        _ => {}
    }
    true
}

/// True if capability slot `slot` names the caller itself.
fn names_self(w: &World, slot: u64) -> bool {
    slot == 0 || sys::cap_info(slot).is_ok_and(|[kind, number, _]| kind == cap_kind::ENV && number == w.me)
}

/// `va`, or an arena page instead if `va` is one of the fuzzer's own.
fn away_from_own(w: &mut World, va: u64) -> u64 {
    if World::own_page(va) { ARENA + w.rng.below(ARENA_PAGES) * PAGE_SIZE } else { va }
}

/// Writes `words` at `DATA + 8 * at`, where the buffer is still
/// writable (fuzzed calls may unmap or write-protect it).
fn put(at: u64, words: &[u64]) {
    for (i, &v) in words.iter().enumerate() {
        let va = DATA + 8 * (at + i as u64);
        if va < DATA_END && oxok_libos::exposed::writable(va) {
            mem::write(va, v);
        }
    }
}

/// Up to 20 random `MapEntry` records at `DATA`: maps, unmaps, protects
/// and shares with random addresses, slots and flags.
fn fill_batch(w: &mut World) {
    for i in 0..w.rng.below(21) {
        let va = w.va();
        let va = away_from_own(w, va);
        let (slot, src) = match w.rng.below(5) {
            0 => (UNMAP, 0),
            1 => (PROTECT, w.value(super::table::Kind::CapSlot)),
            2 => (SHARE, w.ptr() & !(PAGE_SIZE - 1)),
            3 => (w.rng.next(), w.rng.next()),
            _ => (w.value(super::table::Kind::CapSlot), 0),
        };
        let flags = w.value(super::table::Kind::Small);
        put(i * 4, &[va, slot, flags, src]);
    }
}

/// A random predicate at `DATA`: clauses of load, arithmetic and compare
/// with random operands (addresses from the pointer generator), joined by
/// `or`, sometimes with a byte corrupted. Returns its instruction count.
fn fill_pred(w: &mut World) -> u64 {
    let mut n = 0u64;
    let want = 1 + w.rng.below(66);
    while n < want {
        let ops: &[u8] = match n % 3 {
            0 => &[0x01],
            1 => &[0x02, 0x03, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16],
            _ => &[0x20, 0x10, 0x16],
        };
        let op = *w.rng.pick(ops);
        let kind = w.rng.below(4);
        let size = *w.rng.pick(&[0u64, 1, 2, 4, 8]);
        let param = w.rng.below(9);
        let imm = if kind >= 2 { w.ptr() } else { w.rng.next() };
        let mut word = u64::from(op) | size << 8 | kind << 16 | param << 24;
        if w.rng.chance(16) {
            word ^= 1 << w.rng.below(64);
        }
        if op == 0x20 {
            word = 0x20;
        }
        put(n * 2, &[word, if op == 0x20 { 0 } else { imm }]);
        n += 1;
    }
    n
}

/// A state to import at `DATA`: a real one (a child's, or the fuzzer's
/// own) with a few words replaced by hostile values.
fn fill_state(w: &mut World) {
    let words = (core::mem::size_of::<EnvState>() / 8) as u64;
    let from = if w.children.is_empty() { 0 } else { w.children[w.rng.index(w.children.len())].0 };
    let _ = sys::env_get_state(from, DATA);
    for _ in 0..w.rng.below(5) {
        let at = w.rng.below(words);
        let v = match w.rng.below(4) {
            0 => w.ptr(),
            1 => w.va(),
            2 => 1 << w.rng.below(64),
            _ => w.rng.next(),
        };
        put(at, &[v]);
    }
}

/// Random bytes (often printable) at `DATA`.
fn fill_bytes(w: &mut World, len: u64) {
    for i in 0..len.div_ceil(8) {
        let v =
            if w.rng.chance(2) { 0x6161_6161_6161_6161 + (w.rng.next() & 0x0f0f_0f0f_0f0f_0f0f) } else { w.rng.next() };
        put(i, &[v]);
    }
}

/// `console_write` really writes what it is given: keep the console
/// readable — readable memory outside the buffer becomes the buffer, and
/// what the buffer gives is at most 8 dots.
fn console_safe(a: &mut [u64; 6]) {
    let inside = (DATA..DATA_END).contains(&a[0]);
    if !inside && oxok_libos::exposed::readable(a[0]) {
        a[0] = DATA + (a[0] & (PAGE_SIZE - 1));
    }
    if (DATA..DATA_END).contains(&a[0]) && a[0].checked_add(a[1]).is_some_and(|end| end <= DATA_END) {
        a[1] %= 9;
        let start = (a[0] - DATA) / 8;
        for at in start..=(a[0] + a[1] - DATA) / 8 {
            put(at, &[0x2e2e_2e2e_2e2e_2e2e]);
        }
    }
}
