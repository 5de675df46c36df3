//! Helpers shared by the scenario programs: each program prints
//! `NAME: ok` when every check held, or `NAME: FAIL …` lines.
#![no_std]
#![deny(unsafe_code)]

extern crate alloc;

pub mod fsraw;
pub mod fuzz;
pub mod principal;
pub mod xn;

use core::fmt::Debug;
use oxok_libos::println;

/// Counts checks for one program.
pub struct Checks {
    name: &'static str,
    failed: u32,
    passed: u32,
}

impl Checks {
    /// A fresh counter for program `name`.
    pub fn new(name: &'static str) -> Checks {
        Checks { name, failed: 0, passed: 0 }
    }

    /// Records one check; prints a FAIL line when it does not hold.
    pub fn check(&mut self, cond: bool, what: &str) {
        if cond {
            self.passed += 1;
        } else {
            self.failed += 1;
            println!("{}: FAIL {}", self.name, what);
        }
    }

    /// Records that `got` equals `want`; prints both when it does not.
    pub fn expect<T: PartialEq + Debug>(&mut self, got: T, want: T, what: &str) {
        if got != want {
            println!("{}: {what}: got {got:?}, want {want:?}", self.name);
        }
        self.check(got == want, what);
    }

    /// Prints the verdict; returns the exit status.
    pub fn finish(&self) -> i32 {
        if self.failed == 0 {
            println!("{}: ok ({} checks)", self.name, self.passed);
            0
        } else {
            println!("{}: FAIL {} of {} checks", self.name, self.failed, self.failed + self.passed);
            1
        }
    }
}

pub mod fpu;

/// What a refused call must leave as it was (the kernel's check/perform
/// rule: a call that fails changed nothing).
pub mod unchanged {
    use oxok_libos::abi::{ACCOUNT_ENVS, ACCOUNT_FRAMES, ACCOUNT_HEAP, ACCOUNT_SLOTS, CAP_SLOTS};
    use oxok_libos::{exposed, sys};

    /// The calling environment's capability list (occupied slots), its
    /// account (frames, environments, time slots, kernel heap) and its
    /// exposed environment-table row (frames, page tables).
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Snapshot {
        pub caps: usize,
        pub frames: u64,
        pub envs: u64,
        pub slots: u64,
        pub heap: u64,
        pub row_frames: u32,
        pub row_tables: u32,
    }

    impl Snapshot {
        /// The caller's, now.
        pub fn of_self() -> Snapshot {
            let caps = (0..CAP_SLOTS as u64).filter(|&s| sys::cap_info(s).is_ok()).count();
            let used = |kind| sys::account_info(0, kind).map_or(u64::MAX, |[used, _, _]| used);
            let row = exposed::env_entry(exposed::self_id());
            Snapshot {
                caps,
                frames: used(ACCOUNT_FRAMES),
                envs: used(ACCOUNT_ENVS),
                slots: used(ACCOUNT_SLOTS),
                heap: used(ACCOUNT_HEAP),
                row_frames: row.map_or(u32::MAX, |r| r.frames),
                row_tables: row.map_or(u32::MAX, |r| r.tables),
            }
        }
    }
}

/// Helpers for the CPU-slot scenarios.
pub mod cpu {
    use oxok_libos::abi::layout::ENV_TABLE_ROWS;
    use oxok_libos::exposed;

    /// TSC cycles per millisecond (from the clock page; 1 GHz if absent).
    pub fn cycles_per_ms() -> u64 {
        exposed::clock().map_or(1_000_000, |c| (c.tsc_hz / 1000).max(1))
    }

    /// Spins for `ms` milliseconds of wall time (TSC).
    pub fn spin_ms(ms: u64) {
        let end = exposed::rdtsc() + ms * cycles_per_ms();
        while exposed::rdtsc() < end {
            core::hint::spin_loop();
        }
    }

    /// Another live environment started from program `name` (its id), if
    /// one exists.
    pub fn peer(name: &str) -> Option<u64> {
        let me = exposed::self_id();
        (0..ENV_TABLE_ROWS).filter_map(exposed::env_row).find_map(|r| {
            let n = r.name.iter().position(|&b| b == 0).unwrap_or(r.name.len());
            let id = u64::from(r.id);
            (id != 0 && id != me && &r.name[..n] == name.as_bytes()).then_some(id)
        })
    }

    /// Waits (spinning) up to `ms` milliseconds for a peer started from
    /// `name`.
    pub fn wait_peer(name: &str, ms: u64) -> Option<u64> {
        let end = exposed::rdtsc() + ms * cycles_per_ms();
        loop {
            if let Some(p) = peer(name) {
                return Some(p);
            }
            if exposed::rdtsc() >= end {
                return None;
            }
        }
    }

    /// Ticks environment `id` has run (exposed run statistics).
    pub fn ticks(id: u64) -> Option<u64> {
        exposed::run_stats(id).map(|r| r.ticks)
    }
}

/// Checked access to words of memory a test program mapped itself (for
/// pages that are no Rust object: scratch pages, shared frames).
#[allow(unsafe_code)]
pub mod mem {
    /// Reads the word at `va`, which must be mapped readable (asserted).
    pub fn read(va: u64) -> u64 {
        assert!(oxok_libos::exposed::readable(va));
        // SAFETY: checked mapped readable just now; no Rust object lives there.
        unsafe { core::ptr::read_volatile(va as *const u64) }
    }

    /// Writes the word at `va`, which must be mapped writable (asserted).
    pub fn write(va: u64, v: u64) {
        assert!(oxok_libos::exposed::writable(va));
        // SAFETY: checked mapped writable just now; no Rust object lives there.
        unsafe { core::ptr::write_volatile(va as *mut u64, v) }
    }

    /// Reads the word at `va`, which may fault first: for pages the libOS's
    /// VM handler maps on demand (`vm::map_anon` regions).
    pub fn load(va: u64) -> u64 {
        // SAFETY: a fault here is an upcall the VM handler resolves (or
        // that ends the program); no Rust object lives at `va`.
        unsafe { core::ptr::read_volatile(va as *const u64) }
    }

    /// Writes the word at `va`, which may fault first (demand-zero or
    /// copy-on-write pages the VM handler resolves, or a trap handler).
    pub fn store(va: u64, v: u64) {
        // SAFETY: as `load`.
        unsafe { core::ptr::write_volatile(va as *mut u64, v) }
    }

    /// A breakpoint (`int3`): an exception upcall, after which the handler
    /// resumes at the next instruction (`rip` is already past it).
    pub fn int3() {
        // SAFETY: the exception handler the caller installed resumes after
        // it; no register or memory changes otherwise.
        unsafe { core::arch::asm!("int3", options(nostack)) }
    }
}

/// The byte stream the pipe scenarios send (`pipe`, `pipe-writer`): byte
/// `i` is [`stream::byte`]`(i)`, which changes with the position inside a
/// 4 KiB block and with the block, so lost, repeated or reordered pieces
/// show.
pub mod stream {
    /// Byte `i` of the stream.
    pub fn byte(i: u64) -> u8 {
        (i.wrapping_mul(7) ^ (i >> 12).wrapping_mul(13)) as u8
    }

    /// Fills `buf` with the stream from byte `at`.
    pub fn fill(at: u64, buf: &mut [u8]) {
        for (k, b) in buf.iter_mut().enumerate() {
            *b = byte(at + k as u64);
        }
    }

    /// True if `buf` is the stream from byte `at`.
    pub fn matches(at: u64, buf: &[u8]) -> bool {
        buf.iter().enumerate().all(|(k, &b)| b == byte(at + k as u64))
    }
}
