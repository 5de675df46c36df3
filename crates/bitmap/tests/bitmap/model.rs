//! Random operations checked against a `BTreeSet` model of the free indices.

use oxok_bitmap::{Bitmap, BitmapError};
use std::collections::BTreeSet;

/// xorshift64: a tiny deterministic PRNG.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// An index or bound near the bitmap: mostly in range, sometimes past
    /// it, occasionally huge.
    fn index(&mut self, len: usize) -> usize {
        match self.below(20) {
            0 => usize::MAX - self.below(3),
            1 => len + self.below(70),
            _ => self.below(len + 1),
        }
    }
}

/// The lowest start of `count` free indices aligned to `align` in the model.
fn model_run(free: &BTreeSet<usize>, len: usize, count: usize, align: usize) -> Option<usize> {
    if count == 0 || !align.is_power_of_two() {
        return None;
    }
    (0..len).step_by(align).take_while(|s| s + count <= len).find(|&s| (s..s + count).all(|i| free.contains(&i)))
}

/// Runs `steps` random operations on a bitmap of `len` indices.
fn run(len: usize, steps: usize, seed: u64) {
    let mut words = vec![u64::MAX; Bitmap::words_needed(len) + 1];
    let mut b = Bitmap::new(&mut words, len).unwrap();
    let mut model: BTreeSet<usize> = BTreeSet::new();
    let mut rng = Rng(seed);
    for step in 0..steps {
        match rng.below(10) {
            0 | 1 => {
                let (s, e) = (rng.index(len), rng.index(len));
                let want = (s..e.min(len)).filter(|i| model.insert(*i)).count();
                assert_eq!(b.release_range(s, e), want, "release {s}..{e}");
            }
            2 => {
                let (s, e) = (rng.index(len), rng.index(len));
                let want = (s..e.min(len)).filter(|i| model.remove(i)).count();
                assert_eq!(b.reserve_range(s, e), want, "reserve {s}..{e}");
            }
            3 => match b.alloc_any() {
                Some(i) => assert!(model.remove(&i), "alloc_any gave used {i}"),
                None => assert!(model.is_empty()),
            },
            4 => {
                let modulus = match rng.below(8) {
                    0 => 0,
                    1 => usize::MAX - rng.below(2),
                    2 => rng.below(3 * len + 2),
                    _ => rng.below(70),
                };
                let residue = rng.below(modulus.saturating_add(2).min(3 * len + 2));
                let matches = |i: &usize| modulus != 0 && i % modulus == residue;
                match b.alloc_matching(modulus, residue) {
                    Some(i) => {
                        assert!(matches(&i), "{i} % {modulus} != {residue}");
                        assert!(model.remove(&i), "alloc_matching gave used {i}");
                    }
                    None => assert!(!model.iter().any(matches), "missed {modulus}/{residue}"),
                }
            }
            5 | 6 => {
                let i = rng.index(len);
                let want = if i >= len {
                    Err(BitmapError::OutOfRange)
                } else if model.contains(&i) {
                    Err(BitmapError::AlreadyFree)
                } else {
                    Ok(())
                };
                assert_eq!(b.free(i), want);
                if want.is_ok() {
                    model.insert(i);
                }
            }
            7 => {
                let i = rng.index(len);
                let want = if i >= len {
                    Err(BitmapError::OutOfRange)
                } else if !model.contains(&i) {
                    Err(BitmapError::AlreadyUsed)
                } else {
                    Ok(())
                };
                assert_eq!(b.alloc(i), want);
                if want.is_ok() {
                    model.remove(&i);
                }
            }
            _ => {
                let count = match rng.below(10) {
                    0 => 0,
                    1 => usize::MAX - rng.below(2),
                    2 => rng.below(len + 2),
                    _ => 1 + rng.below(20),
                };
                let align = [0, 1, 1, 2, 3, 4, 8, 64, 128, 1 << 40][rng.below(10)];
                let want = model_run(&model, len, count, align);
                assert_eq!(b.alloc_contiguous(count, align), want, "run {count}/{align}");
                if let Some(s) = want {
                    for i in s..s + count {
                        model.remove(&i);
                    }
                }
            }
        }
        assert_eq!(b.free_count(), model.len(), "free count at step {step}");
        if step % 7 == 0 || len < 200 {
            for i in 0..len + 66 {
                assert_eq!(b.is_free(i), model.contains(&i), "index {i} at step {step}");
            }
        }
    }
    assert_eq!(words.last(), Some(&u64::MAX), "storage past the bitmap untouched");
}

#[test]
fn matches_model_small_sizes() {
    for (k, len) in [0usize, 1, 2, 63, 64, 65, 127, 130].into_iter().enumerate() {
        run(len, 3000, 0x1234_5678 + k as u64);
    }
}

#[test]
fn matches_model_larger() {
    run(1000, 6000, 0xdead_beef);
    run(4096 + 17, 3000, 42);
}
