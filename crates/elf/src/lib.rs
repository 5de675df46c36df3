//! A defensive parser for x86-64 ELF64 executables.
//!
//! [`Elf::parse`] validates everything the loader relies on — header
//! identity, the program header table, every PT_LOAD segment's file range
//! and memory range, and the entry point — so that a loader can map the
//! [`Segment`]s it yields without further checks. Input is hostile: the
//! parser never panics and uses checked arithmetic throughout.
//!
//! Overlap policy: two PT_LOAD segments may not share any 4 KiB page, even
//! with equal permissions. Each segment can therefore be mapped on its own
//! pages with its own permissions. GNU ld and lld place each segment on
//! fresh pages (with a page size of 4 KiB or more), so their output passes.

#![no_std]
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod bytes;
mod check;
mod error;
mod file_header;
mod program_header;
mod segment;
pub mod shebang;

pub use check::PAGE_SIZE;
pub use error::ElfError;
pub use segment::{Flags, Segment, Segments};

use core::fmt;
use file_header::PHDR_SIZE;
use program_header::{PT_LOAD, PT_PHDR, PT_TLS, ProgramHeader};

/// Program header types only Linux toolchains emit (see
/// [`Elf::linux_abi`]): PT_INTERP, PT_NOTE, PT_GNU_EH_FRAME,
/// PT_GNU_RELRO, PT_GNU_PROPERTY.
const LINUX_MARKS: [u32; 5] = [3, 4, 0x6474_e550, 0x6474_e552, 0x6474_e553];

/// The most PT_LOAD segments an executable may have.
pub const MAX_SEGMENTS: usize = 64;

/// A validated ELF64 executable borrowed from its file bytes.
#[derive(Clone, Copy)]
pub struct Elf<'a> {
    file: &'a [u8],
    table: &'a [u8],
    entry: u64,
    phnum: u16,
    tls: Option<Segment<'a>>,
    tls_align: u64,
    phdr_vaddr: Option<u64>,
    gnu_marks: bool,
    bias: u64,
    dynamic: bool,
}

impl<'a> Elf<'a> {
    /// Parse and validate an x86-64 little-endian ELF64 executable (ET_EXEC)
    /// whose loadable segments must all lie in `[0, limit)`.
    ///
    /// A PT_TLS segment, if present, is checked like a PT_LOAD one (file
    /// range, sizes, limit) but not for overlap; a second PT_TLS is refused.
    /// Other program header types are ignored.
    pub fn parse(file: &'a [u8], limit: u64) -> Result<Elf<'a>, ElfError> {
        Self::parse_with(file, limit, None)
    }

    /// As [`Elf::parse`], also accepting a position-independent executable
    /// (`ET_DYN`, as `gcc -static-pie` makes), loaded at `bias`: every
    /// address it reports — segments, entry, program header table, TLS —
    /// is moved up by `bias`, and `limit` applies to the moved addresses.
    /// An `ET_EXEC` file is parsed as by [`Elf::parse`] (no bias).
    pub fn parse_pie(file: &'a [u8], limit: u64, bias: u64) -> Result<Elf<'a>, ElfError> {
        Self::parse_with(file, limit, Some(bias))
    }

    fn parse_with(file: &'a [u8], limit: u64, pie_bias: Option<u64>) -> Result<Elf<'a>, ElfError> {
        let header = file_header::parse(file, pie_bias.is_some())?;
        let bias = if header.dynamic { pie_bias.unwrap_or(0) } else { 0 };
        let entry = header.entry.checked_add(bias).ok_or(ElfError::EntryOutsideSegments)?;
        let table_len = usize::from(header.phnum).checked_mul(PHDR_SIZE).ok_or(ElfError::BadProgramHeaders)?;
        let table_len64 = u64::try_from(table_len).map_err(|_| ElfError::BadProgramHeaders)?;
        let table = bytes::range(file, header.phoff, table_len64).ok_or(ElfError::BadProgramHeaders)?;

        let mut pages = [(0u64, 0u64); MAX_SEGMENTS];
        let mut loads = 0usize;
        let mut entry_ok = false;
        let mut tls = None;
        let mut tls_align = 0;
        let mut phdr = None;
        let mut phdr_in_load = None;
        let mut gnu_marks = false;
        for index in 0..usize::from(header.phnum) {
            let ph = ProgramHeader::read(table, index, bias).ok_or(ElfError::BadProgramHeaders)?;
            match ph.kind {
                PT_LOAD => {
                    check::segment(file, &ph, limit)?;
                    let range = check::pages(&ph);
                    let (seen, free) = pages.split_at_mut(loads);
                    let slot = free.first_mut().ok_or(ElfError::TooManySegments)?;
                    if seen.iter().any(|&other| check::overlap(other, range)) {
                        return Err(ElfError::SegmentsOverlap);
                    }
                    *slot = range;
                    loads += 1;
                    let inside = ph.vaddr <= entry && ph.end().is_some_and(|end| entry < end);
                    entry_ok |= ph.exec() && inside;
                    if phdr_in_load.is_none() {
                        phdr_in_load = check::table_address(&ph, header.phoff, table_len64);
                    }
                }
                PT_TLS => {
                    if tls.is_some() {
                        return Err(ElfError::BadProgramHeaders);
                    }
                    tls = Some(check::segment(file, &ph, limit)?);
                    tls_align = ph.align;
                }
                PT_PHDR => phdr = phdr.or(Some(ph.vaddr)),
                kind if LINUX_MARKS.contains(&kind) => gnu_marks = true,
                _ => {}
            }
        }
        if loads == 0 {
            return Err(ElfError::NoSegments);
        }
        if !entry_ok {
            return Err(ElfError::EntryOutsideSegments);
        }
        Ok(Elf {
            file,
            table,
            entry,
            phnum: header.phnum,
            tls,
            tls_align,
            phdr_vaddr: phdr.or(phdr_in_load),
            gnu_marks,
            bias,
            dynamic: header.dynamic,
        })
    }

    /// The entry point (`e_entry`), inside an executable segment.
    pub fn entry(&self) -> u64 {
        self.entry
    }

    /// PT_LOAD segments in file order (already validated).
    pub fn segments(&self) -> Segments<'a> {
        Segments::new(self.file, self.table, self.bias)
    }

    /// The PT_TLS segment (the thread-local storage template), if any.
    pub fn tls(&self) -> Option<Segment<'a>> {
        self.tls
    }

    /// The alignment (`p_align`) of the PT_TLS segment; 0 when there is none.
    pub fn tls_align(&self) -> u64 {
        self.tls_align
    }

    /// The address of the program header table in memory, for `AT_PHDR`: the
    /// PT_PHDR `p_vaddr` if present, otherwise (as Linux does for static
    /// executables, which usually lack PT_PHDR) the address at which a PT_LOAD
    /// segment's file bytes contain the table; `None` if neither applies.
    pub fn program_headers_vaddr(&self) -> Option<u64> {
        self.phdr_vaddr
    }

    /// The number of program headers (`e_phnum`), for `AT_PHNUM`.
    pub fn phnum(&self) -> u16 {
        self.phnum
    }

    /// True for a position-independent executable (`ET_DYN`, accepted by
    /// [`Elf::parse_pie`]), whose addresses are moved by its load bias.
    pub fn is_pie(&self) -> bool {
        self.dynamic
    }

    /// True if the executable was made by a Linux toolchain (GNU ld or
    /// gold behind gcc or musl-gcc): it has one of the program headers
    /// those always add — `PT_INTERP`, `PT_NOTE`, `PT_GNU_RELRO`,
    /// `PT_GNU_PROPERTY`, `PT_GNU_EH_FRAME`. Oxok's own programs
    /// (`libos/user.ld`: no notes, no RELRO) have none of them, so a
    /// loader can tell which personality a program needs.
    pub fn linux_abi(&self) -> bool {
        self.gnu_marks
    }

    /// The size of one program header (`e_phentsize`, always 56), for `AT_PHENT`.
    pub fn phent(&self) -> u16 {
        PHDR_SIZE as u16
    }
}

impl fmt::Debug for Elf<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Elf")
            .field("file_len", &self.file.len())
            .field("entry", &format_args!("{:#x}", self.entry))
            .field("phnum", &self.phnum)
            .field("phdr_vaddr", &self.phdr_vaddr)
            .finish_non_exhaustive()
    }
}
