//! Deterministic mutation fuzzing of the reader.

use super::build;
use crate::Archive;

use alloc::vec::Vec;
use oxok_testrng::Rng;

/// Reads everything the reader can reach; panics would fail the test.
fn exercise(data: &[u8]) {
    let archive = Archive::new(data);
    let mut count = 0usize;
    for entry in archive.entries() {
        match entry {
            Ok(e) => {
                assert!(!e.name.is_empty());
                count += 1;
            }
            Err(_) => count += 1,
        }
        assert!(count <= data.len() / 512 + 1, "iterator must terminate");
    }
    let _ = archive.find("b");
    let _ = archive.find("");
    for at in [0, 1, 511, 512, 513, data.len() / 2, data.len()] {
        let _ = archive.entry_at(at);
    }
}

#[test]
fn mutated_archives_never_panic() {
    let big = [0x5au8; 1300];
    let valid = build(&[("a", b"alpha"), ("b", &big), ("c", b"")]);
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    for _ in 0..5000 {
        let mut data = valid.clone();
        for _ in 0..1 + rng.index(8) {
            let i = rng.index(data.len());
            data[i] = match rng.index(4) {
                0 => rng.next() as u8,
                1 => data[i] ^ (1 << rng.index(8)),
                2 => b"0 7\0"[rng.index(4)],
                _ => 0,
            };
        }
        // Sometimes also fix the checksum so deeper fields get exercised.
        if rng.index(2) == 0 {
            super::fix_checksum(&mut data[..512]);
        }
        let cut = if rng.index(4) == 0 { rng.index(data.len() + 1) } else { data.len() };
        exercise(&data[..cut]);
    }
}

#[test]
fn mutated_aligned_archives_never_panic() {
    let big = [0x5au8; 1300];
    let mut valid = Vec::new();
    for (name, data) in [("a", &b"alpha"[..]), ("b", &big), ("c", b"")] {
        crate::append_aligned(&mut valid, name, data, 4096).unwrap();
    }
    crate::finish(&mut valid);
    let mut rng = Rng::new(0x5eed_a119);
    for _ in 0..5000 {
        let mut data = valid.clone();
        for _ in 0..1 + rng.index(8) {
            // Mostly header bytes (the first 512 of some block), where the
            // type flag, size and checksum are.
            let i = if rng.index(2) == 0 {
                rng.index(data.len() / 512) * 512 + rng.index(160)
            } else {
                rng.index(data.len())
            };
            data[i] = match rng.index(5) {
                0 => rng.next() as u8,
                1 => data[i] ^ (1 << rng.index(8)),
                2 => b"0 7\0"[rng.index(4)],
                3 => *rng.pick(b"xg05"),
                _ => 0,
            };
        }
        // Sometimes fix the checksum of a block that may be a header.
        if rng.index(2) == 0 {
            let at = rng.index(data.len() / 512) * 512;
            super::fix_checksum(&mut data[at..at + 512]);
        }
        let cut = if rng.index(4) == 0 { rng.index(data.len() + 1) } else { data.len() };
        exercise(&data[..cut]);
        // Offsets only move forward.
        let mut it = Archive::new(&data[..cut]).entries();
        let mut last = it.offset();
        while let Some(entry) = it.next() {
            assert!(entry.is_err() || it.offset() > last, "an entry must move the offset on");
            last = it.offset();
        }
    }
}

/// The word-at-a-time checksum agrees with a byte-at-a-time sum (the
/// checksum field taken as spaces) on random blocks, all-0xff blocks and
/// all-zero ones.
#[test]
fn checksum_matches_a_plain_byte_sum() {
    let plain = |block: &[u8; 512]| -> u64 {
        let field = crate::header::CHECKSUM;
        block.iter().enumerate().map(|(i, &b)| u64::from(if field.contains(&i) { b' ' } else { b })).sum()
    };
    let mut rng = Rng::new(0xc5e0_5a11);
    let mut blocks = alloc::vec![[0u8; 512], [0xffu8; 512]];
    for _ in 0..2000 {
        let mut block = [0u8; 512];
        block.copy_from_slice(&rng.bytes(512));
        blocks.push(block);
    }
    for block in &blocks {
        assert_eq!(crate::header::checksum(block), plain(block));
    }
}
