//! Allocate, free, modify and bind: one test per rule, hostile cases
//! included. Every refusal also checks that nothing changed.

use oxok_abi::xn::{BLOCK_SIZE, DATA, refuse, rights, state};
use oxok_xn::{Asm, Extent, Fault, Frame, Frames, Refusal, SetError, Xn, template};

mod common;
use common::*;

/// The registry, the free map and every frame.
type Snapshot = (Vec<(u64, oxok_xn::BlockView)>, Vec<u64>, Vec<(Frame, Block)>);

/// The registry and free map, to compare before and after a refusal.
fn snapshot(xn: &Xn, mem: &Mem) -> Snapshot {
    let mut frames: Vec<_> = mem.frames.iter().map(|(k, v)| (*k, *v)).collect();
    frames.sort();
    (xn.blocks().collect(), xn.free_map().words().to_vec(), frames)
}

fn refused(xn: &mut Xn, mem: &mut Mem, want: Refusal, op: impl FnOnce(&mut Xn, &mut Mem) -> Result<(), Refusal>) {
    let before = snapshot(xn, mem);
    assert_eq!(op(xn, mem), Err(want));
    assert_eq!(snapshot(xn, mem), before, "a refused operation changed something");
}

#[test]
fn allocate_adds_exactly_the_declared_extent() {
    let (mut xn, mut mem, fs) = toy(64);
    let new = with_entry(cached(&xn, &mem, 1), 0, 10, 4, DATA, 7);
    xn.allocate(&mut mem, &[OWNER], 1, &new, Extent::new(10, 4, DATA)).unwrap();
    for b in 10..14 {
        let v = xn.block(b).unwrap();
        assert_eq!((v.fs, v.ty, v.parent, v.state), (fs, DATA, Some(1), state::TAINTED));
        assert!(!xn.free_map().is_free(b));
    }
    assert!(xn.free_map().is_free(14));
    assert_eq!(cached(&xn, &mem, 1), new);
    assert_eq!(xn.block(1).unwrap().state, state::TAINTED); // a root, never written
    assert_eq!(xn.usage(fs), 5);
    assert_eq!(xn.owns(&mem, 1).unwrap().blocks(), 4);
    // A change that keeps what it owns: the size the template reports.
    let mut sized = new;
    sized[16..24].copy_from_slice(&12_345u64.to_le_bytes());
    xn.modify(&mut mem, &[OWNER], 1, &sized).unwrap();
    assert_eq!(xn.size(&mem, 1), Ok(12_345));
    assert_eq!(xn.size(&mem, 10), Err(Refusal::NotMetadata(10)));
}

#[test]
fn hostile_a_write_adding_two_extents_when_one_was_declared_is_refused() {
    let (mut xn, mut mem, _) = toy(64);
    let new = with_entry(with_entry(cached(&xn, &mem, 1), 0, 10, 1, DATA, 1), 1, 20, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &new, Extent::new(10, 1, DATA))
    });
    // Declaring more than the metadata says is refused too.
    let one = with_entry(cached(&xn, &mem, 1), 0, 10, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &one, Extent::new(10, 2, DATA))
    });
    // A type other than the declared one.
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &one, Extent::new(10, 1, DIR))
    });
    // Dropping an existing pointer while adding one.
    xn.allocate(&mut mem, &[OWNER], 1, &one, Extent::new(10, 1, DATA)).unwrap();
    let swap = with_entry(with_entry(one, 0, 0, 0, 0, 0), 1, 11, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &swap, Extent::new(11, 1, DATA))
    });
}

#[test]
fn allocate_refuses_blocks_not_free_or_off_the_disk() {
    let (mut xn, mut mem, _) = toy(64);
    let root = cached(&xn, &mem, 1);
    let on_root = with_entry(root, 0, 1, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::NotFree(1), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &on_root, Extent::new(1, 1, DATA))
    });
    let off = with_entry(root, 0, 63, 2, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::BadOwns(1, SetError::OutOfRange(63)), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &off, Extent::new(63, 2, DATA))
    });
    let fine = with_entry(root, 0, 10, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::OutOfRange(63), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &fine, Extent::new(63, 2, DATA))
    });
    refused(&mut xn, &mut mem, Refusal::OutOfRange(u64::MAX), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &fine, Extent::new(u64::MAX, 2, DATA))
    });
    refused(&mut xn, &mut mem, Refusal::BadOwns(1, SetError::OutOfRange(63)), |xn, mem| {
        xn.modify(mem, &[OWNER], 1, &off)
    });
    let bad_type = with_entry(root, 0, 5, 1, 9, 1);
    refused(&mut xn, &mut mem, Refusal::BadOwns(1, SetError::BadType(5)), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &bad_type, Extent::new(5, 1, 9))
    });
    let overlap = with_entry(with_entry(root, 0, 5, 2, DATA, 1), 1, 6, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::BadOwns(1, SetError::Overlap(6)), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &overlap, Extent::new(5, 2, DATA))
    });
}

#[test]
fn hostile_only_the_acl_may_change_metadata() {
    let (mut xn, mut mem, _) = toy(64);
    let new = with_entry(cached(&xn, &mem, 1), 0, 10, 1, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::Denied(1), |xn, mem| {
        xn.allocate(mem, &[7, 8], 1, &new, Extent::new(10, 1, DATA))
    });
    refused(&mut xn, &mut mem, Refusal::Denied(1), |xn, mem| xn.allocate(mem, &[], 1, &new, Extent::new(10, 1, DATA)));
    // A change that takes the block over is judged by the old acl.
    let mut steal = cached(&xn, &mem, 1);
    steal[0..8].copy_from_slice(&7u64.to_le_bytes());
    refused(&mut xn, &mut mem, Refusal::Denied(1), |xn, mem| xn.modify(mem, &[7], 1, &steal));
    xn.modify(&mut mem, &[OWNER], 1, &steal).unwrap(); // the owner may give it away
    assert_eq!(xn.modify(&mut mem, &[OWNER], 1, &dir(OWNER, 1)), Err(Refusal::Denied(1)));
}

#[test]
fn hostile_metadata_claiming_another_file_systems_blocks_is_refused() {
    let (mut xn, mut mem, _) = toy(64);
    // A second file system, by another principal, with its own root.
    let fs2 = xn.register_fs(&[&dir_template()]).unwrap();
    let f = mem.frame();
    xn.add_root(&mut mem, fs2, 2, DIR, f, &dir(99, 2)).unwrap();
    let mut victim = cached(&xn, &mem, 2);
    victim = with_entry(victim, 0, 30, 2, DATA, 1);
    xn.allocate(&mut mem, &[99], 2, &victim, Extent::new(30, 2, DATA)).unwrap();
    let victim_before = snapshot(&xn, &mem);

    // fs1 declares the victim's blocks as its own: not free.
    let claim = with_entry(cached(&xn, &mem, 1), 0, 30, 2, DATA, 1);
    refused(&mut xn, &mut mem, Refusal::NotFree(30), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &claim, Extent::new(30, 2, DATA))
    });
    // ... or slips them in as an ordinary change: owns changed.
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| xn.modify(mem, &[OWNER], 1, &claim));
    // ... or claims the victim's root.
    let root_claim = with_entry(cached(&xn, &mem, 1), 0, 2, 1, DIR, 1);
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| xn.modify(mem, &[OWNER], 1, &root_claim));
    // ... or frees them through its own metadata.
    let empty = cached(&xn, &mem, 1);
    refused(&mut xn, &mut mem, Refusal::NotAllocated(30), |xn, mem| {
        xn.free(mem, &[OWNER], 1, &empty, Extent::new(30, 2, DATA), &mut |_, _| {})
    });
    // ... or changes the victim's metadata directly.
    refused(&mut xn, &mut mem, Refusal::Denied(2), |xn, mem| xn.modify(mem, &[OWNER], 2, &dir(OWNER, 2)));
    // ... or binds its data writable.
    let f30 = mem.frame();
    xn.insert(30, f30).unwrap();
    assert_eq!(xn.bind(&mem, &[OWNER], 30, rights::WRITE), Err(Refusal::Denied(30)));
    assert_eq!(xn.bind(&mem, &[99], 30, rights::ALL), Ok(f30));
    assert_eq!(victim_before.0.iter().filter(|(b, _)| *b != 30).count(), 3);
    assert_eq!(xn.usage(fs2), 3);
}

#[test]
fn free_removes_exactly_the_declared_extent() {
    let (mut xn, mut mem, _) = toy(64);
    let two = with_entry(with_entry(cached(&xn, &mem, 1), 0, 10, 2, DATA, 1), 1, 20, 1, DATA, 1);
    let first = with_entry(cached(&xn, &mem, 1), 0, 10, 2, DATA, 1);
    xn.allocate(&mut mem, &[OWNER], 1, &first, Extent::new(10, 2, DATA)).unwrap();
    xn.allocate(&mut mem, &[OWNER], 1, &two, Extent::new(20, 1, DATA)).unwrap();
    let f = mem.frame();
    xn.insert(10, f).unwrap();
    // Removing both entries while declaring one: refused.
    let none = cached(&xn, &mem, 1);
    let none = with_entry(with_entry(none, 0, 0, 0, 0, 0), 1, 0, 0, 0, 0);
    refused(&mut xn, &mut mem, Refusal::OwnsMismatch(1), |xn, mem| {
        xn.free(mem, &[OWNER], 1, &none, Extent::new(20, 1, DATA), &mut |_, _| {})
    });
    // Shrinking 10..12 to 10..11 frees exactly block 11 — never written, so at once.
    let shrunk = with_entry(two, 0, 10, 1, DATA, 1);
    xn.free(&mut mem, &[OWNER], 1, &shrunk, Extent::new(11, 1, DATA), &mut |_, _| panic!("11 had no frame")).unwrap();
    assert!(xn.free_map().is_free(11) && xn.block(11).is_none());
    let mut released = Vec::new();
    let only20 = with_entry(shrunk, 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 1, &only20, Extent::new(10, 1, DATA), &mut |b, f| released.push((b, f))).unwrap();
    assert_eq!(released, [(10, f)]);
    assert!(xn.free_map().is_free(10));
}

#[test]
fn free_refuses_a_directory_that_still_owns_blocks() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DIR, 5);
    alloc_child(&mut xn, &mut mem, 5, 0, 6, DATA, 6);
    let gone = with_entry(cached(&xn, &mem, 1), 0, 0, 0, 0, 0);
    refused(&mut xn, &mut mem, Refusal::NotEmpty(5), |xn, mem| {
        xn.free(mem, &[OWNER], 1, &gone, Extent::new(5, 1, DIR), &mut |_, _| {})
    });
    let empty5 = with_entry(cached(&xn, &mem, 5), 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 5, &empty5, Extent::new(6, 1, DATA), &mut |_, _| {}).unwrap();
    xn.free(&mut mem, &[OWNER], 1, &gone, Extent::new(5, 1, DIR), &mut |_, _| {}).unwrap();
    assert!(xn.free_map().is_free(5) && xn.free_map().is_free(6));
}

#[test]
fn hostile_a_udf_fault_refuses_the_change() {
    // owns reads a u32 offset from byte 0 and loads the extent there: an
    // offset past the block makes owns fault.
    let owns = Asm::new().ld32(0, 7, 0).ld32(1, 0, 0).ld32(2, 0, 4).ext(1, 2, 3);
    let acl = Asm::new().li(0, 0).prin(0, rights::ALL); // anyone
    let mut xn = Xn::new(64).unwrap();
    let fs = xn.register_fs(&[&template(&owns, &acl, &Asm::new().halt())]).unwrap();
    let mut mem = Mem::default();
    let f = mem.frame();
    let mut root = [0u8; BLOCK_SIZE];
    root[0] = 16;
    xn.add_root(&mut mem, fs, 1, 1, f, &root).unwrap();
    let mut bad = root;
    bad[0..4].copy_from_slice(&4093u32.to_le_bytes());
    refused(&mut xn, &mut mem, Refusal::UdfFault(1, Fault::OutOfBlock { at: 1, addr: 4093 }), |xn, mem| {
        xn.modify(mem, &[], 1, &bad)
    });
    assert_eq!(Refusal::UdfFault(1, Fault::StepLimit).code(), refuse::UDF_FAULT);
}

#[test]
fn metadata_needs_its_frame_and_no_write_in_flight() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    refused(&mut xn, &mut mem, Refusal::NotMetadata(5), |xn, mem| xn.modify(mem, &[OWNER], 5, &dir(OWNER, 1)));
    refused(&mut xn, &mut mem, Refusal::NotAllocated(9), |xn, mem| xn.modify(mem, &[OWNER], 9, &dir(OWNER, 1)));
    refused(&mut xn, &mut mem, Refusal::OutOfRange(64), |xn, mem| xn.modify(mem, &[OWNER], 64, &dir(OWNER, 1)));
    write(&mut xn, &mem, 5);
    flush(&mut xn);
    let t = xn.write_begin(&mem, 1).unwrap();
    let new = with_entry(cached(&xn, &mem, 1), 1, 7, 1, DATA, 7);
    refused(&mut xn, &mut mem, Refusal::InFlight(1), |xn, mem| {
        xn.allocate(mem, &[OWNER], 1, &new, Extent::new(7, 1, DATA))
    });
    xn.write_done(t);
    xn.allocate(&mut mem, &[OWNER], 1, &new, Extent::new(7, 1, DATA)).unwrap();
}

#[test]
fn binding_checks_rights_once_and_never_maps_metadata_writable() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DATA, 5);
    alloc_child(&mut xn, &mut mem, 1, 1, 6, DIR, 6);
    let f5 = xn.block(5).unwrap().frame.unwrap();
    assert_eq!(xn.bind(&mem, &[OWNER], 5, rights::ALL), Ok(f5));
    assert_eq!(xn.bind(&mem, &[3], 5, rights::READ), Err(Refusal::Denied(5)));
    assert_eq!(xn.bind(&mem, &[OWNER], 6, rights::WRITE), Err(Refusal::MetadataWritable(6)));
    assert_eq!(xn.bind(&mem, &[OWNER], 1, rights::ALL), Err(Refusal::MetadataWritable(1)));
    assert!(xn.bind(&mem, &[OWNER], 6, rights::READ).is_ok());
    // One frame per block: a second copy cannot be planted.
    assert_eq!(xn.insert(5, Frame::from_word(999)), Err(Refusal::AlreadyBound(5)));
    assert_eq!(xn.insert(40, Frame::from_word(999)), Err(Refusal::NotAllocated(40)));
    // A block cannot leave the cache while tainted or dirty.
    assert_eq!(xn.evict(5), Err(Refusal::Busy(5)));
    write(&mut xn, &mem, 5);
    assert_eq!(xn.evict(5), Err(Refusal::Busy(5))); // written, not flushed
    flush(&mut xn);
    assert_eq!(xn.block(5).unwrap().state, state::CLEAN);
    xn.mark_dirty(5);
    assert_eq!(xn.block(5).unwrap().state, state::DIRTY);
    assert_eq!(xn.evict(5), Err(Refusal::Busy(5)));
    write(&mut xn, &mem, 5);
    flush(&mut xn);
    assert_eq!(xn.evict(5), Ok(f5));
    assert_eq!(xn.bind(&mem, &[OWNER], 5, rights::READ), Err(Refusal::NotBound(5)));
    // Rights over 5 come from its parent: with the root uncached, no decision.
    let root_frame = xn.block(1).unwrap().frame.unwrap();
    let root = *mem.read(root_frame).unwrap();
    mem.frames.remove(&root_frame);
    xn.insert(5, f5).unwrap();
    assert_eq!(xn.bind(&mem, &[OWNER], 5, rights::READ), Err(Refusal::NotBound(1)));
    mem.frames.insert(root_frame, root);
    assert_eq!(xn.bind(&mem, &[OWNER], 5, rights::READ), Ok(f5));
}

#[test]
fn registration_refuses_bad_template_sets() {
    let mut xn = Xn::new(8).unwrap();
    assert!(xn.register_fs(&[]).is_err());
    let t = dir_template();
    let many: Vec<&[u8]> = (0..17).map(|_| &t[..]).collect();
    assert!(xn.register_fs(&many).is_err());
    let fs = xn.register_fs(&[&t]).unwrap();
    let mut mem = Mem::default();
    let f = mem.frame();
    // A root must be free, on the disk, of a template type, and own nothing.
    assert_eq!(xn.add_root(&mut mem, fs, 1, DATA, f, &dir(1, 1)), Err(Refusal::BadFs));
    assert_eq!(xn.add_root(&mut mem, fs, 9, DIR, f, &dir(1, 1)), Err(Refusal::OutOfRange(9)));
    assert_eq!(
        xn.add_root(&mut mem, fs, 1, DIR, f, &with_entry(dir(1, 1), 0, 2, 1, 0, 0)),
        Err(Refusal::OwnsMismatch(1))
    );
    assert_eq!(xn.add_root(&mut mem, oxok_xn::FsId(5), 1, DIR, f, &dir(1, 1)), Err(Refusal::BadFs));
    xn.add_root(&mut mem, fs, 1, DIR, f, &dir(1, 1)).unwrap();
    assert_eq!(xn.add_root(&mut mem, fs, 1, DIR, f, &dir(1, 1)), Err(Refusal::NotFree(1)));
    assert_eq!(xn.roots().len(), 1);
}

#[test]
fn hostile_a_udf_that_loops_or_reads_outside_its_block_is_refused_at_registration() {
    use oxok_xn::VerifyError;
    let halt = Asm::new().halt();
    let acl = dir_acl();
    let cases = [
        // No backward jump can be written: a skip of 0 (jump to itself) ...
        (Asm::new().li(0, 1).jnz(0, 0), VerifyError::BadJump { at: 1 }),
        // ... or a skip that would wrap around.
        (Asm::new().jz(0, u32::MAX), VerifyError::BadJump { at: 0 }),
        // Loops are bounded by constants, and so is their product.
        (
            Asm::new().repeat(0, 4096, 3).repeat(1, 4096, 1).ld32(2, 1, 0).ext(2, 2, 3),
            VerifyError::TooCostly { steps: 1 + 4096 * (1 + 4096 + 1) },
        ),
        (Asm::new().repeat(0, u32::MAX, 1).li(1, 0), VerifyError::BadLoop { at: 0 }),
        // A read past the block by its constant offset.
        (Asm::new().ld64(0, 7, 4090).ext(0, 0, 0), VerifyError::OutOfBlock { at: 0 }),
        // Another function's result.
        (Asm::new().prin(0, rights::ALL), VerifyError::WrongFunction { at: 0 }),
    ];
    let mut xn = Xn::new(64).unwrap();
    for (owns, want) in cases {
        assert_eq!(xn.register_fs(&[&template(&owns, &acl, &halt)]), Err(want));
    }
    // Nothing was registered: the first good file system is number 0.
    assert_eq!(xn.register_fs(&[&dir_template()]), Ok(oxok_xn::FsId(0)));
}
