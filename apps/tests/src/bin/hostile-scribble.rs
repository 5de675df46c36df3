//! hostile-scribble: a process that attacks everything it can reach while
//! an unrelated `scribble-victim` (another boot program) works.
//!
//! 1. It starts a partner of its own (`shm-pingpong child`) sharing a
//!    region (`shm::Region`) and a pipe, then finds through its own page
//!    tables and the frame table every writable page that is shared with
//!    anyone and writes garbage over all of it, round after round.
//! 2. It writes to every table the kernel exposes (the victim's row of the
//!    environment table, the frame table, clock, system page, slot vector,
//!    run statistics, its own page tables, the boot archive): each write
//!    faults, and its page-fault handler counts it and skips the store.
//!    It asks the kernel to make them writable or to pass them on: refused.
//! 3. It tries to take the victim's frames by physical name, to signal the
//!    victim and its children with every signal and forged signal messages,
//!    to destroy through every capability slot it has, and it sends the
//!    victim and its children thousands of garbage transfers (sync and
//!    async, random words and libOS tags).
//! 4. It ends its own partner (allowed: it is the parent) and cleans up.
//!
//! The victim checks its own side and finishes after it; the harness checks
//! that no frame leaked.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_libos::abi::frames::{OWNER_FIRST_ENV, OWNER_ORPHAN};
use oxok_libos::abi::layout::{
    BOOT_ARCHIVE, CLOCK, ENV_TABLE, ENV_TABLE_ROWS, FRAME_TABLE, PAGE_SIZE, PROGRAM_BASE, RUN_STATS, SLOT_VECTOR,
    SYSINFO, USER_TOP, pml4e_address, pte,
};
use oxok_libos::abi::{CAP_SLOTS, EnvEntry, Error, ExceptionFrame, MapEntry};
use oxok_libos::exec::{self, Child, ExitStatus};
use oxok_libos::pct::{self, Msg, TAG_LRPC, TAG_NOT_SERVING, TAG_PREFIX, TAG_SIGNAL};
use oxok_libos::shm::Region;
use oxok_libos::signal::{self, NSIG, SIGKILL};
use oxok_libos::upcall::{self, Kind, Outcome};
use oxok_libos::{Args, exposed, fd, println, proc, sys};
use oxok_testrng::Rng;
use oxok_tests::cpu::wait_peer;
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

const SCRIBBLE_ROUNDS: u32 = 50;
const GARBAGE: u32 = 3000;
/// Where it tries to get the environment table passed on to itself.
const TRY_VA: u64 = 0x1600_0000_0000;

static POKING: AtomicBool = AtomicBool::new(false);
static FAULTS: AtomicU64 = AtomicU64::new(0);

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-scribble");
    t.check(upcall::install().is_ok(), "upcall runtime installed");
    upcall::set_handler(Kind::PageFault, on_fault);
    let Some(victim) = wait_peer("scribble-victim", 10_000) else {
        println!("hostile-scribble: FAIL no victim");
        return 1;
    };
    let before = exposed::env_entry(victim);
    let mut rng = Rng::new(exposed::rdtsc() | 1);

    let Some((partner, region, ends)) = start_partner(&mut t) else { return t.finish() };
    let pages = shared_pages();
    let reached = |va: u64| pages.contains(&va);
    t.check(reached(region.va()) && reached(region.va() + PAGE_SIZE), "the shared region is within reach");
    t.check(pages.len() > 2, "the pipe's frame is within reach");
    for _ in 0..SCRIBBLE_ROUNDS {
        for &va in &pages {
            for w in 0..PAGE_SIZE / 8 {
                mem::write(va + 8 * w, rng.next());
            }
        }
        let _ = oxok_libos::callcap::yield_to(partner.id);
    }

    tables(&mut t, victim);
    frames_by_name(&mut t, victim);
    let refused = signals(&mut t, victim);
    destroy_all(&mut t, partner.slot);
    let transfers = garbage(&mut t, victim, &mut rng);

    // Its own partner it may end.
    let sent = signal::kill(partner.id, SIGKILL);
    t.check(sent.is_ok() || sent == Err(Error::BadEnv), "its own child accepts SIGKILL (or already stopped)");
    let status = exec::wait(partner);
    t.check(
        matches!(status, Ok(ExitStatus::Exited(3) | ExitStatus::Signalled(9))),
        "the partner stopped on garbage or on SIGKILL",
    );
    for fd in ends {
        let _ = fd::close(fd);
    }
    drop(region);

    t.check(proc::alive(victim), "the victim lives on");
    let after = exposed::env_entry(victim);
    let same = |e: Option<EnvEntry>| e.map(|e| (e.id, e.parent, e.name));
    t.expect(same(after), same(before), "the victim's row is unchanged");
    println!(
        "hostile-scribble: {} shared pages scribbled, {} faults caught, {refused} signals refused, {transfers} garbage transfers",
        pages.len(),
        FAULTS.load(Ordering::Relaxed)
    );
    t.finish()
}

/// Its own partner: a child sharing a two-page region and a pipe.
fn start_partner(t: &mut Checks) -> Option<(Child, Region, [usize; 2])> {
    let region = Region::create(2).ok()?;
    let (r, w) = fd::pipe::pipe().ok()?;
    let ends = [fd::install(r).ok()?, fd::install(w).ok()?];
    let va = format!("{:#x}", region.va());
    let child = exec::spawn("shm-pingpong", &["shm-pingpong", "child", &va, "0", "ffffffff"]).ok()?;
    t.check(region.share(child.slot, true).is_ok(), "region shared with its partner");
    // One honest turn each, so the partner is running its main (it took its
    // descriptors first) before the garbage starts.
    let counter = &region.words()[0];
    counter.store(1, Ordering::Release);
    for _ in 0..100_000 {
        if counter.load(Ordering::Acquire) == 2 {
            break;
        }
        if oxok_libos::callcap::yield_to(child.id).is_err() {
            let _ = sys::yield_cpu(0);
        }
    }
    t.expect(counter.load(Ordering::Acquire), 2, "the partner played a turn");
    Some((child, region, ends))
}

/// Every page mapped writable here whose frame someone else owns or maps.
fn shared_pages() -> Vec<u64> {
    let me = proc::pid();
    let mut pages = Vec::new();
    exposed::walk(0, USER_TOP, |va, e| {
        if e & (pte::USER | pte::WRITABLE) != pte::USER | pte::WRITABLE {
            return;
        }
        let Some(f) = exposed::frame_entry((e & pte::ADDRESS_MASK) / PAGE_SIZE) else { return };
        let env_frame = f.owner >= OWNER_FIRST_ENV || f.owner == OWNER_ORPHAN;
        if env_frame && (u64::from(f.owner) != me || f.maps > 1) {
            pages.push(va);
        }
    });
    pages
}

/// Stores `v` at `addr` with one `mov [rdi], rsi` (bytes 48 89 37), which
/// [`on_fault`] skips when it faults.
#[allow(unsafe_code)]
fn poke(addr: u64, v: u64) {
    POKING.store(true, Ordering::SeqCst);
    // SAFETY: deliberately a store to read-only kernel-exposed memory; the
    // page-fault handler skips the instruction, and if the store did land
    // nothing Rust owns lives there.
    unsafe { core::arch::asm!("mov [rdi], rsi", in("rdi") addr, in("rsi") v, options(nostack)) };
    POKING.store(false, Ordering::SeqCst);
}

/// Counts a write fault of [`poke`] and skips the store.
fn on_fault(f: &mut ExceptionFrame) -> Outcome {
    let protection_write = f.error & 3 == 3;
    if POKING.load(Ordering::SeqCst) && protection_write && mem::read(f.regs.rip) & 0xff_ffff == 0x37_8948 {
        FAULTS.fetch_add(1, Ordering::Relaxed);
        f.regs.rip += 3;
        return Outcome::Resume;
    }
    Outcome::Unhandled
}

/// Writes to every exposed table: each must fault.
fn tables(t: &mut Checks, victim: u64) {
    let row = (victim as usize & (ENV_TABLE_ROWS - 1)) * core::mem::size_of::<EnvEntry>();
    let archive = BOOT_ARCHIVE + exposed::sysinfo().map_or(0, |s| s.archive_offset) / PAGE_SIZE * PAGE_SIZE;
    let targets = [
        ENV_TABLE + row as u64,
        FRAME_TABLE,
        CLOCK,
        SYSINFO,
        SLOT_VECTOR,
        RUN_STATS,
        pml4e_address(PROGRAM_BASE),
        archive,
        oxok_libos::abi::net::NET_TABLE,
        oxok_libos::abi::net::FILTER_TABLE,
        oxok_libos::abi::net::filter_row_va(oxok_libos::abi::net::FILTER_ROWS_MAX - 1),
    ];
    for &at in &targets {
        let before = FAULTS.load(Ordering::Relaxed);
        t.check(exposed::readable(at), "an exposed table is readable");
        poke(at, 0xdead_beef_dead_beef);
        t.check(FAULTS.load(Ordering::Relaxed) == before + 1, "a write to an exposed table faults");
    }
    t.check(sys::page_protect(0, ENV_TABLE, pte::WRITABLE | pte::NO_EXECUTE, 0).is_err(), "no write right added");
    for flags in [pte::WRITABLE | pte::NO_EXECUTE, pte::NO_EXECUTE] {
        let rec = [MapEntry::share(TRY_VA, ENV_TABLE, flags)];
        t.check(sys::page_batch(0, rec.as_ptr() as u64, 1).is_err(), "kernel frames are never passed on");
    }
}

/// Frames of the victim, asked for by physical name.
fn frames_by_name(t: &mut Checks, victim: u64) {
    let count = exposed::sysinfo().map_or(0, |s| s.frame_count);
    let mut tried = 0;
    for pfn in 0..count {
        if exposed::frame_entry(pfn).is_some_and(|f| u64::from(f.owner) == victim) {
            t.check(sys::frame_alloc(pfn).is_err(), "another's frame cannot be allocated by name");
            tried += 1;
            if tried == 8 {
                break;
            }
        }
    }
    t.check(tried > 0, "the victim's frames were found in the frame table");
}

/// Every signal to the victim and its children, and forged messages.
fn signals(t: &mut Checks, victim: u64) -> u32 {
    let mut refused = 0;
    let mut expect_refused = |t: &mut Checks, r: Result<(), Error>| {
        t.check(matches!(r, Err(Error::Denied | Error::BadEnv)), "a signal to a stranger is refused");
        refused += u32::from(r == Err(Error::Denied));
    };
    for sig in 0..NSIG {
        expect_refused(t, signal::kill(victim, sig));
    }
    let kids: Vec<u64> = proc::processes().filter(|p| p.parent == victim).map(|p| p.pid).collect();
    for &kid in &kids {
        expect_refused(t, signal::kill(kid, SIGKILL));
    }
    expect_refused(t, signal::kill_via_parent(victim, SIGKILL));
    let forged: [Msg; 4] = [
        [TAG_SIGNAL, 9, 1, victim, 0, 0, 0, 0, 0], // "forward to yourself"
        [TAG_SIGNAL, 9, 1, kids.first().copied().unwrap_or(victim), 0, 0, 0, 0, 0],
        [TAG_SIGNAL, 9, 0xff, 0, 0, 0, 0, 0, 0],
        [TAG_SIGNAL, 1 << 40, 0, 0, 0, 0, 0, 0, 0],
    ];
    for m in &forged {
        let reply = call_retrying(victim, m);
        let code = reply.map(|r| r[0]);
        t.check(
            matches!(code, Ok(c) if c == Error::Denied.code() || c == Error::Invalid.code()),
            "forged signal refused",
        );
        refused += 1;
    }
    refused
}

/// A raw transfer, retried while the target is busy.
fn call_retrying(to: u64, m: &Msg) -> Result<Msg, Error> {
    for _ in 0..1000 {
        match pct::call(to, m) {
            Ok((_, r)) if r[0] == Error::Busy.code() => {}
            Err(Error::Busy) => {}
            other => return other.map(|(_, r)| r),
        }
        let _ = sys::yield_cpu(0);
    }
    Err(Error::Busy)
}

/// `env_destroy` through every capability slot but itself and its partner.
fn destroy_all(t: &mut Checks, partner_slot: u64) {
    for slot in 1..CAP_SLOTS as u64 {
        if slot != partner_slot {
            t.check(sys::env_destroy(slot).is_err(), "nothing else can be destroyed");
        }
    }
}

/// Garbage transfers to the victim and its children; returns how many.
fn garbage(t: &mut Checks, victim: u64, rng: &mut Rng) -> u32 {
    let mut targets: Vec<u64> = proc::processes().filter(|p| p.parent == victim).map(|p| p.pid).collect();
    targets.push(victim);
    let mut sent = 0;
    for _ in 0..GARBAGE {
        let to = *rng.pick(&targets);
        let mut m: Msg = core::array::from_fn(|_| rng.next());
        match rng.below(5) {
            0 => {}
            1 => {
                m[0] = TAG_SIGNAL;
                m[1] = rng.below(40);
                m[2] = rng.below(3);
                m[3] = *rng.pick(&targets);
            }
            2 => {
                m[0] = TAG_LRPC;
                m[1] = rng.below(70);
            }
            3 => m[0] = TAG_NOT_SERVING,
            _ => m[0] = TAG_PREFIX << 16 | rng.below(1 << 16),
        }
        let r = if rng.chance(2) { pct::call(to, &m).map(|_| ()) } else { pct::send(to, &m) };
        // Refusals and busy targets are fine; the point is the victim lives.
        sent += u32::from(r.is_ok() || r == Err(Error::Denied));
    }
    t.check(proc::alive(victim), "the victim survived the garbage");
    sent
}
