//! Ordering: taint until durably written, no persisted pointer to a tainted
//! block, frees deferred while a disk pointer may remain.

use oxok_abi::xn::{DATA, refuse, state};
use oxok_xn::{Extent, Refusal};

mod common;
use common::*;

#[test]
fn a_new_block_is_tainted_until_written_and_flushed() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    assert!(xn.is_tainted(5));
    let t = xn.write_begin(&mem, 5).unwrap();
    assert_eq!(xn.block(5).unwrap().state, state::IN_FLIGHT);
    assert_eq!(xn.write_begin(&mem, 5), Err(Refusal::InFlight(5)));
    xn.write_done(t);
    assert!(xn.is_tainted(5), "completed but not flushed: not durable");
    // A flush begun before the completion does not count.
    let early = xn.flush_begin();
    let t = xn.write_begin(&mem, 5).unwrap();
    xn.write_done(t);
    xn.flush_done(early);
    assert!(!xn.is_tainted(5), "the first write was covered by the flush");
    assert_eq!(xn.block(5).unwrap().state, state::DIRTY, "the second write is not durable yet");
    flush(&mut xn);
    assert_eq!(xn.block(5).unwrap().state, state::CLEAN);
}

#[test]
fn hostile_persisting_a_pointer_to_a_tainted_block_is_refused() {
    let (mut xn, mut mem, _) = toy(64);
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DIR, 5);
    alloc_child(&mut xn, &mut mem, 5, 0, 6, DATA, 6);
    let e = xn.write_begin(&mem, 1).unwrap_err();
    assert_eq!(e, Refusal::TaintedPointer { block: 1, child: 5 });
    assert_eq!(e.code(), refuse::TAINTED_POINTER);
    // Writing 5 first is refused too: it points to 6.
    assert_eq!(xn.write_begin(&mem, 5), Err(Refusal::TaintedPointer { block: 5, child: 6 }));
    write(&mut xn, &mem, 6);
    assert_eq!(xn.write_begin(&mem, 5), Err(Refusal::TaintedPointer { block: 5, child: 6 }), "6 not flushed");
    flush(&mut xn);
    write(&mut xn, &mem, 5);
    assert_eq!(xn.write_begin(&mem, 1), Err(Refusal::TaintedPointer { block: 1, child: 5 }));
    flush(&mut xn);
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    assert!(![1, 5, 6].iter().any(|&b| xn.is_tainted(b)));
}

#[test]
fn a_failed_write_leaves_the_block_dirty_and_tainted() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    let t = xn.write_begin(&mem, 5).unwrap();
    xn.write_failed(t);
    flush(&mut xn);
    assert_eq!(xn.block(5).unwrap().state, state::TAINTED);
    xn.write_done(t); // a stale completion changes nothing
    flush(&mut xn);
    assert!(xn.is_tainted(5));
}

/// Root 1 → data 5, all durable.
fn durable_child() -> (oxok_xn::Xn, Mem) {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    write(&mut xn, &mem, 5);
    flush(&mut xn);
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    (xn, mem)
}

#[test]
fn hostile_freeing_a_block_still_pointed_to_on_disk_is_deferred() {
    let (mut xn, mut mem) = durable_child();
    let gone = with_entry(cached(&xn, &mem, 1), 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 1, &gone, Extent::new(5, 1, DATA), &mut |_, _| {}).unwrap();
    // The disk copy of 1 still points to 5: not free, not reusable.
    assert_eq!(xn.will_free(), [5]);
    assert!(!xn.free_map().is_free(5));
    assert!(xn.block(5).unwrap().will_free);
    let steal = with_entry(gone, 1, 5, 1, DATA, 9);
    assert_eq!(xn.allocate(&mut mem, &[OWNER], 1, &steal, Extent::new(5, 1, DATA)), Err(Refusal::NotFree(5)));
    assert_eq!(xn.write_begin(&mem, 5), Err(Refusal::WillFree(5)));
    assert_eq!(xn.reap(usize::MAX), 0);
    // Writing 1 without the pointer is not enough until it is durable.
    write(&mut xn, &mem, 1);
    assert_eq!(xn.reap(usize::MAX), 0);
    flush(&mut xn);
    assert_eq!(xn.reap(usize::MAX), 1);
    assert!(xn.free_map().is_free(5) && xn.will_free().is_empty());
    xn.allocate(&mut mem, &[OWNER], 1, &steal, Extent::new(5, 1, DATA)).unwrap();
}

#[test]
fn a_write_issued_before_the_free_does_not_release_the_block() {
    let (mut xn, mut mem) = durable_child();
    // A write of 1 (with the pointer) is issued and completes ...
    let t = xn.write_begin(&mem, 1).unwrap();
    xn.write_done(t);
    let gone = with_entry(cached(&xn, &mem, 1), 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 1, &gone, Extent::new(5, 1, DATA), &mut |_, _| {}).unwrap();
    // ... and is made durable after the free: it still carried the pointer.
    flush(&mut xn);
    assert_eq!(xn.reap(usize::MAX), 0);
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    assert_eq!(xn.reap(usize::MAX), 1);
}

#[test]
fn children_of_a_vanished_parent_go_with_it() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DIR, 5);
    alloc_child(&mut xn, &mut mem, 5, 0, 6, DATA, 6);
    for b in [6, 5, 1] {
        write(&mut xn, &mem, b);
        flush(&mut xn);
    }
    // Free 6 from 5, then 5 from 1; only 1 is written again.
    let e5 = with_entry(cached(&xn, &mem, 5), 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 5, &e5, Extent::new(6, 1, DATA), &mut |_, _| {}).unwrap();
    let e1 = with_entry(cached(&xn, &mem, 1), 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 1, &e1, Extent::new(5, 1, DIR), &mut |_, _| {}).unwrap();
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    // 5 goes first (1's durable copy no longer names it), then 6 (its only
    // disk pointer is in the unreachable 5). A budget of 1 examines one entry.
    let mut freed = 0;
    for _ in 0..4 {
        freed += xn.reap(1);
    }
    assert_eq!(freed, 2);
    assert!(xn.free_map().is_free(5) && xn.free_map().is_free(6));
}

#[test]
fn a_block_never_pointed_to_on_disk_is_freed_at_once() {
    let (mut xn, mut mem) = durable_child();
    alloc_child(&mut xn, &mut mem, 1, 1, 7, DATA, 7);
    write(&mut xn, &mem, 7);
    flush(&mut xn);
    let gone = with_entry(cached(&xn, &mem, 1), 1, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 1, &gone, Extent::new(7, 1, DATA), &mut |_, _| {}).unwrap();
    assert!(xn.free_map().is_free(7) && xn.will_free().is_empty());
}

#[test]
fn many_open_flushes_never_count_a_write_durable_too_early() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    let mut flushes = Vec::new();
    for _ in 0..7 {
        write(&mut xn, &mem, 5);
        assert!(xn.is_tainted(5), "no flush has completed yet");
        flushes.push(xn.flush_begin());
    }
    write(&mut xn, &mem, 5); // completes after every flush began
    for t in flushes {
        xn.flush_done(t);
    }
    assert!(!xn.is_tainted(5));
    assert_eq!(xn.block(5).unwrap().state, state::DIRTY, "the last write is not covered by any flush");
    flush(&mut xn);
    assert_eq!(xn.block(5).unwrap().state, state::CLEAN);
}

#[test]
fn one_free_may_release_some_blocks_at_once_and_defer_others() {
    let (mut xn, mut mem, _) = toy(4096);
    let a = with_entry(cached(&xn, &mem, 1), 0, 10, 2, DATA, 0);
    xn.allocate(&mut mem, &[OWNER], 1, &a, Extent::new(10, 2, DATA)).unwrap();
    for b in [10, 11] {
        let f = mem.frame();
        xn.insert(b, f).unwrap();
        write(&mut xn, &mem, b);
    }
    flush(&mut xn);
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    // 12..1012 (a thousand blocks) never reach the disk's copy of 1.
    let b = with_entry(a, 1, 12, 1000, DATA, 0);
    xn.allocate(&mut mem, &[OWNER], 1, &b, Extent::new(12, 1000, DATA)).unwrap();
    assert_eq!(xn.usage(oxok_xn::FsId(0)), 1003);
    // Free 11..13: 11 is on disk (deferred), 12 is not (free at once).
    let c = with_entry(with_entry(b, 0, 10, 1, DATA, 0), 1, 13, 999, DATA, 0);
    xn.free(&mut mem, &[OWNER], 1, &c, Extent::new(11, 2, DATA), &mut |_, _| {}).unwrap();
    assert_eq!(xn.will_free(), [11]);
    assert!(xn.free_map().is_free(12) && !xn.free_map().is_free(11));
    assert_eq!(xn.block(10).unwrap().parent, Some(1));
    assert_eq!(xn.block(13).unwrap().parent, Some(1));
    let listed: Vec<u64> = xn.blocks().map(|(b, _)| b).collect();
    assert!(listed.windows(2).all(|w| w[0] < w[1]), "registry stays sorted");
    assert_eq!(listed.len(), 1 + 1 + 1 + 999);
    assert_eq!(xn.free_map().free_count(), 4096 - 1002);
}

#[test]
fn a_write_check_changes_nothing_until_it_is_recorded() {
    // The kernel checks, hands the device the request, and only then
    // records it: a request the device refused leaves no trace.
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    let before = xn.block(5).unwrap();
    let plan = xn.write_check(&mem, 5).unwrap();
    assert_eq!(plan.frame, before.frame.unwrap(), "the plan names the block's cache frame");
    assert_eq!(xn.block(5).unwrap(), before, "checked, not recorded: unchanged");
    assert_eq!(xn.write_check(&mem, 5), Ok(plan), "and may be checked again");
    let t = xn.write_record(plan);
    assert_eq!(xn.block(5).unwrap().state, state::IN_FLIGHT);
    assert_eq!(xn.write_check(&mem, 5), Err(Refusal::InFlight(5)));
    xn.write_done(t);
    flush(&mut xn);
    assert!(!xn.is_tainted(5));
}
