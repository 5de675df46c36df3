//! Hostile argument values, one generator per argument [`Kind`]: foreign
//! and stale capability slots, other environments' frame numbers and ids,
//! kernel, unmapped, non-canonical, unaligned and page-crossing pointers,
//! huge lengths.

use super::table::Kind;
use alloc::vec::Vec;
use oxok_libos::abi::frames::{OWNER_FIRST_ENV, OWNER_FREE};
use oxok_libos::abi::layout::{APP_AREA, ENV_TABLE_ROWS, FRAME_TABLE, PAGE_SIZE, PROGRAM_BASE, USER_TOP, UVPT, pte};
use oxok_libos::abi::{
    ACCOUNT_UNLIMITED, ANY_FRAME, CAP_SLOTS, CONSOLE_WRITE_MAX, NO_CAP_SLOT, PROTECT, SHARE, UNMAP, call_target,
};
use oxok_libos::exposed;
use oxok_testrng::Rng;

/// The fuzzer's own buffer: `DATA_PAGES` writable pages; the page after
/// them is never mapped, so `DATA_END - k` is a page-crossing pointer.
pub const DATA: u64 = 0x5800_0000_0000;
/// Pages in the buffer.
pub const DATA_PAGES: u64 = 4;
/// First byte after the buffer (unmapped).
pub const DATA_END: u64 = DATA + DATA_PAGES * PAGE_SIZE;
/// Where fuzzed calls map and unmap frames (in the fuzzer and its children).
pub const ARENA: u64 = 0x5800_4000_0000;
/// Pages in the arena.
pub const ARENA_PAGES: u64 = 64;

/// What the fuzzer knows of the machine and its own resources.
pub struct World {
    /// The generator (fixed seed: a run is reproducible).
    pub rng: Rng,
    /// The fuzzer's own id.
    pub me: u64,
    /// Other live environments (the victim, the driver, …).
    pub others: Vec<u64>,
    /// Ids that were alive once and are not any more.
    pub stale_ids: Vec<u64>,
    /// Frames owned by other environments.
    pub foreign_pfns: Vec<u64>,
    /// Environments the fuzzer created: (capability slot, id).
    pub children: Vec<(u64, u64)>,
    /// Capability slots the runtime held before fuzzing began (a bit each).
    pub reserved: u64,
    /// Frames in the machine.
    pub total_frames: u64,
}

impl World {
    /// Looks around: other environments, a sample of their frames, the
    /// capability slots in use.
    pub fn new(seed: u64) -> World {
        let me = exposed::self_id();
        let others = (0..ENV_TABLE_ROWS)
            .filter_map(exposed::env_row)
            .map(|r| u64::from(r.id))
            .filter(|&id| id != 0 && id != me)
            .collect();
        let total_frames = oxok_libos::sys::mem_info().map_or(1 << 17, |[t, _, _]| t);
        let mut rng = Rng::new(seed);
        let mut foreign_pfns = Vec::new();
        for _ in 0..4096 {
            let pfn = rng.below(total_frames.max(1));
            if let Some(f) = exposed::frame_entry(pfn)
                && f.owner != OWNER_FREE
                && f.owner >= OWNER_FIRST_ENV
                && u64::from(f.owner) != me
            {
                foreign_pfns.push(pfn);
            }
            if foreign_pfns.len() >= 64 {
                break;
            }
        }
        let mut reserved = 0u64;
        for s in 0..CAP_SLOTS as u64 {
            if oxok_libos::sys::cap_info(s).is_ok() {
                reserved |= 1 << s;
            }
        }
        World { rng, me, others, stale_ids: Vec::new(), foreign_pfns, children: Vec::new(), reserved, total_frames }
    }

    /// A value for an argument of kind `k`.
    pub fn value(&mut self, k: Kind) -> u64 {
        match k {
            Kind::EnvSlot => self.env_slot(),
            Kind::CapSlot => self.cap_slot(),
            Kind::Ptr => self.ptr(),
            Kind::Va => self.va(),
            Kind::Len => self.len(),
            Kind::Pfn => self.pfn(),
            Kind::EnvId => self.env_id(),
            Kind::Target => self.target(),
            Kind::Small => self.small(),
            Kind::Amount => self.amount(),
            Kind::Any => match self.rng.below(8) {
                0 => self.ptr(),
                1 => self.env_id(),
                2 => self.cap_slot(),
                3 => self.len(),
                4 => self.small(),
                5 => self.pfn(),
                6 => self.va(),
                _ => self.rng.next(),
            },
        }
    }

    /// A child's slot, if there is one, else a random slot.
    fn child_slot(&mut self) -> u64 {
        if self.children.is_empty() {
            return self.rng.below(CAP_SLOTS as u64);
        }
        self.children[self.rng.index(self.children.len())].0
    }

    fn env_slot(&mut self) -> u64 {
        match self.rng.below(10) {
            0..=3 => self.child_slot(),
            4 => 0,
            5..=7 => self.rng.below(CAP_SLOTS as u64),
            8 => *self.rng.pick(&[CAP_SLOTS as u64, CAP_SLOTS as u64 + 1, 1 << 32, u64::MAX, UNMAP - 1]),
            _ => self.rng.next(),
        }
    }

    fn cap_slot(&mut self) -> u64 {
        match self.rng.below(10) {
            0..=5 => self.rng.below(CAP_SLOTS as u64),
            6 => self.child_slot(),
            7 => *self.rng.pick(&[UNMAP, PROTECT, SHARE, u64::MAX - 3]),
            8 => *self.rng.pick(&[CAP_SLOTS as u64, 1 << 20, 1 << 63]),
            _ => self.rng.next(),
        }
    }

    /// A pointer: mostly the fuzzer's buffer, else everything it must not
    /// be able to reach or that is not there.
    pub fn ptr(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.below(16) {
            0..=5 => DATA,
            6 => DATA + r.below(DATA_PAGES * PAGE_SIZE),
            7 => DATA_END - 1 - r.below(64),
            8 => DATA_END + r.below(PAGE_SIZE),
            9 => 0xffff_8000_0000_0000 + (r.below(1 << 30) & !7),
            10 => 0xffff_ffff_8000_0000 + r.below(1 << 20),
            11 => 0x0000_8000_0000_0000 + r.below(1 << 40),
            12 => *r.pick(&[0, 8, USER_TOP - 8, USER_TOP - 1, USER_TOP, u64::MAX - 7]),
            13 => *r.pick(&[FRAME_TABLE, UVPT, APP_AREA, PROGRAM_BASE]),
            14 => ARENA + r.below(ARENA_PAGES * PAGE_SIZE),
            _ => r.next() & 0x0000_7fff_ffff_ffff,
        }
    }

    /// A page address: mostly in the arena, else kernel, unaligned,
    /// non-canonical or beyond `USER_TOP`.
    pub fn va(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.below(12) {
            0..=6 => ARENA + r.below(ARENA_PAGES) * PAGE_SIZE,
            7 => (ARENA + r.below(ARENA_PAGES * PAGE_SIZE)) | 1,
            8 => *r.pick(&[0, USER_TOP, USER_TOP - PAGE_SIZE, UVPT, 0xffff_8000_0000_0000, 0x8000_0000_0000]),
            9 => 0x0001_0000_0000_0000 | (r.next() & !0xfff),
            10 => DATA + r.below(DATA_PAGES + 1) * PAGE_SIZE,
            _ => r.next() & 0x0000_7fff_ffff_f000,
        }
    }

    fn len(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.below(12) {
            0 => 0,
            1..=3 => r.below(65),
            4 => *r.pick(&[PAGE_SIZE - 1, PAGE_SIZE, PAGE_SIZE + 1, 2 * PAGE_SIZE]),
            5 => r.below(DATA_PAGES * PAGE_SIZE),
            6 => *r.pick(&[CONSOLE_WRITE_MAX, CONSOLE_WRITE_MAX + 1]),
            7 => *r.pick(&[1 << 32, 1 << 48, 1 << 63, u64::MAX, u64::MAX - PAGE_SIZE + 1]),
            8..=9 => r.below(17),
            _ => r.next(),
        }
    }

    fn pfn(&mut self) -> u64 {
        match self.rng.below(8) {
            0..=2 => ANY_FRAME,
            3..=4 if !self.foreign_pfns.is_empty() => *self.rng.pick(&self.foreign_pfns),
            5 => self.rng.below(self.total_frames.max(1)),
            6 => *self.rng.pick(&[0, 1, 0x9f, 0xa0, 0xfee00, self.total_frames, 1 << 40]),
            _ => self.rng.next(),
        }
    }

    fn env_id(&mut self) -> u64 {
        match self.rng.below(10) {
            0 => 0,
            1 => self.me,
            2..=3 if !self.others.is_empty() => *self.rng.pick(&self.others),
            4..=5 if !self.children.is_empty() => self.children[self.rng.index(self.children.len())].1,
            6 if !self.stale_ids.is_empty() => *self.rng.pick(&self.stale_ids),
            7 => 0x100 + self.rng.below(0x800),
            8 => self.me ^ (1 << (10 + self.rng.below(22))),
            _ => self.rng.next(),
        }
    }

    /// A target word: mostly an id with a capability slot (right or
    /// wrong), sometimes a bare id or garbage.
    fn target(&mut self) -> u64 {
        let env = self.env_id();
        match self.rng.below(6) {
            0..=2 => call_target(env, self.rng.below(CAP_SLOTS as u64 + 1)),
            3 => call_target(env, NO_CAP_SLOT),
            4 => env,
            _ => self.rng.next(),
        }
    }

    fn small(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.below(8) {
            0..=3 => r.below(8),
            4 => r.below(64),
            5 => *r.pick(&[pte::WRITABLE, pte::NO_EXECUTE, pte::WRITABLE | pte::NO_EXECUTE, pte::LIBOS_BITS]),
            6 => 1 << r.below(64),
            _ => r.next(),
        }
    }

    fn amount(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.below(6) {
            0 => 0,
            1 => r.below(16),
            2 => r.below(1 << 20),
            3 => ACCOUNT_UNLIMITED,
            4 => exposed::rdtsc().wrapping_add(r.below(1 << 24)),
            _ => r.next(),
        }
    }

    /// True if `va` (a page of the fuzzer's own space) holds something the
    /// fuzzer's runtime needs: mapped, and neither in the arena nor in
    /// the buffer.
    pub fn own_page(va: u64) -> bool {
        let page = va & !(PAGE_SIZE - 1);
        let fuzz = (ARENA..ARENA + ARENA_PAGES * PAGE_SIZE).contains(&page) || (DATA..DATA_END).contains(&page);
        !fuzz && page < USER_TOP && exposed::pte(page).is_some_and(|e| e & pte::PRESENT != 0)
    }
}
