//! Hostile bytes: the decoder, the table and demux never panic, and whatever
//! the verifier accepts obeys the format's rules.

mod common;

use common::*;
use oxok_abi::filter::{FILTER_BYTES, MAX_PACKET, op};
use oxok_dpf::{Atom, Dpf, decode};

/// Checks the verifier's promises on an accepted filter.
fn check_accepted(f: &oxok_dpf::Filter) {
    assert!(!f.atoms().is_empty());
    assert!(!matches!(f.atoms().last(), Some(Atom::Shift { .. })));
    let mut max_base = 0usize;
    for a in f.atoms() {
        let field = a.field();
        assert!(matches!(field.size, 1 | 2 | 4) && field.mask != 0);
        assert!(max_base + field.end() <= MAX_PACKET, "{f:?}");
        match *a {
            Atom::Eq { value, .. } => assert_eq!(value & !field.mask, 0),
            Atom::Shift { scale, .. } => max_base += field.mask as usize * scale as usize,
        }
    }
    // Canonical: decoding its own encoding gives it back.
    assert_eq!(decode(&f.to_raw().to_bytes()).as_ref(), Ok(f));
}

#[test]
fn random_blocks_never_panic() {
    let mut rng = Rng::new(0xf022);
    let mut dpf: Dpf<u8> = Dpf::new(32, 5);
    let mut accepted = 0;
    for i in 0..100_000 {
        let len = if rng.chance(8) { rng.index(2 * FILTER_BYTES) } else { FILTER_BYTES };
        let mut b = rng.bytes(len);
        // Make many blocks plausible: small ops and sizes, an early END.
        if len == FILTER_BYTES && rng.chance(2) {
            let atoms = 1 + rng.index(4);
            for a in 0..16 {
                let at = a * 16;
                if a >= atoms {
                    b[at..at + 16].fill(0);
                    continue;
                }
                b[at] = if rng.chance(16) { rng.below(4) as u8 } else { 1 + rng.below(2) as u8 };
                b[at + 1] = *rng.pick(&[1, 2, 4, 1, 2, 4, 3]);
                b[at + 2] = match (b[at], rng.chance(16)) {
                    (_, true) => rng.byte(),
                    (1, false) => 0,
                    _ => 1 + rng.below(8) as u8,
                };
                if !rng.chance(16) {
                    b[at + 3] = 0;
                    b[at + 4] = rng.below(40) as u8;
                    b[at + 5] = 0;
                    b[at + 6] = 0;
                    b[at + 7] = 0;
                }
                for k in 8..16 {
                    if rng.chance(2) {
                        b[at + k] = 0;
                    }
                }
                if rng.chance(2) {
                    // A mask within the size, a value within the mask.
                    let size = b[at + 1].min(4) as usize;
                    b[at + 8 + size..at + 12].fill(0);
                    for k in 0..4 {
                        b[at + 12 + k] &= b[at + 8 + k];
                    }
                }
            }
        }
        if let Ok(f) = decode(&b) {
            accepted += 1;
            check_accepted(&f);
            let _ = f.matches(&packet(&mut rng));
            if let Ok(id) = dpf.insert(f, i as u8, None)
                && rng.chance(2)
            {
                dpf.remove(id);
            }
            let n = rng.index(3000);
            let _ = dpf.demux(&rng.bytes(n));
        }
    }
    assert!(accepted > 1000, "only {accepted} random blocks verified");
}

#[test]
fn mutated_filters_never_panic() {
    let mut rng = Rng::new(0x307);
    let mut dpf: Dpf<u8> = Dpf::new(64, 6);
    for i in 0..100_000u32 {
        let (_, f) = filter(&mut rng);
        let mut b = f.to_raw().to_bytes();
        for _ in 0..1 + rng.index(3) {
            let at = rng.index(FILTER_BYTES);
            b[at] = if rng.chance(2) { rng.byte() } else { b[at] ^ (1 << rng.below(8)) };
        }
        match decode(&b) {
            Ok(g) => {
                check_accepted(&g);
                let refines = dpf.iter().next().map(|x| x.id).filter(|_| rng.chance(2));
                if let Ok(id) = dpf.insert(g, i as u8, refines)
                    && rng.chance(3)
                {
                    dpf.remove(id);
                }
                for p in satisfying(&mut rng, &[&g]) {
                    let _ = dpf.demux(&p);
                }
            }
            Err(e) => assert!(e.code() != 0 && e.at <= 16),
        }
        assert_ne!(op::EQ, op::SHIFT);
    }
}
