//! The neighbour table against a model, and a hostile writer's pages.

use core::sync::atomic::{AtomicU64, Ordering};
use oxok_neigh::table::{self, Answer, CAPACITY, MAGIC, WORDS, Writer};
use oxok_testrng::Rng;
use std::collections::BTreeMap;

fn page() -> Vec<AtomicU64> {
    (0..WORDS).map(|_| AtomicU64::new(0)).collect()
}

fn mac(r: &mut Rng) -> [u8; 6] {
    let mut m = [0u8; 6];
    m.iter_mut().for_each(|b| *b = r.byte());
    m[0] &= 0xfe;
    m[5] |= 1;
    m
}

#[test]
fn every_learned_address_is_found_until_replaced() {
    let p = page();
    let w = Writer::format(&p).expect("a page");
    let mut r = Rng::new(7);
    let mut model: BTreeMap<[u8; 4], [u8; 6]> = BTreeMap::new();
    // Fewer addresses than the table holds: nothing is replaced.
    let ips: Vec<[u8; 4]> = (0..CAPACITY as u32).map(|i| (0x0a00_0000 + i + 1).to_be_bytes()).collect();
    for _ in 0..20_000 {
        let ip = *r.pick(&ips);
        let m = mac(&mut r);
        let changed = w.learn(ip, m);
        assert_eq!(changed, model.get(&ip) != Some(&m));
        model.insert(ip, m);
        let probe = *r.pick(&ips);
        let want = model.get(&probe).map_or(Answer::Unknown, |&m| Answer::At(m));
        assert_eq!(table::lookup(&p, probe), want);
    }
    assert_eq!(w.len(), model.len());
}

#[test]
fn a_full_table_replaces_its_oldest_entries() {
    let p = page();
    let w = Writer::format(&p).expect("a page");
    let ip = |i: u32| (0x0a00_0000 + i).to_be_bytes();
    let m = |i: u32| [2, 0, 0, 0, (i >> 8) as u8, i as u8];
    for i in 1..=(CAPACITY as u32 + 10) {
        assert!(w.learn(ip(i), m(i)));
    }
    assert_eq!(w.len(), CAPACITY);
    for i in 1..=10 {
        assert_eq!(table::lookup(&p, ip(i)), Answer::Unknown, "entry {i} replaced");
    }
    for i in 11..=(CAPACITY as u32 + 10) {
        assert_eq!(table::lookup(&p, ip(i)), Answer::At(m(i)));
    }
}

#[test]
fn addresses_no_neighbour_has_are_not_learned() {
    let p = page();
    let w = Writer::format(&p).expect("a page");
    assert!(!w.learn([10, 0, 2, 2], [0xff; 6]));
    assert!(!w.learn([10, 0, 2, 2], [1, 0, 0, 0, 0, 1]));
    assert!(!w.learn([10, 0, 2, 2], [0; 6]));
    assert!(!w.learn([0; 4], [2, 0, 0, 0, 0, 1]));
    assert!(w.is_empty());
}

#[test]
fn a_hostile_page_is_bounded_and_checked() {
    let p = page();
    assert_eq!(table::lookup(&p, [10, 0, 2, 2]), Answer::NotATable);
    assert_eq!(table::lookup(&p[..WORDS - 1], [10, 0, 2, 2]), Answer::NotATable);
    let w = Writer::format(&p).expect("a page");
    w.learn([10, 0, 2, 2], [2, 1, 1, 1, 1, 1]);
    // A writer mid-change (odd version) for every try: busy, not a guess.
    p[1].fetch_add(1, Ordering::Relaxed);
    assert_eq!(table::lookup(&p, [10, 0, 2, 2]), Answer::Busy);
    p[1].fetch_add(1, Ordering::Relaxed);
    assert_eq!(table::lookup(&p, [10, 0, 2, 2]), Answer::At([2, 1, 1, 1, 1, 1]));
    // A count past the page is bounded by the capacity; a multicast
    // address planted in an entry is not an answer.
    p[2].store(u64::MAX, Ordering::Relaxed);
    p[5].store(u64::from_le_bytes([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0]), Ordering::Relaxed);
    assert_eq!(table::lookup(&p, [10, 0, 2, 2]), Answer::Unknown);
    assert_eq!(table::lookup(&p, [10, 0, 2, 99]), Answer::Unknown);
    // Random words: never a panic, never a non-unicast answer.
    let mut r = Rng::new(11);
    for _ in 0..2_000 {
        for w in p.iter().skip(1) {
            w.store(r.next(), Ordering::Relaxed);
        }
        p[0].store(MAGIC, Ordering::Relaxed);
        p[1].store(r.next() & !1, Ordering::Relaxed);
        let ip = (r.next() as u32).to_be_bytes();
        if let Answer::At(m) = table::lookup(&p, ip) {
            assert!(table::unicast(m));
        }
    }
}
