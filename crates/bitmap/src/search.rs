//! Finding free indices: next-fit, by residue class, and contiguous runs.

use crate::{Bitmap, word};

impl Bitmap<'_> {
    /// Any free index (next-fit from a moving hint, a word at a time);
    /// `None` when full.
    pub fn alloc_any(&mut self) -> Option<usize> {
        if self.free == 0 {
            return None;
        }
        let i = self.find_from_hint(|_, x| x)?;
        self.hint = i / word::BITS;
        self.take(i)
    }

    /// Any free index `i` with `i % modulus == residue` (page colouring);
    /// `None` if there is none, including when `modulus` is 0 or
    /// `residue >= modulus`.
    pub fn alloc_matching(&mut self, modulus: usize, residue: usize) -> Option<usize> {
        if self.free == 0 || residue >= modulus {
            return None;
        }
        let i = self.find_from_hint(|w, x| {
            if x == 0 { 0 } else { x & word::matching(w.saturating_mul(word::BITS), modulus, residue) }
        })?;
        self.take(i)
    }

    /// A run of `count` consecutive free indices starting at a multiple of
    /// `align`, allocated; returns its first index. `None` if there is no
    /// such run, or if `count` is 0 or `align` is not a power of two.
    pub fn alloc_contiguous(&mut self, count: usize, align: usize) -> Option<usize> {
        if count == 0 || count > self.free || !align.is_power_of_two() {
            return None;
        }
        let mut from = 0;
        loop {
            let start = self.next_free(from)?.checked_next_multiple_of(align)?;
            let end = start.checked_add(count)?;
            if end > self.len {
                return None;
            }
            match self.first_used(start, end) {
                None => {
                    self.reserve_range(start, end);
                    return Some(start);
                }
                Some(used) => from = used.checked_add(1)?,
            }
        }
    }

    /// The first set bit of `pick(word index, word)`, scanning words from
    /// the hint to the end and then from the start.
    fn find_from_hint(&self, pick: impl Fn(usize, u64) -> u64) -> Option<usize> {
        let n = self.words.len();
        let hint = self.hint.min(n);
        let order = (hint..n).chain(0..hint);
        for w in order {
            let bits = self.words.get(w).map_or(0, |&x| pick(w, x));
            if bits != 0 {
                return w.checked_mul(word::BITS)?.checked_add(bits.trailing_zeros() as usize);
            }
        }
        None
    }

    /// Marks the free index `i` used and returns it.
    fn take(&mut self, i: usize) -> Option<usize> {
        self.alloc(i).ok().map(|()| i)
    }

    /// The first free index at or after `from`.
    fn next_free(&self, from: usize) -> Option<usize> {
        self.first_with(from, self.len, false)
    }

    /// The first used index in `[start, end)`.
    fn first_used(&self, start: usize, end: usize) -> Option<usize> {
        self.first_with(start, end, true)
    }

    /// The first index in `[start, end)` (clamped to `len`) that is used
    /// (`used == true`) or free (`used == false`).
    fn first_with(&self, start: usize, end: usize, used: bool) -> Option<usize> {
        let end = end.min(self.len);
        if start >= end {
            return None;
        }
        for (w, mask) in word::spans(start, end) {
            let x = *self.words.get(w)?;
            let bits = if used { !x & mask } else { x & mask };
            if bits != 0 {
                return w.checked_mul(word::BITS)?.checked_add(bits.trailing_zeros() as usize);
            }
        }
        None
    }
}
