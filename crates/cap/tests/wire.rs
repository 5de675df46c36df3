//! The wire form: round trips, and garbage is rejected without panicking.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{Cap, CapError, MAX_DEPTH, Name, Rights, WIRE_WORDS};

#[test]
fn layout() {
    assert_eq!(WIRE_WORDS, 10);
    let cap = Cap::new(Name::slot(1, 2, 3), Rights::READ | Rights::GRANT);
    assert_eq!(cap.encode(), [4, 0b101, 3, 1, 2, 3, 0, 0, 0, 0]);
    assert_eq!(Cap::ROOT.encode(), [0, 0b11_0111, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(Cap::decode(&[0; WIRE_WORDS]), Ok(Cap::new(Name::ROOT, Rights::NONE)));
}

#[test]
fn round_trip() {
    let mut rng = Rng::new(50);
    for _ in 0..20_000 {
        let depth = rng.below(MAX_DEPTH as u64 + 1) as usize;
        let comps: Vec<u64> = (0..depth).map(|_| rng.hostile()).collect();
        let cap = Cap::new(Name::new(&comps).unwrap(), rng.rights());
        assert_eq!(Cap::decode(&cap.encode()), Ok(cap));
    }
}

#[test]
fn rejects_bad_depth_rights_and_padding() {
    let good = Cap::new(Name::frame(42, 7), Rights::READ).encode();
    for depth in [MAX_DEPTH as u64 + 1, 255, 256, 1 << 32, u64::MAX] {
        let mut w = good;
        w[0] = depth;
        assert_eq!(Cap::decode(&w), Err(CapError::TooDeep), "depth {depth}");
    }
    for rights in [8, 0xF0, 0xFF, 0x100, 0x101, 1 << 63, u64::MAX] {
        let mut w = good;
        w[1] = rights;
        assert_eq!(Cap::decode(&w), Err(CapError::BadRights), "rights {rights:#x}");
    }
    for i in 5..WIRE_WORDS {
        let mut w = good;
        w[i] = 1;
        assert_eq!(Cap::decode(&w), Err(CapError::TooDeep), "padding word {i}");
    }
    // Claiming a shorter depth over the same components is also padding.
    let mut w = good;
    w[0] = 2;
    assert_eq!(Cap::decode(&w), Err(CapError::TooDeep));
    // Depth is checked before rights.
    let mut w = good;
    w[0] = 9;
    w[1] = 0xFF;
    assert_eq!(Cap::decode(&w), Err(CapError::TooDeep));
}

#[test]
fn random_garbage_never_panics_and_accepts_only_canonical_forms() {
    let mut rng = Rng::new(51);
    let mut accepted = 0;
    for _ in 0..200_000 {
        let mut w = [0u64; WIRE_WORDS];
        for word in &mut w {
            *word = if rng.chance(2) { rng.hostile() } else { 0 };
        }
        // Bias towards nearly valid forms so acceptance is exercised too.
        if rng.chance(2) {
            w[0] = rng.below(MAX_DEPTH as u64 + 2);
            w[1] = rng.below(9);
        }
        match Cap::decode(&w) {
            Ok(cap) => {
                accepted += 1;
                assert_eq!(cap.encode(), w, "decode accepts only what encode writes");
            }
            Err(e) => assert!(matches!(e, CapError::TooDeep | CapError::BadRights)),
        }
    }
    assert!(accepted > 100, "only {accepted} accepted");
}
