//! Edge cases of the slot vector and the spare-time list.

use crate::env;
use oxok_abi::env_id::EnvId;
use oxok_slots::exposed::SlotRow;
use oxok_slots::{DEFAULT_SLOTS, Placement, SlotError, SlotVector, Spare, TimeSlot};

const A: EnvId = env(0x400);
const B: EnvId = env(0x800);
const C: EnvId = env(0xc00);

#[test]
fn new_is_free() {
    let v = SlotVector::<DEFAULT_SLOTS>::new();
    assert_eq!((v.len(), v.is_empty(), v.free_count()), (32, false, 32));
    assert_eq!(v.owner(TimeSlot(0)), None);
    assert_eq!(v.generation(TimeSlot(31)), Some(0));
    assert_eq!(v.generation(TimeSlot(32)), None);
    // A program's number names a slot of the kernel's vector, or none.
    assert_eq!(TimeSlot::from_word(31), Some(TimeSlot(31)));
    assert_eq!(TimeSlot::from_word(32), None);
    assert_eq!(TimeSlot::from_word(u64::MAX), None);
    assert_eq!(TimeSlot(7).number(), 7);
}

#[test]
fn placements() {
    let mut v = SlotVector::<8>::new();
    assert_eq!(v.alloc(A, Placement::Any), Ok(TimeSlot(0)));
    assert_eq!(v.alloc(A, Placement::At(TimeSlot(5))), Ok(TimeSlot(5)));
    assert_eq!(v.alloc(B, Placement::At(TimeSlot(5))), Err(SlotError::Taken));
    assert_eq!(v.alloc(B, Placement::At(TimeSlot(8))), Err(SlotError::OutOfRange));
    assert_eq!(v.alloc(B, Placement::At(TimeSlot(usize::MAX))), Err(SlotError::OutOfRange));
    assert_eq!(v.alloc(A, Placement::Near(TimeSlot(5))), Ok(TimeSlot(6)));
    assert_eq!(v.alloc(A, Placement::Near(TimeSlot(6))), Ok(TimeSlot(7)));
    assert_eq!(v.alloc(A, Placement::Near(TimeSlot(7))), Ok(TimeSlot(1)), "wraps round");
    assert_eq!(v.alloc(B, Placement::Near(TimeSlot(3))), Ok(TimeSlot(3)), "a free start slot is itself nearest");
    assert_eq!(v.alloc(B, Placement::Near(TimeSlot(usize::MAX))), Err(SlotError::OutOfRange));
    assert_eq!(v.alloc(B, Placement::Any), Ok(TimeSlot(2)));
    assert_eq!(v.alloc(B, Placement::Spread), Ok(TimeSlot(4)));
    assert_eq!(v.free_count(), 0);
    for p in [Placement::Any, Placement::Near(TimeSlot(0)), Placement::Spread] {
        assert_eq!(v.alloc(B, p), Err(SlotError::Full));
    }
    // Id 0 names no environment: no owner can be made of it.
    assert_eq!(EnvId::decode(0), None);
}

#[test]
fn spread_is_even() {
    let mut v = SlotVector::<32>::new();
    let got: Vec<usize> = (0..8).map(|_| v.alloc(A, Placement::Spread).unwrap().0).collect();
    assert_eq!(got, [0, 16, 8, 24, 4, 12, 20, 28]);
    // Another owner's slots don't matter to A's spread, only free slots do.
    assert_eq!(v.alloc(B, Placement::Spread), Ok(TimeSlot(1)));
    assert_eq!(v.alloc(A, Placement::Spread), Ok(TimeSlot(2)));
}

#[test]
fn ownership_changes_bump_generation() {
    let mut v = SlotVector::<4>::new();
    let i = v.alloc(A, Placement::Any).unwrap();
    assert_eq!(v.generation(i), Some(1));
    assert!(v.is_current(i, 1) && !v.is_current(i, 0) && !v.is_current(TimeSlot(99), 1));
    assert_eq!(v.give(i, B, A), Err(SlotError::NotOwner));
    assert_eq!(v.give(TimeSlot(9), A, B), Err(SlotError::OutOfRange));
    assert_eq!(v.generation(i), Some(1), "refusals change nothing");
    assert_eq!(v.give(i, A, B), Ok(()));
    assert_eq!((v.owner(i), v.generation(i)), (Some(B), Some(2)));
    assert_eq!(v.free(i, A), Err(SlotError::NotOwner));
    assert_eq!(v.free(TimeSlot(usize::MAX), B), Err(SlotError::OutOfRange));
    assert_eq!(v.free(i, B), Ok(()));
    assert_eq!(v.free(i, B), Err(SlotError::NotOwner), "free slot");
    assert_eq!((v.owner(i), v.generation(i)), (None, Some(3)));
}

#[test]
fn owned_and_release_all() {
    let mut v = SlotVector::<6>::new();
    for p in [Placement::At(TimeSlot(1)), Placement::At(TimeSlot(4)), Placement::At(TimeSlot(5))] {
        v.alloc(A, p).unwrap();
    }
    v.alloc(B, Placement::At(TimeSlot(2))).unwrap();
    assert_eq!(v.owned_by(A).collect::<Vec<_>>(), [TimeSlot(1), TimeSlot(4), TimeSlot(5)]);
    assert_eq!(v.count_owned(B), 1);
    assert_eq!(v.count_owned(C), 0);
    assert_eq!(v.release_all(A), 3);
    assert_eq!(v.release_all(A), 0);
    assert_eq!(v.generation(TimeSlot(4)), Some(2));
    assert_eq!(v.owner(TimeSlot(2)), Some(B));
    let mut rows = [SlotRow::default(); 2];
    assert_eq!(v.rows(&mut rows), 2);
    assert_eq!(rows[1].generation, 2);
    assert_eq!(v.rows(&mut []), 0);
    assert_eq!(v.row(TimeSlot(2)).map(|r| r.owner), Some(B.raw()));
}

#[test]
fn spare_list() {
    let mut s = Spare::<2>::new();
    assert_eq!(s.request(A), Ok(()));
    assert_eq!(s.request(A), Ok(()), "duplicates are one request");
    assert_eq!(s.request(B), Ok(()));
    assert_eq!(s.request(C), Err(SlotError::SpareFull));
    assert_eq!(s.iter().collect::<Vec<_>>(), [A, B]);
    assert!(s.contains(A) && !s.contains(C));
    assert!(s.cancel(A) && !s.cancel(A) && !s.cancel(C));
    assert_eq!(s.request(C), Ok(()));
    let mut empty = Spare::<0>::new();
    assert_eq!(empty.request(A), Err(SlotError::SpareFull));
    assert_eq!(format!("{}", SlotError::OutOfRange), "slot index out of range");
}

#[test]
fn boot_time_count_limits_every_operation() {
    let mut v = SlotVector::<DEFAULT_SLOTS>::with_len(8);
    assert_eq!((v.len(), v.free_count()), (8, 8));
    for _ in 0..8 {
        let i = v.alloc(A, Placement::Any).unwrap();
        assert!(i.0 < 8);
    }
    assert_eq!(v.alloc(A, Placement::Any), Err(SlotError::Full));
    assert_eq!(v.alloc(B, Placement::At(TimeSlot(8))), Err(SlotError::OutOfRange));
    assert_eq!(v.owner(TimeSlot(8)), None);
    assert_eq!(v.generation(TimeSlot(8)), None);
    let mut rows = [SlotRow::default(); DEFAULT_SLOTS];
    assert_eq!(v.rows(&mut rows), 8);
    assert_eq!(v.release_all(A), 8);
    // Out-of-range counts are clamped to 1..=N.
    assert_eq!(SlotVector::<DEFAULT_SLOTS>::with_len(0).len(), 1);
    assert_eq!(SlotVector::<DEFAULT_SLOTS>::with_len(1000).len(), DEFAULT_SLOTS);
}
