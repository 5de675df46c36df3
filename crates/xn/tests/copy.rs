//! Copies (XCP): a data block written from another block's cached frame,
//! with the rights of a write and a read, the source pinned while the
//! device reads it, and taint rules as for any write.

use oxok_abi::xn::{DATA, refuse, state};
use oxok_xn::{Extent, Refusal};

mod common;
use common::*;

/// Root 1 with a durable data block 5 (the source) and a fresh, tainted
/// data block 6 (the destination).
fn setup() -> (oxok_xn::Xn, Mem) {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    write(&mut xn, &mem, 5);
    flush(&mut xn);
    alloc_child(&mut xn, &mut mem, 1, 1, 6, DATA, 6);
    (xn, mem)
}

#[test]
fn a_copy_writes_the_destination_from_the_source_frame_and_pins_it() {
    let (mut xn, mut mem) = setup();
    let src_frame = xn.block(5).unwrap().frame.unwrap();
    let dst_frame = xn.block(6).unwrap().frame.unwrap();
    let c = xn.copy_begin(&mem, &[OWNER], 6, 5).unwrap();
    assert_eq!(c.from, src_frame, "the device reads the source's frame");
    assert_eq!(c.dropped, Some(dst_frame), "the destination's old frame goes back");
    assert_eq!(xn.block(6).unwrap().frame, None);
    assert_eq!(xn.block(6).unwrap().state, state::IN_FLIGHT);
    assert!(xn.is_pinned(5));
    // Pinned: neither evicted nor freed while the device reads it.
    assert_eq!(xn.evict(5), Err(Refusal::Busy(5)));
    let without = with_entry(cached(&xn, &mem, 1), 0, 0, 0, 0, 0);
    assert_eq!(
        xn.free(&mut mem, &[OWNER], 1, &without, Extent::new(5, 1, DATA), &mut |_, _| {}),
        Err(Refusal::InFlight(5))
    );
    // A second copy onto the destination waits; one from the pinned source is fine.
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 6, 5), Err(Refusal::InFlight(6)));
    // The parent may not persist its pointer to 6 yet.
    assert_eq!(xn.write_begin(&mem, 1), Err(Refusal::TaintedPointer { block: 1, child: 6 }));
    xn.copy_done(c.receipt, true);
    assert!(!xn.is_pinned(5));
    assert!(xn.is_tainted(6), "completed, not flushed");
    flush(&mut xn);
    assert!(!xn.is_tainted(6), "durable after the flush");
    write(&mut xn, &mem, 1);
    assert_eq!(xn.evict(5), Ok(src_frame));
}

#[test]
fn a_pinned_source_cannot_be_a_destination() {
    let (mut xn, mut mem) = setup();
    alloc_child(&mut xn, &mut mem, 1, 2, 7, DATA, 7);
    let c = xn.copy_begin(&mem, &[OWNER], 6, 5).unwrap();
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 5, 7), Err(Refusal::Busy(5)));
    xn.copy_done(c.receipt, true);
}

#[test]
fn hostile_copies_are_refused_and_change_nothing() {
    let (mut xn, mut mem) = setup();
    alloc_child(&mut xn, &mut mem, 1, 2, 7, DIR, 7);
    // Another principal may neither write the destination nor read the source.
    assert_eq!(xn.copy_begin(&mem, &[7], 6, 5), Err(Refusal::Denied(6)));
    // A metadata destination: never written from a frame.
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 7, 5), Err(Refusal::MetadataWritable(7)));
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 1, 5), Err(Refusal::MetadataWritable(1)));
    // A tainted source (allocated, never durably written).
    alloc_child(&mut xn, &mut mem, 7, 0, 8, DATA, 8);
    let e = xn.copy_begin(&mem, &[OWNER], 6, 8).unwrap_err();
    assert_eq!(e, Refusal::Tainted(8));
    assert_eq!(e.code(), refuse::TAINTED);
    // Bad numbers: past the disk, unallocated, the same block.
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 6, 1 << 40), Err(Refusal::OutOfRange(1 << 40)));
    assert_eq!(xn.copy_begin(&mem, &[OWNER], u64::MAX, 5), Err(Refusal::OutOfRange(u64::MAX)));
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 6, 30), Err(Refusal::NotAllocated(30)));
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 6, 6), Err(Refusal::Busy(6)));
    // An uncached source.
    let f = xn.evict(5).unwrap();
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 6, 5), Err(Refusal::NotBound(5)));
    xn.insert(5, f).unwrap();
    assert!(!xn.is_pinned(5) && !xn.is_pinned(8));
    assert_eq!(xn.block(6).unwrap().state, state::TAINTED, "the destination is untouched");
    assert!(xn.block(6).unwrap().frame.is_some());
}

#[test]
fn a_source_the_caller_may_not_read_is_refused() {
    // Two roots with different owners: 1 (OWNER) and 2 (principal 9).
    let (mut xn, mut mem, fs) = toy(64);
    let f = mem.frame();
    xn.add_root(&mut mem, fs, 2, DIR, f, &dir(9, 2)).unwrap();
    let new = with_entry(cached(&xn, &mem, 2), 0, 10, 1, DATA, 10);
    xn.allocate(&mut mem, &[9], 2, &new, Extent::new(10, 1, DATA)).unwrap();
    xn.insert(10, mem.frame()).unwrap();
    write(&mut xn, &mem, 10);
    flush(&mut xn);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    assert_eq!(xn.copy_begin(&mem, &[OWNER], 5, 10), Err(Refusal::Denied(10)));
    // Its owner may copy it into its own block, not into OWNER's.
    assert_eq!(xn.copy_begin(&mem, &[9], 5, 10), Err(Refusal::Denied(5)));
}

#[test]
fn a_failed_copy_leaves_the_destination_tainted_and_unpins_the_source() {
    let (mut xn, mem) = setup();
    let c = xn.copy_begin(&mem, &[OWNER], 6, 5).unwrap();
    xn.copy_done(c.receipt, false);
    flush(&mut xn);
    assert!(xn.is_tainted(6));
    assert!(!xn.is_pinned(5));
    assert_eq!(xn.write_begin(&mem, 1), Err(Refusal::TaintedPointer { block: 1, child: 6 }));
}

#[test]
fn a_copy_check_changes_nothing_until_it_is_recorded() {
    let (mut xn, mem) = setup();
    let (src, dst) = (xn.block(5).unwrap(), xn.block(6).unwrap());
    let plan = xn.copy_check(&mem, &[OWNER], 6, 5).unwrap();
    assert_eq!(plan.from, src.frame.unwrap());
    assert_eq!((xn.block(5).unwrap(), xn.block(6).unwrap()), (src, dst), "checked, not recorded: unchanged");
    assert!(!xn.is_pinned(5));
    let c = xn.copy_record(plan);
    assert_eq!(c.dropped, dst.frame);
    assert!(xn.is_pinned(5));
    assert_eq!(xn.block(6).unwrap().state, state::IN_FLIGHT);
    xn.copy_done(c.receipt, true);
    assert!(!xn.is_pinned(5));
}

/// A data block allocated and not cached holds nothing yet (`unwritten`):
/// a disk read may never become its cache (its disk bytes are a former
/// owner's), a copy onto it needs no frame and ends the state, and a
/// metadata block or a written one is never so.
#[test]
fn an_unwritten_data_block_never_takes_a_disk_read_and_a_copy_needs_no_frame() {
    let (mut xn, mut mem) = setup();
    let new = with_entry(cached(&xn, &mem, 1), 2, 7, 1, DATA, 7);
    xn.allocate(&mut mem, &[OWNER], 1, &new, Extent::new(7, 1, DATA)).unwrap();
    assert!(xn.unwritten(7));
    assert!(!xn.unwritten(5), "written and durable");
    assert!(!xn.unwritten(6), "cached");
    assert!(!xn.unwritten(1), "metadata");
    assert!(!xn.unwritten(40), "not allocated");
    // A read that was in flight when 7 was someone else's lands now: refused.
    let stale = mem.frame();
    assert_eq!(xn.insert_read(7, stale), Err(Refusal::Tainted(7)));
    assert_eq!(xn.block(7).unwrap().frame, None);
    // Binding checks everything but the frame first (another principal: denied).
    assert_eq!(xn.may_bind(&mem, &[7], 7, oxok_abi::xn::rights::READ), Err(Refusal::Denied(7)));
    assert_eq!(xn.may_bind(&mem, &[OWNER], 7, oxok_abi::xn::rights::WRITE), Ok(()));
    // A copy onto it: no frame to drop, and afterwards it is written.
    let c = xn.copy_begin(&mem, &[OWNER], 7, 5).unwrap();
    assert_eq!(c.dropped, None);
    assert!(!xn.unwritten(7), "a write is in flight");
    xn.copy_done(c.receipt, true);
    assert!(!xn.unwritten(7), "the disk holds the copy now");
    assert_eq!(xn.insert_read(7, stale), Ok(()), "a read of it is its content now");
}

/// A batch's checks through one `AclMemo` decide exactly as single checks:
/// every pair of a few blocks (data, metadata, unallocated, another
/// principal's view), in one memo, against `copy_check` without one.
#[test]
fn checks_through_one_memo_decide_as_single_checks() {
    let (mut xn, mut mem) = setup();
    alloc_child(&mut xn, &mut mem, 1, 2, 7, DIR, 7);
    alloc_child(&mut xn, &mut mem, 7, 0, 8, DATA, 8);
    write(&mut xn, &mem, 8);
    flush(&mut xn);
    let blocks = [1, 5, 6, 7, 8, 9, 30];
    let mut memo = oxok_xn::AclMemo::new();
    let mut pairs = 0;
    for who in [OWNER, 7] {
        for &dst in &blocks {
            for &src in &blocks {
                let single = xn.copy_check(&mem, &[who], dst, src).map(|p| (p.dst, p.src, p.from));
                let batched = xn.copy_check_memo(&mem, &[who], dst, src, &mut memo).map(|p| (p.dst, p.src, p.from));
                assert_eq!(batched, single, "principal {who}: {dst} from {src}");
                pairs += 1;
            }
        }
    }
    assert_eq!(pairs, 98);
}

/// The zeroed frame cached for an unwritten block whose binding then
/// failed goes back, and the block is unwritten again; once it is dirty
/// (a write through a binding), it stays.
#[test]
fn a_failed_binding_gives_its_fresh_frame_back() {
    let (mut xn, mut mem) = setup();
    let new = with_entry(cached(&xn, &mem, 1), 2, 7, 1, DATA, 7);
    xn.allocate(&mut mem, &[OWNER], 1, &new, Extent::new(7, 1, DATA)).unwrap();
    let f = mem.frame();
    xn.insert(7, f).unwrap();
    assert!(!xn.unwritten(7));
    assert_eq!(xn.unfill(7), Some(f));
    assert!(xn.unwritten(7), "unwritten again");
    assert_eq!(xn.unfill(7), None, "nothing to give back");
    xn.insert(7, f).unwrap();
    xn.mark_dirty(7);
    assert_eq!(xn.unfill(7), None, "written through a binding");
    assert_eq!(xn.unfill(5), None, "a written block");
    assert_eq!(xn.unfill(1), None, "metadata");
}

/// A failed copy onto a block no write of which ever completed leaves it
/// holding nothing (zeros, never the disk's bytes, which may be a former
/// owner's); onto a block written before, the disk's bytes are its own
/// and a read may fetch them.
#[test]
fn hostile_a_failed_copy_never_lets_a_former_owners_bytes_be_read() {
    let (mut xn, mut mem) = setup();
    let new = with_entry(cached(&xn, &mem, 1), 2, 7, 1, DATA, 7);
    xn.allocate(&mut mem, &[OWNER], 1, &new, Extent::new(7, 1, DATA)).unwrap();
    let c = xn.copy_begin(&mem, &[OWNER], 7, 5).unwrap();
    xn.copy_done(c.receipt, false);
    assert!(xn.unwritten(7), "nothing of its own reached the disk");
    assert_eq!(xn.insert_read(7, mem.frame()), Err(Refusal::Tainted(7)), "a disk read never becomes its cache");
    assert!(xn.is_tainted(7));
    assert!(!xn.is_pinned(5));
    // A second copy that succeeds makes it written.
    let c = xn.copy_begin(&mem, &[OWNER], 7, 5).unwrap();
    xn.copy_done(c.receipt, true);
    assert!(!xn.unwritten(7));
    // A failed copy onto a block once written: its disk bytes are its own.
    let c = xn.copy_begin(&mem, &[OWNER], 7, 5).unwrap();
    xn.copy_done(c.receipt, false);
    assert!(!xn.unwritten(7), "a completed write of it is on the disk");
    assert_eq!(xn.insert_read(7, mem.frame()), Ok(()));
}
