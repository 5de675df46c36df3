//! A hand-controlled environment table for step-by-step protocol tests.

use oxok_abi::env_id::EnvId;
use oxok_slots::{CpuLedger, Envs};

pub struct Entry {
    pub id: EnvId,
    pub ledger: CpuLedger,
    pub runnable: bool,
    pub critical: bool,
}

#[derive(Default)]
pub struct Table {
    pub entries: Vec<Entry>,
}

impl Table {
    pub fn with(ids: &[EnvId]) -> Table {
        Table {
            entries: ids
                .iter()
                .map(|&id| Entry {
                    id,
                    ledger: CpuLedger { env: id.raw(), ..CpuLedger::default() },
                    runnable: true,
                    critical: false,
                })
                .collect(),
        }
    }

    pub fn get(&mut self, id: EnvId) -> &mut Entry {
        self.entries.iter_mut().find(|e| e.id == id).expect("known env")
    }

    pub fn remove(&mut self, id: EnvId) {
        self.entries.retain(|e| e.id != id);
    }
}

impl Envs for Table {
    fn runnable(&mut self, env: EnvId) -> bool {
        self.entries.iter().any(|e| e.id == env && e.runnable)
    }

    fn critical(&mut self, env: EnvId) -> bool {
        self.entries.iter().any(|e| e.id == env && e.critical)
    }

    fn ledger(&mut self, env: EnvId) -> Option<&mut CpuLedger> {
        self.entries.iter_mut().find(|e| e.id == env).map(|e| &mut e.ledger)
    }
}

#[test]
fn a_boot_time_slot_count_bounds_the_round() {
    use oxok_slots::{Config, Scheduler};
    let mut envs = Table::with(&[crate::env(0x400)]);
    let mut s = Scheduler::<32, 16>::with_slots(Config::DEFAULT, 5);
    assert_eq!(s.header().slots, 5);
    let _ = s.start(&mut envs);
    for _ in 0..500 {
        let _ = s.tick(&mut envs);
        assert!(s.slot().0 < 5, "slot {} beyond the 5 in use", s.slot());
    }
}
