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
fn a_block_wastes_less_than_an_alignment_unit_or_a_quarter_of_itself() {
    for size in 1..=MAX_SIZE {
        let block = block_size(class_of(size, 1).unwrap());
        assert!(block - size < ALIGN || (block - size) * 4 <= block, "size {size}: block {block}");
    }
}

#[test]
fn sizes_grow_and_refills_carve_whole_blocks() {
    assert!(SIZES.windows(2).all(|w| w[0] < w[1]));
    for c in 0..CLASSES {
        let n = refill_blocks(c);
        assert!(n >= 1);
        let bytes = n * block_size(c);
        assert!(bytes <= REFILL_BYTES.max(block_size(c)));
        // Nearly all of the refill is used: less than a block is left over.
        assert!(REFILL_BYTES.saturating_sub(bytes) < block_size(c), "class {c}");
    }
}
