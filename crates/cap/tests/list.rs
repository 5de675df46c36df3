//! Capability lists: slots, bounds and hostile slot numbers.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{Cap, CapError, CapList, Name, Rights, check_slot};

fn frame_cap(n: u64) -> Cap {
    Cap::new(Name::frame(n, 0), Rights::READ)
}

#[test]
fn new_is_empty_and_const() {
    static LIST: CapList<64> = CapList::new();
    assert_eq!(LIST.len(), 0);
    assert!(LIST.is_empty());
    assert!(!LIST.is_full());
    assert_eq!(LIST.iter().count(), 0);
    assert_eq!(CapList::<64>::CAPACITY, 64);
    assert_eq!(CapList::<4>::default(), CapList::<4>::new());
}

#[test]
fn insert_fills_first_free_then_full() {
    let mut list = CapList::<4>::new();
    for i in 0..4 {
        assert_eq!(list.insert(frame_cap(i)), Ok(i as usize));
    }
    assert!(list.is_full());
    assert_eq!(list.insert(frame_cap(9)), Err(CapError::Full));
    assert_eq!(list.len(), 4);
    // A hole is refilled first.
    assert_eq!(list.remove(2), Ok(frame_cap(2)));
    assert_eq!(list.insert(frame_cap(7)), Ok(2));
    assert_eq!(list.get(2), Ok(&frame_cap(7)));
}

#[test]
fn vacancy_changes_nothing_and_fill_uses_it() {
    let mut list = CapList::<2>::new();
    let at = list.vacancy().expect("an empty list has room");
    assert!(list.is_empty(), "finding a vacancy changes nothing");
    assert_eq!(list.fill(at, frame_cap(5)), 0);
    assert_eq!(list.get(0), Ok(&frame_cap(5)));
    let at = list.vacancy().expect("one slot left");
    assert_eq!(list.fill(at, frame_cap(6)), 1);
    assert_eq!(list.vacancy(), None);
    assert_eq!(list.remove(0), Ok(frame_cap(5)));
    let at = list.vacancy().expect("the hole");
    assert_eq!(list.fill(at, frame_cap(7)), 0);
    assert_eq!(list.get(1), Ok(&frame_cap(6)), "filling touches only its slot");
}

#[test]
fn zero_sized_list_rejects_everything() {
    let mut list = CapList::<0>::new();
    assert_eq!(list.insert(frame_cap(0)), Err(CapError::Full));
    assert_eq!(list.get(0), Err(CapError::BadSlot));
    assert_eq!(list.remove(0), Err(CapError::BadSlot));
    assert_eq!(list.insert_at(0, frame_cap(0)), Err(CapError::BadSlot));
    assert!(list.is_empty());
    assert!(list.is_full());
}

#[test]
fn out_of_range_slots_error_not_panic() {
    const N: usize = 64;
    let mut list = CapList::<N>::new();
    while list.insert(frame_cap(1)).is_ok() {}
    let bad = [N as u64, N as u64 + 1, u64::MAX, u64::MAX - 1, 1 << 32, (1 << 32) + 1, 1 << 63, i64::MAX as u64];
    for slot in bad {
        assert_eq!(list.get(slot), Err(CapError::BadSlot), "slot {slot}");
        assert_eq!(list.remove(slot), Err(CapError::BadSlot), "slot {slot}");
        assert_eq!(list.insert_at(slot, frame_cap(2)), Err(CapError::BadSlot), "slot {slot}");
    }
    assert_eq!(list.len(), N);
    assert!(list.get(N as u64 - 1).is_ok());
}

#[test]
fn empty_slot_is_distinct_from_bad_slot() {
    let mut list = CapList::<8>::new();
    assert_eq!(list.get(0), Err(CapError::EmptySlot));
    assert_eq!(list.get(7), Err(CapError::EmptySlot));
    assert_eq!(list.get(8), Err(CapError::BadSlot));
    assert_eq!(list.remove(3), Err(CapError::EmptySlot));
    list.insert_at(3, frame_cap(3)).unwrap();
    assert_eq!(list.remove(3), Ok(frame_cap(3)));
    assert_eq!(list.remove(3), Err(CapError::EmptySlot));
}

#[test]
fn insert_at_replaces_and_returns_old() {
    let mut list = CapList::<8>::new();
    assert_eq!(list.insert_at(5, frame_cap(1)), Ok(None));
    assert_eq!(list.insert_at(5, frame_cap(2)), Ok(Some(frame_cap(1))));
    assert_eq!(list.get(5), Ok(&frame_cap(2)));
    assert_eq!(list.len(), 1);
    // insert skips occupied slot 5 once 0..5 are full.
    for i in 0..5 {
        assert_eq!(list.insert(frame_cap(10)), Ok(i));
    }
    assert_eq!(list.insert(frame_cap(10)), Ok(6));
}

#[test]
fn iter_yields_occupied_slots_in_order() {
    let mut list = CapList::<16>::new();
    for slot in [9, 2, 15, 0] {
        list.insert_at(slot, frame_cap(slot)).unwrap();
    }
    let seen: Vec<(usize, Cap)> = list.iter().map(|(i, c)| (i, *c)).collect();
    assert_eq!(seen, vec![(0, frame_cap(0)), (2, frame_cap(2)), (9, frame_cap(9)), (15, frame_cap(15))]);
    assert_eq!(list.len(), 4);
    list.clear();
    assert!(list.is_empty());
}

#[test]
fn find_dominating_finds_first_adequate() {
    let mut list = CapList::<8>::new();
    let frame = Name::frame(42, 7);
    list.insert_at(0, Cap::new(Name::frame(42, 6), Rights::ALL)).unwrap(); // stale
    list.insert_at(1, Cap::new(frame, Rights::READ)).unwrap();
    list.insert_at(2, Cap::new(frame.push(1).unwrap(), Rights::ALL)).unwrap(); // below
    list.insert_at(3, Cap::new(Name::new(&[1, 42]).unwrap(), Rights::ALL)).unwrap();
    assert_eq!(list.find_dominating(&frame, Rights::READ), Some(1));
    assert_eq!(list.find_dominating(&frame, Rights::WRITE), Some(3));
    assert_eq!(list.find_dominating(&Name::frame(42, 8), Rights::READ), Some(3));
    assert_eq!(list.find_dominating(&Name::frame(43, 7), Rights::NONE), None);
    assert_eq!(list.find_dominating(&Name::ROOT, Rights::NONE), None);
}

#[test]
fn check_slot_combines_lookup_and_guard() {
    let mut list = CapList::<4>::new();
    let frame = Name::frame(1, 1);
    list.insert(Cap::new(frame, Rights::READ)).unwrap();
    assert_eq!(check_slot(&list, 0, &frame, Rights::READ), Ok(&Cap::new(frame, Rights::READ)));
    assert_eq!(check_slot(&list, 0, &frame, Rights::WRITE), Err(CapError::Denied));
    assert_eq!(check_slot(&list, 0, &Name::frame(1, 2), Rights::READ), Err(CapError::WrongName));
    assert_eq!(check_slot(&list, 1, &frame, Rights::READ), Err(CapError::EmptySlot));
    assert_eq!(check_slot(&list, u64::MAX, &frame, Rights::READ), Err(CapError::BadSlot));
}

#[test]
fn random_operations_match_a_model() {
    const N: usize = 16;
    let mut rng = Rng::new(20);
    let mut list = CapList::<N>::new();
    let mut model: Vec<Option<Cap>> = vec![None; N];
    for _ in 0..50_000 {
        let slot = if rng.chance(4) { rng.hostile() } else { rng.below(N as u64 + 2) };
        let cap = rng.cap();
        let in_range = slot < N as u64;
        match rng.below(4) {
            0 => {
                let got = list.insert(cap);
                match model.iter().position(Option::is_none) {
                    Some(i) => {
                        assert_eq!(got, Ok(i));
                        model[i] = Some(cap);
                    }
                    None => assert_eq!(got, Err(CapError::Full)),
                }
            }
            1 => {
                let got = list.insert_at(slot, cap);
                if in_range {
                    let old = model[slot as usize].replace(cap);
                    assert_eq!(got, Ok(old));
                } else {
                    assert_eq!(got, Err(CapError::BadSlot));
                }
            }
            2 => {
                let got = list.get(slot).copied();
                let want =
                    if in_range { model[slot as usize].ok_or(CapError::EmptySlot) } else { Err(CapError::BadSlot) };
                assert_eq!(got, want);
            }
            _ => {
                let got = list.remove(slot);
                let want = if in_range {
                    model[slot as usize].take().ok_or(CapError::EmptySlot)
                } else {
                    Err(CapError::BadSlot)
                };
                assert_eq!(got, want);
            }
        }
        assert_eq!(list.len(), model.iter().flatten().count());
    }
}

#[test]
fn fill_derived_keeps_the_lineage() {
    let mut list: CapList<4> = CapList::new();
    let source = list.insert(frame_cap(1)).expect("room");
    let mut next = 0;
    let (child, lineage) = oxok_cap::derive_child(&mut list, source as u64, Rights::READ, &mut next).expect("derive");
    let at = list.vacancy_derived().expect("room for the child");
    let slot = list.fill_derived(at, child, lineage);
    assert_eq!(list.lineage(slot as u64), Ok(lineage));
    assert_eq!(list.get(slot as u64), Ok(&child));
}

#[test]
fn room_grows_with_use_by_doubling_up_to_the_capacity() {
    let mut list = CapList::<64>::new();
    assert_eq!(list.room(), 0, "an empty list holds no memory");
    assert_eq!(list.insert(frame_cap(0)), Ok(0));
    assert_eq!(list.room(), 1, "one capability, one slot's room");
    for (n, room) in [(2, 2), (3, 4), (4, 4), (5, 8), (9, 16), (17, 32), (33, 64), (64, 64)] {
        while list.len() < n {
            assert!(list.insert(frame_cap(n as u64)).is_ok());
        }
        assert_eq!(list.room(), room, "{n} capabilities");
    }
    assert_eq!(list.insert(frame_cap(1)), Err(CapError::Full));
    assert_eq!(list.room(), 64, "a full list does not grow");
    // A slot named far out takes the room up to it, and the slots in
    // between read as empty.
    let mut far = CapList::<64>::new();
    assert_eq!(far.insert_at(40, frame_cap(4)), Ok(None));
    assert_eq!(far.room(), 64);
    assert_eq!(far.get(39), Err(CapError::EmptySlot));
    assert_eq!(far.get(40), Ok(&frame_cap(4)));
    // Room taken does not make lists unequal.
    let mut a = CapList::<64>::new();
    let mut b = CapList::<64>::new();
    assert_eq!(a.insert_at(3, frame_cap(3)), Ok(None));
    assert_eq!(b.insert_at(3, frame_cap(3)), Ok(None));
    assert_eq!(b.insert_at(20, frame_cap(5)), Ok(None));
    assert_eq!(b.remove(20), Ok(frame_cap(5)));
    assert_ne!(a.room(), b.room());
    assert_eq!(a, b);
}

#[test]
fn growth_says_what_the_next_vacancy_takes() {
    let mut list = CapList::<8>::new();
    let slot = CapList::<8>::SLOT_BYTES;
    assert_eq!(list.growth(), slot, "the first slot");
    for (n, growth) in [(1, slot), (2, 2 * slot), (3, 0), (4, 4 * slot), (5, 0), (8, 0)] {
        while list.len() < n {
            assert!(list.insert(frame_cap(0)).is_ok());
        }
        assert_eq!(list.growth(), growth, "after {n}");
        let room = list.room();
        if n < 8 {
            let at = list.vacancy().expect("room");
            assert_eq!((list.room() - room) * slot, growth, "vacancy took what growth said");
            let _ = list.fill(at, frame_cap(1));
            assert_eq!(list.remove(n as u64), Ok(frame_cap(1)));
        }
    }
    // A hole below the room needs nothing.
    assert_eq!(list.remove(2), Ok(frame_cap(0)));
    assert_eq!(list.growth(), 0);
}

#[test]
fn capabilities_minted_from_nothing_take_no_lineage_room() {
    let mut list = CapList::<64>::new();
    for n in 0..64 {
        assert!(list.insert(frame_cap(n)).is_ok());
    }
    assert_eq!(list.lineage_room(), 0, "no derivation, no lineage records");
    assert_eq!(list.room() * CapList::<64>::SLOT_BYTES, 64 * CapList::<64>::SLOT_BYTES);
    // A slot is its capability alone.
    const { assert!(CapList::<64>::SLOT_BYTES == size_of::<Cap>()) };
}

#[test]
fn growth_derived_says_what_a_derived_vacancy_and_its_derivation_take() {
    let slot = CapList::<8>::SLOT_BYTES;
    let lineage = CapList::<8>::LINEAGE_BYTES;
    let mut list = CapList::<8>::new();
    let source = list.insert(frame_cap(1)).expect("room") as u64;
    assert_eq!(list.growth_derived(), slot + 2 * lineage, "the second slot and two lineage records");
    let at = list.vacancy_derived().expect("room");
    assert_eq!((list.room(), list.lineage_room()), (2, 2));
    // The derivation records the source's node and the fill the child's,
    // both in the room the vacancy took.
    let mut next = 0;
    let (child, child_lineage) = oxok_cap::derive_child(&mut list, source, Rights::READ, &mut next).expect("derive");
    let new = list.fill_derived(at, child, child_lineage);
    assert_eq!(list.lineage_room(), 2, "nothing more was taken");
    assert_eq!(list.lineage(source).map(|l| l.ids().len()), Ok(1));
    assert_eq!(list.lineage(new as u64), Ok(child_lineage));
    // Emptying a slot forgets its lineage; a new capability there has none.
    assert_eq!(list.remove(new as u64), Ok(child));
    assert_eq!(list.insert(frame_cap(2)), Ok(new));
    assert_eq!(list.lineage(new as u64).map(|l| l.ids().len()), Ok(0));
    assert_eq!(list.growth_derived(), list.growth() + list.lineage_growth(2));
}

#[test]
fn lineages_follow_their_slots_through_removal_and_revocation() {
    let mut list = CapList::<16>::new();
    let root = list.insert(frame_cap(0)).expect("room") as u64;
    let mut next = 0;
    let mut children = Vec::new();
    for _ in 0..6 {
        let (c, l) = oxok_cap::derive_child(&mut list, root, Rights::READ, &mut next).expect("derive");
        children.push((list.insert_derived(c, l).expect("room"), l));
    }
    // Take one out from the middle: the others keep theirs.
    let (gone, _) = children.remove(2);
    assert!(list.remove(gone as u64).is_ok());
    for &(s, l) in &children {
        assert_eq!(list.lineage(s as u64), Ok(l), "slot {s}");
    }
    let node = list.lineage(root).expect("root").node().expect("a node");
    assert_eq!(oxok_cap::revoke_derived(&mut list, node, |_| {}), children.len());
    assert_eq!(list.len(), 1, "only the root is left");
    assert!(list.lineage(root).is_ok_and(|l| l.node() == Some(node)), "the root keeps its node");
}

#[test]
fn an_implied_first_slot_takes_no_room_and_is_given_to_no_vacancy() {
    let own = Cap::new(Name::env(3, 1), Rights::ALL);
    let mut list = CapList::<8>::with_first_implied();
    assert!(list.first_implied());
    assert_eq!((list.room(), list.len()), (0, 0), "nothing stored");
    assert_eq!(list.get(0), Err(CapError::EmptySlot), "the owner answers for slot 0");
    assert_eq!(list.source(0, Some(&own)), Ok(own));
    assert_eq!(list.source(0, None), Err(CapError::EmptySlot));
    assert_eq!(list.insert(frame_cap(1)), Ok(1), "the first vacancy is slot 1");
    assert_eq!(list.source(1, Some(&own)), Ok(frame_cap(1)), "`own` is for slot 0 only");
    for n in 2..8 {
        assert_eq!(list.insert(frame_cap(n)), Ok(n as usize));
    }
    assert!(list.is_full(), "seven stored and one implied fill eight slots");
    assert_eq!(list.insert(frame_cap(9)), Err(CapError::Full));
    assert_eq!(list.remove(0), Err(CapError::EmptySlot), "an implied capability is not removed here");
}

#[test]
fn derivations_from_an_implied_first_slot_keep_it_implied_and_revocable() {
    let own = Cap::new(Name::env(3, 1), Rights::ALL);
    let mut list = CapList::<8>::with_first_implied();
    let mut next = 0;
    assert_eq!(
        oxok_cap::derive_child(&mut list, 0, Rights::CALL, &mut next),
        Err(CapError::EmptySlot),
        "without the implied capability there is nothing to derive from"
    );
    let (child, lineage) =
        oxok_cap::derive_child_with(&mut list, 0, Some(&own), Rights::CALL, &mut next).expect("derive");
    assert_eq!(child, Cap::new(Name::env(3, 1), Rights::CALL));
    assert!(list.first_implied(), "slot 0 stays implied");
    assert_eq!(list.room(), 0, "no slot stored for it");
    let node = list.lineage(0).expect("slot 0's lineage").node().expect("a node");
    assert!(lineage.descends_from(node));
    // The child in another list goes when slot 0's node is revoked; slot 0
    // itself stays.
    let mut other = CapList::<8>::new();
    let at = other.insert_derived(child, lineage).expect("room");
    assert_eq!(oxok_cap::revoke_derived(&mut other, node, |_| {}), 1);
    assert_eq!(other.get(at as u64), Err(CapError::EmptySlot));
    assert_eq!(oxok_cap::revoke_derived(&mut list, node, |_| {}), 0);
    assert!(list.first_implied());
    assert_eq!(list.lineage(0).map(|l| l.node()), Ok(Some(node)));
    // Narrowing needs grant on the implied capability as on any.
    let narrow = oxok_cap::narrow_child_with(&mut list, 0, Some(&own), 9, Rights::READ, &mut next);
    assert_eq!(narrow.map(|(c, _)| c.name), Name::env(3, 1).push(9));
}

#[test]
fn overwriting_an_implied_first_slot_ends_the_implication() {
    let mut other = CapList::<8>::with_first_implied();
    assert_ne!(other, CapList::<8>::new(), "an implied capability is a difference");
    assert_eq!(other.insert_at(0, frame_cap(5)), Ok(None));
    assert!(!other.first_implied(), "slot 0 now holds what was put there");
    assert_eq!(other.get(0), Ok(&frame_cap(5)));
    let mut cleared = CapList::<8>::with_first_implied();
    cleared.clear();
    assert!(!cleared.first_implied());
    assert_eq!(cleared.insert(frame_cap(1)), Ok(0));
}
