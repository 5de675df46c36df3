//! Capabilities: domination, derivation and guard checks.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::{Rng, all_rights};
use oxok_cap::{Cap, CapError, Kind, MAX_DEPTH, Name, Rights, check};

const RW: Rights = Rights::READ.union(Rights::WRITE);

#[test]
fn domination_is_a_partial_order_with_root_on_top() {
    let mut rng = Rng::new(10);
    for _ in 0..20_000 {
        let (a, b, c) = (rng.cap(), rng.cap(), rng.cap());
        assert!(a.dominates(&a), "reflexive");
        assert!(Cap::ROOT.dominates(&a));
        if a.dominates(&b) && b.dominates(&a) {
            assert_eq!(a, b, "antisymmetric");
        }
        if a.dominates(&b) && b.dominates(&c) {
            assert!(a.dominates(&c), "transitive");
        }
        assert_eq!(a.dominates(&b), a.name.is_prefix_of(&b.name) && a.rights.contains(b.rights));
    }
}

#[test]
fn domination_needs_both_name_and_rights() {
    let parent = Cap::new(Name::frame(1, 1), Rights::READ);
    let more_rights = Cap::new(Name::frame(1, 1), RW);
    let child = Cap::new(Name::frame(1, 1).push(4).unwrap(), Rights::READ);
    assert!(parent.dominates(&child));
    assert!(!child.dominates(&parent));
    assert!(more_rights.dominates(&parent));
    assert!(!parent.dominates(&more_rights));
    assert!(!Cap::new(Name::frame(1, 2), Rights::ALL).dominates(&parent));
}

#[test]
fn derive_never_widens() {
    let mut rng = Rng::new(11);
    for _ in 0..20_000 {
        let parent = rng.cap();
        let rights = rng.rights();
        let len = rng.below(MAX_DEPTH as u64 + 2) as usize;
        let suffix: Vec<u64> = (0..len).map(|_| rng.hostile()).collect();
        match parent.derive(&suffix, rights) {
            Ok(child) => {
                assert!(parent.dominates(&child));
                assert_eq!(child.rights, rights);
                assert_eq!(child.name.depth(), parent.name.depth() + len);
                assert_eq!(&child.name.components()[parent.name.depth()..], &suffix[..]);
            }
            Err(CapError::Widen) => assert!(!parent.rights.contains(rights)),
            Err(CapError::TooDeep) => {
                assert!(parent.rights.contains(rights));
                assert!(parent.name.depth() + len > MAX_DEPTH);
            }
            Err(e) => panic!("unexpected {e:?}"),
        }
    }
}

#[test]
fn derive_needs_no_right_but_cannot_add_one() {
    let none = Cap::new(Name::frame(3, 3), Rights::NONE);
    assert_eq!(none.derive(&[1], Rights::NONE).unwrap().name.depth(), 4);
    for r in all_rights().filter(|r| !r.is_empty()) {
        assert_eq!(none.derive(&[], r), Err(CapError::Widen));
    }
    let read = Cap::new(Name::frame(3, 3), Rights::READ);
    assert_eq!(read.derive(&[], RW), Err(CapError::Widen));
    assert_eq!(read.derive(&[], Rights::GRANT), Err(CapError::Widen));
    // Widen is reported before TooDeep.
    assert_eq!(read.derive(&[0; 100], RW), Err(CapError::Widen));
    assert_eq!(read.derive(&[0; 100], Rights::READ), Err(CapError::TooDeep));
}

#[test]
fn derive_with_empty_suffix_only_weakens() {
    let full = Cap::new(Name::env(2, 9), Rights::ALL);
    let weak = full.derive(&[], Rights::READ).unwrap();
    assert_eq!(weak.name, full.name);
    assert_eq!(weak.rights, Rights::READ);
    assert_eq!(check(&weak, &Name::env(2, 9), Rights::READ), Ok(()));
    assert_eq!(check(&weak, &Name::env(2, 9), Rights::WRITE), Err(CapError::Denied));
}

#[test]
fn guard_check_cases() {
    let frame = Name::frame(42, 7);
    let cap = Cap::new(frame, RW);
    assert_eq!(check(&cap, &frame, Rights::READ), Ok(()));
    assert_eq!(check(&cap, &frame, RW), Ok(()));
    assert_eq!(check(&cap, &frame, Rights::NONE), Ok(()));
    assert_eq!(check(&cap, &frame, Rights::GRANT), Err(CapError::Denied));
    assert_eq!(check(&cap, &frame, Rights::ALL), Err(CapError::Denied));
    // Stale generation, other frame, other kind: not covered.
    assert_eq!(check(&cap, &Name::frame(42, 8), Rights::NONE), Err(CapError::WrongName));
    assert_eq!(check(&cap, &Name::frame(43, 7), Rights::READ), Err(CapError::WrongName));
    assert_eq!(check(&cap, &Name::env(42, 7), Rights::READ), Err(CapError::WrongName));
    // Wrong name is reported before wrong rights.
    assert_eq!(check(&cap, &Name::env(42, 7), Rights::ALL), Err(CapError::WrongName));
    // A cap derived below the frame does not cover the frame itself.
    let child = cap.derive(&[0], RW).unwrap();
    assert_eq!(check(&child, &frame, Rights::READ), Err(CapError::WrongName));
    // Kind roots and ROOT cover it.
    let frames = Cap::new(Name::kind_root(Kind::Frame), Rights::ALL);
    assert_eq!(check(&frames, &frame, Rights::ALL), Ok(()));
    assert_eq!(check(&Cap::ROOT, &frame, Rights::ALL), Ok(()));
    assert_eq!(check(&frames, &Name::slot(0, 0, 0), Rights::READ), Err(CapError::WrongName));
}

#[test]
fn check_agrees_with_domination() {
    // Passing the guard for `need` is exactly dominating the capability
    // (guard, need).
    let mut rng = Rng::new(12);
    for _ in 0..20_000 {
        let cap = rng.cap();
        let guard = if rng.chance(2) { rng.resource() } else { rng.name() };
        let need = rng.rights();
        let ok = check(&cap, &guard, need).is_ok();
        assert_eq!(ok, cap.dominates(&Cap::new(guard, need)));
        // A derived cap passes no guard its parent fails.
        if let Ok(child) = cap.derive(&[rng.small()], rng.rights())
            && check(&child, &guard, need).is_ok()
        {
            assert!(ok);
        }
    }
}

#[test]
fn display() {
    let cap = Cap::new(Name::frame(42, 7), RW);
    assert_eq!(cap.to_string(), "/1/42/7 rw-");
    assert_eq!(format!("{:?}", Cap::ROOT), "Cap(/ rwgcx)");
    for e in CapError::ALL {
        assert!(!e.to_string().is_empty());
    }
}
