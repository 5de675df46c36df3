//! Freeing and reserving whole ranges, a word at a time.

use crate::{Bitmap, word};

impl Bitmap<'_> {
    /// Mark `[start, end)` free (boot: usable RAM); indices already free stay
    /// free; returns how many became free. Clamped to `len`.
    pub fn release_range(&mut self, start: usize, end: usize) -> usize {
        let mut changed = 0;
        self.for_each_span(start, end, |x, mask| {
            changed += (mask & !*x).count_ones() as usize;
            *x |= mask;
        });
        self.free = self.free.saturating_add(changed);
        changed
    }

    /// Mark `[start, end)` used (boot: reserve the kernel image etc.);
    /// returns how many became used. Clamped to `len`.
    pub fn reserve_range(&mut self, start: usize, end: usize) -> usize {
        let mut changed = 0;
        self.for_each_span(start, end, |x, mask| {
            changed += (mask & *x).count_ones() as usize;
            *x &= !mask;
        });
        self.free = self.free.saturating_sub(changed);
        changed
    }

    /// Calls `f(word, mask)` for every word overlapping `[start, end)`
    /// clamped to `len`, with the mask of bits inside the range.
    fn for_each_span(&mut self, start: usize, end: usize, mut f: impl FnMut(&mut u64, u64)) {
        let end = end.min(self.len);
        if start >= end {
            return;
        }
        for (w, mask) in word::spans(start, end) {
            if let Some(x) = self.words.get_mut(w) {
                f(x, mask);
            }
        }
    }
}
