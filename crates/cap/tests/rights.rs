//! Rights: the bitset and its laws.

mod common;
#[allow(unused_imports)]
use common::RngExt as _;
use common::all_rights;
use oxok_cap::Rights;

#[test]
fn from_bits_accepts_exactly_known_bits() {
    for bits in 0..=u8::MAX {
        let r = Rights::from_bits(bits);
        if bits & !0b11_0111 == 0 {
            assert_eq!(r.map(Rights::bits), Some(bits));
        } else {
            assert_eq!(r, None, "bits {bits:#x} accepted");
        }
    }
}

#[test]
fn named_rights_are_distinct_bits() {
    let named = [Rights::READ, Rights::WRITE, Rights::GRANT, Rights::CALL, Rights::EXECUTE];
    for (i, a) in named.iter().enumerate() {
        assert_eq!(a.bits().count_ones(), 1);
        for b in &named[i + 1..] {
            assert!(a.intersection(*b).is_empty());
        }
    }
    assert_eq!(Rights::NONE.bits(), 0);
    assert!(Rights::NONE.is_empty());
    assert_eq!(Rights::default(), Rights::NONE);
}

#[test]
fn lattice_laws() {
    for a in all_rights() {
        assert!(a.contains(a));
        assert!(a.contains(Rights::NONE));
        assert!(Rights::ALL.contains(a));
        assert_eq!(a.union(Rights::NONE), a);
        assert_eq!(a.intersection(Rights::ALL), a);
        for b in all_rights() {
            assert_eq!(a.union(b), b.union(a));
            assert_eq!(a.intersection(b), b.intersection(a));
            assert_eq!(a | b, a.union(b));
            assert_eq!(a & b, a.intersection(b));
            assert!(a.union(b).contains(a));
            assert!(a.contains(a.intersection(b)));
            assert_eq!(a.contains(b), a.union(b) == a);
            assert_eq!(a.contains(b), a.intersection(b) == b);
            assert!(!a.difference(b).contains(b) || b.is_empty());
            assert_eq!(a.difference(b).union(a.intersection(b)), a);
            if a.contains(b) && b.contains(a) {
                assert_eq!(a, b);
            }
            for c in all_rights() {
                if a.contains(b) && b.contains(c) {
                    assert!(a.contains(c));
                }
            }
        }
    }
}

#[test]
fn contains_is_superset_not_overlap() {
    let rw = Rights::READ | Rights::WRITE;
    assert!(rw.contains(Rights::READ));
    assert!(!Rights::READ.contains(rw));
    assert!(!rw.contains(Rights::GRANT));
    assert!(!rw.contains(Rights::READ | Rights::GRANT));
}
