use super::*;
use oxok_testrng::Rng;

/// RFC 1071 as written: big-endian 16-bit words, an odd byte padded.
fn reference(data: &[u8]) -> u64 {
    let mut acc = 0u64;
    for c in data.chunks(2) {
        acc += u64::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    acc
}

#[test]
fn folds_as_the_reference_for_every_length_and_content() {
    let mut rng = Rng::new(0x5eed);
    for len in 0..300 {
        for round in 0..20 {
            let data: [u8; 300] = core::array::from_fn(|_| match round {
                0 => 0,
                1 => 0xff,
                _ => rng.byte(),
            });
            let d = &data[..len];
            assert_eq!(fold(add(0, d)), fold(reference(d)), "len {len} round {round}");
        }
    }
}

#[test]
fn pieces_combine_by_addition() {
    let mut rng = Rng::new(7);
    let data: [u8; 1500] = core::array::from_fn(|_| rng.byte());
    for cut in (0..1500).step_by(2) {
        let whole = fold(add(0, &data));
        assert_eq!(fold(add(add(0, &data[..cut]), &data[cut..])), whole);
    }
    // A run at an odd offset is summed alone and shifted.
    let odd = shift_odd(add(0, &data[1..]));
    assert_eq!(fold(add(0, &data[..1]) + odd), fold(add(0, &data)));
}

#[test]
fn known_values() {
    // RFC 1071's example: 00 01 f2 03 f4 f5 f6 f7 sums to ddf2.
    assert_eq!(fold(add(0, &[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7])), 0xddf2);
    assert_eq!(finish(0), 0xffff);
    assert_eq!(fold(add(0, &[])), 0);
    // An IPv4 header with its checksum in place sums to all ones.
    let h = [0x45, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 0xc7];
    assert_eq!(finish(add(0, &h)), 0);
    assert_eq!(
        fold(pseudo([10, 0, 2, 15], [10, 0, 2, 2], 6, 20)),
        fold(reference(&[10, 0, 2, 15, 10, 0, 2, 2]) + 6 + 20)
    );
}
