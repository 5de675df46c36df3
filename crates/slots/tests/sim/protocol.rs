//! The slot protocol step by step, against a hand-controlled table.

use crate::env;
use crate::table::Table;
use oxok_abi::env_id::EnvId;
use oxok_slots::Ledger as _;
use oxok_slots::exposed::{RunRow, SlotRow, USE_DONATED, USE_IDLE, USE_NONE, USE_OWNER};
use oxok_slots::{Config, Decision, End, Out, Placement, Reason, Scheduler, Step, Switch, TimeSlot, Vacancy, decide};

const A: EnvId = env(0x400);
const B: EnvId = env(0x800);
const C: EnvId = env(0xc00);
/// An id no environment in the table has.
const NOBODY: EnvId = env(0xdead);

fn switch(step: Step) -> Switch {
    match step {
        Step::Switch(sw) => sw,
        other => panic!("expected a switch, got {other:?}"),
    }
}

fn ticks(s: &mut Scheduler<4, 4>, t: &mut Table, n: u32) {
    for i in 0..n {
        assert_eq!(s.tick(t), Step::Continue, "tick {i}");
    }
}

/// Slot start, slot end after exactly `ticks_per_slot` ticks, overrun
/// after exactly `grace_ticks` more.
#[test]
fn timeline() {
    let mut t = Table::with(&[A, B]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.vector.alloc(B, Placement::At(TimeSlot(1))).unwrap();
    assert_eq!(s.running(), None);
    let sw = switch(s.start(&mut t));
    assert_eq!(
        sw,
        Switch { out: None, slot: TimeSlot(0), decision: Decision { run: Some(A), reason: Reason::Owner, budget: 4 } }
    );
    assert_eq!(s.start(&mut t), Step::Continue, "already running");
    ticks(&mut s, &mut t, 3);
    assert_eq!(s.remaining(), 1);
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: A });
    let sw = switch(s.tick(&mut t));
    assert_eq!(sw.out, Some(Out { env: A, end: End::Overrun { excess: 1, strikes: 1 } }));
    assert_eq!(sw.slot, TimeSlot(1));
    assert_eq!(sw.decision.run, Some(B));
    assert_eq!(t.get(A).ledger.debt(), 1);
    assert_eq!(t.get(A).ledger.stats().ticks, 5);
    // B yields at its slot end: no charge; slot 2 and 3 are unowned: idle.
    ticks(&mut s, &mut t, 3);
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: B });
    let sw = switch(s.yielded(B, None, &mut t));
    assert_eq!(sw.out, Some(Out { env: B, end: End::Yielded { excess: 0 } }));
    assert_eq!(sw.decision, Decision { run: None, reason: Reason::Idle(Vacancy::Unowned), budget: 4 });
    ticks(&mut s, &mut t, 3);
    let sw = switch(s.tick(&mut t));
    assert_eq!((sw.out, sw.slot, sw.decision.run), (None, TimeSlot(3), None));
    ticks(&mut s, &mut t, 3);
    // A's next slot is shortened by its debt.
    let sw = switch(s.tick(&mut t));
    assert_eq!(sw.decision, Decision { run: Some(A), reason: Reason::Owner, budget: 3 });
    assert_eq!(t.get(A).ledger.debt(), 0);
    assert_eq!(s.header().rounds, 2);
}

/// A yield by anyone but the running environment changes nothing.
#[test]
fn stray_yield_ignored() {
    let mut t = Table::with(&[A, B]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::Any).unwrap();
    s.start(&mut t);
    assert_eq!(s.yielded(B, None, &mut t), Step::Continue);
    assert_eq!(s.yielded(NOBODY, Some(B), &mut t), Step::Continue);
    assert_eq!(s.running(), Some(A));
}

/// Directed yield: the rest of the slot goes to the target, which then
/// gets the slot end. Without time left, or to itself, or to a target that
/// cannot run, it is a plain yield.
#[test]
fn directed_yield() {
    let mut t = Table::with(&[A, B, C]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.start(&mut t);
    s.tick(&mut t);
    let sw = switch(s.yielded(A, Some(B), &mut t));
    assert_eq!(sw.out, Some(Out { env: A, end: End::Yielded { excess: 0 } }));
    assert_eq!(
        sw,
        Switch { slot: TimeSlot(0), decision: Decision { run: Some(B), reason: Reason::Donated, budget: 3 }, ..sw }
    );
    assert_eq!(s.vector.row(TimeSlot(0)).map(|r| (r.last_env, r.last_use)), Some((B.raw(), USE_DONATED)));
    ticks(&mut s, &mut t, 2);
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: B });
    assert_eq!(t.get(B).ledger.stats().donated, 1);
    // B yields to C with no time left: plain yield, next slot.
    let sw = switch(s.yielded(B, Some(C), &mut t));
    assert_eq!(sw.slot, TimeSlot(1));
    assert_eq!(sw.decision.run, None);
    // Round again to slot 0: A yields to itself and to a blocked env.
    for _ in 0..12 {
        s.tick(&mut t);
    }
    assert_eq!(s.running(), Some(A));
    assert_eq!(switch(s.yielded(A, Some(A), &mut t)).slot, TimeSlot(1));
    for _ in 0..12 {
        s.tick(&mut t);
    }
    t.get(C).runnable = false;
    assert_eq!(switch(s.yielded(A, Some(C), &mut t)).decision.run, None);
    // And to an id nobody has.
    for _ in 0..12 {
        s.tick(&mut t);
    }
    assert_eq!(switch(s.yielded(A, Some(NOBODY), &mut t)).decision.run, None);
}

/// `donate`, the transfer's fast path, is `yielded`'s directed half: the
/// same switch and ledgers when the slot has time and the target can run;
/// otherwise `None` with nothing changed (the caller then yields the
/// general way).
#[test]
fn donate_is_the_directed_half_of_yielded() {
    let mut t = Table::with(&[A, B, C]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.start(&mut t);
    s.tick(&mut t);
    let same = |s: &Scheduler<4, 4>, t: &mut Table| (s.running(), s.slot(), s.remaining(), t.get(A).ledger.stats());
    // Not A's to give: B is not running; A to itself; to nobody; to a
    // blocked environment.
    let before = same(&s, &mut t);
    assert!(!s.donate(B, C, &mut t));
    assert!(!s.donate(A, A, &mut t));
    assert!(!s.donate(A, NOBODY, &mut t));
    t.get(C).runnable = false;
    assert!(!s.donate(A, C, &mut t));
    assert_eq!(same(&s, &mut t), before);
    assert_eq!(t.get(C).ledger.stats().donated, 0);
    t.get(C).runnable = true;
    // The donation: what `directed_yield` sees from `yielded`.
    assert!(s.donate(A, B, &mut t));
    assert_eq!((s.running(), s.slot(), s.remaining()), (Some(B), TimeSlot(0), 3));
    assert_eq!(s.vector.row(TimeSlot(0)).map(|r| (r.last_env, r.last_use)), Some((B.raw(), USE_DONATED)));
    assert_eq!(t.get(B).ledger.stats().donated, 1);
    // And back, on the same slot's time.
    assert!(s.donate(B, A, &mut t));
    assert_eq!((s.running(), s.remaining()), (Some(A), 3));
    assert_eq!(t.get(A).ledger.stats().donated, 1);
    // No time left: no donation, nothing changed; yielded starts the next slot.
    ticks(&mut s, &mut t, 2);
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: A });
    let before = same(&s, &mut t);
    assert!(!s.donate(A, B, &mut t));
    assert_eq!(same(&s, &mut t), before);
    assert_eq!(t.get(B).ledger.stats().donated, 1);
    assert_eq!(switch(s.yielded(A, Some(B), &mut t)).slot, TimeSlot(1));
}

/// `may_donate` and `donate_between`, the hand-off's split of `donate`
/// for a caller holding both ledgers (and that checked the target can
/// run): refused where `donate` is for reasons of the slot, and otherwise
/// the very same changes — who runs, the slot, the time left, the slot's
/// row, both ledgers.
#[test]
fn donate_between_is_donate_with_the_ledgers_in_hand() {
    let start = || {
        let mut t = Table::with(&[A, B, C]);
        let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
        s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
        s.start(&mut t);
        s.tick(&mut t);
        // Some debt and a strike for A, which the donation's yield clears.
        t.get(A).ledger.overran(1, 5);
        (s, t)
    };
    let (s, _) = start();
    assert!(!s.may_donate(B, C), "B is not running");
    assert!(!s.may_donate(A, A), "to itself");
    assert!(s.may_donate(A, B));
    let (mut general, mut gt) = start();
    let (mut split, mut st) = start();
    assert!(general.donate(A, B, &mut gt));
    let (mut from, mut into) = (st.get(A).ledger, st.get(B).ledger);
    split.donate_between(B, &mut from, &mut into);
    (st.get(A).ledger, st.get(B).ledger) = (from, into);
    let seen = |s: &Scheduler<4, 4>, t: &mut Table| {
        (s.running(), s.slot(), s.remaining(), s.vector.row(TimeSlot(0)), t.get(A).ledger, t.get(B).ledger)
    };
    assert_eq!(seen(&split, &mut st), seen(&general, &mut gt));
    assert_eq!(st.get(A).ledger.strikes(), 0);
    // No time left: refused, as `donate` is.
    ticks(&mut split, &mut st, 2);
    assert_eq!(split.tick(&mut st), Step::SlotEnd { env: B });
    assert!(!split.may_donate(B, A));
}

/// The critical-section flag defers the slot end while set, by at most
/// `critical_grace_ticks`; the deferred ticks are charged; clearing the flag
/// ends the deferral at the next tick. With deferral disabled the flag is
/// ignored.
#[test]
fn critical_deferral() {
    let mut t = Table::with(&[A]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.start(&mut t);
    t.get(A).critical = true;
    ticks(&mut s, &mut t, 4 + 1); // slot end deferred at tick 4, again at 5
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: A }, "bounded at 2 ticks");
    let sw = switch(s.yielded(A, None, &mut t));
    assert_eq!(sw.out, Some(Out { env: A, end: End::Yielded { excess: 2 } }));
    assert_eq!(t.get(A).ledger.debt(), 2);
    assert_eq!(t.get(A).ledger.stats().deferrals, 1);
    assert_eq!(t.get(A).ledger.strikes(), 0);

    // Flag cleared during the deferral: slot end at the next tick.
    for _ in 0..12 {
        s.tick(&mut t);
    }
    assert_eq!((s.slot(), s.running(), s.remaining()), (TimeSlot(0), Some(A), 2), "debt repaid: 2-tick slot");
    ticks(&mut s, &mut t, 2);
    t.get(A).critical = false;
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: A });

    // Deferral disabled.
    let mut t = Table::with(&[A]);
    let mut s = Scheduler::<4, 4>::new(Config { critical_grace_ticks: 0, ..Config::DEFAULT });
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.start(&mut t);
    t.get(A).critical = true;
    ticks(&mut s, &mut t, 3);
    assert_eq!(s.tick(&mut t), Step::SlotEnd { env: A });
}

/// Removing an environment frees its slots and request; removing the
/// running one begins the next slot. Idempotent. An environment that
/// vanishes from the table without a remove is treated as removed.
#[test]
fn remove() {
    let mut t = Table::with(&[A, B]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.vector.alloc(A, Placement::At(TimeSlot(2))).unwrap();
    s.vector.alloc(B, Placement::At(TimeSlot(1))).unwrap();
    s.spare.request(A).unwrap();
    s.start(&mut t);
    t.remove(A);
    let sw = switch(s.remove(A, &mut t));
    assert_eq!(sw.out, Some(Out { env: A, end: End::Removed }));
    assert_eq!((sw.slot, sw.decision.run), (TimeSlot(1), Some(B)));
    assert_eq!(s.vector.count_owned(A), 0);
    assert!(!s.spare.contains(A));
    assert_eq!(s.remove(A, &mut t), Step::Continue);

    t.remove(B);
    let sw = switch(s.tick(&mut t));
    assert_eq!(sw.out, Some(Out { env: B, end: End::Removed }));
    assert_eq!(s.vector.owner(TimeSlot(1)), Some(B), "the kernel still has to remove it");
}

/// `decide` on its own, including out-of-range slots.
#[test]
fn decide_alone() {
    let mut t = Table::with(&[A, B]);
    let mut s = Scheduler::<4, 4>::new(Config::DEFAULT);
    s.vector.alloc(A, Placement::At(TimeSlot(0))).unwrap();
    s.spare.request(B).unwrap();
    let cfg = Config::DEFAULT;
    let d = decide(TimeSlot(0), &s.vector, &mut s.spare, &mut t, &cfg);
    assert_eq!(d, Decision { run: Some(A), reason: Reason::Owner, budget: 4 });
    let d = decide(TimeSlot(usize::MAX), &s.vector, &mut s.spare, &mut t, &cfg);
    assert_eq!(d, Decision { run: Some(B), reason: Reason::Spare(Vacancy::Unowned), budget: 4 });
    t.get(A).runnable = false;
    t.get(B).runnable = false;
    let d = decide(TimeSlot(0), &s.vector, &mut s.spare, &mut t, &cfg);
    assert_eq!(d, Decision { run: None, reason: Reason::Idle(Vacancy::OwnerBlocked), budget: 4 });
}

/// Configuration sanitizing and the exposed rows.
#[test]
fn config_and_exposed() {
    let c = Config { ticks_per_slot: 0, grace_ticks: 0, critical_grace_ticks: 0, max_strikes: 0 }.sanitized();
    assert_eq!(c, Config { ticks_per_slot: 1, grace_ticks: 1, critical_grace_ticks: 0, max_strikes: 1 });
    assert_eq!(Config::default(), Config::DEFAULT);
    assert_eq!(Config::DEFAULT.longest_run(), 7);

    let mut t = Table::with(&[A]);
    let mut s = Scheduler::<4, 4>::new(Config { ticks_per_slot: 0, ..Config::DEFAULT });
    assert_eq!(s.config().ticks_per_slot, 1);
    s.vector.alloc(A, Placement::At(TimeSlot(1))).unwrap();
    let mut rows = [SlotRow::default(); 6];
    assert_eq!(s.vector.rows(&mut rows), 4);
    assert_eq!(rows[1], SlotRow { owner: A.raw(), generation: 1, last_env: 0, last_use: USE_NONE });
    s.start(&mut t);
    s.tick(&mut t);
    s.vector.rows(&mut rows);
    assert_eq!(rows[0], SlotRow { owner: 0, generation: 0, last_env: 0, last_use: USE_IDLE });
    assert_eq!(rows[1], SlotRow { owner: A.raw(), generation: 1, last_env: A.raw(), last_use: USE_OWNER });
    let h = s.header();
    assert_eq!((h.slots, h.current, h.running, h.reason, h.ticks_per_slot), (4, 1, A.raw(), USE_OWNER, 1));
    assert_eq!(s.vector.row(TimeSlot(4)), None);
    let row = t.get(A).ledger;
    assert_eq!(row, RunRow { env: A.raw(), slots: 1, ..RunRow::default() });
}
