//! hostile-envcycle [CYCLES]: a program limited to its current frames + 8
//! and 2 environments loops `env_create`/`env_destroy` (default 20,000
//! times). A destroyed environment's teardown is charged to the account
//! until it is finished, so the loop holds no more than the account allows:
//! free frames never fall by more than the limit, the kernel's queue of
//! dying environments cannot outgrow its reservation, and other programs'
//! `env_create` keeps working (the `hostile-victim` beside it). Once the
//! reaper lagged behind such a loop until every frame was gone, and the
//! dying queue overflowed the kernel heap.
#![no_std]
#![no_main]

use oxok_libos::process;
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;
use oxok_tests::unchanged::Snapshot;

oxok_libos::main!(main);

/// `env_create`'s last check is the account's (2 environments: this one
/// and one child): with the child alive, a second is refused and nothing
/// changed — no capability, no charge, the row as it was.
fn refused_at_last_check(c: &mut Checks) {
    settle();
    let child = sys::env_create();
    c.check(child.is_ok(), "one child within the limit");
    let before = Snapshot::of_self();
    c.expect(sys::env_create().map(|_| ()), Err(oxok_libos::Error::NoMemory), "a second child refused");
    c.expect(Snapshot::of_self(), before, "an env_create refused at its last check changed nothing");
    if let Ok([slot, _]) = child {
        c.expect(sys::env_destroy(slot), Ok([]), "the child destroyed");
    }
    settle();
}

/// Waits (bounded) until destroyed children's teardowns are no longer
/// charged: only this environment is.
fn settle() {
    for _ in 0..10_000 {
        if process::usage(0).is_ok_and(|u| u.envs == 1) {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
}

fn main(args: Args) -> i32 {
    let mut c = Checks::new("hostile-envcycle");
    let cycles: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(20_000);
    let Ok(start) = process::usage(0) else {
        println!("hostile-envcycle: FAIL account_info");
        return 1;
    };
    let limit = start.frames + 8;
    c.expect(process::limit(0, limit, 2), Ok(()), "limit myself");
    let free0 = exposed::free_frames().unwrap_or(0);
    let mut min_free = free0;
    let mut made = 0u64;
    for i in 0..cycles {
        match sys::env_create() {
            Ok([slot, _]) => {
                made += 1;
                if sys::env_destroy(slot).is_err() {
                    c.check(false, "env_destroy");
                    break;
                }
            }
            Err(e) => {
                // Allowed only while an earlier child's teardown is still
                // charged; never for long.
                if i % 1000 == 0 {
                    println!("hostile-envcycle: env_create refused at {i}: {e:?}");
                }
                let _ = sys::yield_cpu(0);
            }
        }
        if i % 256 == 0 {
            min_free = min_free.min(exposed::free_frames().unwrap_or(0));
        }
    }
    min_free = min_free.min(exposed::free_frames().unwrap_or(0));
    let drop = free0.saturating_sub(min_free);
    println!("hostile-envcycle: {made} of {cycles} create/destroy cycles; free frames fell by at most {drop}");
    c.check(made >= cycles / 2, "most cycles created an environment");
    // What the loop held is bounded by its account (the victim's own use
    // is a few frames at a time).
    c.check(drop <= limit + 64, "free frames never fell by more than the account allows");
    refused_at_last_check(&mut c);
    let end = process::usage(0);
    c.check(end.is_ok_and(|u| u.envs == 1 && u.frames <= limit), "nothing left charged but myself");
    c.finish()
}
