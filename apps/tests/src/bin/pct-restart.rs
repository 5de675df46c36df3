//! pct-restart: Fluke's restart rule for protected control transfer. This
//! program serves transfers; a child C built from outside calls it
//! synchronously (`pct_call`) and, when the call returns, stores `rax` and
//! `rsi` on its stack page (which the parent also maps) and exits. Inside
//! the handler, with C waiting:
//! - C's exported registers say `pct_wait(me, ticket)` on the `syscall`,
//!   and this program's own export holds the served call (caller C, the
//!   same ticket, the interrupted state);
//! - C's state is copied into a fresh environment F, and C's own state is
//!   replaced by a plain `null` call; F, run, takes over the wait; a second
//!   copy G finds the wait taken (`Busy`); a forged ticket, a wait on
//!   itself and on nobody are refused;
//! - the reply goes to F (rax 0, the reply word), never over C's new state
//!   (C ends with rax 0 and its own rsi).
//!
//! A second caller D is replaced inside the handler with nothing else
//! happening there, so that the reply could take the kernel's fast path
//! (`handoff`): the reply is dropped there too and D runs its new state.
//!
//! D's ticket must not follow from C's: tickets were once a SplitMix step
//! of a counter (a public bijection), which one ticket — any server sees
//! the tickets of the calls it serves — inverts to give every later one.
//!
//! Then two callers wait on a callee that never replies (a child spinning
//! in its entry): one callee is destroyed, the other's state is replaced
//! by one that serves nothing; each waiting caller's call completes with
//! `BadEnv` (its `pct_wait` ends, `rip` past it).
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_libos::abi::layout::{PAGE_SIZE, pte};
use oxok_libos::abi::{ANY_FRAME, Call, ENV_WAITING, ENV_ZOMBIE, EnvState, Error, Regs, call_target, rights};
use oxok_libos::pct::{self, Msg};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const SCRATCH: u64 = 0x1400_0000_0000;
const CHILD_CODE: u64 = 0x50_0000;
const CHILD_STACK: u64 = 0x6fff_ffff_f000;
const ASK: u64 = 0xa5c0_0000_0000_0001;
const REPLY: u64 = 0x4e50_4c59_0000_0002;
const OWN: u64 = 0x5eed_0000_0000_0003;
/// D's question: the handler replaces D's state and replies at once.
const ASK_REPLACE: u64 = 0xa5c0_0000_0000_0004;

/// Verdicts of the checks made inside the handler.
static HANDLER_FAILS: AtomicU64 = AtomicU64::new(0);
static HANDLER_CHECKS: AtomicU64 = AtomicU64::new(0);
static SERVED: AtomicBool = AtomicBool::new(false);
/// The ticket of C's call, as the handler saw it.
static C_TICKET: AtomicU64 = AtomicU64::new(0);
/// Capability slots: the code frame, and for C, F, G the env and its
/// stack frame (set before the call, read by the handler).
static SLOTS: [AtomicU64; 10] = [const { AtomicU64::new(0) }; 10];
const CODE: usize = 0;
const C: usize = 1;
const F: usize = 3;
const G: usize = 5;
const D: usize = 7;

fn check(cond: bool, what: &str) {
    HANDLER_CHECKS.fetch_add(1, Ordering::Relaxed);
    if !cond {
        HANDLER_FAILS.fetch_add(1, Ordering::Relaxed);
        println!("pct-restart: FAIL {what}");
    }
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("pct-restart");
    let me = exposed::self_id();
    t.expect(pct::serve(handler).map(|_| ()), Ok(()), "serve");
    let Some(code) = code_frame(&mut t) else { return t.finish() };
    SLOTS[CODE].store(code, Ordering::Relaxed);
    let Some((c, cid)) = child(&mut t, 0) else { return t.finish() };
    SLOTS[C].store(c, Ordering::Relaxed);
    if !start_caller(&mut t, c, me, ASK) {
        return t.finish();
    }
    // Everything else happens in the handler while C waits.
    let mut spins = 0;
    while !SERVED.load(Ordering::Acquire) && spins < 100_000 {
        let _ = sys::yield_cpu(0);
        spins += 1;
    }
    t.check(SERVED.load(Ordering::Acquire), "C's call arrived");
    for (id, what) in [(cid, "C ended"), (SLOTS[F + 1].load(Ordering::Relaxed), "F ended")] {
        t.check(wait_end(id), what);
    }
    t.expect(result(0), (0, OWN), "C, replaced while waiting, ran its new state: the reply did not clobber it");
    t.expect(result(1), (0, REPLY), "F, holding C's exported wait, got the reply");
    t.expect(result(2).0, Error::Busy.code(), "G, a second copy of the taken wait, was refused");
    t.expect(HANDLER_FAILS.load(Ordering::Relaxed), 0, "checks in the handler");
    t.check(HANDLER_CHECKS.load(Ordering::Relaxed) >= 10, "the handler ran its checks");
    for i in [C, F, G] {
        let _ = sys::env_destroy(SLOTS[i].load(Ordering::Relaxed));
    }
    replaced_in_handler(&mut t, me);
    lost_callee(&mut t, true);
    lost_callee(&mut t, false);
    t.finish()
}

/// Starts child `slot` on its `syscall`:
/// `pct_call(me)` with `ask` in rsi, with a call-only capability for this
/// program as its credential. False if it could not be given one.
fn start_caller(t: &mut Checks, slot: u64, me: u64, ask: u64) -> bool {
    let Ok([call_slot]) = sys::cap_grant(0, slot, rights::CALL) else {
        t.check(false, "grant the caller a call capability");
        return false;
    };
    let mut regs = start_regs();
    regs.rax = Call::pct_call.number();
    regs.rdi = call_target(me, call_slot);
    regs.rsi = ask;
    t.expect(import(slot, &regs), Ok([]), "set the caller's state");
    t.expect(sys::env_run(slot), Ok([]), "run the caller");
    true
}

/// D calls with [`ASK_REPLACE`]; the handler replaces D's state and
/// replies with nothing between: D runs its new state, the reply dropped.
fn replaced_in_handler(t: &mut Checks, me: u64) {
    let Some((d, did)) = child(t, 3) else { return };
    SLOTS[D].store(d, Ordering::Relaxed);
    SLOTS[D + 1].store(did, Ordering::Relaxed);
    if !start_caller(t, d, me, ASK_REPLACE) {
        return;
    }
    t.check(wait_end(did), "D ended");
    t.expect(result(3), (0, OWN), "D, replaced in the handler, ran its new state: the reply was dropped");
    t.expect(HANDLER_FAILS.load(Ordering::Relaxed), 0, "checks in D's handler");
    let _ = sys::env_destroy(d);
}

/// A caller waits on a callee that spins in its entry; the callee is
/// destroyed (`kill`) or its state replaced: the caller's call ends with
/// `BadEnv`.
fn lost_callee(t: &mut Checks, kill: bool) {
    let what = if kill { "callee destroyed" } else { "callee's state replaced" };
    let (Some((x, xid)), Some((y, yid))) = (child(t, 3), child(t, 4)) else { return };
    let spin = CHILD_CODE + child_code::spin_offset();
    let mut regs = start_regs();
    regs.rip = spin;
    t.expect(import_with_entry(x, &regs, spin), Ok([]), "set the callee's state");
    t.expect(sys::env_run(x), Ok([]), "run the callee");
    let Ok([call_slot]) = sys::cap_grant(x, y, rights::CALL) else {
        t.check(false, "grant the caller a call capability");
        return;
    };
    regs = start_regs();
    regs.rax = Call::pct_call.number();
    regs.rdi = call_target(xid, call_slot);
    regs.rsi = ASK;
    t.expect(import(y, &regs), Ok([]), "set the caller's state");
    t.expect(sys::env_run(y), Ok([]), "run the caller");
    settle(yid, ENV_WAITING);
    t.expect(exposed::env_entry(yid).map(|r| r.status), Some(ENV_WAITING), "the caller waits");
    if kill {
        t.expect(sys::env_destroy(x), Ok([]), what);
    } else {
        let mut other = start_regs();
        other.rip = spin;
        t.expect(import_with_entry(x, &other, spin), Ok([]), what);
    }
    t.check(wait_end(yid), "the caller ended");
    t.expect(result(4).0, Error::BadEnv.code(), what);
    let _ = sys::env_destroy(y);
    if !kill {
        let _ = sys::env_destroy(x);
    }
}

/// Sets an environment's state: `regs`, a PCT entry, everything else fresh.
#[inline(never)]
fn import_with_entry(slot: u64, regs: &Regs, entry: u64) -> Result<[u64; 0], Error> {
    let mut st = EnvState::new();
    st.regs = *regs;
    st.upcalls[oxok_libos::abi::upcall::PCT as usize] = entry;
    sys::env_set_state(slot, &raw const st as u64)
}

/// The handler: C is waiting for this reply. (It runs on the libOS's
/// 16 KiB transfer stack: full `EnvState`s live only in the small helpers
/// below, one at a time.)
fn handler(caller: u64, sync: bool, msg: &mut Msg) {
    if msg[0] == ASK_REPLACE {
        // D's round: replace the waiting caller, then reply at once.
        let d = SLOTS[D].load(Ordering::Relaxed);
        let fresh = Regs { rax: Call::null.number(), rsi: OWN, ..start_regs() };
        check(caller == SLOTS[D + 1].load(Ordering::Relaxed), "D's call");
        check(import(d, &fresh) == Ok([]), "replace D's state while it waits");
        let d_ticket = serving_of(0).map_or(0, |(_, _, t, _)| t);
        check(d_ticket != 0, "D's call has a ticket");
        let c_ticket = C_TICKET.load(Ordering::Relaxed);
        check(splitmix(unsplitmix(c_ticket)) == c_ticket, "the attack inverts SplitMix");
        check(!splitmix_follows(c_ticket, d_ticket), "D's ticket does not follow from C's");
        msg[0] = REPLY;
        return;
    }
    if SERVED.swap(true, Ordering::AcqRel) {
        return;
    }
    let me = exposed::self_id();
    let c = SLOTS[C].load(Ordering::Relaxed);
    check(sync && msg[0] == ASK, "a synchronous call with the question");
    let Some(waiting) = regs_of(c) else {
        check(false, "export the waiting caller");
        return;
    };
    let ticket = waiting.rsi;
    C_TICKET.store(ticket, Ordering::Relaxed);
    check(waiting.rax == Call::pct_wait.number(), "waiting caller's rax says pct_wait");
    check(waiting.rip == CHILD_CODE && waiting.rdi == me, "… on the syscall, naming the callee");
    check(ticket != 0, "… with a ticket");
    let own = serving_of(0);
    check(
        own.is_some_and(|(serving, from, t, rip)| serving == 1 && from == caller && t == ticket && rip != 0),
        "own export holds the served call and its interrupted state",
    );
    // Refused waits.
    check(sys::pct_wait(me, ticket) == Err(Error::Invalid), "pct_wait on itself refused");
    check(sys::pct_wait(u64::from(u32::MAX), ticket) == Err(Error::BadEnv), "pct_wait on nobody refused");
    // A fresh environment F gets C's waiting state; C gets a new one.
    let Some((f, fid)) = child_slots(F, 1) else { return };
    check(import(f, &waiting) == Ok([]), "import the wait into F");
    check(regs_of(f) == Some(waiting), "F's state is C's");
    let mut fresh = waiting;
    fresh.rax = Call::null.number();
    fresh.rsi = OWN;
    check(import(c, &fresh) == Ok([]), "replace C's state while it waits");
    check(exposed::env_entry(caller).is_some_and(|r| r.status != ENV_WAITING), "C waits no more");
    // F takes the wait over: run it until it waits.
    check(sys::env_run(f) == Ok([]), "run F");
    settle(fid, ENV_WAITING);
    check(exposed::env_entry(fid).is_some_and(|r| r.status == ENV_WAITING), "F waits for the reply");
    // G with a forged ticket: BadEnv; then with the real one while F
    // waits: Busy.
    let mut forged = waiting;
    forged.rsi = ticket ^ 0x10;
    let Some((g, gid)) = child_slots(G, 2) else { return };
    check(import(g, &forged) == Ok([]), "import a forged ticket into G");
    check(sys::env_run(g) == Ok([]), "run G");
    settle(gid, ENV_ZOMBIE);
    check(result(2).0 == Error::BadEnv.code(), "a forged ticket is refused (BadEnv)");
    let _ = sys::env_destroy(g);
    let Some((g, gid)) = child_slots(G, 2) else { return };
    check(import(g, &waiting) == Ok([]), "import the wait into G too");
    check(sys::env_run(g) == Ok([]), "run G again");
    settle(gid, ENV_ZOMBIE);
    check(result(2).0 == Error::Busy.code(), "a second copy of a taken wait is refused (Busy)");
    msg[0] = REPLY;
}

/// SplitMix64's output step and its multipliers.
const SPLITMIX: [u64; 3] = [0x9e37_79b9_7f4a_7c15, 0xbf58_476d_1ce4_e5b9, 0x94d0_49bb_1331_11eb];

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_mul(SPLITMIX[0]);
    z = (z ^ (z >> 30)).wrapping_mul(SPLITMIX[1]);
    z = (z ^ (z >> 27)).wrapping_mul(SPLITMIX[2]);
    z ^ (z >> 31)
}

/// The input [`splitmix`] made `y` from.
fn unsplitmix(y: u64) -> u64 {
    // The inverse of an odd multiplier mod 2^64 (Newton's iteration), of
    // `z ^ (z >> s)` (applied until the shifted bits run out).
    let inverse = |m: u64| (0..6).fold(m, |x, _| x.wrapping_mul(2u64.wrapping_sub(m.wrapping_mul(x))));
    let unshift = |y: u64, s: u32| (0..64 / s).fold(y, |x, _| y ^ (x >> s));
    let mut x = unshift(y, 31).wrapping_mul(inverse(SPLITMIX[2]));
    x = unshift(x, 27).wrapping_mul(inverse(SPLITMIX[1]));
    unshift(x, 30).wrapping_mul(inverse(SPLITMIX[0]))
}

/// The attack on counter tickets: `later` is [`splitmix`] of the input
/// `earlier` came from plus 1 to 64 (other tickets issued between).
fn splitmix_follows(earlier: u64, later: u64) -> bool {
    let x = unsplitmix(earlier);
    (1..=64).any(|k| splitmix(x.wrapping_add(k)) == later)
}

/// Yields until environment `id` has status `status` (or is gone).
fn settle(id: u64, status: u32) {
    for _ in 0..100_000 {
        if exposed::env_entry(id).is_none_or(|r| r.status == status) {
            return;
        }
        let _ = sys::yield_cpu(0);
    }
}

/// An environment's exported registers.
#[inline(never)]
fn regs_of(slot: u64) -> Option<Regs> {
    get(slot).map(|s| s.regs)
}

/// An environment's exported serving record: (serving, caller, ticket,
/// saved rip).
#[inline(never)]
fn serving_of(slot: u64) -> Option<(u64, u64, u64, u64)> {
    get(slot).map(|s| (s.pct.serving, s.pct.caller, s.pct.ticket, s.pct.saved.rip))
}

/// Sets an environment's state: `regs`, everything else fresh.
#[inline(never)]
fn import(slot: u64, regs: &Regs) -> Result<[u64; 0], Error> {
    let mut st = EnvState::new();
    st.regs = *regs;
    sys::env_set_state(slot, &raw const st as u64)
}

/// Waits (yielding) until environment `id` has ended.
fn wait_end(id: u64) -> bool {
    for _ in 0..100_000 {
        if exposed::env_entry(id).is_none_or(|r| r.status == ENV_ZOMBIE) {
            return true;
        }
        let _ = sys::yield_cpu(0);
    }
    false
}

/// What child `k` stored: (rax, rsi) after its call returned.
fn result(k: u64) -> (u64, u64) {
    let at = SCRATCH + (k + 1) * PAGE_SIZE + PAGE_SIZE - 16;
    (oxok_tests::mem::read(at), oxok_tests::mem::read(at + 8))
}

fn get(slot: u64) -> Option<EnvState> {
    let mut st = EnvState::new();
    sys::env_get_state(slot, &raw mut st as u64).ok().map(|_| st)
}

fn start_regs() -> Regs {
    Regs { rip: CHILD_CODE, rsp: CHILD_STACK + PAGE_SIZE - 16, rflags: 0x202, ..Regs::default() }
}

/// Creates child `k` into `SLOTS[i]`/`SLOTS[i + 1]` (capability, id).
fn child_slots(i: usize, k: u64) -> Option<(u64, u64)> {
    let mut t = Checks::new("pct-restart");
    let r = child(&mut t, k);
    check(r.is_some(), "create a child");
    if let Some((slot, id)) = r {
        SLOTS[i].store(slot, Ordering::Relaxed);
        SLOTS[i + 1].store(id, Ordering::Relaxed);
    }
    r
}

/// A child with the code page and a stack page the parent also maps at
/// `SCRATCH + (k + 1) pages` (zeroed).
fn child(t: &mut Checks, k: u64) -> Option<(u64, u64)> {
    let Ok([env, id]) = sys::env_create() else {
        t.check(false, "env_create");
        return None;
    };
    let code = SLOTS[CODE].load(Ordering::Relaxed);
    t.expect(sys::page_map(env, code, CHILD_CODE, 0), Ok([]), "map the code into the child");
    let Ok([stack, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the stack");
        return None;
    };
    let view = SCRATCH + (k + 1) * PAGE_SIZE;
    let _ = sys::page_unmap(0, view);
    t.expect(sys::page_map(0, stack, view, pte::WRITABLE | pte::NO_EXECUTE), Ok([]), "map the stack here");
    oxok_tests::mem::write(view + PAGE_SIZE - 16, 0);
    oxok_tests::mem::write(view + PAGE_SIZE - 8, 0);
    t.expect(
        sys::page_map(env, stack, CHILD_STACK, pte::WRITABLE | pte::NO_EXECUTE),
        Ok([]),
        "map the stack into the child",
    );
    Some((env, id))
}

/// A frame holding the child's code, written through a scratch mapping.
fn code_frame(t: &mut Checks) -> Option<u64> {
    let Ok([slot, _]) = sys::frame_alloc(ANY_FRAME) else {
        t.check(false, "frame for the code");
        return None;
    };
    t.expect(sys::page_map(0, slot, SCRATCH, pte::WRITABLE | pte::NO_EXECUTE), Ok([]), "map the code frame");
    for (i, chunk) in child_code::code().chunks(8).enumerate() {
        let mut word = [0u8; 8];
        word[..chunk.len()].copy_from_slice(chunk);
        oxok_tests::mem::write(SCRATCH + 8 * i as u64, u64::from_le_bytes(word));
    }
    t.expect(sys::page_unmap(0, SCRATCH), Ok([]), "unmap it");
    Some(slot)
}

/// The child: one `syscall` whatever its registers say, then it stores
/// `rax` and `rsi` at `rsp` and exits with status 0.
#[allow(unsafe_code)]
mod child_code {
    use core::arch::global_asm;
    use oxok_libos::abi::Call;

    global_asm!(
        ".pushsection .rodata.oxok_pct_restart_child, \"a\"",
        ".balign 16",
        ".global oxok_pct_restart_start",
        "oxok_pct_restart_start:",
        "syscall",
        "mov [rsp], rax",
        "mov [rsp + 8], rsi",
        "xor edi, edi",
        "mov eax, {exit}",
        "syscall",
        "ud2",
        ".global oxok_pct_restart_spin",
        "oxok_pct_restart_spin:",
        "pause",
        "jmp oxok_pct_restart_spin",
        ".global oxok_pct_restart_end",
        "oxok_pct_restart_end:",
        ".popsection",
        exit = const Call::env_exit.number(),
    );

    unsafe extern "C" {
        static oxok_pct_restart_start: u8;
        static oxok_pct_restart_end: u8;
        static oxok_pct_restart_spin: u8;
    }

    /// Offset of the spin loop (a PCT entry that never replies).
    pub fn spin_offset() -> u64 {
        (&raw const oxok_pct_restart_spin) as u64 - (&raw const oxok_pct_restart_start) as u64
    }

    /// The routine's bytes.
    pub fn code() -> &'static [u8] {
        let start = &raw const oxok_pct_restart_start;
        let end = &raw const oxok_pct_restart_end;
        // SAFETY: both symbols delimit one assembled block in .rodata.
        unsafe { core::slice::from_raw_parts(start, end as usize - start as usize) }
    }
}
