//! A fork bomb bounded by the budget its parent gave it (kernel resource
//! accounts, `env_limit`), and the ways a limited process might try to
//! escape its budget.
//!
//! 1. **Escape attempts** (a forked child, `escape`): it restricts itself to
//!    `ESC_FRAMES` frames / `ESC_ENVS` environments, then gives itself
//!    unlimited limits (accepted, but only as a sub-account: it still
//!    stops at exactly `ESC_FRAMES`), creates a child and gives *it*
//!    unlimited limits and fills it with `frame_alloc_for` (the total still
//!    stops at `ESC_FRAMES`), creates environments until refused (at most
//!    `ESC_ENVS`), and tries to charge an environment it created *before*
//!    it was limited — outside its account — with `frame_alloc_for`
//!    (`Denied`).
//! 2. **The bomb** (a forked child, `bomb`): it limits itself to `FRAMES`
//!    frames / `ENVS` environments via slot 0, then every process forks
//!    until the kernel says `NoMemory`. The driver samples the exposed
//!    environment table meanwhile: the processes in the bomb's account
//!    never number more than `ENVS`, never own more than `FRAMES` frames.
//!    When its children are gone the bomb root allocates frames until
//!    refused: the account then holds exactly `FRAMES`.
//!
//! An unrelated victim (`hostile-forkbomb victim`) keeps computing; the
//! harness checks that every frame is free at halt.
#![no_std]
#![no_main]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::layout::{ENV_TABLE_ROWS, PAGE_SIZE};
use oxok_libos::abi::{ACCOUNT_UNLIMITED, ANY_FRAME, ENV_CREATED, ENV_ZOMBIE, EnvEntry, Error};
use oxok_libos::exec::{self, Child, ExitStatus};
use oxok_libos::process::{self, Usage};
use oxok_libos::vm::{self, Fork, VmError};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

const FRAMES: u64 = 3000;
const ENVS: u64 = 40;
const ESC_FRAMES: u64 = 400;
const ESC_ENVS: u64 = 6;

oxok_libos::main!(main);

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("hostile-forkbomb-limited");
    let escape = run_child(&mut c, "escape", escape);
    c.expect(escape, Some(0), "the escape attempts all failed");
    let me = exposed::env_entry(exposed::self_id()).map_or(0, |r| r.account);
    let bomb = match vm::fork() {
        Ok(Fork::Child) => process::exit(bomb()),
        Ok(Fork::Parent(child)) => child,
        Err(e) => {
            c.check(false, "fork of the bomb");
            println!("hostile-forkbomb-limited: fork: {e}");
            return c.finish();
        }
    };
    let peak = watch(&bomb, me);
    println!(
        "hostile-forkbomb-limited: peak {} processes, {} frames in the bomb's account {}",
        peak.envs, peak.frames, peak.account
    );
    c.check(peak.account != 0 && peak.account != me, "the bomb runs in an account of its own");
    c.check(peak.envs <= ENVS, "never more processes than the limit");
    c.check(peak.frames <= FRAMES, "never more frames than the limit");
    c.check(peak.envs >= 2, "the bomb did fork");
    let status = exec::wait(bomb);
    c.expect(status.ok(), Some(ExitStatus::Exited(0)), "the bomb root's own checks");
    c.check(settle(u64::from(peak.account), 0), "no started process left in the bomb's account");
    c.finish()
}

/// What the driver saw of the bomb's account at its worst.
#[derive(Default)]
struct Peak {
    account: u32,
    envs: u64,
    frames: u64,
}

/// Live rows of the exposed environment table.
fn rows() -> impl Iterator<Item = EnvEntry> {
    (0..ENV_TABLE_ROWS).filter_map(exposed::env_row).filter(|r| r.id != 0)
}

/// Samples the table until the bomb root ends: the most processes and
/// frames (owned + one application area each) its account ever held.
fn watch(bomb: &Child, mine: u32) -> Peak {
    let mut peak = Peak::default();
    while let Some(root) = exposed::env_row((bomb.id as usize) & (ENV_TABLE_ROWS - 1)) {
        if u64::from(root.id) != bomb.id || root.status == ENV_ZOMBIE {
            break;
        }
        if root.account != mine {
            peak.account = root.account;
            let (mut envs, mut frames) = (0u64, 0u64);
            let before = oxok_libos::time::ticks();
            for r in rows().filter(|r| r.account == root.account && r.status != ENV_ZOMBIE) {
                envs += 1;
                frames += u64::from(r.frames) + u64::from(r.tables) + env_frames();
            }
            // A scan a tick came into may have been preempted half way, the
            // bomb's processes ending and starting meanwhile: its count
            // mixes two moments (a row counted before its process ended,
            // another after a new one began) and is not kept.
            if oxok_libos::time::ticks() == before {
                peak.envs = peak.envs.max(envs);
                peak.frames = peak.frames.max(frames);
            }
        }
        let _ = sys::yield_cpu(0);
    }
    peak
}

/// Waits (yielding) until at most `n` started environments are left in
/// `account`; false if that takes more than 10 s. (Environments a bomb
/// process created but died before starting stay, never run, and are
/// counted in the account until the kernel destroys them.)
fn settle(account: u64, n: usize) -> bool {
    let hz = exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz);
    let deadline = oxok_libos::time::rdtsc().saturating_add(hz.saturating_mul(10));
    loop {
        let left = rows()
            .filter(|r| u64::from(r.account) == account && r.status != ENV_ZOMBIE && r.status != ENV_CREATED)
            .count();
        if left <= n {
            return true;
        }
        if oxok_libos::time::rdtsc() > deadline {
            println!("hostile-forkbomb-limited: {left} processes still in account {account}");
            return false;
        }
        let _ = sys::yield_cpu(0);
    }
}

/// Forks; the child runs `f` and exits with its result. Returns the
/// child's exit code.
fn run_child(c: &mut Checks, what: &str, f: fn() -> i32) -> Option<i32> {
    match vm::fork() {
        Ok(Fork::Child) => process::exit(f()),
        Ok(Fork::Parent(child)) => match exec::wait(child) {
            Ok(ExitStatus::Exited(code)) => Some(code),
            other => {
                println!("hostile-forkbomb-limited: {what} ended {other:?}");
                None
            }
        },
        Err(e) => {
            println!("hostile-forkbomb-limited: fork for {what}: {e}");
            c.check(false, "fork");
            None
        }
    }
}

fn usage() -> Usage {
    process::usage(0).unwrap_or(Usage { account: 0, frames: 0, frame_limit: 0, envs: 0, env_limit: 0 })
}

/// True if the caller's account holds just the caller: one environment and
/// the frames its table row shows (+ its page tables, + 1, its application
/// area).
fn alone() -> bool {
    let u = usage();
    let own =
        exposed::env_entry(exposed::self_id()).map_or(0, |r| u64::from(r.frames) + u64::from(r.tables) + env_frames());
    u.envs == 1 && u.frames == own
}

/// Allocates frames (owned by the environment in `owner`, 0: itself)
/// until refused, mapping each into environment `sink` (which never runs)
/// and dropping its capability, so the capability list never fills: the
/// frames go when `sink` is destroyed. Returns how many and the refusal.
/// Nothing in here may take a page fault that needs a frame: the budget
/// is spent at the end.
fn hoard(owner: u64, sink: u64) -> (u64, Error) {
    let mut n = 0u64;
    loop {
        let r = if owner == 0 { sys::frame_alloc(ANY_FRAME) } else { sys::frame_alloc_for(owner, ANY_FRAME) };
        let slot = match r {
            Ok([slot, _]) => slot,
            Err(e) => return (n, e),
        };
        let mapped = sys::page_map(sink, slot, SINK_BASE + n * PAGE_SIZE, 0);
        let _ = sys::cap_drop(slot);
        if let Err(e) = mapped {
            return (n, e);
        }
        n += 1;
    }
}

/// Where [`hoard`] maps frames in its sink.
const SINK_BASE: u64 = 0x10_0000_0000;

/// Writes `depth` KiB of stack, so that later calls as deep find their
/// stack pages private already (no copy-on-write fault, which would need a
/// frame, once the budget is spent).
#[inline(never)]
fn warm_stack(depth: usize) -> u8 {
    let mut buf = [0u8; 1024];
    buf[depth % 1024] = depth as u8;
    let b = core::hint::black_box(&mut buf);
    if depth == 0 { b[0] } else { b[1].wrapping_add(warm_stack(depth - 1)) }
}

/// The escape attempts of a limited process.
fn escape() -> i32 {
    let mut c = Checks::new("hostile-forkbomb-limited escape");
    // Created while still in the parent's account: outside the one below.
    let outsider = sys::env_create();
    c.check(outsider.is_ok(), "env_create before the limit");
    c.expect(process::limit(0, 1, ESC_ENVS), Err(Error::NoMemory), "a limit below current use is refused");
    c.expect(process::limit(0, ESC_FRAMES, ESC_ENVS), Ok(()), "a process may restrict itself");
    let limited = usage();
    c.expect((limited.frame_limit, limited.env_limit, limited.envs), (ESC_FRAMES, ESC_ENVS, 1), "own account");

    // 1. Raising its own limit only nests a new account inside the old.
    c.expect(process::limit(0, ACCOUNT_UNLIMITED, ACCOUNT_UNLIMITED), Ok(()), "a bigger limit is accepted");
    let raised = usage();
    c.check(raised.account != limited.account, "as a new account");
    c.expect(raised.frame_limit, ACCOUNT_UNLIMITED, "with the bigger limit");
    let Ok([sink, _]) = sys::env_create() else {
        c.check(false, "env_create for a sink");
        return c.finish();
    };
    let sink_usage = usage();
    let own =
        exposed::env_entry(exposed::self_id()).map_or(0, |r| u64::from(r.frames) + u64::from(r.tables) + env_frames());
    warm_stack(16);
    let (n, err) = hoard(0, sink);
    let full = usage().frames;
    let _ = sys::env_destroy(sink);
    c.expect(err, Error::NoMemory, "frame_alloc beyond the budget");
    c.expect(full, ESC_FRAMES, "frames stop exactly at the original limit");
    println!("hostile-forkbomb-limited: raised its own limit, still refused after {n} frames");
    c.expect(alone(), true, "destroying the sink gives the frames back");
    c.check(sink_usage.envs == 2 && sink_usage.frames == own + env_frames(), "a child is charged 1 env + its frames");

    // 2. A child given unlimited limits, filled with frame_alloc_for.
    match sys::env_create() {
        Ok([child, _]) => {
            c.expect(process::limit(child, ACCOUNT_UNLIMITED, ACCOUNT_UNLIMITED), Ok(()), "limit on a child");
            warm_stack(16);
            let (_, err) = hoard(child, child);
            let full = usage().frames;
            let destroyed = sys::env_destroy(child).map(|_| ());
            c.expect(err, Error::NoMemory, "frame_alloc_for beyond the budget");
            c.expect(full, ESC_FRAMES, "the child's frames count against the parent's budget");
            c.expect(destroyed, Ok(()), "destroy the child");
            c.expect(alone(), true, "its frames are given back");
        }
        Err(e) => c.expect(Err::<(), _>(e), Ok(()), "env_create"),
    }

    // 3. Environments: at most ESC_ENVS in the account, this one included.
    let mut made = Vec::new();
    let refused = loop {
        match sys::env_create() {
            Ok([slot, _]) => made.push(slot),
            Err(e) => break e,
        }
        if made.len() > 64 {
            break Error::Invalid;
        }
    };
    c.expect(refused, Error::NoMemory, "env_create beyond the budget");
    c.expect(made.len() as u64, ESC_ENVS - 1, "environments stop exactly at the limit");
    for s in made {
        let _ = sys::env_destroy(s);
    }

    // 4. Charging someone outside its account.
    if let Ok([outsider, _]) = outsider {
        c.expect(sys::frame_alloc_for(outsider, ANY_FRAME).map(|_| ()), Err(Error::Denied), "charge an outsider");
        c.expect(process::limit(outsider, 10, 10), Ok(()), "limit an outsider it holds write on");
        c.expect(sys::frame_alloc_for(outsider, ANY_FRAME).map(|_| ()), Err(Error::Denied), "charge it still");
        let _ = sys::env_destroy(outsider);
    }
    // 5. Nesting is bounded.
    let mut depth_error = Ok(());
    for _ in 0..16 {
        depth_error = process::limit(0, ESC_FRAMES, ESC_ENVS);
        if depth_error.is_err() {
            break;
        }
    }
    c.expect(depth_error, Err(Error::Invalid), "nesting deeper than the maximum");
    c.finish()
}

/// The bomb: limit itself, then every process forks until refused.
fn bomb() -> i32 {
    let root = exposed::self_id();
    if process::limit(0, FRAMES, ENVS).is_err() {
        println!("hostile-forkbomb-limited: FAIL the bomb could not limit itself");
        return 1;
    }
    let mut children = Vec::new();
    let refused = loop {
        match vm::fork() {
            Ok(Fork::Child) => children.clear(),
            Ok(Fork::Parent(c)) => children.push(c),
            Err(e) => break e,
        }
    };
    let is_root = exposed::self_id() == root;
    for c in children {
        let _ = exec::wait(c);
    }
    if !is_root {
        return 0;
    }
    let mut c = Checks::new("hostile-forkbomb-limited bomb");
    println!("hostile-forkbomb-limited: bomb refused with: {refused}");
    c.check(matches!(refused, VmError::Kernel(Error::NoMemory)), "the bomb is refused with NoMemory");
    // Orphans of bomb processes that died still finish their loops.
    let mine = u64::from(exposed::env_entry(root).map_or(0, |r| r.account));
    c.check(settle(mine, 1), "the rest of the bomb ends");
    // Alone in its account now: take frames until refused.
    let Ok([sink, _]) = sys::env_create() else {
        c.check(false, "env_create for a sink");
        return c.finish();
    };
    warm_stack(16);
    let (n, err) = hoard(0, sink);
    let u = usage();
    let (mut rows_envs, mut rows_frames) = (0u64, 0u64);
    for r in rows().filter(|r| u64::from(r.account) == u.account) {
        rows_envs += 1;
        rows_frames += u64::from(r.frames) + u64::from(r.tables) + env_frames();
    }
    let _ = sys::env_destroy(sink);
    c.expect(err, Error::NoMemory, "frames beyond the budget");
    c.expect(u.frames, FRAMES, "the account holds exactly its frame limit");
    c.expect((rows_frames, rows_envs), (u.frames, u.envs), "the exposed table agrees");
    println!("hostile-forkbomb-limited: bomb root took {n} more frames, then NoMemory");
    c.finish()
}

/// Frames an environment is charged for itself (1, or more with a kernel
/// stack per environment in the process execution model).
fn env_frames() -> u64 {
    oxok_libos::exposed::sysinfo().map_or(1, |i| i.env_frames)
}
