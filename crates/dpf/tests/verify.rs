//! The verifier: every rule of `oxok_abi::filter`, and packets too short.

use oxok_abi::filter::{FILTER_BYTES, MAX_ATOMS, MAX_PACKET, RawAtom, RawFilter, op, reject};
use oxok_dpf::{Builder, Reject, decode, verify};

fn refused(b: Builder) -> (Reject, usize) {
    let e = b.build().unwrap_err();
    // The wire path says the same.
    assert_eq!(decode(&b.raw().to_bytes()).unwrap_err(), e);
    (e.reason, e.at)
}

#[test]
fn accepts_well_formed_filters() {
    let f = Builder::new().eq16(12, 0x0800).shift(1, 14, 0x0f, 4).eq16(16, 80).build().unwrap();
    assert_eq!(f.atoms().len(), 3);
    assert_eq!(decode(&f.to_raw().to_bytes()).unwrap(), f, "to_raw round-trips");
}

#[test]
fn refuses_each_malformed_atom() {
    assert_eq!(refused(Builder::new()), (Reject::Empty, 0));
    assert_eq!(refused(Builder::new().eq8(0, 1).masked(3, 0, 0xff, 0)), (Reject::BadSize, 1));
    assert_eq!(refused(Builder::new().masked(0, 0, 0xff, 0)), (Reject::BadSize, 0));
    assert_eq!(refused(Builder::new().masked(1, 0, 0, 0)), (Reject::BadMask, 0));
    assert_eq!(refused(Builder::new().masked(1, 0, 0x100, 0)), (Reject::BadMask, 0));
    assert_eq!(refused(Builder::new().masked(2, 0, 0x1_0000, 0)), (Reject::BadMask, 0));
    assert_eq!(refused(Builder::new().masked(1, 0, 0x0f, 0x10)), (Reject::BadValue, 0));
    assert_eq!(refused(Builder::new().shift(1, 0, 0x0f, 0).eq8(0, 0)), (Reject::BadScale, 0));
    assert_eq!(refused(Builder::new().shift(1, 0, 0x0f, 9).eq8(0, 0)), (Reject::BadScale, 0));
    assert_eq!(refused(Builder::new().eq8(0, 1).shift(1, 14, 0x0f, 4)), (Reject::DanglingShift, 1));
    let bad_op = RawAtom { op: 7, ..RawAtom::eq(1, 0, 0xff, 0) };
    assert_eq!(refused(Builder::new().atom(bad_op)), (Reject::BadOp, 0));
    for a in [
        RawAtom { reserved: 1, ..RawAtom::eq(1, 0, 0xff, 0) },
        RawAtom { reserved2: 1, ..RawAtom::eq(1, 0, 0xff, 0) },
        RawAtom { scale: 1, ..RawAtom::eq(1, 0, 0xff, 0) },
    ] {
        assert_eq!(refused(Builder::new().atom(a)), (Reject::Reserved, 0));
    }
    let shift_with_value = RawAtom { value: 1, ..RawAtom::shift(1, 0, 0xff, 1) };
    assert_eq!(refused(Builder::new().atom(shift_with_value).eq8(0, 0)), (Reject::Reserved, 0));
}

#[test]
fn refuses_reads_that_can_reach_past_max_packet() {
    let last = (MAX_PACKET - 4) as u16;
    assert!(Builder::new().eq32(last, 1).build().is_ok());
    assert_eq!(refused(Builder::new().eq32(last + 1, 1)), (Reject::OutOfRange, 0));
    assert_eq!(refused(Builder::new().eq8(u16::MAX, 1)), (Reject::OutOfRange, 0));
    // The verifier takes every shift at its largest: 0xff * 8 = 2040.
    assert!(Builder::new().shift(1, 0, 0xff, 8).eq32(4, 1).build().is_ok());
    assert_eq!(refused(Builder::new().shift(1, 0, 0xff, 8).eq32(5, 1)), (Reject::OutOfRange, 1));
    // Two shifts add up.
    assert_eq!(refused(Builder::new().shift(1, 0, 0xff, 4).shift(1, 0, 0xff, 4).eq8(8, 1)), (Reject::OutOfRange, 2));
    // A shift's own field is checked too; so is a 32-bit shift field.
    assert_eq!(refused(Builder::new().shift(1, 0, 0xff, 8).shift(1, 2041, 1, 1).eq8(0, 0)), (Reject::OutOfRange, 1));
    assert_eq!(refused(Builder::new().shift(4, 0, u32::MAX, 8).eq8(0, 0)), (Reject::OutOfRange, 1));
}

#[test]
fn refuses_contradictions_and_accepts_agreements() {
    assert_eq!(refused(Builder::new().eq8(3, 1).eq8(3, 2)).0, Reject::Contradiction);
    // Across sizes: the 16-bit field's low byte is byte 4.
    assert_eq!(refused(Builder::new().eq16(3, 0x0102).eq8(4, 0x03)).0, Reject::Contradiction);
    assert_eq!(
        refused(Builder::new().masked(1, 0, 0xf0, 0x40).masked(4, 0, 0x0f00_0000, 0x0600_0000).eq8(0, 0x45)).0,
        Reject::Contradiction
    );
    // Agreeing and disjoint masks on one byte are fine; duplicates collapse.
    let f = Builder::new()
        .masked(1, 0, 0xf0, 0x40)
        .masked(1, 0, 0x0f, 0x05)
        .eq16(0, 0x4500)
        .eq16(0, 0x4500)
        .build()
        .unwrap();
    assert_eq!(f.atoms().len(), 3);
    // The same byte at different levels is not a contradiction.
    assert!(Builder::new().eq8(3, 1).shift(1, 0, 0x0f, 1).eq8(3, 2).build().is_ok());
}

#[test]
fn end_marker_and_block_length() {
    let mut raw = Builder::new().eq8(0, 1).raw();
    assert!(verify(&raw).is_ok());
    raw.atoms[5] = RawAtom::eq(1, 0, 0xff, 0); // an atom after the end
    let e = verify(&raw).unwrap_err();
    assert_eq!((e.reason, e.at, e.code()), (Reject::Reserved, 5, reject::RESERVED));
    let mut bytes = Builder::new().eq8(0, 1).raw().to_bytes();
    bytes[FILTER_BYTES - 1] = 1; // a stray byte in the last (END) atom
    assert_eq!(decode(&bytes).unwrap_err().reason, Reject::Reserved);
    assert_eq!(decode(&bytes[..FILTER_BYTES - 1]).unwrap_err().reason, Reject::BadLength);
    assert_eq!(decode(&[]).unwrap_err().reason, Reject::BadLength);
    assert_eq!(decode(&[0; FILTER_BYTES]).unwrap_err().reason, Reject::Empty);
    // Sixteen atoms fill the block without an END; a seventeenth is refused.
    let full = (0..MAX_ATOMS as u16).fold(Builder::new(), |b, i| b.eq8(i, 1));
    assert!(full.build().is_ok());
    assert!(verify(&full.raw()).is_ok());
    assert_eq!(full.eq8(20, 1).build().unwrap_err().reason, Reject::BadLength);
    assert_eq!(op::END, 0);
    let _ = RawFilter::default();
}

#[test]
fn a_field_past_the_end_is_no_match() {
    let f = Builder::new().eq16(12, 0x0800).shift(1, 14, 0x0f, 4).eq16(16, 80).build().unwrap();
    let mut pkt = vec![0u8; 14 + 20 + 20];
    pkt[12..14].copy_from_slice(&[0x08, 0x00]);
    pkt[14] = 0x45;
    pkt[14 + 20 + 2..14 + 20 + 4].copy_from_slice(&80u16.to_be_bytes());
    assert!(f.matches(&pkt));
    for len in 0..14 + 20 + 4 {
        assert!(!f.matches(&pkt[..len]), "length {len}");
    }
    // IHL pointing past the end.
    pkt[14] = 0x4f;
    assert!(!f.matches(&pkt));
}
