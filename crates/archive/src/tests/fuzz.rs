//! Deterministic mutation fuzzing of the reader.

use super::build;
use crate::Archive;

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
