//! stride [QUANTA [TICKETS...]]: a user-level stride scheduler (Waldspurger
//! and Weihl's stride scheduling, as the Aegis paper's user-level scheduler)
//! built only from the kernel's CPU primitives.
//!
//! The kernel's policy is small: owners run in their slots, unowned slots
//! are lent round robin to environments that ask for spare time, and
//! `yield_cpu(target)` donates the rest of the current slot. Everything else
//! is here, in user space:
//!
//! 1. The scheduler allocates [`SLOTS`] slots for itself (spread over the
//!    vector, so that each is a separate quantum) and keeps asking for spare
//!    time as every program does: it runs in its own slots and in whatever
//!    spare time it is lent.
//! 2. It spawns one `stride-worker` per ticket count (default 3:2:1) and
//!    turns each child's spare time off (`slot_spare(child, 0)`), so a child
//!    runs only when the scheduler donates to it. `spawn` makes the child
//!    runnable at once, so it may run a little spare time before that; the
//!    measurement starts after the opt-out, from a baseline.
//! 3. Each quantum: the child with the smallest pass gets the rest of the
//!    scheduler's current slot (`yield_cpu(child)`); its pass advances by
//!    its stride (`STRIDE1 / tickets`). When the scheduler runs again (its
//!    next slot, or lent spare time) it schedules the next quantum.
//! 4. After QUANTA quanta (default 600) it reads each child's ticks from the
//!    exposed run statistics (`RunRow::ticks`, minus the baseline) and
//!    prints `stride: child K tickets T got X ticks`.
//!
//! Checks: every directed yield is accepted; the quanta handed out follow
//! the tickets exactly (stride scheduling is deterministic: within one
//! quantum of `QUANTA * T / sum`); each child received a donation for at
//! least 95% of its quanta (a yield with no time left in the slot is plain);
//! each child's share of the ticks is its share of the tickets within ±10%
//! of that share. Measured under TCG (3 runs, 600 quanta, 4 ticks a slot):
//! 1197–1200 : 800 : 400 ticks, 99–100% of each ticket share, donations
//! equal to quanta. Then it destroys its children and frees its slots.
#![no_std]
#![no_main]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;
use oxok_libos::abi::slot_placement::SPREAD;
use oxok_libos::{Args, exec, exposed, println, sys};

oxok_libos::main!(main);

/// Slots the scheduler allocates for itself.
const SLOTS: usize = 8;
/// Pass units per quantum for one ticket (strides are `STRIDE1 / tickets`).
const STRIDE1: u64 = 1 << 20;
/// Tolerance on each child's share of the ticks, percent of its share.
const TOLERANCE_PCT: u64 = 10;
/// Give up scheduling after this much wall time (ms) whatever the count.
const WALL_LIMIT_MS: u64 = 30_000;

struct Checks {
    failed: u32,
    passed: u32,
}

impl Checks {
    fn check(&mut self, cond: bool, what: &str) {
        if cond {
            self.passed += 1;
        } else {
            self.failed += 1;
            println!("stride: FAIL {what}");
        }
    }
}

/// One scheduled child.
struct Task {
    child: exec::Child,
    tickets: u64,
    stride: u64,
    pass: u64,
    /// Quanta handed to it.
    quanta: u64,
    /// Its `ticks` and `donated` when measuring began.
    ticks0: u64,
    donated0: u64,
}

fn cycles_per_ms() -> u64 {
    exposed::clock().map_or(1_000_000, |c| (c.tsc_hz / 1000).max(1))
}

fn main(args: Args) -> i32 {
    let quanta: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(600);
    let mut tickets: Vec<u64> = (2..args.len()).filter_map(|i| args.get(i)?.parse().ok()).filter(|&t| t > 0).collect();
    if tickets.is_empty() {
        tickets = alloc::vec![3, 2, 1];
    }
    let mut t = Checks { failed: 0, passed: 0 };

    // 1. Our own slots.
    let mut slot_caps = Vec::new();
    for _ in 0..SLOTS {
        match sys::slot_alloc(SPREAD, 0) {
            Ok([cap, _index]) => slot_caps.push(cap),
            Err(e) => {
                println!("stride: slot_alloc: {e}");
                break;
            }
        }
    }
    t.check(!slot_caps.is_empty(), "allocated slots");
    println!(
        "stride: owns {} slot(s); scheduling {} children, tickets {:?}, {} quanta",
        slot_caps.len(),
        tickets.len(),
        tickets,
        quanta
    );

    // 2. The children, spare time off at once.
    let mut tasks: Vec<Task> = Vec::new();
    for (k, &tk) in tickets.iter().enumerate() {
        match exec::spawn("stride-worker", &["stride-worker"]) {
            Ok(child) => {
                t.check(sys::slot_spare(child.slot, 0).is_ok(), "turn the child's spare time off");
                let stride = STRIDE1 / tk;
                tasks.push(Task { child, tickets: tk, stride, pass: stride, quanta: 0, ticks0: 0, donated0: 0 });
            }
            Err(e) => {
                println!("stride: spawn child {k}: {e}");
                t.check(false, "spawn a worker");
            }
        }
    }
    // Baselines (a child may have run some spare time before the opt-out).
    for task in &mut tasks {
        let row = exposed::run_stats(task.child.id).unwrap_or_default();
        task.ticks0 = row.ticks;
        task.donated0 = row.donated;
    }
    let early: Vec<u64> = tasks.iter().map(|x| x.ticks0).collect();
    println!("stride: children ran {early:?} ticks before their spare time was off");

    // 3. Stride scheduling, one directed yield per quantum.
    let start = exposed::rdtsc();
    let limit = start + WALL_LIMIT_MS * cycles_per_ms();
    let mut refused = 0u64;
    let mut given = 0u64;
    while given < quanta && !tasks.is_empty() && exposed::rdtsc() < limit {
        let (i, _) = tasks.iter().enumerate().min_by_key(|(i, task)| (task.pass, *i)).unwrap_or((0, &tasks[0]));
        let task = &mut tasks[i];
        if oxok_libos::callcap::yield_to(task.child.id).is_err() {
            refused += 1;
        }
        task.pass += task.stride;
        task.quanta += 1;
        given += 1;
    }
    let ms = (exposed::rdtsc() - start) / cycles_per_ms();
    t.check(given == quanta, "all quanta handed out before the wall-time limit");
    t.check(refused == 0, "every directed yield accepted");

    // 4. Measure.
    let total_tickets: u64 = tasks.iter().map(|x| x.tickets).sum();
    let mut got = Vec::new();
    for task in &tasks {
        let row = exposed::run_stats(task.child.id).unwrap_or_default();
        got.push((row.ticks.saturating_sub(task.ticks0), row.donated.saturating_sub(task.donated0)));
    }
    let total_ticks: u64 = got.iter().map(|g| g.0).sum();
    println!("stride: {given} quanta in {ms} ms, {total_ticks} child ticks in all");
    for (k, (task, &(ticks, donated))) in tasks.iter().zip(&got).enumerate() {
        // Share of the ticks relative to the share of the tickets, percent.
        let rel = (ticks * total_tickets * 100).checked_div(task.tickets * total_ticks).unwrap_or(0);
        println!(
            "stride: child {k} tickets {} got {ticks} ticks ({} quanta, {donated} donations; {rel}% of its ticket share)",
            task.tickets, task.quanta
        );
        let ideal = given * task.tickets / total_tickets;
        t.check(task.quanta.abs_diff(ideal) <= 1, "quanta follow the tickets (within one)");
        t.check(donated * 100 >= task.quanta * 95, "the child received a donation for >= 95% of its quanta");
        t.check(
            (100 - TOLERANCE_PCT..=100 + TOLERANCE_PCT).contains(&rel),
            "tick share follows the ticket share within the tolerance",
        );
    }
    t.check(total_ticks > 0, "the children ran");

    // 5. Clean up: the children (destroyed by their creator: no zombie), then our slots.
    for task in tasks {
        t.check(sys::env_destroy(task.child.slot).is_ok(), "destroy a child");
    }
    for cap in slot_caps {
        t.check(sys::slot_free(cap).is_ok(), "free a slot");
    }

    if t.failed == 0 {
        println!("stride: ok ({} checks)", t.passed);
        0
    } else {
        println!("stride: FAIL {} of {} checks", t.failed, t.failed + t.passed);
        1
    }
}
