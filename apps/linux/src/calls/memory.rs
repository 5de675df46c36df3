//! Memory calls: the break, anonymous and private file mappings, unmap,
//! protection changes, remapping ([`crate::mem`] keeps the areas).

use crate::errno::{EBADF, EEXIST, EFAULT, EINVAL, ENOMEM, Res};
use crate::layout::{MMAP_BASE, MMAP_END, guest_range};
use crate::mem::{self, PROT_EXEC, PROT_READ, PROT_WRITE, page_up};
use crate::uaccess;
use core::sync::atomic::{AtomicU64, Ordering};
use oxok_libos::abi::ExceptionFrame;
use oxok_libos::abi::layout::PAGE_SIZE;
use oxok_libos::fd::{self, SeekFrom};

const MAP_SHARED: u64 = 0x01;
const MAP_PRIVATE: u64 = 0x02;
const MAP_FIXED: u64 = 0x10;
const MAP_ANONYMOUS: u64 = 0x20;
const MAP_FIXED_NOREPLACE: u64 = 0x10_0000;

/// Where the next placed mapping goes: addresses only grow, so a stale
/// pointer into an unmapped mapping faults instead of aliasing a new one.
static NEXT: AtomicU64 = AtomicU64::new(MMAP_BASE);

pub fn brk(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    Ok(mem::brk(a[0]) as i64)
}

pub fn mmap(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (addr, len, prot, flags, fd, offset) = (a[0], a[1], a[2], a[3], a[4] as i32, a[5]);
    if len == 0 || prot & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 || flags & (MAP_SHARED | MAP_PRIVATE) == 0 {
        return Err(EINVAL);
    }
    if !offset.is_multiple_of(PAGE_SIZE)
        || !addr.is_multiple_of(PAGE_SIZE) && flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0
    {
        return Err(EINVAL);
    }
    let len = page_up(len).ok_or(ENOMEM)?;
    let anonymous = flags & MAP_ANONYMOUS != 0;
    if !anonymous && fd::get(fd as usize).is_err() {
        return Err(EBADF);
    }
    let start = if flags & (MAP_FIXED | MAP_FIXED_NOREPLACE) != 0 {
        let end = addr.checked_add(len).ok_or(ENOMEM)?;
        if !guest_range(addr, end) {
            return Err(ENOMEM);
        }
        if flags & MAP_FIXED == 0 && mem::overlaps(addr, end) {
            return Err(EEXIST);
        }
        addr
    } else {
        place(len)?
    };
    let end = start + len;
    if anonymous && flags & MAP_SHARED != 0 {
        mem::add_shared(start, end, prot)?;
        return Ok(start as i64);
    }
    if anonymous {
        mem::add(start, end, prot)?;
        return Ok(start as i64);
    }
    // A private file mapping: the file's bytes are read in now, the pages
    // are the program's own from then on.
    mem::add(start, end, PROT_READ | PROT_WRITE)?;
    if let Err(e) = read_file(fd as usize, offset, start, len) {
        mem::remove(start, end);
        return Err(e);
    }
    mem::protect(start, end, prot)?;
    Ok(start as i64)
}

/// Reads up to `len` bytes of file `fd` from `offset` into `[start, …)`,
/// keeping the descriptor's position.
fn read_file(fd: usize, offset: u64, start: u64, len: u64) -> Result<(), i64> {
    let file = fd::get(fd).map_err(|_| EBADF)?;
    let saved = file.seek(SeekFrom::Current(0)).map_err(|_| crate::errno::ENODEV)?;
    let result = (|| {
        file.seek(SeekFrom::Start(offset)).map_err(crate::errno::from_io)?;
        let mut buf = alloc::vec![0u8; uaccess::CHUNK];
        let mut done = 0;
        while done < len {
            let want = ((len - done) as usize).min(buf.len());
            let n = file.read(&mut buf[..want]).map_err(crate::errno::from_io)?;
            if n == 0 {
                break;
            }
            uaccess::write(start + done, &buf[..n])?;
            done += n as u64;
        }
        Ok(())
    })();
    let _ = file.seek(SeekFrom::Start(saved));
    result
}

/// Finds room for `len` bytes in the `mmap` area, a guard page apart.
fn place(len: u64) -> Result<u64, i64> {
    let start = NEXT.load(Ordering::Relaxed);
    let end = start.checked_add(len).filter(|&e| e <= MMAP_END).ok_or(ENOMEM)?;
    NEXT.store(end + PAGE_SIZE, Ordering::Relaxed);
    Ok(start)
}

fn range(addr: u64, len: u64) -> Result<(u64, u64), i64> {
    if !addr.is_multiple_of(PAGE_SIZE) || len == 0 {
        return Err(EINVAL);
    }
    let end = addr.checked_add(page_up(len).ok_or(EINVAL)?).ok_or(EINVAL)?;
    Ok((addr, end))
}

pub fn munmap(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (start, end) = range(a[0], a[1])?;
    if !guest_range(start, end) {
        return Err(EINVAL);
    }
    mem::remove(start, end);
    Ok(0)
}

const MREMAP_MAYMOVE: u64 = 1;
const MREMAP_FIXED: u64 = 2;

/// `mremap(old, old_len, new_len, flags, new)` of a private mapping:
/// shrinking unmaps the tail; growing extends the area in place when the
/// pages after it are free, else (with `MREMAP_MAYMOVE`) moves it — a new
/// area (at `new` with `MREMAP_FIXED`), the contents copied, the old one
/// unmapped. A `MAP_SHARED` mapping can shrink but not grow or move
/// (`EINVAL`: its frames are shared with fork relatives, a copy would not
/// be); `MREMAP_DONTUNMAP` is `EINVAL`.
pub fn mremap(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (old, old_len, new_len, flags, new) = (a[0], a[1], a[2], a[3], a[4]);
    if flags & !(MREMAP_MAYMOVE | MREMAP_FIXED) != 0
        || flags & MREMAP_FIXED != 0 && flags & MREMAP_MAYMOVE == 0
        || old_len == 0
        || new_len == 0
    {
        return Err(EINVAL);
    }
    let (old, old_end) = range(old, old_len)?;
    let new_len = page_up(new_len).ok_or(ENOMEM)?;
    let (prot, shared) = mem::area_of(old, old_end).ok_or(EFAULT)?;
    let old_len = old_end - old;
    if flags & MREMAP_FIXED == 0 && new_len <= old_len {
        mem::remove(old + new_len, old_end);
        return Ok(old as i64);
    }
    if shared {
        return Err(EINVAL);
    }
    if flags & MREMAP_FIXED == 0 && mem::grow(old_end, old + new_len) {
        // Later placements start past it (`place` hands out addresses
        // upwards without looking at the areas).
        if old + new_len <= MMAP_END {
            NEXT.fetch_max(old + new_len + PAGE_SIZE, Ordering::Relaxed);
        }
        return Ok(old as i64);
    }
    if flags & MREMAP_MAYMOVE == 0 {
        return Err(ENOMEM);
    }
    let to = if flags & MREMAP_FIXED != 0 {
        let (to, to_end) = range(new, new_len)?;
        if !guest_range(to, to_end) || to < old_end && old < to_end {
            return Err(EINVAL);
        }
        to
    } else {
        place(new_len)?
    };
    mem::add(to, to + new_len, PROT_READ | PROT_WRITE)?;
    let mut done = 0;
    while done < old_len.min(new_len) {
        let n = (old_len.min(new_len) - done).min(uaccess::CHUNK as u64);
        let copied = uaccess::read_vec(old + done, n as usize).and_then(|bytes| uaccess::write(to + done, &bytes));
        if let Err(e) = copied {
            mem::remove(to, to + new_len);
            return Err(e);
        }
        done += n;
    }
    mem::protect(to, to + new_len, prot)?;
    mem::remove(old, old_end);
    Ok(to as i64)
}

pub fn mprotect(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (start, end) = range(a[0], a[1])?;
    if a[2] & !(PROT_READ | PROT_WRITE | PROT_EXEC) != 0 {
        return Err(EINVAL);
    }
    mem::protect(start, end, a[2])?;
    Ok(0)
}

const MADV_DONTNEED: u64 = 4;

/// `MADV_DONTNEED` gives the pages back (they read as zero at the next
/// touch, as Linux's private anonymous pages do); other advice is taken
/// and ignored.
pub fn madvise(a: &[u64; 6], _: &mut ExceptionFrame) -> Res {
    let (start, end) = range(a[0], a[1])?;
    if a[2] == MADV_DONTNEED {
        if !guest_range(start, end) {
            return Err(EINVAL);
        }
        mem::discard(start, end);
    }
    Ok(0)
}
