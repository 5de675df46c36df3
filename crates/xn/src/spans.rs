//! [`Spans`]: the positions of an exposed copy that may be stale, as a few
//! disjoint ranges, so two distant changes (a directory block and a block
//! it just gained) do not make everything between them look changed.

use core::ops::Range;

/// Ranges kept apart before the two closest are merged.
const SPANS: usize = 4;

/// Up to [`SPANS`] disjoint, sorted ranges of positions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Spans {
    spans: [(usize, usize); SPANS],
    n: usize,
}

impl Spans {
    /// Every position (`0..usize::MAX`).
    pub fn all() -> Spans {
        let mut s = Spans::default();
        s.add(0, usize::MAX);
        s
    }

    /// Adds positions `lo..hi` (nothing when empty): merged with the ranges
    /// it overlaps or touches; past [`SPANS`] ranges, the two with the
    /// smallest gap become one (covering the gap too).
    pub fn add(&mut self, lo: usize, hi: usize) {
        if lo >= hi {
            return;
        }
        let mut all = [(0, 0); SPANS + 1];
        all[..self.n].copy_from_slice(&self.spans[..self.n]);
        all[self.n] = (lo, hi);
        let mut n = self.n + 1;
        all[..n].sort_unstable();
        // Coalesce overlapping or touching neighbours.
        let mut w = 0;
        for r in 1..n {
            if all[r].0 <= all[w].1 {
                all[w].1 = all[w].1.max(all[r].1);
            } else {
                w += 1;
                all[w] = all[r];
            }
        }
        n = w + 1;
        if n > SPANS {
            let j = (0..n - 1).min_by_key(|&i| all[i + 1].0 - all[i].1).unwrap_or(0);
            all[j].1 = all[j + 1].1;
            all.copy_within(j + 2..n, j + 1);
            n -= 1;
        }
        self.spans[..n].copy_from_slice(&all[..n]);
        self.n = n;
    }

    /// The ranges so far, and none from now on.
    pub fn take(&mut self) -> Spans {
        core::mem::take(self)
    }

    /// The ranges, clamped to `0..len`, in order.
    pub fn ranges(&self, len: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        self.spans[..self.n].iter().map(move |&(lo, hi)| lo.min(len)..hi.min(len)).filter(|r| !r.is_empty())
    }

    /// The positions below `len`, in order.
    pub fn positions(&self, len: usize) -> impl Iterator<Item = usize> + '_ {
        self.ranges(len).flatten()
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use alloc::vec::Vec;

    fn set(s: &Spans, len: usize) -> Vec<usize> {
        s.positions(len).collect()
    }

    #[test]
    fn distant_changes_stay_apart_and_cover_what_was_added() {
        let mut s = Spans::default();
        s.add(3, 4);
        s.add(1000, 1001);
        assert_eq!(set(&s, 2000), [3, 1000]);
        s.add(4, 6); // touches the first
        s.add(0, 0); // empty
        assert_eq!(s.ranges(2000).collect::<Vec<_>>(), [3..6, 1000..1001]);
        assert_eq!(set(&s.take(), 2000), [3, 4, 5, 1000]);
        assert_eq!(set(&s, 2000), Vec::<usize>::new());
    }

    #[test]
    fn past_four_ranges_the_closest_merge_and_nothing_is_lost() {
        // Brute force: every added position is covered, whatever the order.
        let mut seed = 12345u64;
        for _ in 0..500 {
            let mut s = Spans::default();
            let mut want = std::collections::BTreeSet::new();
            for _ in 0..(seed % 9) {
                seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let lo = (seed >> 33) as usize % 200;
                let hi = lo + (seed >> 20) as usize % 5;
                s.add(lo, hi);
                want.extend(lo..hi);
            }
            let got: Vec<usize> = s.positions(1000).collect();
            assert!(want.iter().all(|p| got.contains(p)), "{want:?} in {got:?}");
            assert!(got.windows(2).all(|w| w[0] < w[1]), "sorted and disjoint: {got:?}");
            assert!(s.ranges(1000).count() <= SPANS);
        }
        assert_eq!(set(&Spans::all(), 3), [0, 1, 2]);
    }
}
