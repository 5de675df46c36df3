//! Derivation and revocation of everything derived from one capability.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{Cap, CapError, CapList, Lineage, MAX_LINEAGE, Name, Rights, derive_child, revoke_derived};

const RW: Rights = Rights::READ.union(Rights::WRITE);

fn derive_in<const N: usize>(
    list: &mut CapList<N>,
    slot: u64,
    rights: Rights,
    ids: &mut u64,
) -> Result<usize, CapError> {
    let (cap, lineage) = derive_child(list, slot, rights, ids)?;
    list.insert_derived(cap, lineage)
}

#[test]
fn child_has_fewer_rights_same_name_and_a_lineage() {
    let mut list = CapList::<8>::new();
    let frame = Name::frame(42, 7);
    list.insert(Cap::new(frame, Rights::ALL)).unwrap();
    assert_eq!(list.lineage(0), Ok(Lineage::EMPTY));
    let mut ids = 0;
    let c = derive_in(&mut list, 0, Rights::READ, &mut ids).unwrap();
    assert_eq!(list.get(c as u64), Ok(&Cap::new(frame, Rights::READ)));
    let parent = list.lineage(0).unwrap();
    let child = list.lineage(c as u64).unwrap();
    assert_eq!(parent.ids().len(), 1);
    assert_eq!(child.ids().len(), 2);
    assert!(child.descends_from(parent.node().unwrap()));
    assert!(!parent.descends_from(parent.node().unwrap()));
    // The child passes the parent's guard for what it kept.
    assert!(oxok_cap::check(list.get(c as u64).unwrap(), &frame, Rights::READ).is_ok());
}

#[test]
fn widening_and_errors_change_nothing() {
    let mut list = CapList::<2>::new();
    list.insert(Cap::new(Name::frame(1, 1), RW)).unwrap();
    let before = list.clone();
    let mut ids = 5;
    assert_eq!(derive_child(&mut list, 0, Rights::GRANT, &mut ids), Err(CapError::Widen));
    assert_eq!(derive_child(&mut list, 0, Rights::ALL, &mut ids), Err(CapError::Widen));
    assert_eq!(derive_child(&mut list, 1, Rights::READ, &mut ids), Err(CapError::EmptySlot));
    for slot in [2, 64, u64::MAX] {
        assert_eq!(derive_child(&mut list, slot, Rights::READ, &mut ids), Err(CapError::BadSlot));
    }
    assert_eq!((list, ids), (before, 5));
}

#[test]
fn depth_is_bounded() {
    let mut list = CapList::<16>::new();
    list.insert(Cap::new(Name::env(3, 1), Rights::ALL)).unwrap();
    let mut ids = 0;
    let mut slot = 0u64;
    for _ in 0..MAX_LINEAGE - 1 {
        slot = derive_in(&mut list, slot, Rights::ALL, &mut ids).unwrap() as u64;
    }
    let before = list.clone();
    assert_eq!(derive_child(&mut list, slot, Rights::READ, &mut ids), Err(CapError::TooDeep));
    assert_eq!(list, before);
}

#[test]
fn revoke_takes_every_descendant_in_every_list_and_nothing_else() {
    let mut a = CapList::<8>::new();
    let mut b = CapList::<8>::new();
    let mut c = CapList::<8>::new();
    let mut ids = 0;
    let frame = Name::frame(9, 2);
    a.insert(Cap::new(frame, Rights::ALL)).unwrap(); // a0: the root
    let a1 = derive_in(&mut a, 0, RW, &mut ids).unwrap() as u64; // child
    // A grant is a derivation into another list.
    let (cap, l) = derive_child(&mut a, a1, Rights::READ, &mut ids).unwrap();
    let b0 = b.insert_derived(cap, l).unwrap() as u64; // grandchild in b
    let (cap, l) = derive_child(&mut b, b0, Rights::READ, &mut ids).unwrap();
    let c0 = c.insert_derived(cap, l).unwrap() as u64; // great-grandchild in c
    // An unrelated capability on the same frame (minted separately).
    let other = c.insert(Cap::new(frame, Rights::READ)).unwrap() as u64;

    // Revoking b0 takes only what came from it.
    let b_node = b.lineage(b0).unwrap().node().unwrap();
    let mut seen = Vec::new();
    assert_eq!(revoke_derived(&mut c, b_node, |cap| seen.push(*cap)), 1);
    assert_eq!(seen, vec![Cap::new(frame, Rights::READ)]);
    assert_eq!(c.get(c0), Err(CapError::EmptySlot));
    assert_eq!(c.lineage(other), Ok(Lineage::EMPTY));
    assert!(b.get(b0).is_ok());

    // Revoking the root takes the rest, wherever it lives; the root stays.
    let root = a.lineage(0).unwrap().node().unwrap();
    let removed: usize = [&mut a, &mut b].into_iter().map(|l| revoke_derived(l, root, |_| {})).sum::<usize>()
        + revoke_derived(&mut c, root, |_| {});
    assert_eq!(removed, 2);
    assert!(a.get(0).is_ok());
    assert_eq!(a.get(a1), Err(CapError::EmptySlot));
    assert!(b.is_empty());
    assert_eq!(c.len(), 1);
    // A freed slot reused by a fresh capability has no stale lineage.
    let again = a.insert(Cap::new(frame, Rights::READ)).unwrap() as u64;
    assert_eq!(a.lineage(again), Ok(Lineage::EMPTY));
    assert_eq!(revoke_derived(&mut a, root, |_| {}), 0);
}

/// Random derivations across lists, random revocations: afterwards no list
/// holds a capability whose lineage names a revoked node, and everything
/// else is still there.
#[test]
fn random_derivations_and_revocations() {
    const N: usize = 16;
    let mut rng = Rng::new(77);
    for _ in 0..200 {
        let mut lists: Vec<CapList<N>> = vec![CapList::new(); 4];
        let mut ids = 0u64;
        for list in lists.iter_mut() {
            list.insert(Cap::new(Name::frame(rng.below(4), 1), Rights::ALL)).unwrap();
        }
        for _ in 0..60 {
            let from = rng.below(4) as usize;
            let to = rng.below(4) as usize;
            let slot = rng.below(N as u64 + 2);
            let rights = Rights::from_bits(rng.below(64) as u8 & 0b11_0111).unwrap();
            let Ok((cap, lineage)) = derive_child(&mut lists[from], slot, rights, &mut ids) else { continue };
            let parent = *lists[from].get(slot).unwrap();
            assert!(parent.dominates(&cap), "a child never has more than its parent");
            let _ = lists[to].insert_derived(cap, lineage);
        }
        let victim = rng.below(4) as usize;
        let slot = rng.below(N as u64);
        let Some(node) = lists[victim].lineage(slot).ok().and_then(|l| l.node()) else { continue };
        let before: usize = lists.iter().map(CapList::len).sum();
        let expect: usize = lists
            .iter()
            .map(|l| l.iter().filter(|(s, _)| l.lineage(*s as u64).unwrap().descends_from(node)).count())
            .sum();
        let removed: usize = lists.iter_mut().map(|l| revoke_derived(l, node, |_| {})).sum();
        assert_eq!(removed, expect);
        let after: usize = lists.iter().map(CapList::len).sum();
        assert_eq!(after, before - removed);
        assert!(lists[victim].get(slot).is_ok(), "the revoker keeps its own");
        for l in &lists {
            for (s, _) in l.iter() {
                assert!(!l.lineage(s as u64).unwrap().descends_from(node));
            }
        }
    }
}
