//! The lists against a model (a vector per owner), under random operations.

use oxok_ownlist::{Head, Link, Lists, Refused};
use oxok_testrng::Rng;

const ITEMS: usize = 64;
const OWNERS: usize = 5;

fn check(lists: &Lists<'_>, model: &[Vec<usize>]) {
    for (owner, want) in model.iter().enumerate() {
        assert_eq!(lists.len(owner), want.len());
        assert_eq!(lists.is_empty(owner), want.is_empty());
        assert_eq!(lists.first(owner), want.first().copied());
        assert_eq!(lists.iter(owner).collect::<Vec<_>>(), *want);
        let back: Vec<usize> = want.iter().rev().copied().collect();
        assert_eq!(lists.iter_rev(owner).collect::<Vec<_>>(), back);
    }
    for item in 0..ITEMS {
        let want = model.iter().position(|l| l.contains(&item));
        assert_eq!(lists.owner(item), want, "item {item}");
    }
}

#[test]
fn random_adds_and_removes_match_the_model() {
    for seed in 1..40 {
        let mut rng = Rng::new(seed);
        let mut links = [Link::UNLISTED; ITEMS];
        let mut heads = [Head::EMPTY; OWNERS];
        let mut lists = Lists::new(&mut links, &mut heads);
        let mut model: Vec<Vec<usize>> = vec![Vec::new(); OWNERS];
        for _ in 0..400 {
            let item = rng.index(ITEMS);
            if rng.chance(2) {
                let owner = rng.index(OWNERS);
                let listed = model.iter().any(|l| l.contains(&item));
                let got = lists.add(owner, item);
                if listed {
                    assert_eq!(got, Err(Refused::Listed));
                } else {
                    assert_eq!(got, Ok(()));
                    model[owner].push(item);
                }
            } else {
                let was = model.iter().position(|l| l.contains(&item));
                assert_eq!(lists.remove(item), was);
                if let Some(o) = was {
                    model[o].retain(|&i| i != item);
                }
            }
            check(&lists, &model);
        }
    }
}

#[test]
fn out_of_range_is_refused_and_changes_nothing() {
    let mut links = [Link::UNLISTED; 4];
    let mut heads = [Head::EMPTY; 2];
    let mut lists = Lists::new(&mut links, &mut heads);
    assert_eq!(lists.add(2, 0), Err(Refused::OutOfRange));
    assert_eq!(lists.add(0, 4), Err(Refused::OutOfRange));
    assert_eq!(lists.remove(4), None);
    assert_eq!(lists.remove(0), None);
    assert_eq!(lists.owner(9), None);
    assert_eq!(lists.len(7), 0);
    assert_eq!(lists.iter(7).count(), 0);
    assert_eq!(lists.add(1, 3), Ok(()));
    assert_eq!(lists.iter(1).collect::<Vec<_>>(), [3]);
}

#[test]
fn removing_the_first_moves_the_head_on() {
    let mut links = [Link::UNLISTED; 4];
    let mut heads = [Head::EMPTY; 1];
    let mut lists = Lists::new(&mut links, &mut heads);
    for i in [2, 0, 3] {
        lists.add(0, i).unwrap();
    }
    assert_eq!(lists.remove(2), Some(0));
    assert_eq!(lists.first(0), Some(0));
    assert_eq!(lists.iter_rev(0).collect::<Vec<_>>(), [3, 0]);
    assert_eq!(lists.remove(3), Some(0));
    assert_eq!(lists.remove(0), Some(0));
    assert!(lists.is_empty(0));
    assert_eq!(lists.first(0), None);
}
