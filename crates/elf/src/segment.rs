//! Loadable segments as the loader sees them.

use crate::bytes;
use crate::program_header::{PT_LOAD, ProgramHeader};
use core::fmt;

/// Memory access permissions of a segment (from `p_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Flags {
    /// PF_R: readable.
    pub read: bool,
    /// PF_W: writable.
    pub write: bool,
    /// PF_X: executable.
    pub exec: bool,
}

/// A validated segment: map `mem_size` bytes at `vaddr`, fill the start with
/// `data` and zero the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment<'a> {
    /// The virtual address of the first byte (`p_vaddr`; need not be page aligned).
    pub vaddr: u64,
    /// Size in memory (`p_memsz`); at least `data.len()`.
    pub mem_size: u64,
    /// The `p_filesz` bytes from the file.
    pub data: &'a [u8],
    /// Access permissions.
    pub flags: Flags,
}

impl<'a> Segment<'a> {
    /// The segment described by `ph`, if its file bytes lie within `file`.
    pub(crate) fn from_header(file: &'a [u8], ph: &ProgramHeader) -> Option<Segment<'a>> {
        Some(Segment {
            vaddr: ph.vaddr,
            mem_size: ph.memsz,
            data: bytes::range(file, ph.offset, ph.filesz)?,
            flags: ph.permissions(),
        })
    }
}

/// Iterator over the PT_LOAD segments of an [`crate::Elf`], in file order.
#[derive(Clone)]
pub struct Segments<'a> {
    file: &'a [u8],
    table: &'a [u8],
    next: usize,
    bias: u64,
}

impl<'a> Segments<'a> {
    /// Iterates the PT_LOAD entries of a validated program header `table`,
    /// their addresses moved up by `bias`.
    pub(crate) fn new(file: &'a [u8], table: &'a [u8], bias: u64) -> Segments<'a> {
        Segments { file, table, next: 0, bias }
    }
}

impl<'a> Iterator for Segments<'a> {
    type Item = Segment<'a>;

    fn next(&mut self) -> Option<Segment<'a>> {
        // `read` returns None only past the end of the table.
        while let Some(ph) = ProgramHeader::read(self.table, self.next, self.bias) {
            self.next = self.next.saturating_add(1);
            if ph.kind == PT_LOAD {
                // Validated by `Elf::parse`, so this always succeeds.
                if let Some(segment) = Segment::from_header(self.file, &ph) {
                    return Some(segment);
                }
            }
        }
        None
    }
}

impl fmt::Debug for Segments<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Segments").field("next", &self.next).finish_non_exhaustive()
    }
}
