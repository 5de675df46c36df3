//! Loading a static Linux program into the personality's own address
//! space: every `PT_LOAD` segment at its own addresses (an area per
//! segment, pages filled from the file now, bss zero on first touch), the
//! break after the image, a demand-zero stack, and the System V initial
//! stack Linux's `execve` builds: argc, argv, NULL, envp, NULL, the
//! auxiliary vector, then the strings and the 16 `AT_RANDOM` bytes.

use crate::layout::{FIXED_LIMIT, IMAGE_LIMIT, PIE_BASE, STACK_SIZE, STACK_TOP};
use crate::mem::{self, PROT_EXEC, PROT_READ, PROT_WRITE};
use crate::{random, uaccess};
use alloc::string::String;
use alloc::vec::Vec;
use oxok_elf::{Elf, ElfError};
use oxok_libos::abi::layout::PAGE_SIZE;

const AT_NULL: u64 = 0;
const AT_PHDR: u64 = 3;
const AT_PHENT: u64 = 4;
const AT_PHNUM: u64 = 5;
const AT_PAGESZ: u64 = 6;
const AT_BASE: u64 = 7;
const AT_FLAGS: u64 = 8;
const AT_ENTRY: u64 = 9;
const AT_UID: u64 = 11;
const AT_EUID: u64 = 12;
const AT_GID: u64 = 13;
const AT_EGID: u64 = 14;
const AT_PLATFORM: u64 = 15;
const AT_HWCAP: u64 = 16;
const AT_CLKTCK: u64 = 17;
const AT_SECURE: u64 = 23;
const AT_RANDOM: u64 = 25;
const AT_HWCAP2: u64 = 26;
const AT_EXECFN: u64 = 31;

/// Clock ticks per second Linux reports (`sysconf(_SC_CLK_TCK)`).
pub const CLKTCK: u64 = 100;

/// Where the program starts: entry point and initial stack pointer.
pub struct Start {
    pub entry: u64,
    pub sp: u64,
}

/// The program in `image` as it will be loaded: an `ET_EXEC` at its own
/// addresses (below [`IMAGE_LIMIT`]), or a static-pie moved to
/// [`PIE_BASE`].
pub fn parse(image: &[u8]) -> Result<Elf<'_>, ElfError> {
    match Elf::parse(image, IMAGE_LIMIT) {
        Err(ElfError::NotExecutable) => Elf::parse_pie(image, FIXED_LIMIT, PIE_BASE),
        r => r,
    }
}

/// Loads `image` (a whole ELF file) and builds its stack with `argv` and
/// `envp`; `execfn` is the path `AT_EXECFN` names.
pub fn load(image: &[u8], argv: &[String], envp: &[String], execfn: &str) -> Result<Start, String> {
    let elf = parse(image).map_err(|e| alloc::format!("not a static x86-64 executable: {e}"))?;
    let mut image_end = 0;
    for seg in elf.segments() {
        let end = seg.vaddr.checked_add(seg.mem_size).ok_or("segment wraps")?;
        let (start, end_page) = (seg.vaddr & !(PAGE_SIZE - 1), mem::page_up(end).ok_or("segment wraps")?);
        let mut prot = PROT_READ;
        if seg.flags.write {
            prot |= PROT_WRITE;
        }
        if seg.flags.exec {
            prot |= PROT_EXEC;
        }
        // Segments may share a page at their edges: the page keeps the
        // union of their protections and its contents.
        let edges = [start, end_page - PAGE_SIZE];
        let shared = edges.map(|p| mem::prot_at(p).unwrap_or(0));
        let rw = PROT_READ | PROT_WRITE;
        for (page, other) in edges.into_iter().zip(shared) {
            if other != 0 {
                mem::protect(page, page + PAGE_SIZE, rw).map_err(|_| "cannot protect a segment")?;
            }
        }
        let first = if shared[0] != 0 { start + PAGE_SIZE } else { start };
        let last = if shared[1] != 0 { end_page - PAGE_SIZE } else { end_page };
        // Whole pages of a read-only segment that lie page-aligned in the
        // boot archive are the archive's own pages, mapped, not copied.
        let (lo, hi) = archive_pages(&elf, &seg, first, last, prot);
        if first < last {
            mem::add(first, last, rw).map_err(|_| "segment outside the program's range")?;
            // The pages the file's bytes go to, made in batches (the rest,
            // bss, is zero-filled when first touched).
            let file_end = mem::page_up(seg.vaddr + seg.data.len() as u64).ok_or("segment wraps")?;
            let fill = |from: u64, to: u64| match from < to {
                true => mem::fill_fresh(from, to, rw).map_err(|_| "no memory for a segment"),
                false => Ok(()),
            };
            fill(first, lo.min(file_end.min(last)))?;
            if lo < hi {
                let src = seg.data.as_ptr() as u64 + (lo - seg.vaddr);
                mem::map_archive(lo, hi, src, prot).map_err(|_| "cannot map a segment")?;
            }
            fill(hi.max(first), file_end.min(last))?;
        }
        // The file's bytes, around the pages mapped from the archive.
        let (head, tail) = if lo < hi {
            let (head, rest) = seg.data.split_at((lo - seg.vaddr) as usize);
            (head, rest.get((hi - lo) as usize..).unwrap_or(&[]))
        } else {
            (seg.data, &[][..])
        };
        uaccess::write(seg.vaddr, head).map_err(|_| "cannot fill a segment")?;
        if !tail.is_empty() {
            let at = seg.vaddr + (seg.data.len() - tail.len()) as u64;
            uaccess::write(at, tail).map_err(|_| "cannot fill a segment")?;
        }
        mem::protect(start, end_page, prot).map_err(|_| "cannot protect a segment")?;
        for (page, other) in edges.into_iter().zip(shared) {
            if other != 0 {
                mem::protect(page, page + PAGE_SIZE, prot | other).map_err(|_| "cannot protect a segment")?;
            }
        }
        image_end = image_end.max(end_page);
    }
    mem::set_brk_start(image_end);
    mem::add(STACK_TOP - STACK_SIZE, STACK_TOP, PROT_READ | PROT_WRITE).map_err(|_| "no room for the stack")?;
    let sp = build_stack(&elf, argv, envp, execfn)?;
    Ok(Start { entry: elf.entry(), sp })
}

/// The pages `[lo, hi)` of segment `seg` (within `[first, last)`, the
/// pages it alone covers so far) that can be the boot archive's own pages:
/// for a segment that is never writable, its whole file pages that lie
/// page-aligned in the exposed archive and that no other segment shares (a
/// shared page takes the union of two protections, so it is copied). An
/// empty range (`lo == hi`) otherwise: a program read from a file, a
/// writable segment, an archive whose files are not page-aligned.
fn archive_pages(elf: &Elf<'_>, seg: &oxok_elf::Segment<'_>, first: u64, last: u64, prot: u64) -> (u64, u64) {
    let data = seg.data.as_ptr() as u64;
    let in_archive = oxok_libos::exposed::in_boot_archive(data, seg.data.len() as u64);
    if prot & PROT_WRITE != 0 || !in_archive || !(data.wrapping_sub(seg.vaddr)).is_multiple_of(PAGE_SIZE) {
        return (0, 0);
    }
    let Some(mut lo) = mem::page_up(seg.vaddr) else { return (0, 0) };
    let mut hi = (seg.vaddr + seg.data.len() as u64) & !(PAGE_SIZE - 1);
    lo = lo.max(first);
    hi = hi.min(last);
    // Pages another segment reaches into stay copied.
    let others = |page: u64| {
        elf.segments().any(|o| {
            let o_lo = o.vaddr & !(PAGE_SIZE - 1);
            let o_hi = o.vaddr.saturating_add(o.mem_size);
            (o.vaddr, o.mem_size) != (seg.vaddr, seg.mem_size) && o_lo <= page && page < o_hi
        })
    };
    while lo < hi && others(lo) {
        lo += PAGE_SIZE;
    }
    while lo < hi && others(hi - PAGE_SIZE) {
        hi -= PAGE_SIZE;
    }
    if lo < hi { (lo, hi) } else { (0, 0) }
}

/// Writes the initial stack below [`STACK_TOP`]; returns the stack pointer.
fn build_stack(elf: &Elf<'_>, argv: &[String], envp: &[String], execfn: &str) -> Result<u64, String> {
    // Strings and the random bytes at the top, in this order from the top
    // down: execfn, platform, random, envp strings, argv strings.
    let mut blob: Vec<u8> = Vec::new();
    let mut offsets = Vec::new();
    for s in argv.iter().chain(envp) {
        if s.as_bytes().contains(&0) {
            return Err("an argument contains NUL".into());
        }
        offsets.push(blob.len());
        blob.extend_from_slice(s.as_bytes());
        blob.push(0);
    }
    let random_at = blob.len();
    blob.extend_from_slice(&random::bytes16());
    let platform_at = blob.len();
    blob.extend_from_slice(b"x86_64\0");
    let execfn_at = blob.len();
    blob.extend_from_slice(execfn.as_bytes());
    blob.push(0);
    let strings = (STACK_TOP - 16 - blob.len() as u64) & !15;
    let at = |off: usize| strings + off as u64;

    let mut auxv = Vec::new();
    if let Some(phdr) = elf.program_headers_vaddr() {
        auxv.extend([AT_PHDR, phdr]);
    }
    auxv.extend([
        AT_PHENT,
        u64::from(elf.phent()),
        AT_PHNUM,
        u64::from(elf.phnum()),
        AT_PAGESZ,
        PAGE_SIZE,
        AT_BASE,
        0,
        AT_FLAGS,
        0,
        AT_ENTRY,
        elf.entry(),
        AT_UID,
        0,
        AT_EUID,
        0,
        AT_GID,
        0,
        AT_EGID,
        0,
        AT_SECURE,
        0,
        AT_CLKTCK,
        CLKTCK,
        AT_HWCAP,
        oxok_libos::guest::hwcap(),
        AT_HWCAP2,
        0,
        AT_RANDOM,
        at(random_at),
        AT_PLATFORM,
        at(platform_at),
        AT_EXECFN,
        at(execfn_at),
        AT_NULL,
        0,
    ]);
    let mut words = Vec::new();
    words.push(argv.len() as u64);
    words.extend(offsets[..argv.len()].iter().map(|&o| at(o)));
    words.push(0);
    words.extend(offsets[argv.len()..].iter().map(|&o| at(o)));
    words.push(0);
    words.extend(auxv);
    let sp = (strings - words.len() as u64 * 8) & !15;
    if sp < STACK_TOP - STACK_SIZE / 2 {
        return Err("arguments too long".into());
    }
    uaccess::write(strings, &blob).map_err(|_| "cannot write the stack")?;
    uaccess::write_u64s(sp, &words).map_err(|_| "cannot write the stack")?;
    // The page just below, which the first push touches.
    uaccess::writable(sp - 8, 8).map_err(|_| "cannot write the stack")?;
    Ok(sp)
}
