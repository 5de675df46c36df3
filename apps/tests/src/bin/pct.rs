//! pct server | pct client: protected control transfer between two
//! environments started together (`run=pct+server&pct+client`).
//!
//! The server accepts calls (registers a PCT entry) and answers
//! `[a, b, rest…]` with `[a + 1, b * 2, rest…]`. The client finds it in the
//! exposed environment table, checks the reply and that the kernel's caller
//! id is right, attacks (calls to itself, to nobody, to an environment that
//! does not accept, a reply while not serving), times round trips, calls
//! through a call slot the libOS remembers gone stale (retried with the
//! capability's new slot), and finally stops the server with an
//! asynchronous transfer.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use oxok_libos::abi::{Error, rights};
use oxok_libos::pct::{self, Msg};
use oxok_libos::time::rdtsc;
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::Checks;

oxok_libos::main!(main);

const STOP: u64 = u64::MAX;
static STOPPING: AtomicBool = AtomicBool::new(false);
static SERVED: AtomicU64 = AtomicU64::new(0);
static LAST_CALLER: AtomicU64 = AtomicU64::new(0);

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("server") => server(),
        Some("client") => client(),
        _ => {
            println!("pct: usage: pct server|client");
            2
        }
    }
}

fn serve(caller: u64, _sync: bool, msg: &mut Msg) {
    LAST_CALLER.store(caller, Ordering::Relaxed);
    if msg[0] == STOP {
        STOPPING.store(true, Ordering::Release);
        return;
    }
    SERVED.fetch_add(1, Ordering::Relaxed);
    msg[0] = msg[0].wrapping_add(1);
    msg[1] = msg[1].wrapping_mul(2);
}

fn server() -> i32 {
    if let Err(e) = pct::serve(serve) {
        println!("pct server: FAIL serve: {e}");
        return 1;
    }
    println!("pct server: accepting calls");
    while !STOPPING.load(Ordering::Acquire) {
        let _ = sys::yield_cpu(0);
    }
    println!(
        "pct server: stopped after {} calls, last caller {}",
        SERVED.load(Ordering::Relaxed),
        LAST_CALLER.load(Ordering::Relaxed)
    );
    0
}

/// Other environments named `pct`, by id.
fn peers(me: u64) -> impl Iterator<Item = u64> {
    (0..oxok_libos::abi::layout::ENV_TABLE_ROWS).filter_map(move |i| {
        let row = exposed::env_row(i)?;
        let name = core::str::from_utf8(&row.name).unwrap_or("").trim_end_matches('\0');
        (row.id != 0 && u64::from(row.id) != me && name == "pct").then_some(u64::from(row.id))
    })
}

fn client() -> i32 {
    let mut t = Checks::new("pct client");
    let me = oxok_libos::process::env_id();
    let msg: Msg = [41, 7, 3, 4, 5, 6, 7, 8, 9];
    // Find the server: the peer that accepts. Until it has registered its
    // entry, calls fail with Denied; yield and try again.
    let mut server = None;
    'find: for _ in 0..10_000 {
        for peer in peers(me) {
            match pct::call(peer, &msg) {
                Ok((callee, reply)) => {
                    server = Some(peer);
                    t.check(callee == peer, "reply carries the callee's id");
                    t.check(reply[0] == 42 && reply[1] == 14, "server computed the reply");
                    t.check(reply[2..] == msg[2..], "untouched message registers come back intact");
                    break 'find;
                }
                Err(Error::Denied | Error::Busy) => {}
                Err(e) => t.check(
                    false,
                    match e {
                        Error::BadEnv => "peer vanished",
                        _ => "unexpected error from pct_call",
                    },
                ),
            }
        }
        let _ = sys::yield_cpu(0);
    }
    let Some(server) = server else {
        println!("pct client: FAIL no server accepted");
        return 1;
    };
    t.check(LAST_CALLER.load(Ordering::Relaxed) == 0, "the server's memory is its own");

    // Hostile and edge cases: all fail cleanly.
    t.check(pct::call(me, &msg).err() == Some(Error::Invalid), "call to itself refused");
    t.check(pct::call(0xffff_ffff, &msg).err() == Some(Error::BadEnv), "call to nobody refused");
    t.check(pct::call(u64::MAX, &msg).err() == Some(Error::BadEnv), "absurd id refused");
    match sys::env_create() {
        Ok([slot, child]) => {
            t.check(
                pct::call(child, &msg).err() == Some(Error::Denied),
                "an environment without a PCT entry does not accept",
            );
            t.check(sys::env_destroy(slot).is_ok(), "child destroyed");
        }
        Err(_) => t.check(false, "env_create"),
    }
    t.check(sys::pct_reply(0, &[0; 9]).err() == Some(Error::Invalid), "pct_reply while not serving refused");

    // Round trips.
    let rounds = 200u64;
    let start = rdtsc();
    let mut ok = true;
    for i in 0..rounds {
        let m: Msg = [i, i, 0, 0, 0, 0, 0, 0, 0];
        match pct::call(server, &m) {
            Ok((_, r)) => ok &= r[0] == i + 1 && r[1] == i.wrapping_mul(2),
            Err(_) => ok = false,
        }
    }
    let per = (rdtsc() - start) / rounds;
    t.check(ok, "200 synchronous round trips answered correctly");
    println!("pct client: round trip {per} cycles");

    // The call slot the libOS remembers gone stale: the capability is now
    // in another slot (derived from it, the first dropped); the kernel
    // refuses the remembered one and the libOS looks again and retries.
    match oxok_libos::callcap::slot_for(server) {
        Some(first) => match sys::cap_derive(first, rights::CALL) {
            Ok([second]) => {
                t.check(sys::cap_drop(first).is_ok(), "drop the first call slot");
                let m: Msg = [7, 7, 0, 0, 0, 0, 0, 0, 0];
                t.check(
                    pct::call(server, &m).is_ok_and(|(_, r)| r[0] == 8 && r[1] == 14),
                    "a call through a stale remembered slot is retried with the capability's new slot",
                );
                t.check(oxok_libos::callcap::slot_for(server) == Some(second), "the new slot is remembered");
            }
            Err(_) => t.check(false, "derive the call capability"),
        },
        None => t.check(false, "a call capability for the server"),
    }

    // Stop the server with an asynchronous transfer.
    let mut stop = msg;
    stop[0] = STOP;
    t.check(pct::send(server, &stop).is_ok(), "asynchronous transfer accepted");
    // The server exits on that message: wait (bounded) until its row empties.
    let gone = (0..100_000).any(|_| {
        let alive = (0..oxok_libos::abi::layout::ENV_TABLE_ROWS)
            .any(|i| exposed::env_row(i).is_some_and(|r| u64::from(r.id) == server));
        if alive {
            let _ = sys::yield_cpu(0);
        }
        !alive
    });
    t.check(gone, "the server stopped on the asynchronous message");
    t.finish()
}
