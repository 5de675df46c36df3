//! hostile-derive: derived capabilities and their revocation
//! (`cap_derive`, `cap_revoke`, `cap_grant` as a derivation).
//!
//! The owner allocates a frame, derives narrower capabilities from its
//! capability and tries to widen them (derive, grant and map with more
//! rights than held, past the depth limit): every attempt is refused. It
//! then spawns a holder (`hostile-derive holder`) and grants it a
//! read-write capability derived from its own. The holder maps the frame
//! and acknowledges through it; the owner revokes everything derived from
//! its capability. The holder then finds its capability gone — it can
//! neither map nor describe nor pass it on — and exits 0; the owner's own
//! capability still maps, the frame table counts exactly one capability,
//! and nothing leaked. A read-only capability derived for an environment
//! reads its state until revoked, and then reads nothing. The owner's own
//! capability (slot 0, which the kernel implies from its id rather than
//! stores) derives and revokes as any: its derivations go, it stays.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use oxok_libos::abi::layout::pte;
use oxok_libos::abi::{ANY_FRAME, CAP_DERIVE_DEPTH, CAP_SLOTS, Error, cap_kind, rights};
use oxok_libos::exec::{self, ExitStatus};
use oxok_libos::{Args, exposed, println, sys};
use oxok_tests::unchanged::Snapshot;
use oxok_tests::{Checks, mem};

oxok_libos::main!(main);

const VA: u64 = 0x1200_0000_0000;
const VA2: u64 = 0x1200_0000_1000;
const MAGIC: u64 = 0x0de1_7ed0_ca95_0001;
/// Word offsets in the shared frame.
const ACK: u64 = 8;
const GO: u64 = 16;
const R: u64 = rights::READ;
const W: u64 = rights::WRITE;
const G: u64 = rights::GRANT;
/// Bounded waits (yields).
const WAIT: u32 = 200_000;

fn main(args: Args) -> i32 {
    match args.get(1) {
        Some("holder") => holder(args.get(2).and_then(|s| s.parse().ok()).unwrap_or(u64::MAX)),
        _ => owner(),
    }
}

fn owner() -> i32 {
    let mut t = Checks::new("hostile-derive");
    let Ok([cap, pfn]) = sys::frame_alloc(ANY_FRAME) else {
        println!("hostile-derive: FAIL frame_alloc refused");
        return 1;
    };
    t.expect(sys::page_map(0, cap, VA, pte::WRITABLE), Ok([]), "owner maps its frame");
    mem::write(VA, MAGIC);
    let refs = || exposed::frame_entry(pfn).map(|e| e.refs);

    // Narrowing works; widening never does.
    let Ok([ro]) = sys::cap_derive(cap, R) else {
        println!("hostile-derive: FAIL cap_derive(read) refused");
        return 1;
    };
    t.expect(sys::cap_info(ro), Ok([cap_kind::FRAME, pfn, R]), "the derived capability is read-only");
    t.expect(refs(), Some(2), "frame table counts the derived capability");
    t.expect(sys::cap_derive(ro, R | W).map(|_| ()), Err(Error::Denied), "derive wider than the source refused");
    t.expect(sys::cap_derive(ro, R | G).map(|_| ()), Err(Error::Denied), "derive grant from no grant refused");
    t.expect(
        sys::cap_derive(cap, rights::CALL).map(|_| ()),
        Err(Error::Denied),
        "derive a right the source lacks refused",
    );
    t.expect(sys::cap_derive(ro, 0x8).map(|_| ()), Err(Error::Invalid), "unknown rights bits refused");
    t.expect(sys::cap_derive(ro, u64::MAX).map(|_| ()), Err(Error::Invalid), "absurd rights refused");
    t.expect(sys::cap_derive(CAP_SLOTS as u64, R).map(|_| ()), Err(Error::BadCap), "derive from a slot out of range");
    t.expect(sys::cap_grant(ro, 0, R).map(|_| ()), Err(Error::Denied), "grant without the grant right refused");
    t.expect(
        sys::page_map(0, ro, VA2, pte::WRITABLE),
        Err(Error::Denied),
        "map writable with a read-only child refused",
    );
    t.expect(sys::page_map(0, ro, VA2, 0), Ok([]), "map read-only with the child");
    t.expect(sys::page_unmap(0, VA2), Ok([]), "unmap");
    t.expect(sys::cap_revoke(ro), Ok([0]), "nothing derived from the child yet");

    // The depth limit: a chain of CAP_DERIVE_DEPTH derivations, then no more.
    // (Read and grant: the end of the chain may still try to grant.)
    let mut chain = [0u64; CAP_DERIVE_DEPTH as usize];
    let mut from = cap;
    let mut ok = true;
    for link in chain.iter_mut() {
        match sys::cap_derive(from, R | G) {
            Ok([s]) => {
                *link = s;
                from = s;
            }
            Err(_) => ok = false,
        }
    }
    t.check(ok, "a chain of CAP_DERIVE_DEPTH derivations");
    // The depth limit is the last check of `cap_derive` and `cap_grant`:
    // refused there, nothing changed (list, account, table row, counts).
    let before = (Snapshot::of_self(), refs());
    t.expect(sys::cap_derive(from, R).map(|_| ()), Err(Error::Invalid), "one derivation too deep refused");
    t.expect((Snapshot::of_self(), refs()), before, "a derivation refused at its last check changed nothing");
    t.expect(sys::cap_grant(from, 0, R).map(|_| ()), Err(Error::Invalid), "a grant one level too deep refused");
    t.expect((Snapshot::of_self(), refs()), before, "a grant refused at its last check changed nothing");
    t.expect(sys::cap_copy(0, from, R).map(|_| ()), Err(Error::Invalid), "a copy one level too deep refused");
    t.expect((Snapshot::of_self(), refs()), before, "a copy refused at its last check changed nothing");

    // Revoking the owner's capability takes the whole chain and the child,
    // and leaves the owner's own.
    let removed = sys::cap_revoke(cap);
    t.expect(removed, Ok([CAP_DERIVE_DEPTH + 1]), "cap_revoke removes the chain and the child");
    t.expect(sys::cap_info(ro), Err(Error::BadCap), "the revoked child is gone");
    t.check(chain.iter().all(|&s| sys::cap_info(s) == Err(Error::BadCap)), "every link of the chain is gone");
    t.expect(sys::page_map(0, ro, VA2, 0), Err(Error::BadCap), "a revoked capability no longer maps");
    t.expect(refs(), Some(1), "frame table: only the owner's capability");

    // An environment capability: a derived read-only one reads the state
    // until it is revoked, and never more than read.
    env_state(&mut t);
    own_cap(&mut t);

    // Across environments: the holder gets a read-write child by grant.
    let holder = across(&mut t, cap, pfn);
    t.expect(refs(), Some(1), "frame table: only the owner's capability after the holder");
    t.expect(sys::page_map(0, cap, VA2, 0), Ok([]), "the owner's own capability still maps");
    t.expect(mem::read(VA2), MAGIC, "and reads its frame");
    t.expect(sys::page_unmap(0, VA2), Ok([]), "unmap");
    t.expect(sys::page_unmap(0, VA), Ok([]), "unmap");
    let owned = exposed::owned_frames();
    t.expect(sys::frame_free(cap), Ok([]), "free");
    t.expect(sys::cap_revoke(cap), Err(Error::BadCap), "revoke with an empty slot");
    t.expect(sys::cap_revoke(u64::MAX), Err(Error::BadCap), "revoke with slot u64::MAX");
    t.check(holder, "the holder saw its capability revoked and kept running");
    t.expect(exposed::owned_frames(), owned.map(|n| n - 1), "the frame is freed: no frame leaked");
    t.finish()
}

/// Spawns the holder, grants it a read-write child, waits for its
/// acknowledgement, revokes, and waits for it to end. True if it ended 0.
fn across(t: &mut Checks, cap: u64, pfn: u64) -> bool {
    mem::write(VA + ACK, 0);
    mem::write(VA + GO, 0);
    let arg = alloc::format!("{pfn}");
    let child = match exec::spawn("hostile-derive", &["hostile-derive", "holder", &arg]) {
        Ok(c) => c,
        Err(e) => {
            println!("hostile-derive: FAIL spawn holder: {e}");
            t.check(false, "spawn the holder");
            return false;
        }
    };
    let Ok([mid]) = sys::cap_derive(cap, R | W | G) else {
        t.check(false, "derive the capability to grant");
        return false;
    };
    t.expect(
        sys::cap_grant(mid, child.slot, R | W | G | rights::CALL).map(|_| ()),
        Err(Error::Denied),
        "grant wider than the source refused",
    );
    t.check(sys::cap_grant(mid, child.slot, R | W).is_ok(), "grant the holder a read-write child");
    let acked = (0..WAIT).any(|_| {
        let done = mem::read(VA + ACK) == 1;
        if !done {
            let _ = sys::yield_cpu(0);
        }
        done
    });
    t.check(acked, "the holder mapped the frame through its granted capability");
    t.expect(
        sys::cap_revoke(cap),
        Ok([3]),
        "cap_revoke takes the owner's child, the holder's grant and what the holder derived",
    );
    t.expect(sys::cap_info(mid), Err(Error::BadCap), "the owner's child is gone");
    mem::write(VA + GO, 1);
    matches!(exec::wait(child), Ok(ExitStatus::Exited(0)))
}

/// The holder: finds the granted frame capability, maps it, acknowledges;
/// after the revocation checks that it is gone and that nothing it could
/// still try works. Exits 0 if every check held.
fn holder(pfn: u64) -> i32 {
    let mut t = Checks::new("hostile-derive holder");
    let find =
        || (1..CAP_SLOTS as u64).find(|&s| sys::cap_info(s).is_ok_and(|[k, n, _]| k == cap_kind::FRAME && n == pfn));
    let mut slot = None;
    for _ in 0..WAIT {
        slot = find();
        if slot.is_some() {
            break;
        }
        let _ = sys::yield_cpu(0);
    }
    let Some(slot) = slot else {
        println!("hostile-derive holder: FAIL no capability arrived");
        return 1;
    };
    t.expect(sys::cap_info(slot), Ok([cap_kind::FRAME, pfn, R | W]), "the granted capability is read-write");
    t.expect(sys::cap_derive(slot, R | W | G).map(|_| ()), Err(Error::Denied), "holder cannot widen to grant");
    t.expect(sys::page_map(0, slot, VA, pte::WRITABLE), Ok([]), "holder maps the frame");
    t.expect(mem::read(VA), MAGIC, "holder reads the owner's word");
    // A grandchild the holder derives itself also goes with the revocation.
    let grandchild = sys::cap_derive(slot, R).map(|[s]| s);
    t.check(grandchild.is_ok(), "holder derives a read-only grandchild");
    mem::write(VA + ACK, 1);
    let go = (0..WAIT).any(|_| {
        let done = mem::read(VA + GO) == 1;
        if !done {
            let _ = sys::yield_cpu(0);
        }
        done
    });
    t.check(go, "the owner revoked");
    t.expect(sys::cap_info(slot), Err(Error::BadCap), "the granted capability is gone");
    if let Ok(g) = grandchild {
        t.expect(sys::cap_info(g), Err(Error::BadCap), "the holder's own derivation is gone too");
    }
    t.expect(sys::page_map(0, slot, VA2, 0), Err(Error::BadCap), "a revoked capability no longer maps");
    t.expect(sys::cap_derive(slot, R).map(|_| ()), Err(Error::BadCap), "nor derives");
    t.check(find().is_none(), "no capability for the frame is left");
    t.expect(sys::page_unmap(0, VA), Ok([]), "holder unmaps its old binding");
    t.finish()
}

/// The owner's own capability, slot 0: what is derived from it lands in
/// another slot and goes when it is revoked; it stays, with every right,
/// and still serves as the owner's environment capability.
fn own_cap(t: &mut Checks) {
    let me = oxok_libos::process::env_id();
    let all = R | W | G | rights::CALL | rights::EXECUTE;
    t.expect(sys::cap_info(0), Ok([cap_kind::ENV, me, all]), "slot 0 is the owner itself, every right");
    let Ok([ro]) = sys::cap_derive(0, R) else {
        t.check(false, "derive from the own capability");
        return;
    };
    t.check(ro != 0, "a derivation never lands in slot 0");
    t.expect(sys::cap_info(ro), Ok([cap_kind::ENV, me, R]), "the derived one names the owner, read only");
    let grandchild = sys::cap_derive(ro, R).map(|[s]| s);
    t.check(grandchild.is_ok(), "derive from the derived one");
    t.expect(sys::cap_derive(ro, R | W).map(|_| ()), Err(Error::Denied), "no wider than read");
    t.expect(sys::cap_revoke(0), Ok([2]), "revoking the own capability takes both derivations");
    t.expect(sys::cap_info(ro), Err(Error::BadCap), "the derived one is gone");
    if let Ok(g) = grandchild {
        t.expect(sys::cap_info(g), Err(Error::BadCap), "and its child");
    }
    t.expect(sys::cap_info(0), Ok([cap_kind::ENV, me, all]), "the own capability stays");
    t.expect(sys::cap_revoke(0), Ok([0]), "nothing is left to revoke");
    t.expect(sys::cap_drop(0), Err(Error::Invalid), "and it cannot be dropped");
    t.expect(sys::page_map(0, 0, VA2, 0).map(|_| ()), Err(Error::BadCap), "it is no frame capability");
}

/// A read-only capability derived from a child's reads its state, cannot
/// write it or gain call, and reads nothing once revoked.
fn env_state(t: &mut Checks) {
    let Ok([env, _]) = sys::env_create() else {
        t.check(false, "env_create");
        return;
    };
    let mut state = oxok_libos::abi::EnvState::default();
    let buf = &raw mut state as u64;
    match sys::cap_derive(env, R) {
        Ok([ro]) => {
            t.expect(sys::env_get_state(ro, buf), Ok([]), "a derived read-only capability reads the state");
            t.expect(sys::env_set_state(ro, buf), Err(Error::Denied), "but cannot write it");
            t.expect(sys::cap_derive(ro, R | rights::CALL).map(|_| ()), Err(Error::Denied), "nor derive call");
            t.expect(sys::cap_revoke(env), Ok([1]), "revoke what was derived from the environment capability");
            t.expect(sys::env_get_state(ro, buf), Err(Error::BadCap), "the revoked capability no longer reads");
            t.expect(sys::env_get_state(env, buf), Ok([]), "the creator's own still does");
        }
        Err(_) => t.check(false, "derive a read-only environment capability"),
    }
    t.expect(sys::env_destroy(env), Ok([]), "destroy it");
}
