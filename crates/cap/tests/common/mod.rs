//! Shared helpers for the integration tests: a deterministic PRNG and
//! generators of names, rights and capabilities.

#![allow(dead_code)]

use oxok_cap::{Cap, Kind, MAX_DEPTH, Name, Rights};

/// xorshift64*: deterministic, seedable, good enough for property tests.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform-ish in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// A small component value, so that random names often share prefixes.
    pub fn small(&mut self) -> u64 {
        self.below(3)
    }

    /// A hostile-looking u64: extremes as often as ordinary values.
    pub fn hostile(&mut self) -> u64 {
        match self.below(6) {
            0 => u64::MAX,
            1 => 0,
            2 => self.below(70),
            3 => u64::MAX - self.below(4),
            4 => 1 << self.below(64),
            _ => self.next(),
        }
    }

    pub fn rights(&mut self) -> Rights {
        Rights::from_bits((self.next() & 7) as u8).unwrap()
    }

    /// A random name of random depth with small components.
    pub fn name(&mut self) -> Name {
        let depth = self.below(MAX_DEPTH as u64 + 1) as usize;
        let comps: Vec<u64> = (0..depth).map(|_| self.small()).collect();
        Name::new(&comps).unwrap()
    }

    /// A random resource name.
    pub fn resource(&mut self) -> Name {
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

    pub fn cap(&mut self) -> Cap {
        Cap::new(self.name(), self.rights())
    }
}

/// Every rights value.
pub fn all_rights() -> impl Iterator<Item = Rights> {
    (0u8..8).map(|b| Rights::from_bits(b).unwrap())
}
