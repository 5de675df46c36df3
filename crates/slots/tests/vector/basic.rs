//! Edge cases of the slot vector and the spare-time list.

use oxok_slots::exposed::SlotRow;
use oxok_slots::{DEFAULT_SLOTS, Placement, SlotError, SlotVector, Spare};

const A: u32 = 0x400;
const B: u32 = 0x800;

#[test]
fn new_is_free() {
    let v = SlotVector::<DEFAULT_SLOTS>::new();
    assert_eq!((v.len(), v.is_empty(), v.free_count()), (32, false, 32));
    assert_eq!(v.owner(0), None);
    assert_eq!(v.generation(31), Some(0));
    assert_eq!(v.generation(32), None);
}

#[test]
fn placements() {
    let mut v = SlotVector::<8>::new();
    assert_eq!(v.alloc(A, Placement::Any), Ok(0));
    assert_eq!(v.alloc(A, Placement::At(5)), Ok(5));
    assert_eq!(v.alloc(B, Placement::At(5)), Err(SlotError::Taken));
    assert_eq!(v.alloc(B, Placement::At(8)), Err(SlotError::OutOfRange));
    assert_eq!(v.alloc(B, Placement::At(usize::MAX)), Err(SlotError::OutOfRange));
    assert_eq!(v.alloc(A, Placement::Near(5)), Ok(6));
    assert_eq!(v.alloc(A, Placement::Near(6)), Ok(7));
    assert_eq!(v.alloc(A, Placement::Near(7)), Ok(1), "wraps round");
    assert_eq!(v.alloc(B, Placement::Near(3)), Ok(3), "a free start slot is itself nearest");
    assert_eq!(v.alloc(B, Placement::Near(usize::MAX)), Err(SlotError::OutOfRange));
    assert_eq!(v.alloc(B, Placement::Any), Ok(2));
    assert_eq!(v.alloc(B, Placement::Spread), Ok(4));
    assert_eq!(v.free_count(), 0);
    for p in [Placement::Any, Placement::Near(0), Placement::Spread] {
        assert_eq!(v.alloc(B, p), Err(SlotError::Full));
    }
    assert_eq!(v.alloc(0, Placement::Any), Err(SlotError::BadEnv));
}

#[test]
fn spread_is_even() {
    let mut v = SlotVector::<32>::new();
    let got: Vec<usize> = (0..8).map(|_| v.alloc(A, Placement::Spread).unwrap()).collect();
    assert_eq!(got, [0, 16, 8, 24, 4, 12, 20, 28]);
    // Another owner's slots don't matter to A's spread, only free slots do.
    assert_eq!(v.alloc(B, Placement::Spread), Ok(1));
    assert_eq!(v.alloc(A, Placement::Spread), Ok(2));
}

#[test]
fn ownership_changes_bump_generation() {
    let mut v = SlotVector::<4>::new();
    let i = v.alloc(A, Placement::Any).unwrap();
    assert_eq!(v.generation(i), Some(1));
    assert!(v.is_current(i, 1) && !v.is_current(i, 0) && !v.is_current(99, 1));
    assert_eq!(v.give(i, B, A), Err(SlotError::NotOwner));
    assert_eq!(v.give(i, A, 0), Err(SlotError::BadEnv));
    assert_eq!(v.give(9, A, B), Err(SlotError::OutOfRange));
    assert_eq!(v.generation(i), Some(1), "refusals change nothing");
    assert_eq!(v.give(i, A, B), Ok(()));
    assert_eq!((v.owner(i), v.generation(i)), (Some(B), Some(2)));
    assert_eq!(v.free(i, A), Err(SlotError::NotOwner));
    assert_eq!(v.free(usize::MAX, B), Err(SlotError::OutOfRange));
    assert_eq!(v.free(i, B), Ok(()));
    assert_eq!(v.free(i, B), Err(SlotError::NotOwner), "free slot");
    assert_eq!((v.owner(i), v.generation(i)), (None, Some(3)));
}

#[test]
fn owned_and_release_all() {
    let mut v = SlotVector::<6>::new();
    for p in [Placement::At(1), Placement::At(4), Placement::At(5)] {
        v.alloc(A, p).unwrap();
    }
    v.alloc(B, Placement::At(2)).unwrap();
    assert_eq!(v.owned_by(A).collect::<Vec<_>>(), [1, 4, 5]);
    assert_eq!(v.count_owned(B), 1);
    assert_eq!(v.count_owned(0), 0);
    assert_eq!(v.release_all(A), 3);
    assert_eq!(v.release_all(A), 0);
    assert_eq!(v.generation(4), Some(2));
    assert_eq!(v.owner(2), Some(B));
    let mut rows = [SlotRow::default(); 2];
    assert_eq!(v.rows(&mut rows), 2);
    assert_eq!(rows[1].generation, 2);
    assert_eq!(v.rows(&mut []), 0);
    assert_eq!(v.row(2).map(|r| r.owner), Some(B));
}

#[test]
fn spare_list() {
    let mut s = Spare::<2>::new();
    assert_eq!(s.request(0), Err(SlotError::BadEnv));
    assert_eq!(s.request(A), Ok(()));
    assert_eq!(s.request(A), Ok(()), "duplicates are one request");
    assert_eq!(s.request(B), Ok(()));
    assert_eq!(s.request(0xc00), Err(SlotError::SpareFull));
    assert_eq!(s.iter().collect::<Vec<_>>(), [A, B]);
    assert!(s.contains(A) && !s.contains(0));
    assert!(s.cancel(A) && !s.cancel(A) && !s.cancel(0));
    assert_eq!(s.request(0xc00), Ok(()));
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
        assert!(i < 8);
    }
    assert_eq!(v.alloc(A, Placement::Any), Err(SlotError::Full));
    assert_eq!(v.alloc(B, Placement::At(8)), Err(SlotError::OutOfRange));
    assert_eq!(v.owner(8), None);
    assert_eq!(v.generation(8), None);
    let mut rows = [SlotRow::default(); DEFAULT_SLOTS];
    assert_eq!(v.rows(&mut rows), 8);
    assert_eq!(v.release_all(A), 8);
    // Out-of-range counts are clamped to 1..=N.
    assert_eq!(SlotVector::<DEFAULT_SLOTS>::with_len(0).len(), 1);
    assert_eq!(SlotVector::<DEFAULT_SLOTS>::with_len(1000).len(), DEFAULT_SLOTS);
}
