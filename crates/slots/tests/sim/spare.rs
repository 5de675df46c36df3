//! Spare time: slots nobody can use go to environments that asked for
//! spare time, round robin; nobody else gets them.

use crate::world::{Behaviour, Sim, assert_ratio};
use oxok_slots::Ledger as _;
use oxok_slots::{Config, Placement, Reason, Step, Vacancy};

const S: u64 = Config::DEFAULT.ticks_per_slot as u64;

/// Unowned slots are shared round robin by the requesters; a spinner that
/// did not ask never runs outside its own slots; nothing idles.
#[test]
fn unowned_slots_lent_round_robin() {
    let mut sim = Sim::<8>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 2, Placement::Spread);
    let x = sim.add(Behaviour::Spinner);
    let y = sim.add(Behaviour::Spinner);
    sim.sched.spare.request(x).unwrap();
    sim.sched.spare.request(y).unwrap();
    sim.start();
    sim.run(1000 * S);
    assert_eq!(sim.idle_ticks(), 0);
    assert_ratio(sim.ticks(x), sim.ticks(y), 1.0, 0.05);
    assert_ratio(sim.ticks(x) + sim.ticks(y), sim.ticks(a), 3.0, 0.05);
    assert_eq!(sim.ticks(a), sim.env(a).ledger.stats().slots * S);
    assert!(sim.env(x).ledger.stats().spare_slots > 0);
    sim.assert_no_theft(&[x, y]);
}

/// Without requesters unowned slots idle; after a request they are lent;
/// after cancelling, idle again.
#[test]
fn request_and_cancel() {
    let mut sim = Sim::<4>::new(Config::DEFAULT);
    let a = sim.add_owning(Behaviour::Spinner, 1, Placement::Any);
    let x = sim.add(Behaviour::Spinner);
    sim.start();
    sim.run(100 * S);
    assert_eq!(sim.ticks(x), 0);
    assert_eq!(sim.idle_ticks(), 75 * S);
    sim.sched.spare.request(x).unwrap();
    sim.run(100 * S);
    assert!(sim.ticks(x) > 70 * S);
    let before = sim.ticks(x);
    sim.sched.spare.cancel(x);
    sim.run(10 * S); // the turn in progress may finish
    let settled = sim.ticks(x);
    assert!(settled - before <= S);
    sim.run(100 * S);
    assert_eq!(sim.ticks(x), settled);
    assert!(sim.ticks(a) > 0);
    sim.assert_no_theft(&[x]);
}

/// An owner that is blocked when its slot starts has the slot lent; when it
/// wakes during an idle slot of its own, it gets the rest of that slot.
#[test]
fn blocked_owner() {
    let mut sim = Sim::<4>::new(Config::DEFAULT);
    let sl = sim.add_owning(Behaviour::Sleeper(13), 2, Placement::Spread);
    let x = sim.add(Behaviour::Spinner);
    sim.sched.spare.request(x).unwrap();
    sim.start();
    sim.run(1000 * S);
    assert!(sim.log.iter().any(|r| r.reason == Reason::Spare(Vacancy::OwnerBlocked)));
    assert!(sim.ticks(sl) > 0 && sim.ticks(x) > 0);
    sim.assert_no_theft(&[x]);

    // Without a requester the slot idles until the owner wakes.
    let mut sim = Sim::<4>::new(Config { ticks_per_slot: 8, ..Config::DEFAULT });
    let sl = sim.add_owning(Behaviour::Sleeper(5), 4, Placement::Spread);
    sim.start();
    sim.run(1000);
    let woke_mid_slot = sim
        .log
        .windows(2)
        .any(|w| w[0].env.is_none() && w[1].env == Some(sl) && w[0].slot == w[1].slot && w[1].reason == Reason::Owner);
    assert!(woke_mid_slot);
    assert!(sim.log.iter().any(|r| r.reason == Reason::Idle(Vacancy::OwnerBlocked)));
    sim.assert_no_theft(&[]);
}

/// A spare-time-only environment that overruns repays its debt by passing
/// over spare turns, and is destroyed after max_strikes like anyone else.
#[test]
fn spare_debtor() {
    let cfg = Config { critical_grace_ticks: 6, ..Config::DEFAULT };
    let mut sim = Sim::<4>::new(cfg);
    let c = sim.add(Behaviour::CriticalIgnorer);
    let x = sim.add(Behaviour::Spinner);
    sim.sched.spare.request(c).unwrap();
    sim.sched.spare.request(x).unwrap();
    sim.start();
    sim.run(1000 * S);
    let st = sim.env(c).ledger.stats();
    assert!(st.forfeits > 0, "{st:?}");
    assert_eq!(st.overruns, 3);
    assert!(!sim.env(c).alive);
    assert!(!sim.sched.spare.contains(c), "request dropped on destroy");
    assert_eq!(sim.idle_ticks(), 0);
    sim.assert_no_theft(&[c, x]);
}

/// `woke` between ticks: while the CPU idles in a slot whose owner is
/// blocked it does nothing; once the owner can run (a device interrupt woke
/// it) it gets the rest of that slot at once, without a tick; while someone
/// runs it does nothing.
#[test]
fn woke_between_ticks() {
    let mut sim = Sim::<4>::new(Config { ticks_per_slot: 8, ..Config::DEFAULT });
    let sl = sim.add_owning(Behaviour::Sleeper(5), 4, Placement::Spread);
    sim.start();
    while sim.world.now < 5 || sim.sched.running().is_some() {
        assert!(sim.world.now < 10, "the owner blocks at tick 5");
        sim.step();
    }
    let step = sim.sched.woke(&mut sim.world);
    assert!(matches!(step, Step::Continue), "still blocked: {step:?}");
    assert_eq!(sim.sched.running(), None);
    let slot = sim.sched.slot();
    sim.world.now = 10;
    let step = sim.sched.woke(&mut sim.world);
    let Step::Switch(sw) = step else { panic!("expected a switch: {step:?}") };
    assert_eq!((sw.slot, sw.decision.run, sw.decision.reason), (slot, Some(sl), Reason::Owner));
    sim.apply(step);
    assert!(matches!(sim.sched.woke(&mut sim.world), Step::Continue));
    assert_eq!(sim.sched.running(), Some(sl));
}
