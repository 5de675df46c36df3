//! Construction, single indices, ranges and the search operations.

use oxok_bitmap::{Bitmap, BitmapError};

#[test]
fn construction() {
    assert_eq!(Bitmap::words_needed(0), 0);
    assert_eq!(Bitmap::words_needed(1), 1);
    assert_eq!(Bitmap::words_needed(64), 1);
    assert_eq!(Bitmap::words_needed(65), 2);
    assert_eq!(Bitmap::words_needed(usize::MAX), usize::MAX / 64 + 1);
    let mut words = [u64::MAX; 3];
    let b = Bitmap::new(&mut words, 130).unwrap();
    assert_eq!((b.len(), b.is_empty(), b.free_count()), (130, false, 0));
    assert!(!b.is_free(0) && !b.is_free(129) && !b.is_free(130) && !b.is_free(usize::MAX));
    let mut words = [u64::MAX; 3];
    assert_eq!(Bitmap::new(&mut words, 193).unwrap_err(), BitmapError::StorageTooSmall);
    assert_eq!(Bitmap::new(&mut [], usize::MAX).unwrap_err(), BitmapError::StorageTooSmall);
    let mut none: [u64; 0] = [];
    let mut empty = Bitmap::new(&mut none, 0).unwrap();
    assert!(empty.is_empty());
    assert_eq!(empty.release_range(0, usize::MAX), 0);
    assert_eq!(empty.alloc_any(), None);
    assert_eq!(empty.alloc_contiguous(1, 1), None);
    assert_eq!(empty.alloc(0), Err(BitmapError::OutOfRange));
}

#[test]
fn extra_storage_is_untouched() {
    let mut words = [0xdead_beef_u64; 4];
    let mut b = Bitmap::new(&mut words, 65).unwrap();
    assert_eq!(b.release_range(0, usize::MAX), 65);
    assert_eq!(words[2..], [0xdead_beef; 2]);
    assert_eq!(words[1], 1, "bits past len stay clear");
}

#[test]
fn single_indices() {
    let mut words = [0; 2];
    let mut b = Bitmap::new(&mut words, 100).unwrap();
    assert_eq!(b.alloc(5), Err(BitmapError::AlreadyUsed));
    assert_eq!(b.free(5), Ok(()));
    assert_eq!(b.free(5), Err(BitmapError::AlreadyFree));
    assert!(b.is_free(5));
    assert_eq!(b.free_count(), 1);
    assert_eq!(b.alloc(5), Ok(()));
    assert_eq!(b.free_count(), 0);
    for i in [100, 127, 128, usize::MAX] {
        assert_eq!(b.free(i), Err(BitmapError::OutOfRange));
        assert_eq!(b.alloc(i), Err(BitmapError::OutOfRange));
    }
}

#[test]
fn ranges_count_changes_and_clamp() {
    let mut words = [0; 4];
    let mut b = Bitmap::new(&mut words, 200).unwrap();
    assert_eq!(b.release_range(10, 150), 140);
    assert_eq!(b.release_range(0, 20), 10);
    assert_eq!(b.release_range(190, usize::MAX), 10);
    assert_eq!(b.release_range(300, 400), 0);
    assert_eq!(b.release_range(50, 40), 0);
    assert_eq!(b.free_count(), 160);
    assert_eq!(b.reserve_range(60, 70), 10);
    assert_eq!(b.reserve_range(65, 75), 5);
    assert_eq!(b.reserve_range(usize::MAX, usize::MAX), 0);
    assert_eq!(b.free_count(), 145);
    assert!(b.is_free(59) && !b.is_free(60) && !b.is_free(74) && b.is_free(75));
    assert_eq!(b.reserve_range(0, usize::MAX), 145);
    assert_eq!(b.free_count(), 0);
}

#[test]
fn alloc_any_is_next_fit() {
    let mut words = [0; 3];
    let mut b = Bitmap::new(&mut words, 150).unwrap();
    b.release_range(0, 150);
    assert_eq!(b.alloc_any(), Some(0));
    assert_eq!(b.alloc_any(), Some(1));
    b.reserve_range(0, 140);
    assert_eq!(b.alloc_any(), Some(140));
    b.free(3).unwrap();
    // Next-fit continues after the hint before wrapping to index 3.
    assert_eq!(b.alloc_any(), Some(141));
    for expected in 142..150 {
        assert_eq!(b.alloc_any(), Some(expected));
    }
    assert_eq!(b.alloc_any(), Some(3));
    assert_eq!(b.alloc_any(), None);
    assert_eq!(b.free_count(), 0);
}

#[test]
fn alloc_matching_colours() {
    let mut words = [0; 4];
    let mut b = Bitmap::new(&mut words, 250).unwrap();
    b.release_range(0, 250);
    assert_eq!(b.alloc_matching(0, 0), None);
    assert_eq!(b.alloc_matching(8, 8), None);
    assert_eq!(b.alloc_matching(8, 3), Some(3));
    assert_eq!(b.alloc_matching(8, 3), Some(11));
    assert_eq!(b.alloc_matching(1000, 249), Some(249));
    assert_eq!(b.alloc_matching(1000, 250), None);
    assert_eq!(b.alloc_matching(usize::MAX, 7), Some(7));
    assert_eq!(b.alloc_matching(usize::MAX, usize::MAX - 1), None);
    assert_eq!(b.alloc_matching(7, 6), Some(6));
    assert_eq!(b.alloc_matching(7, 6), Some(13));
    // Exhaust one colour: the rest of the bitmap is unaffected.
    while b.alloc_matching(5, 2).is_some() {}
    assert!((0..250).filter(|i| i % 5 == 2).all(|i| !b.is_free(i)));
    assert!(b.is_free(0) && b.is_free(1));
}

#[test]
fn alloc_contiguous_runs() {
    let mut words = [0; 4];
    let mut b = Bitmap::new(&mut words, 256).unwrap();
    b.release_range(0, 256);
    assert_eq!(b.alloc_contiguous(0, 1), None);
    assert_eq!(b.alloc_contiguous(1, 0), None);
    assert_eq!(b.alloc_contiguous(1, 3), None);
    assert_eq!(b.alloc_contiguous(257, 1), None);
    assert_eq!(b.alloc_contiguous(3, 1), Some(0));
    assert_eq!(b.alloc_contiguous(4, 4), Some(4));
    assert_eq!(b.alloc_contiguous(2, 1), Some(8));
    assert_eq!(b.alloc_contiguous(70, 64), Some(64));
    assert!((64..134).all(|i| !b.is_free(i)));
    assert_eq!(b.free_count(), 256 - 3 - 4 - 2 - 70);
    assert_eq!(b.alloc_contiguous(1, 1 << 40), None);
    assert_eq!(b.alloc_contiguous(usize::MAX, 1), None);
    assert_eq!(b.alloc_contiguous(1, 1usize << (usize::BITS - 1)), None);
    // Runs are found after skipping gaps that are too small, across words.
    b.reserve_range(0, 256);
    b.release_range(100, 101);
    b.release_range(140, 143);
    b.release_range(150, 200);
    assert_eq!(b.alloc_contiguous(20, 2), Some(150));
    assert_eq!(b.alloc_contiguous(30, 1), Some(170));
    assert_eq!(b.alloc_contiguous(4, 1), None);
    assert_eq!(b.alloc_contiguous(1, 1), Some(100));
    assert_eq!(b.alloc_contiguous(2, 2), Some(140));
    assert_eq!(b.free_count(), 1);
}
