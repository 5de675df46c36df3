//! A hand-controlled environment table for step-by-step protocol tests.

use oxok_slots::{CpuLedger, Envs};

pub struct Entry {
    pub id: u32,
    pub ledger: CpuLedger,
    pub runnable: bool,
    pub critical: bool,
}

#[derive(Default)]
pub struct Table {
    pub entries: Vec<Entry>,
}

impl Table {
    pub fn with(ids: &[u32]) -> Table {
        Table {
            entries: ids
                .iter()
                .map(|&id| Entry { id, ledger: CpuLedger::new(), runnable: true, critical: false })
                .collect(),
        }
    }

    pub fn get(&mut self, id: u32) -> &mut Entry {
        self.entries.iter_mut().find(|e| e.id == id).expect("known env")
    }

    pub fn remove(&mut self, id: u32) {
        self.entries.retain(|e| e.id != id);
    }
}

impl Envs for Table {
    fn runnable(&mut self, env: u32) -> bool {
        self.entries.iter().any(|e| e.id == env && e.runnable)
    }

    fn critical(&mut self, env: u32) -> bool {
        self.entries.iter().any(|e| e.id == env && e.critical)
    }

    fn ledger(&mut self, env: u32) -> Option<&mut CpuLedger> {
        self.entries.iter_mut().find(|e| e.id == env).map(|e| &mut e.ledger)
    }
}

#[test]
fn a_boot_time_slot_count_bounds_the_round() {
    use oxok_slots::{Config, Scheduler};
    let mut envs = Table::with(&[0x400]);
    let mut s = Scheduler::<32, 16>::with_slots(Config::DEFAULT, 5);
    assert_eq!(s.header().slots, 5);
    let _ = s.start(&mut envs);
    for _ in 0..500 {
        let _ = s.tick(&mut envs);
        assert!(s.slot() < 5, "slot {} beyond the 5 in use", s.slot());
    }
}
