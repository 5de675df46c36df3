//! hostile-zombies: a program limited to 3 environments (itself and two
//! children) lets children die and never reaps them. A zombie's row is a
//! table entry like a live environment's, so it stays charged to the
//! account until its creator reaps it (or dies): two unreaped zombies hold
//! the account's two children, reaping one frees one, and a loop that
//! drops each dead child's capability unreaped (so it can never reap it)
//! gets one child and is then refused — where once it filled all 1,024
//! rows of the environment table and every program's `env_create` failed
//! (the `hostile-victim` beside it checks its own).
#![no_std]
#![no_main]

use oxok_libos::abi::{ENV_ZOMBIE, Error};
use oxok_libos::{Args, exposed, process, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

/// More than the environment table's rows.
const ATTEMPTS: u64 = 1100;

/// Creates a child and runs it: with no code mapped it faults at once and
/// ends, a zombie until reaped. Its capability slot and id.
fn dead_child() -> Result<(u64, u64), Error> {
    let [slot, id] = sys::env_create()?;
    sys::env_run(slot)?;
    for _ in 0..100_000 {
        if exposed::env_entry(id).is_some_and(|r| r.status == ENV_ZOMBIE) {
            return Ok((slot, id));
        }
        let _ = sys::yield_cpu(0);
    }
    Err(Error::Busy)
}

fn main(_args: Args) -> i32 {
    let mut c = Checks::new("hostile-zombies");
    let Ok(start) = process::usage(0) else { return c.finish() };
    c.expect(process::limit(0, start.frames + 64, 3), Ok(()), "limit myself to 2 children");
    // Two zombies kept (their capabilities held): the account is full.
    let a = dead_child();
    let b = dead_child();
    c.check(a.is_ok() && b.is_ok(), "two children ran and ended, unreaped");
    c.expect(process::usage(0).map(|u| u.envs), Ok(3), "two zombies still charged");
    c.expect(sys::env_create().map(|_| ()), Err(Error::NoMemory), "a third child refused while they are unreaped");
    // Reaping one gives its environment back.
    if let Ok((slot, _)) = a {
        c.check(sys::env_reap(slot).is_ok(), "reap one");
    }
    c.expect(process::usage(0).map(|u| u.envs), Ok(2), "the reaped one no longer charged");
    // The attack: each dead child's capability dropped, never reaped.
    let (mut made, mut refused) = (0u64, 0u64);
    for _ in 0..ATTEMPTS {
        match dead_child() {
            Ok((slot, _)) => {
                made += 1;
                let _ = sys::cap_drop(slot);
            }
            Err(_) => {
                refused += 1;
                let _ = sys::yield_cpu(0);
            }
        }
    }
    oxok_libos::println!("hostile-zombies: {made} of {ATTEMPTS} children dropped unreaped, {refused} refused");
    c.expect(made, 1, "one child within the limit, then refusals");
    c.check(exposed::env_rows().filter(|r| r.status == ENV_ZOMBIE).count() <= 4, "the table holds no more zombies");
    c.finish()
}
