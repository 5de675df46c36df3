//! Hostile environments: ignoring the slot end, abusing the critical
//! section, overrunning — charged, bounded, destroyed; the others keep
//! their share.

use crate::world::{Behaviour, Sim, assert_ratio};
use oxok_slots::Ledger as _;
use oxok_slots::{Config, End, Placement, Reason, TimeSlot, Vacancy};

const S: u64 = Config::DEFAULT.ticks_per_slot as u64;

/// An environment that ignores slot-end upcalls: each time it is preempted
/// at the end of the grace period, charged the excess tick (its next slot is
/// one tick shorter), and on the third consecutive overrun destroyed; its
/// slot is freed. The others get exactly their slots' worth throughout.
#[test]
fn ignorer_charged_then_destroyed() {
    let mut sim = Sim::<4>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 1, Placement::At(TimeSlot(0)));
    let d = sim.add_owning(Behaviour::Ignorer, 1, Placement::At(TimeSlot(1)));
    let b = sim.add_owning(Behaviour::Spinner, 1, Placement::At(TimeSlot(2)));
    sim.start();
    sim.run(1000 * S);
    let ends = &sim.env(d).ends;
    assert_eq!(
        ends[..],
        [
            End::Overrun { excess: 1, strikes: 1 },
            End::Overrun { excess: 1, strikes: 2 },
            End::Destroy { excess: 1, strikes: 3 },
        ]
    );
    assert_eq!(sim.destroyed, [(d, End::Destroy { excess: 1, strikes: 3 })]);
    // S + grace, then (S - 1 debt) + grace twice.
    assert_eq!(sim.ticks(d), (S + 1) + 2 * S);
    assert_eq!(sim.env(d).slot_ends, 3, "it was told each time");
    assert_eq!(sim.sched.vector.owner(TimeSlot(1)), None, "its slot was freed");
    assert_ne!(sim.sched.vector.generation(TimeSlot(1)), Some(1), "and its capability went stale");
    for env in [a, b] {
        let st = sim.env(env).ledger.stats();
        assert_eq!(sim.ticks(env), st.slots * S, "every turn of {env} had its full slot");
        assert_eq!(st.overruns, 0);
    }
    assert_ratio(sim.ticks(a), sim.ticks(b), 1.0, 0.05);
    sim.assert_no_theft(&[]);
    let msg = format!("{}", End::Destroy { excess: 1, strikes: 3 });
    assert!(msg.contains("3 times"), "{msg}");
}

/// The hostile mix of the issue, over 1000 slots: 3:1 spinners keep 3:1,
/// the ignorer is charged then destroyed, the critical-section hog is
/// deferred (bounded) and charged back to exactly its share, a flaky
/// environment is charged but never reaches three strikes, a polite one
/// and a sleeper just get less.
#[test]
fn hostile_mix() {
    let mut sim = Sim::<32>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 6, Placement::Spread);
    let b = sim.add_owning(Behaviour::Spinner, 2, Placement::Spread);
    let hog = sim.add_owning(Behaviour::CriticalHog, 4, Placement::Spread);
    let ign = sim.add_owning(Behaviour::Ignorer, 4, Placement::Spread);
    let flaky = sim.add_owning(Behaviour::Flaky, 4, Placement::Spread);
    let polite = sim.add_owning(Behaviour::Polite(1), 2, Placement::Spread);
    let sleeper = sim.add_owning(Behaviour::Sleeper(37), 2, Placement::Spread);
    sim.start();
    sim.run(1000 * S);

    // Spinners: exactly their slots, 3:1.
    assert_ratio(sim.ticks(a), sim.ticks(b), 3.0, 0.05);
    for env in [a, b] {
        assert_eq!(sim.ticks(env), sim.env(env).ledger.stats().slots * S);
    }
    // Ignorer: destroyed after max_strikes overruns, slots freed.
    assert!(matches!(sim.destroyed[..], [(e, End::Destroy { strikes: 3, .. })] if e == ign));
    assert_eq!(sim.env(ign).ledger.stats().overruns, 3);
    assert_eq!(sim.sched.vector.count_owned(ign), 0);
    // Critical hog: never more than slot + deferral + grace in a row,
    // deferred every turn, charged back to its share (4 slots vs 6).
    let st = sim.env(hog).ledger.stats();
    assert!(st.deferrals > 0 && st.overruns == 0);
    assert!(sim.longest_stretch(hog) > S, "deferral happened");
    assert!(sim.longest_stretch(hog) <= Config::DEFAULT.longest_run());
    assert_ratio(sim.ticks(hog), sim.ticks(a), 4.0 / 6.0, 0.05);
    // Flaky: overruns on half its turns, never destroyed, charged to its share.
    let st = sim.env(flaky).ledger.stats();
    assert!(st.overruns > 10 && sim.env(flaky).ledger.strikes() <= 1);
    assert!(sim.env(flaky).alive);
    assert_ratio(sim.ticks(flaky), sim.ticks(a), 4.0 / 6.0, 0.05);
    // Polite and sleeper get less than their share, never more.
    assert!(sim.ticks(polite) < sim.ticks(b));
    assert!(sim.ticks(sleeper) < sim.ticks(b));
    sim.assert_no_theft(&[]);
}

/// A critical section cannot be held forever: with the flag set and the
/// slot end ignored, the environment runs at most slot + critical grace +
/// grace ticks in a row, and is destroyed after max_strikes.
#[test]
fn critical_section_is_bounded() {
    let mut sim = Sim::<4>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 1, Placement::At(TimeSlot(0)));
    let c = sim.add_owning(Behaviour::CriticalIgnorer, 1, Placement::At(TimeSlot(2)));
    sim.start();
    sim.run(1000 * S);
    let c_cfg = Config::DEFAULT;
    assert_eq!(sim.longest_stretch(c), c_cfg.longest_run());
    let excess = c_cfg.critical_grace_ticks + c_cfg.grace_ticks;
    assert_eq!(sim.env(c).ends.last(), Some(&End::Destroy { excess, strikes: 3 }));
    assert!(!sim.env(c).alive);
    assert_eq!(sim.ticks(a), sim.env(a).ledger.stats().slots * S);
}

/// Overrun debt larger than a slot forfeits whole slots. The forfeited
/// slots are lent to spare-time requesters — never to the debtor, even if
/// it asked for spare time too — and in the long run the debtor gets its
/// share and no more.
#[test]
fn large_debt_forfeits_slots() {
    let cfg = Config { critical_grace_ticks: 8, max_strikes: 1000, ..Config::DEFAULT };
    let mut sim = Sim::<4>::new(cfg);
    let a = sim.add_owning(Behaviour::Spinner, 2, Placement::Spread);
    let c = sim.add_owning(Behaviour::CriticalIgnorer, 2, Placement::Spread);
    let x = sim.add(Behaviour::Spinner);
    sim.sched.spare.request(x).unwrap();
    sim.sched.spare.request(c).unwrap();
    sim.start();
    sim.run(1000 * S);
    let st = sim.env(c).ledger.stats();
    assert!(st.forfeits > 100, "{st:?}");
    assert_eq!(st.spare_slots, 0, "no spare time: no unowned slot and its own forfeits are not lent back");
    assert_ratio(sim.ticks(c), sim.ticks(a), 1.0, 0.05);
    let lent = sim.log.iter().filter(|r| r.reason == Reason::Spare(Vacancy::OwnerInDebt)).count() as u64;
    assert_eq!(lent, sim.ticks(x));
    assert!(sim.log.iter().all(|r| r.reason != Reason::Spare(Vacancy::OwnerInDebt) || r.env == Some(x)));
    sim.assert_no_theft(&[x, c]);
    assert!(sim.longest_stretch(c) <= cfg.longest_run());
}

/// Yielding within the grace period is not an overrun (charged, no
/// strike); yielding later is.
#[test]
fn grace_period_honoured() {
    let lenient = Config { grace_ticks: 2, ..Config::DEFAULT };
    let mut sim = Sim::<2>::new(lenient);
    let slow = sim.add_owning(Behaviour::Slow(1), 1, Placement::Any);
    let a = sim.add_owning(Behaviour::Spinner, 1, Placement::Any);
    sim.start();
    sim.run(1000 * S);
    assert!(sim.env(slow).alive);
    assert_eq!(sim.env(slow).ledger.stats().overruns, 0);
    assert_ratio(sim.ticks(slow), sim.ticks(a), 1.0, 0.05);

    let mut sim = Sim::<2>::new(Config::DEFAULT);
    let slow = sim.add_owning(Behaviour::Slow(1), 1, Placement::Any);
    sim.add_owning(Behaviour::Spinner, 1, Placement::Any);
    sim.start();
    sim.run(1000 * S);
    assert!(!sim.env(slow).alive);
    assert_eq!(sim.env(slow).ledger.stats().overruns, 3);
}
