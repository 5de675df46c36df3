//! Checked access to user memory. The kernel never dereferences a user
//! pointer: it walks the environment's page tables as the CPU would for a
//! user access and copies through the direct map, so a bad pointer is an
//! error code, never a kernel fault.

use super::addr::PhysAddr;
use super::paging::{AddressSpace, PageHint};
use super::{PAGE_SIZE, phys};
use core::cell::Cell;
use oxok_abi::Error;
use oxok_abi::layout::user_range_ok;

/// Copies `buf.len()` bytes from user address `va` into `buf`.
pub fn copy_from_user(space: &AddressSpace, va: u64, buf: &mut [u8]) -> Result<(), Error> {
    let len = buf.len() as u64;
    if !user_range_ok(va, len) {
        return Err(Error::BadAddress);
    }
    let mut done = 0u64;
    while done < len {
        let addr = va + done;
        let pa = space.translate_user(addr, false).ok_or(Error::BadAddress)?;
        let chunk = (PAGE_SIZE - (addr % PAGE_SIZE)).min(len - done);
        // SAFETY: `pa..pa+chunk` lies within one user-readable frame of this
        // address space, direct-mapped; the slice is dropped at once.
        let src = unsafe { phys::bytes(pa, chunk as usize) };
        buf[done as usize..(done + chunk) as usize].copy_from_slice(src);
        done += chunk;
    }
    Ok(())
}

/// Copies `data` to user address `va`, which must be user-writable.
pub fn copy_to_user(space: &AddressSpace, va: u64, data: &[u8]) -> Result<(), Error> {
    let len = data.len() as u64;
    if !user_range_ok(va, len) {
        return Err(Error::BadAddress);
    }
    // The common case, all within one page: one walk, one copy.
    if len > 0 && va / PAGE_SIZE == (va + len - 1) / PAGE_SIZE {
        let pa = space.translate_user(va, true).ok_or(Error::BadAddress)?;
        // SAFETY: `pa..pa+len` lies within one user-writable frame of this
        // address space, direct-mapped; the kernel holds no Rust reference
        // to user frames, so this write aliases nothing.
        unsafe { core::ptr::copy_nonoverlapping(data.as_ptr(), phys::virt(pa) as *mut u8, data.len()) };
        return Ok(());
    }
    // Check the whole range first so a failure changes nothing.
    let mut addr = va & !(PAGE_SIZE - 1);
    while addr < va + len {
        space.translate_user(addr.max(va), true).ok_or(Error::BadAddress)?;
        addr += PAGE_SIZE;
    }
    let mut done = 0u64;
    while done < len {
        let a = va + done;
        let pa = space.translate_user(a, true).ok_or(Error::BadAddress)?;
        let chunk = (PAGE_SIZE - (a % PAGE_SIZE)).min(len - done);
        // SAFETY: `pa..pa+chunk` lies within one user-writable frame of this
        // address space, direct-mapped; the kernel holds no Rust reference
        // to user frames, so this write aliases nothing.
        unsafe {
            core::ptr::copy_nonoverlapping(data.as_ptr().add(done as usize), phys::virt(pa) as *mut u8, chunk as usize);
        }
        done += chunk;
    }
    Ok(())
}

/// Copies a plain-old-data value to user address `va`.
pub fn write_struct<T: super::pod::Pod>(space: &AddressSpace, va: u64, value: &T) -> Result<(), Error> {
    copy_to_user(space, va, super::pod::bytes_of(value))
}

/// Copies plain-old-data values, one after another, to user address `va`
/// (all or nothing, as [`copy_to_user`]).
pub fn write_slice<T: super::pod::Pod>(space: &AddressSpace, va: u64, values: &[T]) -> Result<(), Error> {
    copy_to_user(space, va, super::pod::bytes_of_slice(values))
}

/// Fills a plain-old-data value at user address `va` in place with `fill`
/// (which must write every field it wants set; the rest keep whatever the
/// user left there). Within one page and aligned (an upcall's record, the
/// usual case) it translates once and `fill` stores each field straight
/// into the frame, with neither a temporary nor a byte copy; otherwise it
/// fills a zeroed value and copies it. Nothing is written if any page of
/// the range is not user-writable. `fill` is called in one place; a
/// [`Fill`] whose `fill` is marked `#[inline(always)]` is inlined there
/// whatever the size of its caller (a closure is left to the compiler).
#[inline(always)]
pub fn fill_struct<T: super::pod::Pod>(space: &AddressSpace, va: u64, fill: impl Fill<T>) -> Result<(), Error> {
    let len = size_of::<T>() as u64;
    // Within one page: then a user-writable translation of `va` (which
    // never names a page at or above `USER_TOP`) covers the whole range.
    let fits =
        len > 0 && len <= PAGE_SIZE && va % PAGE_SIZE <= PAGE_SIZE - len && va.is_multiple_of(align_of::<T>() as u64);
    let mut copy: Option<T> = None;
    let target = match fits {
        true => {
            let pa = space.translate_hinted(va).ok_or(Error::BadAddress)?;
            // `pa..pa+len` lies within one user-writable frame of this
            // address space (`va`'s offset leaves room for `len` bytes in
            // its page), direct-mapped and aligned for `T`. The kernel holds
            // no other reference to user frames and the user does not run
            // meanwhile.
            // SAFETY: so the reference is valid and unique for `fill`'s
            // duration; `T` is plain old data, so any bytes are a valid `T`.
            unsafe { &mut *(phys::virt(pa) as *mut T) }
        }
        false => copy.insert(T::default()),
    };
    fill.fill(target);
    match &copy {
        None => Ok(()),
        Some(value) => copy_to_user(space, va, super::pod::bytes_of(value)),
    }
}

/// What [`fill_struct`] writes into a value in place.
pub trait Fill<T> {
    /// Writes the fields it sets into `target`.
    fn fill(self, target: &mut T);
}

impl<T, F: FnOnce(&mut T)> Fill<T> for F {
    #[inline(always)]
    fn fill(self, target: &mut T) {
        self(target)
    }
}

/// Reads a plain-old-data value from user address `va`.
pub fn read_struct<T: super::pod::Pod>(space: &AddressSpace, va: u64) -> Result<T, Error> {
    let mut value = T::default();
    copy_from_user(space, va, super::pod::bytes_of_mut(&mut value))?;
    Ok(value)
}

/// Reads an aligned `size`-byte word (1, 2, 4 or 8) at `va` as the
/// environment could: anywhere it may read, exposed tables included. `None`
/// for unaligned, unmapped or non-user addresses.
pub fn read_word(space: &AddressSpace, va: u64, size: u8) -> Option<u64> {
    read_word_at(space.translate_readable(va)?, va, size)
}

/// [`read_word`] through `hint`, a translation its caller keeps for
/// `space` (a wakeup predicate reads the same page evaluation after
/// evaluation: [`AddressSpace::translate_readable_hinted`]).
#[inline]
pub fn read_word_hinted(space: &AddressSpace, hint: &Cell<PageHint>, va: u64, size: u8) -> Option<u64> {
    read_word_at(space.translate_readable_hinted(hint, va)?, va, size)
}

/// The `size`-byte word at `pa`, which user address `va` translated to
/// (for a read the environment may make), if `va` is aligned to `size`.
#[inline(always)]
fn read_word_at(pa: PhysAddr, va: u64, size: u8) -> Option<u64> {
    if !matches!(size, 1 | 2 | 4 | 8) || !va.is_multiple_of(u64::from(size)) {
        return None;
    }
    // SAFETY: `pa` is readable by the environment through its own tables
    // (translated above), aligned to `size` so the word stays in one
    // direct-mapped frame; integers accept any bits.
    Some(unsafe {
        match size {
            1 => u64::from(phys::read::<u8>(pa)),
            2 => u64::from(phys::read::<u16>(pa)),
            4 => u64::from(phys::read::<u32>(pa)),
            _ => phys::read::<u64>(pa),
        }
    })
}

/// Reads successive records (plain-old-data values) from user memory with
/// one page-table walk per page instead of one per record: the page last
/// walked and its frame are remembered. Only an unmapping can make a
/// readable user page unreadable (changing a mapping's flags keeps
/// `PRESENT | USER`), so the caller calls [`Self::forget`] after anything
/// that unmaps; a record that straddles two pages is read the ordinary way.
pub struct RecordReader {
    /// The page walked last (`u64::MAX`: none) and its frame.
    page: u64,
    pa: PhysAddr,
}

impl Default for RecordReader {
    fn default() -> Self {
        Self::new()
    }
}

impl RecordReader {
    /// A reader that remembers no page yet.
    pub const fn new() -> RecordReader {
        RecordReader { page: u64::MAX, pa: PhysAddr::new(0) }
    }

    /// Reads a `T` at user address `va`, as [`read_struct`] would.
    pub fn read<T: super::pod::Pod>(&mut self, space: &AddressSpace, va: u64) -> Result<T, Error> {
        let len = size_of::<T>() as u64;
        if len == 0 || !user_range_ok(va, len) {
            return read_struct(space, va);
        }
        let page = va & !(PAGE_SIZE - 1);
        if (va + len - 1) & !(PAGE_SIZE - 1) != page {
            return read_struct(space, va);
        }
        if self.page != page {
            self.pa = space.translate_user(page, false).ok_or(Error::BadAddress)?;
            self.page = page;
        }
        let mut value = T::default();
        // `self.pa` was walked above or, with nothing unmapped since,
        // earlier in this kernel entry; the copy goes into a local value.
        // SAFETY: `self.pa` is the direct-mapped frame the tables map
        // user-readable at `page`, and `va..va+len` lies within that page.
        unsafe {
            core::ptr::copy_nonoverlapping(
                phys::virt(self.pa.offset(va - page)) as *const u8,
                super::pod::bytes_of_mut(&mut value).as_mut_ptr(),
                len as usize,
            );
        }
        Ok(value)
    }

    /// Drops the remembered page (after an unmapping).
    pub fn forget(&mut self) {
        self.page = u64::MAX;
    }
}
