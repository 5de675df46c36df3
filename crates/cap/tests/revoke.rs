//! Revocation: removes exactly the capabilities a name covers.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{Cap, CapList, Kind, Name, Rights, revoke_matching};

#[test]
fn revokes_resource_and_children_only() {
    let frame = Name::frame(42, 7);
    let mut list = CapList::<8>::new();
    let keep = [
        Cap::new(Name::frame(42, 6), Rights::ALL),           // other generation
        Cap::new(Name::frame(43, 7), Rights::ALL),           // other frame
        Cap::new(Name::kind_root(Kind::Frame), Rights::ALL), // broader
        Cap::new(Name::env(42, 7), Rights::ALL),             // other kind
        Cap::ROOT,
    ];
    let gone = [
        Cap::new(frame, Rights::READ),
        Cap::new(frame.push(1).unwrap(), Rights::NONE),
        Cap::new(frame.extend(&[1, 2, 3]).unwrap(), Rights::ALL),
    ];
    for c in keep.iter().chain(&gone) {
        list.insert(*c).unwrap();
    }
    assert_eq!(revoke_matching(&mut list, &frame), gone.len());
    let left: Vec<Cap> = list.iter().map(|(_, c)| *c).collect();
    assert_eq!(left, keep);
    assert_eq!(revoke_matching(&mut list, &frame), 0);
}

#[test]
fn revoking_root_empties_the_list() {
    let mut rng = Rng::new(40);
    let mut list = CapList::<64>::new();
    while list.insert(rng.cap()).is_ok() {}
    assert_eq!(revoke_matching(&mut list, &Name::ROOT), 64);
    assert!(list.is_empty());
}

#[test]
fn revokes_exactly_the_dominated_ones() {
    let mut rng = Rng::new(41);
    for _ in 0..2000 {
        let mut list = CapList::<32>::new();
        for _ in 0..rng.below(40) {
            let slot = rng.below(32);
            let _ = list.insert_at(slot, rng.cap());
        }
        let before: Vec<(usize, Cap)> = list.iter().map(|(i, c)| (i, *c)).collect();
        let name = rng.name();
        let n = revoke_matching(&mut list, &name);
        let after: Vec<(usize, Cap)> = list.iter().map(|(i, c)| (i, *c)).collect();
        let expect: Vec<(usize, Cap)> = before.iter().copied().filter(|(_, c)| !name.is_prefix_of(&c.name)).collect();
        assert_eq!(after, expect, "slots keep their numbers");
        assert_eq!(n, before.len() - after.len());
        assert!(list.iter().all(|(_, c)| !name.is_prefix_of(&c.name)));
    }
}
