//! Typed access to pages the program mapped: the only way the libOS
//! touches memory by address.
//!
//! Each type is made only for an address the runtime checked, through the
//! exposed page tables, to be mapped user-accessible (writable where the
//! type writes), and that is none of the runtime's own memory — the
//! program image, the heap, the main stack ([`own_memory`]) — so no page
//! handed out here is ever a Rust object. If the program unmaps such a
//! page while a value for it lives, an access faults into the program's
//! own page-fault upcall; it never reaches another object.
//!
//! * [`SharedPage`] and [`SharedRegion`]: memory other environments may
//!   write at any time (pipes, file buffers, shared memory, the open-file
//!   table, a page being filled for another environment). Never a Rust
//!   object and never referenced as bytes: words are atomics, bytes move
//!   by bounds-checked copies.
//! * [`PageRef`]: a page this program reads (and writes) as a
//!   `[u8; 4096]` (the buffer-cache pages of a library file system):
//!   borrowed like a Rust object — any number of read-only claims of an
//!   address, or one writable one.

use crate::exposed;
use alloc::collections::BTreeMap;
use core::sync::atomic::AtomicU64;
use oxok_abi::Error;
use oxok_abi::layout::{PAGE_SIZE, STACK_SIZE, STACK_TOP};
use spin::Mutex;

/// Bytes in a page.
pub const BYTES: usize = PAGE_SIZE as usize;
/// Words in a page.
pub const WORDS: usize = BYTES / 8;

unsafe extern "C" {
    /// Bounds of the program image (`libos/user.ld`).
    static __image_start: u8;
    static __image_end: u8;
}

/// True if `[start, start + len)` overlaps memory where the runtime keeps
/// Rust objects: the program image (code, statics, the runtime's stacks),
/// the heap's region and the main stack.
pub fn own_memory(start: u64, len: u64) -> bool {
    let end = start.saturating_add(len);
    let image = ((&raw const __image_start) as u64, (&raw const __image_end) as u64);
    let heap = (crate::heap::HEAP_BASE, crate::heap::HEAP_BASE + crate::heap::HEAP_MAX);
    let stack = (STACK_TOP - STACK_SIZE, STACK_TOP);
    [image, heap, stack].iter().any(|&(lo, hi)| start < hi && lo < end)
}

/// True if every page of `[va, va + pages·4096)` is page-aligned, mapped
/// user-readable (user-writable when `write`) and none of the runtime's
/// own memory.
fn usable(va: u64, pages: usize, write: bool) -> bool {
    let Some(len) = (pages as u64).checked_mul(PAGE_SIZE) else { return false };
    if pages == 0 || !va.is_multiple_of(PAGE_SIZE) || va.checked_add(len).is_none() || own_memory(va, len) {
        return false;
    }
    (0..pages as u64).all(|i| {
        let page = va + i * PAGE_SIZE;
        if write { exposed::writable(page) } else { exposed::readable(page) }
    })
}

/// A page shared with other environments (see the module documentation).
#[derive(Debug)]
pub struct SharedPage {
    va: u64,
}

impl SharedPage {
    /// The page at `va`, if it is page-aligned, mapped user-writable and
    /// none of the runtime's own memory.
    pub fn writable(va: u64) -> Option<SharedPage> {
        usable(va, 1, true).then_some(SharedPage { va })
    }

    /// The page at `va`, if it is page-aligned, mapped user-readable and
    /// none of the runtime's own memory. A write to it while it is mapped
    /// read-only faults (a copy-on-write page is copied by the libOS's
    /// fault handler, and the write goes on).
    pub fn readable(va: u64) -> Option<SharedPage> {
        usable(va, 1, false).then_some(SharedPage { va })
    }

    /// Its address.
    pub fn va(&self) -> u64 {
        self.va
    }

    /// The page as words.
    pub fn words(&self) -> &[AtomicU64; WORDS] {
        Self::words_at(self.va)
    }

    /// The page as words for as long as the program runs, for a page it
    /// maps for good (a table at a fixed address).
    pub fn into_words(self) -> &'static [AtomicU64; WORDS] {
        Self::words_at(self.va)
    }

    fn words_at(va: u64) -> &'static [AtomicU64; WORDS] {
        // Only called with the address of a `SharedPage`, checked mapped and
        // no Rust object when it was made (an unmap since faults, see the
        // module documentation, so the lifetime promises nothing more).
        // SAFETY: so the page is readable; atomics may alias memory others
        // write, and any bit pattern is a value.
        unsafe { &*(va as *const [AtomicU64; WORDS]) }
    }

    /// The page as a region of one page: its copies, to and from this
    /// program's memory and a guest's.
    pub fn region(&self) -> SharedRegion {
        SharedRegion { va: self.va, pages: 1 }
    }

    /// Copies `dst.len()` bytes from byte `at` out, clipped to the page.
    pub fn copy_out(&self, at: usize, dst: &mut [u8]) {
        self.region().copy_out(at, dst);
    }

    /// Copies `src` in at byte `at`, clipped to the page.
    pub fn copy_in(&self, at: usize, src: &[u8]) {
        self.region().copy_in(at, src);
    }
}

/// A page at a fixed address that the program maps for good (a table of
/// its own other environments may read, such as the open-file table):
/// checked mapped and none of the runtime's memory the first time its
/// words are asked for, and trusted from then on, since the program never
/// unmaps it (if it did, an access would fault in the program itself, as
/// for a [`SharedPage`]). One for a page's whole life: in a static.
#[derive(Debug)]
pub struct FixedPage {
    va: u64,
    checked: core::sync::atomic::AtomicBool,
}

impl FixedPage {
    /// The page at `va`, not yet checked.
    pub const fn at(va: u64) -> FixedPage {
        FixedPage { va, checked: core::sync::atomic::AtomicBool::new(false) }
    }

    /// The page as words, if it is (or once was found) mapped readable
    /// and none of the runtime's own memory.
    #[inline]
    pub fn words(&self) -> Option<&'static [AtomicU64; WORDS]> {
        use core::sync::atomic::Ordering;
        if self.checked.load(Ordering::Relaxed) {
            return Some(SharedPage::words_at(self.va));
        }
        let page = SharedPage::readable(self.va)?;
        self.checked.store(true, Ordering::Relaxed);
        Some(page.into_words())
    }
}

/// Consecutive pages shared with other environments, read and written as
/// atomic words (see the module documentation).
#[derive(Debug)]
pub struct SharedRegion {
    va: u64,
    pages: usize,
}

impl SharedRegion {
    /// The `pages` pages at `va`, if each is mapped user-readable and none
    /// is the runtime's own memory. Writing a word of a page mapped
    /// read-only faults.
    pub fn readable(va: u64, pages: usize) -> Option<SharedRegion> {
        usable(va, pages, false).then_some(SharedRegion { va, pages })
    }

    /// The region as words.
    pub fn words(&self) -> &[AtomicU64] {
        let len = self.pages * WORDS;
        // SAFETY: the pages are mapped and no Rust object (checked when
        // `self` was made); atomics may alias memory others write.
        unsafe { core::slice::from_raw_parts(self.va as *const AtomicU64, len) }
    }

    /// Copies `dst.len()` bytes from byte `at` of the region out, clipped
    /// to the region: for bytes nobody writes meanwhile, such as a packet
    /// ring's entry after its owner word (read with `Acquire`) said it is
    /// full. Bytes being written meanwhile arrive torn, never unsafely.
    pub fn copy_out(&self, at: usize, dst: &mut [u8]) {
        let n = dst.len().min((self.pages * BYTES).saturating_sub(at));
        // SAFETY: `[at, at + n)` lies inside the mapped pages (`n` clipped),
        // which are no Rust object; the destination is a borrowed slice of
        // at least `n` bytes and cannot overlap them.
        unsafe { core::ptr::copy_nonoverlapping((self.va + at as u64) as *const u8, dst.as_mut_ptr(), n) }
    }

    /// Copies `len` bytes from byte `at` of the region (clipped to it) to
    /// guest address `addr`: the bytes copied. `BadAddress` if any page of
    /// the destination is not mapped user-writable, or is the runtime's own
    /// memory ([`guest::mapped`](crate::guest::mapped)). One copy where a
    /// copy out into a buffer and a copy from it to the guest were two.
    pub fn copy_to_guest(&self, at: usize, addr: u64, len: usize) -> Result<usize, Error> {
        let n = len.min((self.pages * BYTES).saturating_sub(at));
        if !crate::guest::mapped(addr, n as u64, true) {
            return Err(Error::BadAddress);
        }
        // The destination is mapped user-writable and none of the runtime's
        // memory (checked above), so no Rust object, and stays mapped while
        // the copy runs (as for `guest::copy_out`).
        // SAFETY: the source lies inside the mapped pages (`n` clipped), no
        // Rust object; the destination as said; `copy` allows overlap.
        unsafe { core::ptr::copy((self.va + at as u64) as *const u8, addr as *mut u8, n) };
        Ok(n)
    }

    /// Copies `len` bytes at guest address `addr` in at byte `at` of the
    /// region (clipped to it): the bytes copied. `BadAddress` if any page of
    /// the source is not mapped user-readable, or is the runtime's own
    /// memory ([`guest::mapped`](crate::guest::mapped)); the region is then
    /// unchanged. The other direction of [`copy_to_guest`](Self::copy_to_guest).
    pub fn copy_from_guest(&self, at: usize, addr: u64, len: usize) -> Result<usize, Error> {
        let n = len.min((self.pages * BYTES).saturating_sub(at));
        if !crate::guest::mapped(addr, n as u64, false) {
            return Err(Error::BadAddress);
        }
        // The source is mapped user-readable and none of the runtime's memory
        // (checked above), so no Rust object, and stays mapped while the copy
        // runs (as for `guest::copy_in`).
        // SAFETY: the destination lies inside the mapped pages (`n` clipped),
        // no Rust object; the source as said; `copy` allows overlap.
        unsafe { core::ptr::copy(addr as *const u8, (self.va + at as u64) as *mut u8, n) };
        Ok(n)
    }

    /// Copies `src` in at byte `at` of the region, clipped to it (publish
    /// the bytes to their reader with an atomic word afterwards). The pages
    /// must be mapped writable here; a read-only one faults. The bytes
    /// copied.
    pub fn copy_in(&self, at: usize, src: &[u8]) -> usize {
        let n = src.len().min((self.pages * BYTES).saturating_sub(at));
        // SAFETY: as in `copy_out`: the destination lies inside the mapped
        // pages, no Rust object; the source is a borrowed slice of at least
        // `n` bytes.
        unsafe { core::ptr::copy_nonoverlapping(src.as_ptr(), (self.va + at as u64) as *mut u8, n) };
        n
    }
}

/// Claims on addresses: the number of read-only [`PageRef`]s, or -1 for
/// one writable.
static CLAIMS: Mutex<Claims> = Mutex::new(Claims { few: [(0, 0); FEW], more: BTreeMap::new() });

/// Claims kept in a small array before the map (a program holds a few at
/// a time; a map insertion and removal per page touched cost more than the
/// touch, and so did a search of the array). Each address may sit in one
/// of two neighbouring places of the array (two-way), so two pages a file
/// server holds at once rarely both need the same place (with one place
/// each, pages 16 apart did, and the map took one of them: eight map
/// insertions a small-file create).
const FEW: usize = 64;

/// Address → claim count; an address is in one of its two places in `few`
/// (by page number, count non-zero) or in `more`, never both.
struct Claims {
    few: [(u64, i32); FEW],
    more: BTreeMap<u64, i32>,
}

impl Claims {
    /// The two places of `few` that may hold `va`.
    fn places(va: u64) -> [usize; 2] {
        let first = (va / BYTES as u64) as usize % FEW;
        [first, (first + 1) % FEW]
    }

    /// Where in `few` `va` sits, if it does.
    fn find(&self, va: u64) -> Option<usize> {
        Self::places(va).into_iter().find(|&i| self.few[i].0 == va && self.few[i].1 != 0)
    }

    fn get(&self, va: u64) -> i32 {
        match self.find(va) {
            Some(i) => self.few[i].1,
            None if self.more.is_empty() => 0,
            None => self.more.get(&va).copied().unwrap_or(0),
        }
    }

    /// Sets `va`'s count (0: no claim).
    fn set(&mut self, va: u64, n: i32) {
        if let Some(i) = self.find(va) {
            self.few[i].1 = n;
            return;
        }
        if n == 0 {
            self.more.remove(&va);
        } else if let Some(i) = Self::places(va).into_iter().find(|&i| self.few[i].1 == 0)
            && !self.more.contains_key(&va)
        {
            self.few[i] = (va, n);
        } else {
            self.more.insert(va, n);
        }
    }
}

/// A page read (and written) as bytes, claimed like a borrow: any number
/// of read-only claims of an address, or one writable one.
#[derive(Debug)]
pub struct PageRef {
    va: u64,
    write: bool,
}

impl PageRef {
    /// Claims the page at `va` (writable when `write`): `BadAddress` if it
    /// is not page-aligned, not mapped (writable), or the runtime's own
    /// memory; `Busy` if a claim of it conflicts.
    pub fn claim(va: u64, write: bool) -> Result<PageRef, Error> {
        if !usable(va, 1, write) {
            return Err(Error::BadAddress);
        }
        let mut claims = CLAIMS.lock();
        match (write, claims.get(va)) {
            (true, 0) => claims.set(va, -1),
            (false, n) if n >= 0 => claims.set(va, n + 1),
            _ => return Err(Error::Busy),
        };
        Ok(PageRef { va, write })
    }

    /// Its address.
    pub fn va(&self) -> u64 {
        self.va
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8; BYTES] {
        // SAFETY: the page is mapped readable and no Rust object (checked by
        // `claim`); no writable claim of it exists while `self` does.
        unsafe { &*(self.va as *const [u8; BYTES]) }
    }

    /// The bytes, writable (`None` for a read-only claim).
    pub fn bytes_mut(&mut self) -> Option<&mut [u8; BYTES]> {
        // SAFETY: a writable claim is the only claim of its page, which is
        // mapped writable and no Rust object (checked by `claim`); the
        // borrow of `self` keeps this the only reference.
        self.write.then(|| unsafe { &mut *(self.va as *mut [u8; BYTES]) })
    }
}

impl Drop for PageRef {
    fn drop(&mut self) {
        let mut claims = CLAIMS.lock();
        let n = claims.get(self.va);
        claims.set(self.va, if n > 1 { n - 1 } else { 0 });
    }
}
