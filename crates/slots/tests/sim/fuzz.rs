//! Random operations, including garbage indices and ids: no panics, and
//! the scheduler's invariants hold throughout.

use crate::env as id;
use crate::table::Table;
use oxok_abi::env_id::{EnvId, MAX_GENERATION};
use oxok_abi::layout::ENV_TABLE_ROWS;
use oxok_slots::{Config, End, Placement, Reason, Scheduler, Step, TimeSlot};

use oxok_testrng::Rng;

/// A slot that is often garbage: any u64, or a small in-range one.
fn any_index(rng: &mut Rng) -> TimeSlot {
    TimeSlot(match rng.below(4) {
        0 => rng.next() as usize,
        _ => rng.below(10) as usize,
    })
}

const IDS: [EnvId; 6] = [id(0x400), id(0x800), id(0xc00), id(0x1000), id(0x1400), id(0x1800)];

/// One of [`IDS`], or (one time in five) any id the codec can make, which
/// no environment of the table has (but by rare chance).
fn env(rng: &mut Rng) -> EnvId {
    match rng.below(10) {
        0 | 1 => EnvId::of(1 + rng.below(u64::from(MAX_GENERATION)) as u32, rng.index(ENV_TABLE_ROWS)),
        _ => IDS[rng.below(IDS.len() as u64) as usize],
    }
}

fn placement(rng: &mut Rng) -> Placement {
    match rng.below(4) {
        0 => Placement::Any,
        1 => Placement::At(any_index(rng)),
        2 => Placement::Near(any_index(rng)),
        _ => Placement::Spread,
    }
}

#[test]
fn random_operations_keep_invariants() {
    for seed in 1..=24u64 {
        let mut rng = Rng::new(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let cfg = Config {
            ticks_per_slot: rng.below(5) as u32,
            grace_ticks: rng.below(3) as u32,
            critical_grace_ticks: rng.below(4) as u32,
            max_strikes: rng.below(4) as u32,
        };
        let s_len = cfg.sanitized().ticks_per_slot;
        let mut t = Table::with(&IDS);
        let mut s = Scheduler::<8, 4>::new(cfg);
        let mut switches = 0;
        for _ in 0..20_000 {
            let before = s.running();
            let step = match rng.below(16) {
                0 => {
                    let e = env(&mut rng);
                    if t.entries.iter().any(|x| x.id == e) || rng.below(4) == 0 {
                        let _ = s.vector.alloc(e, placement(&mut rng));
                    }
                    Step::Continue
                }
                1 => {
                    let _ = s.vector.free(any_index(&mut rng), env(&mut rng));
                    Step::Continue
                }
                2 => {
                    let (from, to) = (env(&mut rng), env(&mut rng));
                    let _ = s.vector.give(any_index(&mut rng), from, to);
                    Step::Continue
                }
                3 => {
                    let _ = s.spare.request(env(&mut rng));
                    Step::Continue
                }
                4 => {
                    s.spare.cancel(env(&mut rng));
                    Step::Continue
                }
                5 | 6 => {
                    let who = match before {
                        Some(e) if rng.below(4) != 0 => e,
                        _ => env(&mut rng),
                    };
                    let to = if rng.below(2) == 0 { Some(env(&mut rng)) } else { None };
                    s.yielded(who, to, &mut t)
                }
                7 => {
                    let e = env(&mut rng);
                    if let Some(x) = t.entries.iter_mut().find(|x| x.id == e) {
                        x.runnable = !x.runnable;
                    }
                    Step::Continue
                }
                8 => {
                    let e = env(&mut rng);
                    if let Some(x) = t.entries.iter_mut().find(|x| x.id == e) {
                        x.critical = !x.critical;
                    }
                    Step::Continue
                }
                9 if rng.below(50) == 0 => {
                    let e = env(&mut rng);
                    t.remove(e);
                    s.remove(e, &mut t)
                }
                _ => s.tick(&mut t),
            };
            match step {
                Step::Continue => {}
                Step::SlotEnd { env } => assert_eq!(before, Some(env)),
                Step::Switch(sw) => {
                    switches += 1;
                    if let Some(out) = sw.out {
                        assert_eq!(before, Some(out.env));
                        if let End::Destroy { .. } = out.end {
                            assert_eq!(s.vector.count_owned(out.env), 0);
                            t.remove(out.env);
                            assert_eq!(s.remove(out.env, &mut t), Step::Continue);
                        }
                    }
                    assert_eq!(sw.decision.run, s.running());
                    assert_eq!(sw.slot, s.slot());
                    if let Some(e) = sw.decision.run {
                        assert!(t.entries.iter().any(|x| x.id == e && x.runnable), "only runnable envs start");
                        assert!(sw.decision.budget >= 1);
                        if sw.decision.reason == Reason::Owner {
                            assert_eq!(s.vector.owner(sw.slot), Some(e));
                        }
                    }
                }
            }
            assert!(s.slot().0 < 8);
            assert!(s.remaining() <= s_len);
            if let Some(e) = s.running() {
                assert!(t.entries.iter().any(|x| x.id == e), "running env exists");
            }
            let owned: usize = IDS.iter().map(|&e| s.vector.count_owned(e)).sum();
            let stray = (0..8).filter(|&i| s.vector.owner(TimeSlot(i)).is_some_and(|o| !IDS.contains(&o))).count();
            assert_eq!(s.vector.free_count() + owned + stray, 8);
            assert!(s.vector.owner(TimeSlot(usize::MAX)).is_none());
        }
        assert!(switches > 100, "seed {seed}: the scheduler moved ({switches} switches)");
    }
}
