//! signals: signals over protected control transfer (`libos/src/signal.rs`)
//! and the process table (`libos/src/proc.rs`).
//!
//! The parent shares one page with each child (`shm::Region`): the child
//! reports there — ready, handler counts, and a marker its own descriptor
//! object writes when it is *closed*, which proves a signal's default
//! action left through the normal exit path. Cases:
//! * `sleeper` sleeps in `env_sleep`; `SIGTERM` ends it with 143, marker set.
//! * `looper` spins, catches `SIGTERM` (and goes on), ignores `SIGINT`,
//!   cannot catch or ignore `SIGKILL`; `SIGKILL` ends it with 137.
//! * `usr` counts `SIGUSR1` (each delivered before `kill` returns), ignores
//!   `SIGUSR2`; a sibling `attacker` is refused every signal and the victim
//!   goes on and finishes normally with its count as exit status.
//! * the `kill` tool (a sibling) is refused until the parent accepts
//!   forwarding; then it ends a sleeper through the parent.
//! * `signal::destroy` ends a child with the creator's capability.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::format;
use alloc::sync::Arc;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::{ENV_SLEEPING, Error};
use oxok_libos::exec::{self, Child, ExitStatus};
use oxok_libos::fd::{self, File, Handle, IoError};
use oxok_libos::shm::Region;
use oxok_libos::signal::{self, SIGINT, SIGKILL, SIGTERM, SIGUSR1, SIGUSR2};
use oxok_libos::{Args, println, proc, sys};
use oxok_pred::Builder;
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

/// Words of the shared page.
const READY: u64 = 0;
const CLOSED: u64 = 1;
const COUNT: u64 = 2;
const STOP: u64 = 3;
const REFUSED: u64 = 4;
const FLAGS: u64 = 5;
const CLOSED_MAGIC: u64 = 0xc105_ed00;
/// `FLAGS` bit: `set_handler(SIGKILL)` and `ignore(SIGKILL)` were refused.
const KILL_UNCATCHABLE: u64 = 1;

/// The shared page's address in a child.
static PAGE: AtomicU64 = AtomicU64::new(0);

fn word(w: u64) -> u64 {
    PAGE.load(Ordering::Relaxed) + 8 * w
}

fn main(args: Args) -> i32 {
    let arg = |i| args.get(i).unwrap_or("");
    match arg(1) {
        "" => parent(),
        "attacker" => attacker(parse(arg(2))),
        mode => match Region::attach(parse(arg(2)), 1, 100_000) {
            Ok(r) => {
                PAGE.store(r.va(), Ordering::Relaxed);
                core::mem::forget(r); // the mapping stays for the handlers
                child(mode)
            }
            Err(e) => {
                println!("signals {mode}: FAIL no shared page: {e}");
                1
            }
        },
    }
}

fn parse(s: &str) -> u64 {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or(0),
        None => s.parse().unwrap_or(0),
    }
}

// ---- children ----

/// A descriptor object that marks the shared page when it is closed.
struct Marker;

impl File for Marker {
    fn read(&self, _: &mut [u8]) -> Result<usize, IoError> {
        Ok(0)
    }
    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        Ok(buf.len())
    }
    fn kind(&self) -> &'static str {
        "marker"
    }
}

impl Drop for Marker {
    fn drop(&mut self) {
        mem::write(word(CLOSED), CLOSED_MAGIC);
    }
}

fn count(_sig: i32) {
    mem::write(word(COUNT), mem::read(word(COUNT)) + 1);
}

fn count_and_say(sig: i32) {
    count(sig);
    println!("signals usr: handler ran for signal {sig}");
}

fn child(mode: &str) -> i32 {
    if fd::install(Handle::Object(Arc::new(Marker))).is_err() {
        return 1;
    }
    match mode {
        "sleeper" => {
            mem::write(word(READY), 1);
            // Sleep until tick 2^62: only a signal ends this.
            let mut b = Builder::new();
            b.load_u64(oxok_libos::abi::layout::CLOCK + 16).ge_imm(1 << 62);
            if let Ok(code) = b.build() {
                let bytes = code.as_bytes();
                let _ = sys::pred_install(0, 0, bytes.as_ptr() as u64, bytes.len() as u64);
            }
            loop {
                if sys::env_sleep(1).is_err() {
                    let _ = sys::yield_cpu(0);
                }
            }
        }
        "looper" => {
            let mut flags = 0;
            if signal::set_handler(SIGKILL, count) == Err(Error::Invalid) && signal::ignore(SIGKILL).is_err() {
                flags |= KILL_UNCATCHABLE;
            }
            mem::write(word(FLAGS), flags);
            let ok = signal::set_handler(SIGTERM, count).is_ok() && signal::ignore(SIGINT).is_ok();
            mem::write(word(READY), u64::from(ok));
            let mut x = 0u64;
            loop {
                x = core::hint::black_box(x.wrapping_add(1));
            }
        }
        "usr" => {
            let ok = signal::set_handler(SIGUSR1, count_and_say).is_ok() && signal::ignore(SIGUSR2).is_ok();
            mem::write(word(READY), u64::from(ok));
            while mem::read(word(STOP)) == 0 {
                let _ = sys::yield_cpu(0);
            }
            mem::write(word(REFUSED), signal::stats().1);
            mem::read(word(COUNT)) as i32
        }
        _ => 2,
    }
}

/// A sibling: every signal to the victim (and to the parent) is refused.
fn attacker(victim: u64) -> i32 {
    let mut t = Checks::new("signals attacker");
    t.check(!proc::is_ancestor(proc::pid(), victim), "not the victim's ancestor");
    for sig in [0, SIGINT, SIGKILL, SIGTERM, SIGUSR1, SIGUSR2] {
        t.expect(signal::kill(victim, sig), Err(Error::Denied), "a sibling's signal is refused");
    }
    if let Some(parent) = proc::parent(proc::pid()) {
        t.expect(signal::kill(parent, SIGTERM), Err(Error::Denied), "a child cannot signal its parent");
    }
    t.expect(signal::kill_via_parent(victim, SIGKILL), Err(Error::Denied), "the parent does not forward");
    t.check(proc::alive(victim), "the victim survives");
    t.finish()
}

// ---- parent ----

/// A child with its shared page, started and ready.
struct Kid {
    child: Child,
    page: Region,
}

impl Kid {
    fn get(&self, w: u64) -> u64 {
        self.page.words()[w as usize].load(Ordering::Acquire)
    }
    fn set(&self, w: u64, v: u64) {
        self.page.words()[w as usize].store(v, Ordering::Release);
    }
}

fn start(t: &mut Checks, mode: &str) -> Option<Kid> {
    let page = Region::create(1).ok()?;
    let va = format!("{:#x}", page.va());
    let child = match exec::spawn("signals", &["signals", mode, &va]) {
        Ok(c) => c,
        Err(e) => {
            println!("signals: FAIL spawn {mode}: {e}");
            t.check(false, "spawn");
            return None;
        }
    };
    t.check(page.share(child.slot, true).is_ok(), "page shared with the child");
    let kid = Kid { child, page };
    for _ in 0..200_000 {
        if kid.get(READY) != 0 {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    t.expect(kid.get(READY), 1, "child ready");
    Some(kid)
}

/// Waits for the child; checks how it ended and that its descriptors were
/// closed. Returns the page for more checks.
fn finish(t: &mut Checks, kid: Kid, want: ExitStatus, what: &str) -> Region {
    let id = kid.child.id;
    let status = exec::wait(kid.child);
    t.expect(status, Ok(want), what);
    t.check(!proc::alive(id), "the child is gone");
    let closed = kid.page.words()[CLOSED as usize].load(Ordering::Acquire);
    t.expect(closed, CLOSED_MAGIC, "its descriptors were closed on the way out");
    kid.page
}

static SELF_COUNT: AtomicU64 = AtomicU64::new(0);

fn self_handler(_sig: i32) {
    SELF_COUNT.fetch_add(1, Ordering::Relaxed);
}

fn parent() -> i32 {
    let mut t = Checks::new("signals");
    let me = proc::pid();

    // The refusals that need no child.
    t.expect(signal::set_handler(SIGKILL, self_handler), Err(Error::Invalid), "SIGKILL cannot be caught");
    t.expect(signal::kill(me, 99), Err(Error::Invalid), "no signal 99");
    t.expect(signal::kill(0xffff_ffff, SIGTERM), Err(Error::BadEnv), "no such process");
    t.check(signal::set_handler(SIGUSR1, self_handler).is_ok(), "handler installed");
    t.check(signal::kill(me, SIGUSR1).is_ok() && signal::raise(SIGUSR1).is_ok(), "signals to oneself");
    t.expect(SELF_COUNT.load(Ordering::Relaxed), 2, "own handler ran twice");

    // A sleeping child ends on SIGTERM through its exit path.
    if let Some(kid) = start(&mut t, "sleeper") {
        let id = kid.child.id;
        t.check(proc::parent(id) == Some(me) && proc::is_ancestor(me, id), "the parent is an ancestor");
        t.check(!proc::is_ancestor(id, me) && !proc::is_ancestor(me, me), "and nothing else is");
        t.check(proc::processes().any(|p| p.pid == id && p.name() == "signals"), "the table lists the child");
        let asleep = (0..100_000).any(|_| {
            let s = proc::process(id).is_some_and(|p| p.status == ENV_SLEEPING);
            if !s {
                let _ = sys::yield_cpu(0);
            }
            s
        });
        t.check(asleep, "the child sleeps");
        t.expect(signal::kill(id, SIGTERM), Ok(()), "SIGTERM sent");
        finish(&mut t, kid, ExitStatus::Signalled(SIGTERM), "SIGTERM ends a sleeper (status 143)");
    }

    // A spinning child: TERM caught, INT ignored, KILL is not catchable.
    if let Some(kid) = start(&mut t, "looper") {
        let id = kid.child.id;
        t.expect(kid.get(FLAGS), KILL_UNCATCHABLE, "the child could not catch or ignore SIGKILL");
        t.expect(signal::kill(id, SIGTERM), Ok(()), "SIGTERM to the looper");
        t.expect(kid.get(COUNT), 1, "its handler ran before kill returned");
        t.expect(signal::kill(id, SIGINT), Ok(()), "SIGINT to the looper");
        t.check(proc::alive(id), "caught and ignored signals leave it running");
        t.expect(signal::kill(id, SIGKILL), Ok(()), "SIGKILL to the looper");
        finish(&mut t, kid, ExitStatus::Signalled(SIGKILL), "SIGKILL ends it (status 137)");
    }

    // Handlers run and the child goes on; a sibling is refused.
    if let Some(kid) = start(&mut t, "usr") {
        let id = kid.child.id;
        for i in 1..=3 {
            t.expect(signal::kill(id, SIGUSR1), Ok(()), "SIGUSR1 sent");
            t.expect(kid.get(COUNT), i, "handled before kill returned");
        }
        t.expect(signal::kill(id, SIGUSR2), Ok(()), "SIGUSR2 (ignored) sent");
        t.expect(signal::kill(id, 0), Ok(()), "signal 0 probes");
        let id_text = format!("{id}");
        // The attacker gets the kernel's credential for the victim (a call
        // capability): what stops it is the victim's own policy.
        let mut opts = exec::SpawnOptions::new();
        opts.call(id);
        match exec::spawn_with("signals", &["signals", "attacker", &id_text], &opts) {
            Ok(a) => t.expect(exec::wait(a), Ok(ExitStatus::Exited(0)), "the attacker was refused everything"),
            Err(_) => t.check(false, "spawn attacker"),
        }
        t.check(proc::alive(id), "the victim survived the attacker");
        t.expect(kid.get(COUNT), 3, "the attacker's SIGUSR1 never ran");
        kid.set(STOP, 1);
        let page = finish(&mut t, kid, ExitStatus::Exited(3), "the victim finishes normally");
        t.expect(page.words()[REFUSED as usize].load(Ordering::Acquire), 6, "the victim counted 6 refusals");
    }

    kill_tool(&mut t);

    // The creator's capability ends a child whatever its libOS does.
    if let Some(kid) = start(&mut t, "sleeper") {
        let id = kid.child.id;
        t.expect(signal::destroy(kid.child), Ok(ExitStatus::Killed(None)), "destroyed with the capability");
        t.check(proc::process(id).is_none(), "gone at once, no zombie");
        drop(kid.page);
    }
    t.finish()
}

/// The `kill` tool is the parent's child, a sibling of its target.
fn kill_tool(t: &mut Checks) {
    let Some(kid) = start(t, "sleeper") else { return };
    let id = format!("{}", kid.child.id);
    let run = |t: &mut Checks| match exec::spawn("kill", &["kill", "-TERM", &id]) {
        Ok(c) => exec::wait(c),
        Err(e) => {
            println!("signals: FAIL spawn kill: {e}");
            t.check(false, "spawn kill");
            Err(Error::NotFound)
        }
    };
    let alone = run(t);
    t.expect(alone, Ok(ExitStatus::Exited(1)), "the kill tool alone is refused");
    t.check(proc::alive(kid.child.id), "its target lives on");
    signal::accept_forwarding(true);
    let forwarded = run(t);
    t.expect(forwarded, Ok(ExitStatus::Exited(0)), "forwarded through the parent");
    signal::accept_forwarding(false);
    finish(t, kid, ExitStatus::Signalled(SIGTERM), "the kill tool ended the sleeper");
}
