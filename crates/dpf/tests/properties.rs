//! Property tests against brute force: random filters installed (some as
//! refinements), removed, and random or constructed packets.

mod common;

use common::*;
use oxok_dpf::{Dpf, Filter, FilterId, InstallError};

/// The filters accepting `pkt`, each with its depth in its refinement chain.
fn brute(dpf: &Dpf<u32>, pkt: &[u8]) -> Vec<(FilterId, u32)> {
    dpf.iter()
        .filter(|i| i.filter.matches(pkt))
        .map(|i| {
            let mut d = 0;
            let mut r = i.refines;
            while let Some(p) = r {
                d += 1;
                r = dpf.get(p).unwrap().refines;
            }
            (i.id, d)
        })
        .collect()
}

fn is_ancestor(dpf: &Dpf<u32>, a: FilterId, mut of: FilterId) -> bool {
    while let Some(p) = dpf.get(of).unwrap().refines {
        if p == a {
            return true;
        }
        of = p;
    }
    false
}

/// The invariants for one packet: the accepting filters form one refinement
/// chain, and the trie picks the deepest of them.
fn check_packet(dpf: &Dpf<u32>, owners: &[(FilterId, u32)], pkt: &[u8]) {
    let m = brute(dpf, pkt);
    for (i, (a, _)) in m.iter().enumerate() {
        for (b, _) in &m[i + 1..] {
            assert!(
                is_ancestor(dpf, *a, *b) || is_ancestor(dpf, *b, *a),
                "two unrelated filters accept {pkt:02x?}:\n{:?}\n{:?}",
                dpf.get(*a).unwrap().filter,
                dpf.get(*b).unwrap().filter
            );
        }
    }
    let want = m.iter().max_by_key(|(_, d)| *d).map(|(id, _)| *id);
    let got = dpf.demux(pkt).map(|(id, owner)| {
        assert!(owners.contains(&(id, *owner)), "owner travels with the filter");
        id
    });
    assert_eq!(got, want, "packet {pkt:02x?}");
}

fn installed(dpf: &Dpf<u32>) -> Vec<(FilterId, Filter)> {
    dpf.iter().map(|i| (i.id, *i.filter)).collect()
}

#[test]
fn trie_demux_equals_brute_force() {
    let mut rng = Rng::new(0xd9f);
    let mut accepted = 0;
    let mut refined = 0;
    for round in 0..300 {
        let mut dpf: Dpf<u32> = Dpf::new(64, round);
        let mut raws: Vec<(FilterId, Vec<oxok_abi::filter::RawAtom>)> = Vec::new();
        let mut owners: Vec<(FilterId, u32)> = Vec::new();
        for _ in 0..40 {
            let live = installed(&dpf);
            let try_refine = !raws.is_empty() && rng.chance(2);
            let (atoms, f, refines) = if try_refine {
                let (id, atoms) = rng.pick(&raws).clone();
                match narrower(&mut rng, &atoms) {
                    Some(f) => (atoms, f, Some(id)),
                    None => continue,
                }
            } else {
                let (atoms, f) = filter(&mut rng);
                (atoms, f, None)
            };
            let owner = 1000 + rng.below(1000) as u32;
            match dpf.insert(f, owner, refines) {
                Ok(id) => {
                    accepted += 1;
                    refined += refines.is_some() as u32;
                    owners.push((id, owner));
                    let a = if refines.is_some() { f.atoms().iter().map(|x| x.to_raw()).collect() } else { atoms };
                    raws.push((id, a));
                }
                Err(InstallError::Overlap { with }) => assert!(live.iter().any(|(id, _)| *id == with)),
                Err(InstallError::NotRefinement) => assert!(refines.is_some()),
                Err(e) => panic!("unexpected {e:?}"),
            }
            // Occasionally remove one.
            if rng.chance(6) && !raws.is_empty() {
                let i = rng.index(raws.len());
                let (id, _) = raws.swap_remove(i);
                assert!(dpf.remove(id).is_some());
                assert!(dpf.remove(id).is_none(), "a stale id names nothing");
            }
            let live = installed(&dpf);
            for _ in 0..20 {
                check_packet(&dpf, &owners, &packet(&mut rng));
            }
            for _ in 0..4 {
                if live.is_empty() {
                    break;
                }
                let (_, a) = *rng.pick(&live);
                let (_, b) = *rng.pick(&live);
                for p in satisfying(&mut rng, &[&a, &b]) {
                    check_packet(&dpf, &owners, &p);
                }
            }
        }
        // Removing everything leaves only the root: nothing leaks.
        for (id, _) in installed(&dpf) {
            dpf.remove(id).unwrap();
        }
        assert!(dpf.is_empty());
        assert!(dpf.node_count() <= 1, "{} nodes left", dpf.node_count());
    }
    assert!(accepted > 1000, "only {accepted} filters accepted");
    assert!(refined > 100, "only {refined} refinements accepted");
}

#[test]
fn accepted_pairs_never_share_a_packet() {
    let mut rng = Rng::new(0x0e1a9);
    let mut disjoint = 0;
    for round in 0..20_000 {
        let (_, a) = filter(&mut rng);
        let (_, b) = filter(&mut rng);
        let mut dpf: Dpf<u32> = Dpf::new(4, round);
        dpf.insert(a, 1, None).unwrap();
        let ok = dpf.insert(b, 2, None).is_ok();
        // Constructed packets: satisfy a, then b (and the other way round).
        for p in satisfying(&mut rng, &[&a, &b]).iter().chain(satisfying(&mut rng, &[&b]).iter()) {
            if ok {
                assert!(!(a.matches(p) && b.matches(p)), "{a:?}\n{b:?}\naccept {p:02x?}");
            }
        }
        if a == b {
            assert!(!ok, "duplicate accepted");
        }
        disjoint += ok as u32;
    }
    assert!(disjoint > 2000, "the check is too conservative: {disjoint}");
}

#[test]
fn refinements_are_subsets() {
    let mut rng = Rng::new(0x5b5e7);
    let mut accepted = 0;
    for round in 0..20_000 {
        let (atoms, wide) = filter(&mut rng);
        let narrow = if rng.chance(3) {
            filter(&mut rng).1
        } else {
            match narrower(&mut rng, &atoms) {
                Some(f) => f,
                None => continue,
            }
        };
        let mut dpf: Dpf<u32> = Dpf::new(4, round);
        let w = dpf.insert(wide, 1, None).unwrap();
        match dpf.insert(narrow, 2, Some(w)) {
            Ok(n) => {
                accepted += 1;
                assert_ne!(narrow, wide);
                for p in satisfying(&mut rng, &[&narrow]) {
                    if narrow.matches(&p) {
                        assert!(wide.matches(&p), "{narrow:?} not within {wide:?}: {p:02x?}");
                        assert_eq!(dpf.demux(&p).map(|(id, _)| id), Some(n), "the most specific wins");
                    }
                }
            }
            Err(e) => assert_eq!(e, InstallError::NotRefinement),
        }
        // The same filter again as a refinement of itself is never strict.
        assert_eq!(dpf.insert(wide, 3, Some(w)), Err(InstallError::NotRefinement));
    }
    assert!(accepted > 3000, "only {accepted} refinements accepted");
}
