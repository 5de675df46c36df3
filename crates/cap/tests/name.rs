//! Names: construction, depth limits and the prefix order.

mod common;
use common::Rng;
#[allow(unused_imports)]
use common::RngExt as _;
use oxok_cap::{CapError, Kind, MAX_DEPTH, Name};

#[test]
fn root_is_empty_and_prefix_of_everything() {
    assert_eq!(Name::ROOT.depth(), 0);
    assert!(Name::ROOT.components().is_empty());
    assert!(Name::ROOT.is_root());
    assert_eq!(Name::ROOT.kind(), None);
    assert_eq!(Name::default(), Name::ROOT);
    let mut rng = Rng::new(1);
    for _ in 0..1000 {
        assert!(Name::ROOT.is_prefix_of(&rng.name()));
        assert!(Name::ROOT.is_prefix_of(&rng.resource()));
    }
}

#[test]
fn resource_names_have_documented_paths() {
    assert_eq!(Name::frame(42, 7).components(), &[1, 42, 7]);
    assert_eq!(Name::env(5, 2).components(), &[2, 5, 2]);
    assert_eq!(Name::slot(1, 9, 3).components(), &[3, 1, 9, 3]);
    assert_eq!(Name::kind_root(Kind::Frame).components(), &[1]);
    assert_eq!(Name::frame(42, 7).kind(), Some(Kind::Frame));
    assert_eq!(Name::env(5, 2).kind(), Some(Kind::Env));
    assert_eq!(Name::slot(1, 9, 3).kind(), Some(Kind::Slot));
    assert_eq!(Name::new(&[99]).unwrap().kind(), None);
}

#[test]
fn is_numbered_is_equality_with_a_numbered_name() {
    assert!(Name::env(5, 2).is_numbered(Kind::Env, 5, 2));
    assert!(Name::frame(42, 7).is_numbered(Kind::Frame, 42, 7));
    assert!(!Name::env(5, 2).is_numbered(Kind::Env, 5, 3));
    assert!(!Name::env(5, 2).is_numbered(Kind::Env, 6, 2));
    assert!(!Name::env(5, 2).is_numbered(Kind::Frame, 5, 2));
    // A longer or shorter name with the same first components is not it.
    assert!(!Name::new(&[2, 5, 2, 0]).unwrap().is_numbered(Kind::Env, 5, 2));
    assert!(!Name::new(&[2, 5]).unwrap().is_numbered(Kind::Env, 5, 0));
    assert!(!Name::kind_root(Kind::Env).is_numbered(Kind::Env, 0, 0));
    let mut rng = Rng::new(7);
    for _ in 0..1000 {
        let n = rng.name();
        if let [k, a, b] = *n.components()
            && let Some(kind) = Kind::from_number(k)
        {
            assert!(n.is_numbered(kind, a, b));
            assert_eq!(n, Name::new(&[k, a, b]).unwrap());
        }
        assert_eq!(n.is_numbered(Kind::Env, 1, 1), n == Name::env(1, 1));
    }
}

#[test]
fn kind_numbers_are_stable() {
    let expect = [
        (Kind::Frame, 1),
        (Kind::Env, 2),
        (Kind::Slot, 3),
        (Kind::Filter, 4),
        (Kind::Ring, 5),
        (Kind::Extent, 6),
        (Kind::Console, 7),
        (Kind::Principal, 8),
    ];
    for (kind, n) in expect {
        assert_eq!(kind.number(), n);
        assert_eq!(Kind::from_number(n), Some(kind));
        assert_eq!(Name::kind_root(kind).kind(), Some(kind));
    }
    for n in [0, 9, 10, u64::MAX] {
        assert_eq!(Kind::from_number(n), None);
    }
    assert_eq!(Kind::ALL.len(), expect.len());
}

#[test]
fn kind_root_covers_its_kind_only() {
    let frames = Name::kind_root(Kind::Frame);
    assert!(frames.is_prefix_of(&Name::frame(0, 0)));
    assert!(frames.is_prefix_of(&Name::frame(u64::MAX, u64::MAX)));
    assert!(!frames.is_prefix_of(&Name::env(0, 0)));
    assert!(!frames.is_prefix_of(&Name::slot(0, 0, 0)));
    assert!(!frames.is_prefix_of(&Name::ROOT));
}

#[test]
fn stale_generation_is_not_covered() {
    let old = Name::frame(42, 6);
    let new = Name::frame(42, 7);
    assert!(!old.is_prefix_of(&new));
    assert!(!new.is_prefix_of(&old));
    assert!(!Name::env(3, 0).is_prefix_of(&Name::env(3, 1)));
    assert!(!Name::slot(0, 1, 0).is_prefix_of(&Name::slot(0, 1, 1)));
}

#[test]
fn same_numbers_different_kind_do_not_match() {
    let f = Name::frame(5, 1);
    let e = Name::env(5, 1);
    assert_ne!(f, e);
    assert!(!f.is_prefix_of(&e));
    assert!(!e.is_prefix_of(&f));
    assert!(!Name::slot(5, 1, 0).is_prefix_of(&Name::frame(5, 1)));
}

#[test]
fn push_and_extend_stop_at_max_depth() {
    let mut n = Name::ROOT;
    for i in 0..MAX_DEPTH as u64 {
        n = n.push(i).unwrap();
        assert_eq!(n.depth(), i as usize + 1);
    }
    assert_eq!(n.push(0), Err(CapError::TooDeep));
    assert_eq!(n.push(u64::MAX), Err(CapError::TooDeep));
    assert_eq!(n.extend(&[]), Ok(n));
    assert_eq!(n.extend(&[1]), Err(CapError::TooDeep));

    let f = Name::frame(1, 1);
    assert_eq!(f.extend(&[0; MAX_DEPTH - 3]).unwrap().depth(), MAX_DEPTH);
    assert_eq!(f.extend(&[0; MAX_DEPTH - 2]), Err(CapError::TooDeep));
    assert_eq!(f.extend(&[0; 1000]), Err(CapError::TooDeep));
    assert_eq!(Name::new(&[7; MAX_DEPTH + 1]), Err(CapError::TooDeep));
    assert_eq!(Name::new(&[7; MAX_DEPTH]).unwrap().depth(), MAX_DEPTH);
    assert_eq!(Name::new(&[]), Ok(Name::ROOT));
}

#[test]
fn push_matches_extend_and_new() {
    let mut rng = Rng::new(2);
    for _ in 0..1000 {
        let a = rng.name();
        let c = rng.next();
        match a.push(c) {
            Ok(b) => {
                assert_eq!(b.depth(), a.depth() + 1);
                assert_eq!(b.components().last(), Some(&c));
                assert_eq!(b, a.extend(&[c]).unwrap());
                assert_eq!(b, Name::new(b.components()).unwrap());
                assert_eq!(b.parent(), Some(a));
                assert!(a.is_prefix_of(&b));
                assert!(!b.is_prefix_of(&a));
            }
            Err(e) => {
                assert_eq!(e, CapError::TooDeep);
                assert_eq!(a.depth(), MAX_DEPTH);
            }
        }
    }
}

#[test]
fn prefix_is_a_partial_order() {
    let mut rng = Rng::new(3);
    for _ in 0..20_000 {
        let (a, b, c) = (rng.name(), rng.name(), rng.name());
        assert!(a.is_prefix_of(&a), "reflexive");
        if a.is_prefix_of(&b) && b.is_prefix_of(&a) {
            assert_eq!(a, b, "antisymmetric");
        }
        if a.is_prefix_of(&b) && b.is_prefix_of(&c) {
            assert!(a.is_prefix_of(&c), "transitive");
        }
        // Definition check against the component slices.
        assert_eq!(a.is_prefix_of(&b), a.depth() <= b.depth() && b.components()[..a.depth()] == *a.components());
    }
}

#[test]
fn equality_is_path_equality() {
    // Trailing zero components are real components, not padding.
    let a = Name::new(&[1, 0]).unwrap();
    let b = Name::new(&[1]).unwrap();
    let c = Name::new(&[1, 0, 0]).unwrap();
    assert_ne!(a, b);
    assert_ne!(a, c);
    assert!(b.is_prefix_of(&a) && a.is_prefix_of(&c));
    assert!(!a.is_prefix_of(&b));
    assert_eq!(a.parent(), Some(b));
}

#[test]
fn display() {
    assert_eq!(Name::ROOT.to_string(), "/");
    assert_eq!(Name::frame(42, 7).to_string(), "/1/42/7");
    assert_eq!(format!("{:?}", Name::env(1, 2)), "Name(/2/1/2)");
}

#[test]
fn constructors_are_const() {
    const F: Name = Name::frame(1, 2);
    const PUSHED: Result<Name, CapError> = Name::ROOT.push(1);
    assert_eq!(F.depth(), 3);
    assert_eq!(PUSHED.unwrap().components(), &[1]);
}

#[test]
fn physical_names_have_their_kind_number_and_generation() {
    for (name, kind) in
        [(Name::frame(7, 3), Kind::Frame), (Name::env(7, 3), Kind::Env), (Name::filter(7, 3), Kind::Filter)]
    {
        assert_eq!(name.kind(), Some(kind));
        assert_eq!(name.components(), &[kind.number(), 7, 3]);
        assert_eq!(Name::new(&[kind.number(), 7, 3]), Ok(name));
    }
}
