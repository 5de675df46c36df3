use super::*;

#[test]
fn every_small_request_gets_a_class_that_fits_it() {
    for align in [1, 2, 4, 8, 16] {
        for size in 0..=MAX_SIZE {
            let c = class_of(size, align).expect("small requests have a class");
            let block = block_size(c);
            assert!(block >= size, "size {size}: block {block}");
            assert!(block.is_multiple_of(align) && block.is_multiple_of(ALIGN));
            // The smallest class that fits: the one below does not.
            if c > 0 {
                assert!(block_size(c - 1) < size, "size {size} could use class {}", c - 1);
            }
        }
    }
}

#[test]
fn large_or_overaligned_requests_have_no_class() {
    assert_eq!(class_of(MAX_SIZE + 1, 8), None);
    assert_eq!(class_of(usize::MAX, 1), None);
    assert_eq!(class_of(16, 32), None);
    assert_eq!(class_of(8, 4096), None);
}

#[test]
fn a_block_wastes_less_than_an_alignment_unit() {
    for size in 1..=MAX_SIZE {
        let block = block_size(class_of(size, 1).unwrap());
        assert!(block - size < ALIGN, "size {size}: block {block}");
    }
}

#[test]
fn sizes_grow_and_refills_carve_whole_blocks() {
    assert!((1..CLASSES).all(|c| block_size(c - 1) < block_size(c)));
    assert_eq!(block_size(CLASSES - 1), MAX_SIZE);
    for c in 0..CLASSES {
        let n = refill_blocks(c);
        assert!(n >= 1);
        let bytes = n * block_size(c);
        assert!(bytes <= REFILL_BYTES.max(block_size(c)));
        // Nearly all of the refill is used: less than a block is left over.
        assert!(REFILL_BYTES.saturating_sub(bytes) < block_size(c), "class {c}");
    }
}

/// A heap's memory, as `Lists` sees it: the first word of each block.
#[derive(Default)]
struct Words(std::collections::BTreeMap<usize, usize>);

impl Links for Words {
    fn next(&self, block: usize) -> usize {
        *self.0.get(&block).expect("only blocks put on a list are read")
    }
    fn set_next(&mut self, block: usize, next: usize) {
        self.0.insert(block, next);
    }
}

extern crate std;
use std::vec::Vec;

#[test]
fn a_refill_is_carved_into_distinct_blocks_of_the_class_and_handed_out_in_turn() {
    for class in [0, 5, CLASSES - 1] {
        let (mut lists, mut words) = (Lists::EMPTY, Words::default());
        let size = block_size(class);
        let base = 0x10_0000 * (class + 1);
        let mut asked = Vec::new();
        let mut got = Vec::new();
        for _ in 0..refill_blocks(class) {
            got.push(
                lists
                    .take(class, &mut words, |bytes| {
                        asked.push(bytes);
                        Some(base)
                    })
                    .unwrap(),
            );
        }
        assert_eq!(asked, [size * refill_blocks(class)], "class {class}: one refill");
        let want: Vec<usize> = (0..refill_blocks(class)).map(|i| base + i * size).collect();
        assert_eq!(got, want, "class {class}: every block of the run, lowest first");
        assert_eq!(lists.held(), 0);
        // The list is dry: the next take refills.
        let next = lists.take(class, &mut words, |_| Some(base + 0x8_0000)).unwrap();
        assert_eq!(next, base + 0x8_0000);
    }
}

#[test]
fn a_freed_block_is_the_next_taken_and_held_counts_what_waits() {
    let (mut lists, mut words) = (Lists::EMPTY, Words::default());
    let a = lists.take(3, &mut words, |_| Some(0x4000)).unwrap();
    let held = lists.held();
    assert_eq!(held, block_size(3) * (refill_blocks(3) - 1));
    assert!(lists.give(3, a, &mut words));
    assert_eq!(lists.held(), held + block_size(3));
    assert_eq!(lists.take(3, &mut words, |_| panic!("no refill while the list has blocks")), Some(a));
    assert_eq!(lists.held(), held);
}

#[test]
fn a_failed_refill_gives_nothing_and_changes_nothing() {
    let (mut lists, mut words) = (Lists::EMPTY, Words::default());
    assert_eq!(lists.take(2, &mut words, |_| None), None);
    assert_eq!(lists.take(2, &mut words, |_| Some(0)), None);
    assert_eq!(lists, Lists::EMPTY);
    assert!(words.0.is_empty());
    // Not a class: nothing asked, nothing given.
    assert_eq!(lists.take(CLASSES, &mut words, |_| panic!("no class, no refill")), None);
    assert!(!lists.give(CLASSES, 0x1000, &mut words));
    assert_eq!(lists, Lists::EMPTY);
}

#[test]
fn a_resize_stays_in_place_only_within_its_class() {
    assert!(resize_in_place(20, 8, 32));
    assert!(resize_in_place(32, 8, 17));
    assert!(!resize_in_place(32, 8, 33));
    // Past the classes, or over-aligned: never in place.
    assert!(!resize_in_place(MAX_SIZE, 8, MAX_SIZE + 1));
    assert!(!resize_in_place(MAX_SIZE + 1, 8, MAX_SIZE + 1));
    assert!(!resize_in_place(64, 64, 64));
}

#[test]
fn bounded_lists_keep_no_more_than_their_bound_and_hand_the_rest_back() {
    let bound = 3 * REFILL_BYTES;
    let (mut lists, mut words) = (Lists::bounded(bound), Words::default());
    // Objects of one size after another, each freed before the next size
    // is made: what stays on the lists never passes the bound.
    let (mut next, mut handed_back) = (0x10_0000, 0);
    for class in 0..CLASSES {
        let mut live = Vec::new();
        for _ in 0..refill_blocks(class) * 3 {
            let b = lists.take(class, &mut words, |bytes| {
                let at = next;
                next += bytes;
                Some(at)
            });
            live.push(b.unwrap());
            assert!(lists.held() <= bound, "class {class}: {} held after a refill", lists.held());
        }
        for b in live {
            if !lists.give(class, b, &mut words) {
                handed_back += block_size(class);
            }
            assert!(lists.held() <= bound, "class {class}: {} held", lists.held());
        }
    }
    let carved = next - 0x10_0000;
    assert_eq!(carved, lists.held() + handed_back, "every byte carved is listed or handed back");
    assert!(handed_back > 0);
}
