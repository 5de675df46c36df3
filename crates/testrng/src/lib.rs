//! One small deterministic random-number generator for every crate's host
//! tests (property tests, fuzzing, model checks): xorshift64*, seedable, no
//! dependencies. Crates add their own distributions on top with extension
//! traits in their `tests/common`.
#![no_std]
#![deny(unsafe_code)]

extern crate alloc;

use alloc::vec::Vec;

/// xorshift64*: deterministic, seedable, good enough for property tests.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator; seed 0 is replaced by 1 (xorshift's one bad state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
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

    /// Uniform-ish index in `0..n` (n > 0).
    pub fn index(&mut self, n: usize) -> usize {
        self.below(n as u64) as usize
    }

    /// True once in `one_in` (on average).
    pub fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }

    /// One of `items` (non-empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.index(items.len())]
    }

    /// A random byte.
    pub fn byte(&mut self) -> u8 {
        self.next() as u8
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.byte()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn deterministic_and_in_range() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        for _ in 0..1000 {
            assert_eq!(a.next(), b.next());
            assert!(a.below(10) < 10);
            assert!(b.index(3) < 3);
        }
        assert_ne!(Rng::new(0).next(), 0);
    }
}
