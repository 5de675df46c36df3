//! Narrowing: a child named one component below its source (how a
//! principal `/8/p` is minted from `/8`).

use oxok_cap::{Cap, CapError, CapList, Kind, MAX_DEPTH, Name, Rights, check, narrow_child, revoke_derived};

const RG: Rights = Rights::READ.union(Rights::GRANT);

#[test]
fn narrowing_extends_the_name_by_one_and_is_covered_by_the_source() {
    let mut list = CapList::<8>::new();
    let all = Name::kind_root(Kind::Principal);
    list.insert(Cap::new(all, Rights::ALL)).unwrap();
    let mut ids = 0;
    let (child, lineage) = narrow_child(&mut list, 0, 1, Rights::READ, &mut ids).unwrap();
    assert_eq!(child, Cap::new(Name::principal(1), Rights::READ));
    assert_eq!(child.name.depth(), all.depth() + 1);
    assert!(list.get(0).unwrap().dominates(&child));
    assert_eq!(child.name.as_principal(), Some(1));
    // Recorded as derived: revoking the source takes it back.
    let at = list.insert_derived(child, lineage).unwrap() as u64;
    let node = list.lineage(0).unwrap().node().unwrap();
    assert_eq!(revoke_derived(&mut list, node, |_| {}), 1);
    assert_eq!(list.get(at), Err(CapError::EmptySlot));
    // The child acts for its principal only: it covers `/8/1`, not `/8/2`
    // nor `/8` itself.
    assert!(check(&child, &Name::principal(1), Rights::READ).is_ok());
    assert_eq!(check(&child, &Name::principal(2), Rights::READ), Err(CapError::WrongName));
    assert_eq!(check(&child, &all, Rights::READ), Err(CapError::WrongName));
}

#[test]
fn narrowing_never_widens_and_needs_grant() {
    let mut list = CapList::<4>::new();
    list.insert(Cap::new(Name::principal(3), RG)).unwrap();
    list.insert(Cap::new(Name::kind_root(Kind::Principal), Rights::READ.union(Rights::WRITE))).unwrap();
    let before = list.clone();
    let mut ids = 9;
    assert_eq!(narrow_child(&mut list, 0, 4, Rights::ALL, &mut ids), Err(CapError::Widen));
    assert_eq!(narrow_child(&mut list, 0, 4, Rights::WRITE, &mut ids), Err(CapError::Widen));
    // No grant on the source: refused, whatever is asked.
    assert_eq!(narrow_child(&mut list, 1, 4, Rights::READ, &mut ids), Err(CapError::Denied));
    assert_eq!(narrow_child(&mut list, 2, 4, Rights::READ, &mut ids), Err(CapError::EmptySlot));
    assert_eq!(narrow_child(&mut list, u64::MAX, 4, Rights::READ, &mut ids), Err(CapError::BadSlot));
    assert_eq!((list, ids), (before, 9));
    // Within the source's rights it works, and the result is below it.
    let mut list = CapList::<4>::new();
    list.insert(Cap::new(Name::principal(3), RG)).unwrap();
    let (c, _) = narrow_child(&mut list, 0, 4, Rights::READ, &mut ids).unwrap();
    assert_eq!(c.name, Name::new(&[8, 3, 4]).unwrap());
    assert_eq!(c.name.as_principal(), None, "a name below a principal is no principal");
}

#[test]
fn narrowing_stops_at_the_depth_limit() {
    let full = Name::new(&[8; MAX_DEPTH]).unwrap();
    let mut list = CapList::<4>::new();
    list.insert(Cap::new(full, Rights::ALL)).unwrap();
    let before = list.clone();
    let mut ids = 0;
    assert_eq!(narrow_child(&mut list, 0, 1, Rights::READ, &mut ids), Err(CapError::TooDeep));
    assert_eq!((list, ids), (before, 0));
    // One short of the limit narrows once more, to exactly MAX_DEPTH.
    let mut list = CapList::<4>::new();
    list.insert(Cap::new(full.parent().unwrap(), Rights::ALL)).unwrap();
    let (c, _) = narrow_child(&mut list, 0, 1, Rights::READ, &mut ids).unwrap();
    assert_eq!(c.name.depth(), MAX_DEPTH);
}

#[test]
fn another_kind_narrowed_is_never_a_principal() {
    // An environment's or the console's capability extended by any
    // component stays under its own kind.
    let mut list = CapList::<4>::new();
    list.insert(Cap::new(Name::env(1025, 1), Rights::ALL)).unwrap();
    list.insert(Cap::new(Name::console(), Rights::ALL)).unwrap();
    let mut ids = 0;
    for slot in [0, 1] {
        let (c, _) = narrow_child(&mut list, slot, 8, Rights::ALL, &mut ids).unwrap();
        assert_eq!(c.name.as_principal(), None);
        assert!(!c.name.is_prefix_of(&Name::principal(8)));
        assert_ne!(c.name.kind(), Some(Kind::Principal));
    }
}
