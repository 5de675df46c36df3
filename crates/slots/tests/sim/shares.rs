//! CPU shares follow slot ownership.

use crate::world::{Behaviour, Sim, assert_ratio};
use oxok_abi::env_id::EnvId;
use oxok_slots::Ledger as _;
use oxok_slots::{Config, Placement, TimeSlot};

const S: u64 = Config::DEFAULT.ticks_per_slot as u64;

/// Two spinners owning 3:1 slots get 3:1 of the CPU within ±5% over 1000
/// slots; neither runs in a slot it does not own; unowned slots idle.
#[test]
fn spinners_3_to_1_spread() {
    let mut sim = Sim::<32>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 3, Placement::Spread);
    let b = sim.add_owning(Behaviour::Spinner, 1, Placement::Spread);
    sim.start();
    sim.run(1000 * S);
    assert_ratio(sim.ticks(a), sim.ticks(b), 3.0, 0.05);
    sim.assert_no_theft(&[]);
    // 28 of 32 slots are unowned and nobody asked for spare time.
    assert_ratio(sim.idle_ticks(), sim.ticks(a) + sim.ticks(b), 7.0, 0.05);
    assert_eq!(sim.env(a).ledger.stats().overruns, 0);
}

/// Same with the vector full and adjacent slots: the owner of a run of
/// adjacent slots gets one slot-start and one slot-end upcall per run.
#[test]
fn spinners_3_to_1_adjacent() {
    let mut sim = Sim::<4>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 1, Placement::Any);
    sim.sched.vector.alloc(a, Placement::Near(TimeSlot(0))).unwrap();
    sim.sched.vector.alloc(a, Placement::Near(TimeSlot(1))).unwrap();
    let b = sim.add_owning(Behaviour::Spinner, 1, Placement::Any);
    assert_eq!(sim.sched.vector.owned_by(a).collect::<Vec<_>>(), [TimeSlot(0), TimeSlot(1), TimeSlot(2)]);
    sim.start();
    sim.run(1000 * S);
    assert_ratio(sim.ticks(a), sim.ticks(b), 3.0, 0.05);
    assert_eq!(sim.idle_ticks(), 0);
    sim.assert_no_theft(&[]);
    let rounds = sim.sched.header().rounds;
    assert!(sim.env(a).turns.abs_diff(rounds) <= 1, "one turn per round: {} vs {rounds}", sim.env(a).turns);
    assert!(sim.env(a).slot_ends.abs_diff(rounds) <= 1);
    assert!(sim.env(a).ledger.stats().slots >= 3 * rounds - 3, "each merged slot still counts");
}

/// A larger mix: shares are proportional to ownership for everyone.
#[test]
fn shares_proportional() {
    let mut sim = Sim::<32>::new(Config::DEFAULT);
    let owners: Vec<(EnvId, usize)> =
        [8, 4, 2, 1].iter().map(|&n| (sim.add_owning(Behaviour::Spinner, n, Placement::Spread), n)).collect();
    sim.start();
    sim.run(1000 * S);
    let (base, base_n) = owners[3];
    for &(env, n) in &owners[..3] {
        assert_ratio(sim.ticks(env), sim.ticks(base), (n / base_n) as f64, 0.05);
    }
    sim.assert_no_theft(&[]);
}

/// An environment that yields early (polite) gets less than its share, and
/// nobody else gets its slots; the vector simply moves on sooner.
#[test]
fn early_yield_moves_on() {
    let mut sim = Sim::<4>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 2, Placement::Spread);
    let p = sim.add_owning(Behaviour::Polite(1), 2, Placement::Spread);
    sim.start();
    sim.run(1000 * S);
    assert_ratio(sim.ticks(a), sim.ticks(p), S as f64, 0.05);
    assert_eq!(sim.idle_ticks(), 0);
    sim.assert_no_theft(&[]);
}
