//! slots-share NAME SLOTS: CPU shares follow slot ownership.
//!
//! Two copies start together (`a` with 3 slots, `b` with 1). Each stops
//! asking for spare time, so it runs only in the slots it owns, allocates
//! its slots next to each other (one stretch per round), and spins. `a`
//! waits until `b` owns its slot, then compares the ticks both ran over 2 s
//! of wall time (exposed run statistics): the ratio must be 3:1 within
//! ±20% (TCG; measured 2.86–2.9: `a`'s 12-tick stretch loses part of a
//! tick at its end more often than `b`'s 4-tick one). `b` spins until `a`
//! is gone.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

use oxok_libos::abi::layout::SLOT_VECTOR_SLOTS;
use oxok_libos::abi::slot_placement::{ANY, NEAR};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::{Checks, cpu};

oxok_libos::main!(main);

fn main(args: Args) -> i32 {
    let name = args.get(1).unwrap_or("a");
    let want: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let mut t = Checks::new(if name == "a" { "slots-share a" } else { "slots-share b" });
    let me = exposed::self_id();
    let mut first = None;
    for _ in 0..want {
        let r = match first {
            None => sys::slot_alloc(ANY, 0),
            Some(i) => sys::slot_alloc(NEAR, i),
        };
        match r {
            Ok([_, index]) => {
                first.get_or_insert(index);
                let row = exposed::slot_row(index as usize);
                t.check(row.is_some_and(|r| u64::from(r.owner) == me), "exposed row names the owner");
            }
            Err(_) => t.check(false, "slot_alloc"),
        }
    }
    // Only now: without slots, an environment that stops asking for spare
    // time never runs again.
    t.check(sys::slot_spare(0, 0).is_ok(), "stop asking for spare time");
    println!("slots-share {name}: owns {want} slot(s) from {}", first.unwrap_or(0));
    if name != "a" {
        // Spin until `a` has measured and gone (at most 20 s).
        let end = exposed::rdtsc() + 20_000 * cpu::cycles_per_ms();
        let _ = cpu::wait_peer("slots-share", 2000);
        while cpu::peer("slots-share").is_some() && exposed::rdtsc() < end {}
        println!("slots-share {name}: done");
        return t.finish();
    }
    let Some(peer) = cpu::wait_peer("slots-share", 2000) else {
        t.check(false, "peer started");
        return t.finish();
    };
    // Wait until the peer owns its slot (it set itself up in spare time).
    let owns = |id: u64| (0..SLOT_VECTOR_SLOTS).filter_map(exposed::slot_row).any(|r| u64::from(r.owner) == id);
    let end = exposed::rdtsc() + 2000 * cpu::cycles_per_ms();
    while !owns(peer) && exposed::rdtsc() < end {}
    t.check(owns(peer), "peer owns a slot");
    cpu::spin_ms(50);
    let (a0, b0) = (cpu::ticks(me).unwrap_or(0), cpu::ticks(peer).unwrap_or(0));
    cpu::spin_ms(2000);
    let (a1, b1) = (cpu::ticks(me).unwrap_or(0), cpu::ticks(peer).unwrap_or(0));
    let (da, db) = (a1.saturating_sub(a0), b1.saturating_sub(b0));
    let ratio100 = da * 100 / db.max(1);
    println!(
        "slots-share: a ran {da} ticks, b ran {db} ticks in 2 s: ratio {}.{:02} (slots 3:1, tolerance ±20%)",
        ratio100 / 100,
        ratio100 % 100
    );
    t.check(db > 0, "b ran");
    t.check((240..=360).contains(&ratio100), "ratio within 3.00 ± 20%");
    t.finish()
}
