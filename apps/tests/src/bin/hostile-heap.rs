//! hostile-heap: tries to exhaust the kernel heap from inside an account
//! limited to 96 KiB of it (`env_limit_heap`). First it measures what an
//! environment and a predicate really cost the kernel heap (the exposed
//! `kernel_heap_used`) against what its account is charged for them
//! (`account_info(ACCOUNT_HEAP)`): the charge must cover the cost. Then it
//! measures a packet ring the same way (bound over frames it holds, then
//! unbound). Then it creates environments and fills each with predicates
//! until refused, and
//! derives capabilities until its list is full. Checks: every refusal is
//! `NoMemory`; the account never holds more than its limit; the kernel
//! heap never grew by more than the limit (plus one record of the victim
//! running beside it); after everything is destroyed, the account is back
//! where it started. The victim (`hostile-victim`) keeps working, and the
//! leak check at the end compares the kernel heap with its boot baseline.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::{ACCOUNT_HEAP, Error, PREDICATES, rights};
use oxok_libos::{Args, exposed, println, sys};
use oxok_pred::Builder;
use oxok_tests::Checks;

oxok_libos::main!(main);

/// The heap limit the program puts itself under, beyond what it holds.
const LIMIT: u64 = 96 * 1024;
/// Environments measured at once.
const MEASURED: u64 = 16;

fn charged() -> u64 {
    sys::account_info(0, ACCOUNT_HEAP).map_or(u64::MAX, |[used, _, _]| used)
}

fn kernel_heap() -> u64 {
    exposed::sysinfo().map_or(0, |s| s.kernel_heap_used)
}

/// Destroys every child in `slots` and waits (bounded) for their
/// teardown to give their charges back.
fn destroy_all(slots: &mut Vec<u64>, t: &mut Checks, until: u64) {
    for slot in slots.drain(..) {
        t.check(sys::env_destroy(slot).is_ok(), "env_destroy");
    }
    for _ in 0..10_000 {
        if charged() <= until {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
}

fn main(_args: Args) -> i32 {
    let mut t = Checks::new("hostile-heap");
    let mut b = Builder::new();
    b.load_u64(oxok_libos::abi::layout::CLOCK + core::mem::offset_of!(oxok_libos::abi::layout::Clock, ticks) as u64)
        .ge_imm(u64::MAX);
    let Ok(code) = b.build() else {
        println!("hostile-heap: FAIL building the predicate");
        return 1;
    };
    let code = code.as_bytes();
    let install = |slot: u64, i: u64| sys::pred_install(slot, i, code.as_ptr() as u64, code.len() as u64);

    // Our own frames are charged too (with their share of the kernel's
    // owned-frame set): take every page this program needs now, so that
    // the account below changes only by what the children cost.
    let mut kids: Vec<u64> = alloc::vec![0; 64];
    kids.clear();
    // An account of our own (no heap limit yet), so that what it reports
    // is ours and our children's alone, not the victim's beside us.
    t.expect(sys::env_limit_heap(0, u64::MAX), Ok([]), "an account of my own");
    // What an environment and a predicate cost, and what they are charged.
    let (c0, k0) = (charged(), kernel_heap());
    for _ in 0..MEASURED {
        match sys::env_create() {
            Ok([slot, _]) => kids.push(slot),
            Err(e) => t.check(false, alloc::format!("env_create while measuring: {e:?}").as_str()),
        }
    }
    let (c1, k1) = (charged(), kernel_heap());
    let env_charge = (c1 - c0) / MEASURED;
    let env_cost = k1.saturating_sub(k0) / MEASURED;
    for &slot in &kids {
        for i in 0..PREDICATES as u64 {
            t.check(install(slot, i).is_ok(), "pred_install while measuring");
        }
    }
    let (c2, k2) = (charged(), kernel_heap());
    let preds = MEASURED * PREDICATES as u64;
    let pred_charge = (c2 - c1) / preds;
    let pred_cost = k2.saturating_sub(k1) / preds;
    println!(
        "hostile-heap: an environment costs {env_cost} bytes of kernel heap, charged {env_charge}; a predicate costs {pred_cost}, charged {pred_charge}"
    );
    // The victim beside may hold one environment more at either moment.
    t.check(k1.saturating_sub(k0) <= c1 - c0 + env_charge, "an environment's charge covers its kernel heap");
    t.check(k2.saturating_sub(k1) <= c2 - c1 + env_charge, "a predicate's charge covers its kernel heap");
    t.check(env_charge > 0 && pred_charge > 0, "environments and predicates are charged");
    destroy_all(&mut kids, &mut t, c0);
    t.check(charged() == c0, "destroyed environments give their heap charge back");
    // The victim beside may hold one environment record more at either
    // moment: its cost, with room to spare.
    ring_charge(&mut t, 2 * env_cost + 1024);

    // The attack, under a heap limit.
    let base = charged();
    t.expect(sys::env_limit_heap(0, base + LIMIT), Ok([]), "limit my kernel heap");
    let limit = sys::account_info(0, ACCOUNT_HEAP).map_or(0, |[_, l, _]| l);
    t.check(limit == base + LIMIT, "account_info reports the heap limit");
    let heap0 = kernel_heap();
    let (mut created, mut installed, mut peak, mut heap_peak) = (0u64, 0u64, 0u64, heap0);
    let mut refusal = None;
    'attack: for _round in 0..50 {
        match sys::env_create() {
            Ok([slot, _]) => {
                created += 1;
                kids.push(slot);
                for i in 0..PREDICATES as u64 {
                    match install(slot, i) {
                        Ok(_) => installed += 1,
                        Err(e) => {
                            refusal = Some(e);
                            break 'attack;
                        }
                    }
                    peak = peak.max(charged());
                }
            }
            Err(e) => {
                refusal = Some(e);
                break;
            }
        }
        peak = peak.max(charged());
        heap_peak = heap_peak.max(kernel_heap());
        if kids.len() >= 40 {
            break;
        }
    }
    peak = peak.max(charged());
    heap_peak = heap_peak.max(kernel_heap());
    println!(
        "hostile-heap: {created} environments and {installed} predicates, then {refusal:?}; account peak {peak} of {limit} bytes; kernel heap grew by {}",
        heap_peak.saturating_sub(heap0)
    );
    t.check(refusal == Some(Error::NoMemory), "the attack is refused with NoMemory");
    t.check(peak <= limit, "the account never holds more than its heap limit");
    t.check(heap_peak.saturating_sub(heap0) <= LIMIT + env_charge, "the kernel heap grew by no more than the limit");
    // Deriving capabilities fills the fixed-size list: no heap at all.
    let before = charged();
    let mut derived = 0;
    while let Ok([_]) = sys::cap_derive(0, rights::READ) {
        derived += 1;
        if derived > 1000 {
            break;
        }
    }
    t.check(derived <= 64 && charged() == before, "cap_derive fills the list and no heap");
    println!("hostile-heap: {derived} capabilities derived until the list was full");
    // Everything back.
    destroy_all(&mut kids, &mut t, base);
    let end = charged();
    if end != base {
        println!("hostile-heap: account at {end} bytes, {base} before the attack");
    }
    t.check(end == base, "the account is back where it started");
    t.finish()
}

/// A packet ring's record is charged like any other (it once cost the
/// kernel heap and nobody's account), and given back when unbound, with
/// its filters' (once kept until the program ended).
fn ring_charge(t: &mut Checks, slack: u64) {
    let mut slots = [0u64; 3];
    for s in &mut slots {
        match sys::frame_alloc(oxok_libos::abi::ANY_FRAME) {
            Ok([slot, _]) => *s = slot,
            Err(e) => t.check(false, alloc::format!("frame_alloc for a ring: {e:?}").as_str()),
        }
    }
    let (c0, k0) = (charged(), kernel_heap());
    let Ok([ring]) = sys::ring_bind(slots.as_ptr() as u64, slots.len() as u64) else {
        t.check(false, "ring_bind");
        return;
    };
    let (c1, k1) = (charged(), kernel_heap());
    println!("hostile-heap: a ring costs {} bytes of kernel heap, charged {}", k1.saturating_sub(k0), c1 - c0);
    t.check(c1 > c0, "a ring is charged");
    // The victim beside may hold one environment more at either moment.
    t.check(k1.saturating_sub(k0) <= c1 - c0 + slack, "a ring's charge covers its kernel heap");
    // The largest filter (16 atoms: a port's six and ten payload bytes)
    // grows the merged trie by a node, a group and a hash table an atom:
    // its charge covers that.
    let mut big = oxok_libos::net::filters::udp(9);
    for k in 0..10 {
        big = big.eq8(20 + k, 0);
    }
    let (c2, k2) = (charged(), kernel_heap());
    let block = big.raw().to_bytes();
    let installed = sys::filter_install(ring, block.as_ptr() as u64, u64::MAX);
    t.check(installed.is_ok(), "a 16-atom filter on the ring");
    let (c3, k3) = (charged(), kernel_heap());
    println!(
        "hostile-heap: a 16-atom filter costs {} bytes of kernel heap, charged {}",
        k3.saturating_sub(k2),
        c3 - c2
    );
    t.check(c3 > c2 && k3.saturating_sub(k2) <= c3 - c2 + slack, "a filter's charge covers its kernel heap");
    if let Ok([slot, _]) = installed {
        t.expect(sys::filter_remove(slot), Ok([]), "filter_remove");
        t.check(charged() == c2, "a removed filter gives its charge back");
    }
    // A filter feeding it, charged too, goes with it when it is unbound.
    let block = oxok_libos::net::filters::udp(9).raw().to_bytes();
    t.check(sys::filter_install(ring, block.as_ptr() as u64, u64::MAX).is_ok(), "a filter on the ring");
    t.check(charged() > c1, "the filter is charged");
    t.expect(sys::ring_unbind(ring), Ok([]), "ring_unbind");
    t.check(charged() == c0, "an unbound ring gives its charge back, and its filter's");
    for s in slots {
        let _ = sys::frame_free(s);
    }
}
