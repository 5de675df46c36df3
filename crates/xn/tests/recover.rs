//! Recovery: the free map rebuilt from the roots with `owns`; duplicates and
//! unreadable metadata reported; cycles end.

use std::collections::HashMap;

use oxok_abi::xn::{BLOCK_SIZE, DATA, state};
use oxok_xn::{Duplicate, Extent, FsId, Root, Xn};

mod common;
use common::*;

fn recover(disk: &HashMap<u64, Block>, roots: &[Root], nblocks: u64) -> (Xn, oxok_xn::Report) {
    let mut xn = Xn::new(nblocks).unwrap();
    xn.register_fs(&[&dir_template()]).unwrap();
    let mut buf = [0u8; BLOCK_SIZE];
    let report = xn
        .recover(roots, &mut buf, &mut |b, out| match disk.get(&b) {
            Some(c) => {
                *out = *c;
                true
            }
            None => false,
        })
        .unwrap();
    (xn, report)
}

const ROOT: Root = Root { fs: FsId(0), block: 1, ty: DIR };

#[test]
fn the_free_map_is_the_complement_of_the_reachable_blocks() {
    let mut disk = HashMap::new();
    disk.insert(1, with_entry(with_entry(dir(OWNER, 1), 0, 5, 1, DIR, 5), 3, 20, 3, DATA, 0));
    disk.insert(5, with_entry(dir(OWNER, 5), 10, 30, 1, DATA, 0));
    disk.insert(40, with_entry(dir(OWNER, 40), 0, 41, 1, DATA, 0)); // unreachable
    let (xn, report) = recover(&disk, &[ROOT], 64);
    assert_eq!(report.reachable, 6);
    assert!(report.duplicates.is_empty() && report.unreadable.is_empty());
    let reachable = [1, 5, 20, 21, 22, 30];
    for b in 0..64 {
        assert_eq!(xn.free_map().is_free(b), !reachable.contains(&b), "block {b}");
    }
    assert_eq!(xn.block(30).unwrap().parent, Some(5));
    assert_eq!(xn.block(5).unwrap().ty, DIR);
    assert_eq!(xn.block(5).unwrap().state, state::CLEAN);
    assert_eq!(xn.free_map().free_count(), 58);
}

#[test]
fn blocks_owned_twice_are_reported_and_followed_once() {
    let mut disk = HashMap::new();
    disk.insert(1, with_entry(with_entry(dir(OWNER, 1), 0, 5, 1, DIR, 5), 1, 6, 1, DIR, 6));
    // 5 and 6 both claim 30; 6 claims the root and itself (cycles).
    disk.insert(5, with_entry(dir(OWNER, 5), 0, 30, 1, DATA, 0));
    disk.insert(
        6,
        with_entry(with_entry(with_entry(dir(OWNER, 6), 0, 30, 1, DATA, 0), 1, 1, 1, DIR, 0), 2, 6, 1, DIR, 0),
    );
    let (xn, report) = recover(&disk, &[ROOT], 64);
    assert_eq!(report.reachable, 4);
    let mut dups = report.duplicates.clone();
    dups.sort_by_key(|d| d.block);
    assert_eq!(dups.len(), 3);
    assert_eq!(dups[0], Duplicate { block: 1, first: None, second: Some(6) });
    assert_eq!(dups[1].block, 6);
    assert_eq!(dups[2].block, 30);
    assert!(!xn.free_map().is_free(30));
    // Two roots naming one block.
    let (_, report) = recover(&disk, &[ROOT, ROOT], 64);
    assert!(report.duplicates.contains(&Duplicate { block: 1, first: None, second: None }));
}

#[test]
fn unreadable_or_faulting_metadata_is_reported() {
    let mut disk = HashMap::new();
    disk.insert(1, with_entry(with_entry(dir(OWNER, 1), 0, 5, 1, DIR, 5), 1, 6, 1, DIR, 6));
    // 6 claims blocks past the disk: owns fails.
    disk.insert(6, with_entry(dir(OWNER, 6), 0, 60, 10, DATA, 0));
    let (xn, report) = recover(&disk, &[ROOT], 64);
    let mut bad = report.unreadable.clone();
    bad.sort();
    assert_eq!(bad, [5, 6]);
    assert_eq!(report.reachable, 3);
    assert!(xn.free_map().is_free(60));
}

#[test]
fn a_recovered_tree_can_be_changed_and_frees_wait_for_the_disk() {
    let mut disk = HashMap::new();
    disk.insert(1, with_entry(dir(OWNER, 1), 0, 20, 1, DATA, 0));
    let (mut xn, _) = recover(&disk, &[ROOT], 64);
    let mut mem = Mem::default();
    let f = mem.frame();
    *mem.frames.get_mut(&f).unwrap() = disk[&1];
    xn.insert(1, f).unwrap();
    let gone = with_entry(disk[&1], 0, 0, 0, 0, 0);
    xn.free(&mut mem, &[OWNER], 1, &gone, Extent::new(20, 1, DATA), &mut |_, _| {}).unwrap();
    assert_eq!(xn.will_free(), [20], "the disk still points to 20");
    write(&mut xn, &mem, 1);
    flush(&mut xn);
    assert_eq!(xn.reap(8), 1);
    assert!(xn.free_map().is_free(20));
    // Recovery wants a fresh XN.
    let mut buf = [0u8; BLOCK_SIZE];
    assert!(xn.recover(&[ROOT], &mut buf, &mut |_, _| false).is_err());
}
