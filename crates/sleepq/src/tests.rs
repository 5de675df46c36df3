//! The queue against a plain model: random inserts, removals, pops and
//! walks; every sleeper listed once; deadlines popped in order and only
//! when due; every watcher seen within `ceil(n / budget)` walks of
//! `budget` steps.

use super::SleepQueue;
use alloc::vec::Vec;
use oxok_abi::env_id::{EnvId, MAX_GENERATION};
use oxok_abi::layout::ENV_TABLE_ROWS;
use oxok_testrng::Rng;

const ROWS: usize = 64;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum M {
    Absent,
    Deadline(EnvId, u64),
    Watch(EnvId),
}

fn check(q: &SleepQueue, model: &[M]) {
    let listed = model.iter().filter(|m| **m != M::Absent).count();
    assert_eq!(q.len(), listed);
    for (row, m) in model.iter().enumerate() {
        match *m {
            M::Absent => assert_eq!(q.listed(row), None),
            M::Deadline(id, _) | M::Watch(id) => assert_eq!(q.listed(row), Some(id)),
        }
    }
    let min = model.iter().filter_map(|m| if let M::Deadline(_, d) = m { Some(*d) } else { None }).min();
    assert_eq!(q.next_deadline(), min);
}

/// Any id the codec can make (the queue keeps whatever id it is given).
fn any_id(rng: &mut Rng) -> EnvId {
    EnvId::of(1 + rng.below(u64::from(MAX_GENERATION)) as u32, rng.index(ENV_TABLE_ROWS))
}

/// The id of the first environment of `row`.
fn first(row: usize) -> EnvId {
    EnvId::of(1, row)
}

#[test]
fn random_operations_match_the_model() {
    for seed in 0..40 {
        let mut rng = Rng::new(seed);
        let mut q = SleepQueue::new(ROWS);
        let mut model = [M::Absent; ROWS];
        let mut now = 0;
        for _ in 0..4000 {
            let row = rng.index(ROWS);
            match rng.below(6) {
                0 | 1 => {
                    let id = any_id(&mut rng);
                    let d = now + rng.below(50);
                    assert!(q.insert(row, id, Some(d)));
                    model[row] = M::Deadline(id, d);
                }
                2 => {
                    let id = any_id(&mut rng);
                    assert!(q.insert(row, id, None));
                    model[row] = M::Watch(id);
                }
                3 => {
                    let want = match model[row] {
                        M::Absent => None,
                        M::Deadline(id, _) | M::Watch(id) => Some(id),
                    };
                    assert_eq!(q.remove(row), want);
                    model[row] = M::Absent;
                }
                4 => {
                    now += rng.below(5);
                    let mut last = 0;
                    while let Some((r, id)) = q.pop_due(now) {
                        let M::Deadline(mid, d) = model[r] else { panic!("popped a non-deadline row {r}") };
                        assert_eq!(mid, id);
                        assert!(d <= now && d >= last, "popped {d} at {now} after {last}");
                        last = d;
                        model[r] = M::Absent;
                    }
                }
                _ => {
                    if let Some((r, id)) = q.next_watch() {
                        assert_eq!(model[r], M::Watch(id));
                    } else {
                        assert!(!model.iter().any(|m| matches!(m, M::Watch(_))));
                    }
                }
            }
            check(&q, &model);
        }
    }
}

#[test]
fn out_of_range_rows_are_refused() {
    let mut q = SleepQueue::new(4);
    assert!(!q.insert(4, first(4), None));
    assert!(!q.insert(usize::MAX, first(0), Some(3)));
    assert_eq!(q.remove(99), None);
    assert_eq!(q.listed(99), None);
    assert!(q.is_empty());
}

#[test]
fn never_listed_twice() {
    let mut q = SleepQueue::new(8);
    for i in 0..100u64 {
        assert!(q.insert(3, first(3), if i % 2 == 0 { Some(i) } else { None }));
        assert_eq!(q.len(), 1);
    }
}

#[test]
fn a_tick_pops_only_what_is_due() {
    let mut q = SleepQueue::new(1024);
    for row in 0..1000 {
        assert!(q.insert(row, first(row), Some(1_000_000 + row as u64)));
    }
    assert!(q.insert(1000, first(1000), Some(5)));
    assert_eq!(q.pop_due(4), None);
    assert_eq!(q.pop_due(5), Some((1000, first(1000))));
    assert_eq!(q.pop_due(5), None);
    assert_eq!(q.len(), 1000);
}

#[test]
fn every_watcher_is_seen_within_its_share_of_walks() {
    const BUDGET: usize = 8;
    let mut rng = Rng::new(7);
    let mut q = SleepQueue::new(ROWS);
    for row in 0..40 {
        q.insert(row, first(row), None);
    }
    let mut last_seen = [0usize; ROWS];
    for tick in 1..500 {
        // Churn: some leave and others come while the walk goes on.
        let row = rng.index(ROWS);
        if rng.below(2) == 0 {
            q.remove(row);
        } else if q.listed(row).is_none() {
            q.insert(row, first(row), None);
            last_seen[row] = tick;
        }
        let n = q.watchers();
        for _ in 0..n.min(BUDGET) {
            if let Some((r, _)) = q.next_watch() {
                last_seen[r] = tick;
            }
        }
        let bound = ROWS.div_ceil(BUDGET) + 2;
        for (r, &seen) in last_seen.iter().enumerate() {
            if q.listed(r).is_some() {
                assert!(tick - seen <= bound, "row {r} unseen for {} ticks", tick - seen);
            }
        }
    }
}

#[test]
fn watchers_into_lists_each_once_without_growing() {
    let mut q = SleepQueue::new(16);
    for row in 0..10 {
        q.insert(row, EnvId::of(2, row), if row % 3 == 0 { Some(row as u64) } else { None });
    }
    let mut out = Vec::with_capacity(16);
    q.watchers_into(&mut out);
    assert_eq!(out.len(), 6);
    assert_eq!(out.capacity(), 16);
}

#[test]
fn a_watchers_device_flag_is_kept_and_replaced_with_its_entry() {
    let mut q = SleepQueue::new(ROWS);
    for row in 0..8 {
        assert!(q.insert_watcher(row, first(row), row % 2 == 0));
    }
    // Row 3 listed again, now a watcher devices concern; row 4 made a
    // deadline sleeper and row 6 a plain watcher (devices concern it).
    assert!(q.insert_watcher(3, first(3), true));
    assert!(q.insert(4, first(4), Some(9)));
    assert!(q.insert(6, first(6), None));
    let mut seen = [None; 8];
    for _ in 0..q.watchers() {
        let (row, id, devices) = q.next_watch_flagged().expect("a watcher");
        assert_eq!(id, first(row));
        assert!(seen[row].replace(devices).is_none(), "row {row} seen twice in one walk");
    }
    let want = [Some(true), Some(false), Some(true), Some(true), None, Some(false), Some(true), Some(false)];
    assert_eq!(seen, want);
}

#[test]
fn only_the_environment_table_and_the_clock_are_untouched_by_devices() {
    use super::untouched_by_devices as quiet;
    use oxok_abi::EnvEntry;
    use oxok_abi::layout::{CLOCK, ENV_TABLE, PAGE_SIZE, SYSINFO};
    use oxok_abi::net::NET_TABLE;
    let table_end = ENV_TABLE + (ENV_TABLE_ROWS * size_of::<EnvEntry>()) as u64;
    // A child's row, the last row's last word, the clock's ticks.
    assert!(quiet(ENV_TABLE + 64 * 3 + 8, 4));
    assert!(quiet(table_end - 8, 8));
    assert!(quiet(CLOCK + 16, 8));
    assert!(quiet(CLOCK + PAGE_SIZE - 1, 1));
    // Past either end, or straddling one; the network table, the system
    // page, user memory, and an address that wraps.
    assert!(!quiet(table_end, 1));
    assert!(!quiet(table_end - 4, 8));
    assert!(!quiet(ENV_TABLE - 8, 8));
    assert!(!quiet(CLOCK + PAGE_SIZE - 4, 8));
    assert!(!quiet(NET_TABLE + 64, 8));
    assert!(!quiet(SYSINFO, 8));
    assert!(!quiet(0x40_0000, 8));
    assert!(!quiet(u64::MAX - 3, 8));
}
