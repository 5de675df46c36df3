//! Memory for the cache: pages of this process's own frames, in regions
//! of at most `shm::MAX_PAGES`, named by a page number so a byte range can
//! be handed to `net_send` as (frame, offset, length) pieces.

use alloc::vec::Vec;
use core::sync::atomic::Ordering;
use oxok_libos::Error;
use oxok_libos::shm::{MAX_PAGES, Region};

/// Bytes per page.
pub const PAGE: usize = 4096;

/// A run of pages.
pub struct Pages {
    regions: Vec<Region>,
    count: usize,
}

impl Pages {
    /// `count` zeroed pages.
    pub fn new(count: usize) -> Result<Pages, Error> {
        let mut regions = Vec::new();
        let mut left = count;
        while left > 0 {
            let n = left.min(MAX_PAGES);
            regions.push(Region::create(n)?);
            left -= n;
        }
        Ok(Pages { regions, count })
    }

    /// How many.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The capability slot of page `page`'s frame.
    pub fn slot(&self, page: usize) -> u64 {
        self.regions[page / MAX_PAGES].frame_slots()[page % MAX_PAGES]
    }

    /// Fills page `page` with `data` (at most a page; the rest zero).
    pub fn write_page(&self, page: usize, data: &[u8]) {
        let words = &self.regions[page / MAX_PAGES].words()[(page % MAX_PAGES) * PAGE / 8..][..PAGE / 8];
        for (k, w) in words.iter().enumerate() {
            let mut b = [0u8; 8];
            if let Some(chunk) = data.get(k * 8..) {
                let n = chunk.len().min(8);
                b[..n].copy_from_slice(&chunk[..n]);
            }
            w.store(u64::from_le_bytes(b), Ordering::Relaxed);
        }
    }

    /// Copies bytes from byte address `at` (page * PAGE + offset) on.
    pub fn read(&self, at: usize, out: &mut [u8]) {
        for (i, o) in out.iter_mut().enumerate() {
            let a = at + i;
            let page = a / PAGE;
            let word = &self.regions[page / MAX_PAGES].words()[(page % MAX_PAGES) * PAGE / 8 + (a % PAGE) / 8];
            *o = word.load(Ordering::Relaxed).to_le_bytes()[a % 8];
        }
    }
}
