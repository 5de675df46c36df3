//! Shared helpers for the integration tests: a deterministic PRNG and
//! generators of names, rights and capabilities.

#![allow(dead_code)]

use oxok_cap::{Cap, Kind, MAX_DEPTH, Name, Rights};

pub use oxok_testrng::Rng;

/// This crate's distributions on top of the shared generator.
pub trait RngExt {
    fn small(&mut self) -> u64;
    fn hostile(&mut self) -> u64;
    fn rights(&mut self) -> Rights;
    fn name(&mut self) -> Name;
    fn resource(&mut self) -> Name;
    fn cap(&mut self) -> Cap;
}

impl RngExt for Rng {
    fn small(&mut self) -> u64 {
        self.below(3)
    }

    fn hostile(&mut self) -> u64 {
        match self.below(6) {
            0 => u64::MAX,
            1 => 0,
            2 => self.below(70),
            3 => u64::MAX - self.below(4),
            4 => 1 << self.below(64),
            _ => self.next(),
        }
    }

    fn rights(&mut self) -> Rights {
        Rights::from_bits((self.next() & 0b11_0111) as u8).unwrap()
    }

    fn name(&mut self) -> Name {
        let depth = self.below(MAX_DEPTH as u64 + 1) as usize;
        let comps: Vec<u64> = (0..depth).map(|_| self.small()).collect();
        Name::new(&comps).unwrap()
    }

    fn resource(&mut self) -> Name {
        match self.below(4) {
            0 => Name::frame(self.small(), self.small()),
            1 => Name::env(self.small(), self.small()),
            2 => Name::slot(self.small(), self.small(), self.small()),
            _ => {
                let k = Kind::ALL[self.below(Kind::ALL.len() as u64) as usize];
                Name::kind_root(k).extend(&[self.small(), self.small()]).unwrap()
            }
        }
    }

    fn cap(&mut self) -> Cap {
        Cap::new(self.name(), self.rights())
    }
}

/// Every rights value.
pub fn all_rights() -> impl Iterator<Item = Rights> {
    (0u8..64).filter_map(Rights::from_bits)
}
