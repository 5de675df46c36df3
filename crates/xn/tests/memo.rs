//! The `owns` memo (`Xn::change_check`) and the read sets it rests on: a
//! change is judged exactly as if `owns` ran over the old and the new
//! content every time.

use oxok_abi::xn::{BLOCK_SIZE, DATA};
use oxok_testrng::Rng;
use oxok_xn::{Extent, ReadSet, Refusal, Template};

mod common;
use common::*;

#[test]
fn hostile_changes_after_a_remembered_one_are_still_judged_by_owns() {
    let (mut xn, mut mem, _) = toy(64);
    let one = with_entry(cached(&xn, &mem, 1), 0, 10, 1, DATA, 1);
    xn.allocate(&mut mem, &[OWNER], 1, &one, Extent::new(10, 1, DATA)).unwrap();
    // A second pointer slipped in by a "modify" of what owns reads.
    let two = with_entry(one, 1, 20, 1, DATA, 1);
    assert_eq!(xn.modify(&mut mem, &[OWNER], 1, &two), Err(Refusal::OwnsMismatch(1)));
    // The refused image is what the memo last saw; the cached block is
    // still `one`, so its owns is {10}: allocating 20 properly succeeds.
    xn.allocate(&mut mem, &[OWNER], 1, &two, Extent::new(20, 1, DATA)).unwrap();
    // A longer extent through a modify.
    let longer = with_entry(two, 0, 10, 2, DATA, 1);
    assert_eq!(xn.modify(&mut mem, &[OWNER], 1, &longer), Err(Refusal::OwnsMismatch(1)));
    // Bytes owns never reads (the size, an entry's tag) change freely.
    let mut sized = with_entry(two, 1, 20, 1, DATA, 99);
    sized[16..24].copy_from_slice(&4096u64.to_le_bytes());
    xn.modify(&mut mem, &[OWNER], 1, &sized).unwrap();
    assert_eq!(cached(&xn, &mem, 1), sized);
    assert_eq!(xn.size(&mem, 1), Ok(4096));
    // And a pointer moved within them is still caught.
    let moved = with_entry(sized, 1, 21, 1, DATA, 99);
    assert_eq!(xn.modify(&mut mem, &[OWNER], 1, &moved), Err(Refusal::OwnsMismatch(1)));
    assert_eq!(xn.owns(&mem, 1).unwrap().extents(), [Extent::new(10, 1, DATA), Extent::new(20, 1, DATA)]);
}

#[test]
fn a_memo_for_one_block_is_not_used_for_another() {
    let (mut xn, mut mem, _) = toy(64);
    alloc_child(&mut xn, &mut mem, 1, 0, 5, DIR, 5);
    let d = cached(&xn, &mem, 5);
    let a = with_entry(d, 0, 30, 1, DATA, 1);
    xn.allocate(&mut mem, &[OWNER], 5, &a, Extent::new(30, 1, DATA)).unwrap();
    // Block 1 holds other bytes where owns reads (its entry 0 names 5).
    let root = with_entry(cached(&xn, &mem, 1), 1, 40, 1, DATA, 1);
    xn.allocate(&mut mem, &[OWNER], 1, &root, Extent::new(40, 1, DATA)).unwrap();
    assert_eq!(xn.owns(&mem, 1).unwrap().blocks(), 2);
    assert_eq!(xn.owns(&mem, 5).unwrap().blocks(), 1);
}

/// Random toy directory blocks: entries in a few slots, other bytes noise.
fn random_dir(rng: &mut Rng) -> Block {
    let mut b = dir(OWNER, 1);
    for i in 0..ENTRIES {
        if rng.below(8) == 0 {
            b = with_entry(b, i, 100 + i as u64 * 10, 1 + rng.below(5), DATA, rng.below(1000) as u32);
        }
    }
    for _ in 0..rng.below(40) {
        let at = rng.below(BLOCK_SIZE as u64) as usize;
        b[at] = rng.below(256) as u8;
    }
    b
}

#[test]
fn blocks_equal_on_a_runs_read_set_have_the_same_owns() {
    let t = Template::parse(&dir_template()).unwrap();
    let mut rng = Rng::new(7);
    let (mut same, mut differ) = (0, 0);
    for _ in 0..2000 {
        let a = random_dir(&mut rng);
        let mut reads = ReadSet::default();
        t.owns.run_reading(&a, &mut |_| Ok(()), Some(&mut reads)).unwrap();
        let oa = t.owns(&a, 2000, 1);
        // A few bytes changed anywhere.
        let mut b = a;
        for _ in 0..1 + rng.below(4) {
            let at = rng.below(BLOCK_SIZE as u64) as usize;
            b[at] = rng.below(256) as u8;
        }
        if reads.same_on(&a, &b) {
            same += 1;
            assert_eq!(t.owns(&b, 2000, 1), oa, "equal where read, equal owns");
        } else {
            differ += 1;
        }
    }
    // Both cases were exercised.
    assert!(same > 100 && differ > 100, "same {same}, differ {differ}");
}

/// `owns` of `block` as the template says, run afresh over its cached bytes.
fn fresh_owns(xn: &oxok_xn::Xn, mem: &Mem, block: u64) -> Vec<Extent> {
    let t = Template::parse(&dir_template()).unwrap();
    t.owns(&cached(xn, mem, block), 4096, 1).unwrap().extents().to_vec()
}

#[test]
fn many_blocks_remembered_at_once_are_judged_as_owns_judges_them() {
    // More directories than the memos hold, changed in a random order:
    // every change — a proper allocation, a forged pointer, a size — and
    // every write is judged as a fresh run of `owns` would judge it.
    let dirs: Vec<u64> = (2..2 + oxok_xn::MEMOS as u64 + 6).collect();
    let (mut xn, mut mem, _) = toy(4096);
    for (i, &d) in dirs.iter().enumerate() {
        alloc_child(&mut xn, &mut mem, 1, i, d, DIR, d as u32);
    }
    let mut rng = Rng::new(11);
    let mut next_block = 100;
    let mut used = vec![0usize; dirs.len()];
    for step in 0..600 {
        let k = rng.below(dirs.len() as u64) as usize;
        let d = dirs[k];
        let now = cached(&xn, &mem, d);
        match rng.below(3) {
            // A proper allocation of the next free entry.
            0 if used[k] < ENTRIES => {
                let new = with_entry(now, used[k], next_block, 1, DATA, step);
                xn.allocate(&mut mem, &[OWNER], d, &new, Extent::new(next_block, 1, DATA)).unwrap();
                used[k] += 1;
                next_block += 1;
            }
            // A pointer slipped in through a modify: refused, nothing kept.
            1 => {
                let forged = with_entry(now, used[k].min(ENTRIES - 1), 3000 + step as u64, 1, DATA, 1);
                assert_eq!(xn.modify(&mut mem, &[OWNER], d, &forged), Err(Refusal::OwnsMismatch(d)));
                assert_eq!(cached(&xn, &mem, d), now);
            }
            // Bytes owns never reads: the size.
            _ => {
                let mut sized = now;
                sized[16..24].copy_from_slice(&(step as u64).to_le_bytes());
                xn.modify(&mut mem, &[OWNER], d, &sized).unwrap();
            }
        }
        let probe = dirs[rng.below(dirs.len() as u64) as usize];
        assert_eq!(xn.owns(&mem, probe).unwrap().extents(), fresh_owns(&xn, &mem, probe), "step {step}, block {probe}");
    }
    // Writes: a directory pointing at a block never written is refused
    // whichever memo it has, and let through once its blocks are durable.
    let d = dirs[0];
    if used[0] > 0 {
        assert!(matches!(xn.write_check(&mem, d), Err(Refusal::TaintedPointer { block, .. }) if block == d));
    }
    for b in 100..next_block {
        let f = mem.frame();
        xn.insert(b, f).unwrap();
        write(&mut xn, &mem, b);
    }
    flush(&mut xn);
    for &d in &dirs {
        assert!(xn.write_check(&mem, d).is_ok(), "block {d}");
    }
}

/// Changes anywhere in a directory block — an allocation in any free
/// entry, a free of any used one, a pointer forged into any entry, a
/// pointer moved — judged with the memo's trace (a run that starts at the
/// changed entry's pass) exactly as a run of `owns` from the start judges
/// them.
#[test]
fn changes_anywhere_in_a_block_are_judged_as_a_run_from_the_start_judges_them() {
    let (mut xn, mut mem, _) = toy(8192);
    let dirs = [2u64, 3];
    for (i, &d) in dirs.iter().enumerate() {
        alloc_child(&mut xn, &mut mem, 1, i, d, DIR, d as u32);
    }
    let mut rng = Rng::new(0x7ace);
    let mut next_block = 100;
    let mut held: Vec<Vec<Option<u64>>> = vec![vec![None; ENTRIES]; dirs.len()];
    let (mut allocated, mut freed, mut refused) = (0, 0, 0);
    for step in 0..3000 {
        let k = rng.index(dirs.len());
        let d = dirs[k];
        let now = cached(&xn, &mem, d);
        let i = rng.index(ENTRIES);
        match (rng.below(4), held[k][i]) {
            (0 | 1, None) => {
                let new = with_entry(now, i, next_block, 1, DATA, step);
                xn.allocate(&mut mem, &[OWNER], d, &new, Extent::new(next_block, 1, DATA)).unwrap();
                held[k][i] = Some(next_block);
                next_block += 1;
                allocated += 1;
            }
            (0 | 1, Some(b)) => {
                let new = with_entry(now, i, 0, 0, DATA, step);
                xn.free(&mut mem, &[OWNER], d, &new, Extent::new(b, 1, DATA), &mut |_, _| {}).unwrap();
                held[k][i] = None;
                freed += 1;
            }
            (2, _) => {
                let forged = with_entry(now, i, 6000 + u64::from(step % 1000), 1, DATA, 1);
                assert_eq!(xn.modify(&mut mem, &[OWNER], d, &forged), Err(Refusal::OwnsMismatch(d)), "step {step}");
                assert_eq!(cached(&xn, &mem, d), now);
                refused += 1;
            }
            (_, Some(b)) => {
                // Onto the next block, which may be another entry's too.
                let moved = with_entry(now, i, b + 1, 1, DATA, step);
                assert!(xn.modify(&mut mem, &[OWNER], d, &moved).is_err(), "step {step}");
                assert_eq!(cached(&xn, &mem, d), now);
                refused += 1;
            }
            (_, None) => {
                // A tag owns never reads: accepted.
                let tagged = with_entry(now, i, 0, 0, DATA, step);
                xn.modify(&mut mem, &[OWNER], d, &tagged).unwrap();
            }
        }
        for &probe in &dirs {
            assert_eq!(xn.owns(&mem, probe).unwrap().extents(), fresh_owns(&xn, &mem, probe), "step {step}");
        }
    }
    assert!(allocated > 400 && freed > 300 && refused > 500, "{allocated} {freed} {refused}");
}
