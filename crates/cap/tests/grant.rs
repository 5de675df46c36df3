//! Granting and deriving into lists: authority only ever flows downwards.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{Cap, CapError, CapList, MAX_DEPTH, Name, Rights, derive_into, grant};

const RW: Rights = Rights::READ.union(Rights::WRITE);
const RWG: Rights = Rights::ALL;

#[test]
fn grant_copies_with_fewer_rights() {
    let mut a = CapList::<8>::new();
    let mut b = CapList::<4>::new();
    let frame = Name::frame(42, 7);
    a.insert(Cap::new(frame, RWG)).unwrap();
    assert_eq!(grant(&a, 0, &mut b, Rights::READ), Ok(0));
    assert_eq!(b.get(0), Ok(&Cap::new(frame, Rights::READ)));
    // Source unchanged.
    assert_eq!(a.get(0), Ok(&Cap::new(frame, RWG)));
    // Copy keeps GRANT only when asked.
    assert_eq!(grant(&a, 0, &mut b, RWG), Ok(1));
    assert_eq!(b.get(1).unwrap().rights, RWG);
}

#[test]
fn grant_without_grant_right_is_denied() {
    let mut a = CapList::<8>::new();
    let mut b = CapList::<8>::new();
    a.insert(Cap::new(Name::frame(1, 1), RW)).unwrap();
    for r in [Rights::NONE, Rights::READ, RW] {
        assert_eq!(grant(&a, 0, &mut b, r), Err(CapError::Denied));
    }
    assert!(b.is_empty());
}

#[test]
fn received_copy_without_grant_cannot_be_passed_on() {
    let mut a = CapList::<8>::new();
    let mut b = CapList::<8>::new();
    let mut c = CapList::<8>::new();
    a.insert(Cap::new(Name::env(3, 1), RWG)).unwrap();
    let s = grant(&a, 0, &mut b, RW).unwrap();
    assert_eq!(grant(&b, s as u64, &mut c, Rights::READ), Err(CapError::Denied));
    // Nor can B regain GRANT by deriving.
    assert_eq!(derive_into(&mut b, s as u64, &[], RWG), Err(CapError::Widen));
    assert_eq!(derive_into(&mut b, s as u64, &[1], Rights::GRANT), Err(CapError::Widen));
    assert!(c.is_empty());
}

#[test]
fn grant_cannot_widen() {
    let mut a = CapList::<8>::new();
    let mut b = CapList::<8>::new();
    a.insert(Cap::new(Name::frame(1, 1), Rights::READ | Rights::GRANT)).unwrap();
    assert_eq!(grant(&a, 0, &mut b, Rights::WRITE), Err(CapError::Widen));
    assert_eq!(grant(&a, 0, &mut b, RWG), Err(CapError::Widen));
    assert!(b.is_empty());
    assert_eq!(grant(&a, 0, &mut b, Rights::READ), Ok(0));
}

#[test]
fn grant_errors_leave_both_lists_unchanged() {
    let mut a = CapList::<2>::new();
    let mut b = CapList::<1>::new();
    a.insert(Cap::new(Name::frame(1, 1), RWG)).unwrap();
    b.insert(Cap::new(Name::frame(9, 9), Rights::READ)).unwrap();
    let (a0, b0) = (a.clone(), b.clone());
    assert_eq!(grant(&a, 0, &mut b, Rights::READ), Err(CapError::Full));
    assert_eq!(grant(&a, 1, &mut b, Rights::READ), Err(CapError::EmptySlot));
    for slot in [2, 3, u64::MAX] {
        assert_eq!(grant(&a, slot, &mut b, Rights::READ), Err(CapError::BadSlot));
    }
    assert_eq!((a, b), (a0, b0));
}

#[test]
fn derive_into_appends_a_dominated_child() {
    let mut list = CapList::<4>::new();
    let parent = Cap::new(Name::frame(5, 2), RW);
    list.insert(parent).unwrap();
    let s = derive_into(&mut list, 0, &[7, 8], Rights::READ).unwrap();
    assert_eq!(s, 1);
    let child = *list.get(1).unwrap();
    assert!(parent.dominates(&child));
    assert_eq!(child.name.components(), &[1, 5, 2, 7, 8]);
    // Errors in order; list unchanged.
    let before = list.clone();
    assert_eq!(derive_into(&mut list, 9, &[], Rights::NONE), Err(CapError::BadSlot));
    assert_eq!(derive_into(&mut list, 3, &[], Rights::NONE), Err(CapError::EmptySlot));
    assert_eq!(derive_into(&mut list, 0, &[], RWG), Err(CapError::Widen));
    assert_eq!(derive_into(&mut list, 0, &[0; MAX_DEPTH], Rights::READ), Err(CapError::TooDeep));
    assert_eq!(list, before);
    derive_into(&mut list, 0, &[], Rights::NONE).unwrap();
    derive_into(&mut list, 0, &[], Rights::NONE).unwrap();
    assert_eq!(derive_into(&mut list, 0, &[], Rights::NONE), Err(CapError::Full));
}

/// Random grants and derivations among several lists, with hostile slot
/// numbers and rights: every capability that ever exists is dominated by
/// one the kernel handed out originally, and nothing reaches a list that
/// only ever received caps without GRANT from others.
#[test]
fn authority_never_amplifies() {
    const N: usize = 16;
    let mut rng = Rng::new(30);
    for round in 0..200 {
        let mut lists: Vec<CapList<N>> = vec![CapList::new(); 4];
        let mut originals = Vec::new();
        for list in lists.iter_mut() {
            for _ in 0..rng.below(4) {
                let cap = Cap::new(rng.resource(), rng.rights());
                originals.push(cap);
                list.insert(cap).unwrap();
            }
        }
        for _ in 0..300 {
            let from = rng.below(4) as usize;
            let slot = if rng.chance(5) { rng.hostile() } else { rng.below(N as u64) };
            let rights = rng.rights();
            if rng.chance(2) {
                let mut to = rng.below(4) as usize;
                if to == from {
                    to = (to + 1) % 4;
                }
                let source = lists[from].get(slot).copied();
                let (src, dst) = pick_two(&mut lists, from, to);
                let res = grant(src, slot, dst, rights);
                match (source, res) {
                    (Ok(s), Ok(i)) => {
                        assert!(s.rights.contains(Rights::GRANT));
                        assert_eq!(dst.get(i as u64), Ok(&Cap::new(s.name, rights)));
                    }
                    (Ok(s), Err(CapError::Denied)) => {
                        assert!(!s.rights.contains(Rights::GRANT))
                    }
                    (Ok(s), Err(CapError::Widen)) => assert!(!s.rights.contains(rights)),
                    (Ok(_), Err(CapError::Full)) => assert!(dst.is_full()),
                    (Err(e), res) => assert_eq!(res, Err(e)),
                    (s, r) => panic!("round {round}: {s:?} -> {r:?}"),
                }
            } else {
                let len = rng.below(4) as usize;
                let suffix: Vec<u64> = (0..len).map(|_| rng.small()).collect();
                let _ = derive_into(&mut lists[from], slot, &suffix, rights);
            }
            for list in &lists {
                for (_, cap) in list.iter() {
                    assert!(
                        originals.iter().any(|o| o.dominates(cap)),
                        "round {round}: {cap} dominated by no original"
                    );
                }
            }
        }
    }
}

fn pick_two<T>(v: &mut [T], a: usize, b: usize) -> (&T, &mut T) {
    assert_ne!(a, b);
    if a < b {
        let (lo, hi) = v.split_at_mut(b);
        (&lo[a], &mut hi[0])
    } else {
        let (lo, hi) = v.split_at_mut(a);
        (&hi[0], &mut lo[b])
    }
}
