//! A deterministic simulated machine: environments with scripted behaviour
//! on one CPU, driven tick by tick through the scheduler, as the kernel
//! would drive it.

use crate::env;
use oxok_abi::env_id::EnvId;
use oxok_slots::Ledger as _;
use oxok_slots::{Config, CpuLedger, End, Envs, Placement, Reason, Scheduler, Step, TimeSlot};

/// How a simulated environment behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Behaviour {
    /// Computes forever; its libOS yields as soon as the slot-end upcall
    /// arrives.
    Spinner,
    /// Yields after `n` ticks of each turn, or at the slot-end upcall.
    Polite(u32),
    /// Keeps its critical-section flag set forever; yields when the
    /// (deferred) slot-end upcall arrives.
    CriticalHog,
    /// Keeps the flag set and ignores the slot end.
    CriticalIgnorer,
    /// Never yields.
    Ignorer,
    /// Ignores the slot end on every other turn, yields on the others.
    Flaky,
    /// Yields `k` ticks after the slot-end upcall.
    Slow(u64),
    /// Blocked while `(now / period)` is odd; a spinner otherwise.
    Sleeper(u64),
}

/// A simulated environment.
#[derive(Debug)]
pub struct SimEnv {
    pub id: EnvId,
    pub behaviour: Behaviour,
    pub ledger: CpuLedger,
    pub alive: bool,
    /// Tick at which the slot-end upcall of the current turn arrived.
    pub slot_end_at: Option<u64>,
    /// Ticks run in the current turn.
    pub turn_ticks: u32,
    /// Turns started (slot-start upcalls).
    pub turns: u64,
    /// Slot-end upcalls received.
    pub slot_ends: u64,
    /// Ticks run, counted by the simulator.
    pub ticks: u64,
    /// Every way a turn of it ended.
    pub ends: Vec<End>,
}

/// The environments, as the kernel's table.
pub struct World {
    pub envs: Vec<SimEnv>,
    pub now: u64,
}

impl World {
    pub fn get(&self, id: EnvId) -> Option<&SimEnv> {
        self.envs.iter().find(|e| e.id == id)
    }

    pub fn get_mut(&mut self, id: EnvId) -> Option<&mut SimEnv> {
        self.envs.iter_mut().find(|e| e.id == id)
    }

    fn blocked(&self, e: &SimEnv) -> bool {
        match e.behaviour {
            Behaviour::Sleeper(p) => (self.now / p) % 2 == 1,
            _ => false,
        }
    }
}

impl Envs for World {
    fn runnable(&mut self, env: EnvId) -> bool {
        self.get(env).is_some_and(|e| e.alive && !self.blocked(e))
    }

    fn critical(&mut self, env: EnvId) -> bool {
        self.get(env).is_some_and(|e| matches!(e.behaviour, Behaviour::CriticalHog | Behaviour::CriticalIgnorer))
    }

    fn ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger> {
        self.get_mut(env).filter(|e| e.alive).map(|e| &mut e.ledger)
    }
}

/// Who ran during one tick.
#[derive(Clone, Copy, Debug)]
pub struct TickRecord {
    pub slot: TimeSlot,
    pub owner: Option<EnvId>,
    pub env: Option<EnvId>,
    pub reason: Reason,
}

/// The simulated CPU.
pub struct Sim<const N: usize> {
    pub sched: Scheduler<N, 8>,
    pub world: World,
    pub log: Vec<TickRecord>,
    /// (env, how) for every destruction the scheduler asked for.
    pub destroyed: Vec<(EnvId, End)>,
    next_id: u32,
}

impl<const N: usize> Sim<N> {
    pub fn new(config: Config) -> Sim<N> {
        Sim {
            sched: Scheduler::new(config),
            world: World { envs: Vec::new(), now: 0 },
            log: Vec::new(),
            destroyed: Vec::new(),
            next_id: 0x400,
        }
    }

    /// Adds an environment; returns its id.
    pub fn add(&mut self, behaviour: Behaviour) -> EnvId {
        let id = env(self.next_id);
        self.next_id += 0x400;
        self.world.envs.push(SimEnv {
            id,
            behaviour,
            ledger: CpuLedger { env: id.raw(), ..CpuLedger::default() },
            alive: true,
            slot_end_at: None,
            turn_ticks: 0,
            turns: 0,
            slot_ends: 0,
            ticks: 0,
            ends: Vec::new(),
        });
        id
    }

    /// Adds an environment owning `slots` slots placed by `placement`.
    pub fn add_owning(&mut self, behaviour: Behaviour, slots: usize, placement: Placement) -> EnvId {
        let id = self.add(behaviour);
        for _ in 0..slots {
            self.sched.vector.alloc(id, placement).expect("slot available");
        }
        id
    }

    pub fn env(&self, id: EnvId) -> &SimEnv {
        self.world.get(id).expect("known env")
    }

    /// Boots the scheduler.
    pub fn start(&mut self) {
        let step = self.sched.start(&mut self.world);
        self.apply(step);
    }

    /// Carries out a step as the kernel would.
    pub fn apply(&mut self, step: Step) {
        match step {
            Step::Continue => {}
            Step::SlotEnd { env } => {
                assert_eq!(self.sched.running(), Some(env), "slot end goes to the running env");
                let now = self.world.now;
                let e = self.world.get_mut(env).expect("known env");
                e.slot_end_at = Some(now);
                e.slot_ends += 1;
            }
            Step::Switch(sw) => {
                assert_eq!(self.sched.slot(), sw.slot);
                assert_eq!(self.sched.running(), sw.decision.run);
                if let Some(out) = sw.out {
                    let e = self.world.get_mut(out.env).expect("known env");
                    e.ends.push(out.end);
                    if let End::Destroy { .. } = out.end {
                        e.alive = false;
                        self.destroyed.push((out.env, out.end));
                        assert_eq!(self.sched.vector.count_owned(out.env), 0, "slots freed on destroy");
                    }
                }
                if let Some(env) = sw.decision.run {
                    assert!(sw.decision.budget > 0, "a turn has time");
                    let e = self.world.get_mut(env).expect("known env");
                    assert!(e.alive, "only live environments run");
                    e.slot_end_at = None;
                    e.turn_ticks = 0;
                    e.turns += 1;
                }
            }
        }
    }

    /// Whether the running environment yields now (its handlers run between
    /// ticks).
    fn wants_yield(&self, e: &SimEnv) -> bool {
        let now = self.world.now;
        let ended = e.slot_end_at.is_some();
        match e.behaviour {
            Behaviour::Spinner | Behaviour::CriticalHog => ended,
            Behaviour::Polite(n) => ended || e.turn_ticks >= n,
            Behaviour::Ignorer | Behaviour::CriticalIgnorer => false,
            Behaviour::Flaky => ended && e.turns.is_multiple_of(2),
            Behaviour::Slow(k) => e.slot_end_at.is_some_and(|t| now - t >= k),
            Behaviour::Sleeper(_) => ended || self.world.blocked(e),
        }
    }

    /// One tick: the running environment acts, then the timer fires.
    pub fn step(&mut self) {
        for _ in 0..64 {
            let Some(cur) = self.sched.running() else { break };
            let e = self.world.get(cur).expect("known env");
            if !self.wants_yield(e) {
                break;
            }
            let step = self.sched.yielded(cur, None, &mut self.world);
            self.apply(step);
        }
        let slot = self.sched.slot();
        let running = self.sched.running();
        self.log.push(TickRecord {
            slot,
            owner: self.sched.vector.owner(slot),
            env: running,
            reason: self.sched.reason(),
        });
        if let Some(cur) = running {
            let e = self.world.get_mut(cur).expect("known env");
            e.turn_ticks += 1;
            e.ticks += 1;
        }
        self.world.now += 1;
        let step = self.sched.tick(&mut self.world);
        self.apply(step);
    }

    pub fn run(&mut self, ticks: u64) {
        for _ in 0..ticks {
            self.step();
        }
    }

    /// Ticks `env` ran.
    pub fn ticks(&self, env: EnvId) -> u64 {
        let t = self.env(env).ticks;
        assert_eq!(t, self.env(env).ledger.stats().ticks, "the ledger agrees with the simulator");
        t
    }

    /// Ticks nobody ran.
    pub fn idle_ticks(&self) -> u64 {
        self.log.iter().filter(|r| r.env.is_none()).count() as u64
    }

    /// Longest stretch of consecutive ticks `env` ran.
    pub fn longest_stretch(&self, env: EnvId) -> u64 {
        let (mut best, mut cur) = (0, 0);
        for r in &self.log {
            if r.env == Some(env) {
                cur += 1;
                best = best.max(cur);
            } else {
                cur = 0;
            }
        }
        best
    }

    /// Asserts every tick ran by its slot's owner, a spare-time requester in
    /// `spare`, or a donee.
    pub fn assert_no_theft(&self, spare: &[EnvId]) {
        for (t, r) in self.log.iter().enumerate() {
            let Some(env) = r.env else { continue };
            match r.reason {
                Reason::Owner => assert_eq!(r.owner, Some(env), "tick {t}: {env} ran as owner of slot {}", r.slot),
                Reason::Spare(_) => assert!(spare.contains(&env), "tick {t}: {env} got spare time unasked"),
                Reason::Donated => {}
                Reason::Idle(_) => panic!("tick {t}: idle slot with a running env"),
            }
        }
    }
}

/// Asserts `a / b` is within `tol` (relative) of `ratio`.
pub fn assert_ratio(a: u64, b: u64, ratio: f64, tol: f64) {
    assert!(b > 0, "no ticks in denominator");
    let r = a as f64 / b as f64;
    assert!((r - ratio).abs() <= ratio * tol, "ratio {a}/{b} = {r:.3}, expected {ratio} ± {:.0}%", tol * 100.0);
}
