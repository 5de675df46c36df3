//! Validation of individual segments and of their layout in memory.

use crate::program_header::ProgramHeader;
use crate::{ElfError, Segment};

/// The page size segments are mapped with.
pub const PAGE_SIZE: u64 = 4096;

/// Checks one PT_LOAD or PT_TLS header against the file and `limit`.
pub(crate) fn segment<'a>(file: &'a [u8], ph: &ProgramHeader, limit: u64) -> Result<Segment<'a>, ElfError> {
    let segment = Segment::from_header(file, ph).ok_or(ElfError::SegmentOutOfFile)?;
    if ph.filesz > ph.memsz {
        return Err(ElfError::FileBiggerThanMemory);
    }
    match ph.end() {
        Some(end) if end <= limit => Ok(segment),
        _ => Err(ElfError::SegmentOutOfRange),
    }
}

/// The pages `[first, end)` a segment touches (empty when `p_memsz` is 0).
/// Requires `ph.end()` not to overflow (checked by [`segment`]).
pub(crate) fn pages(ph: &ProgramHeader) -> (u64, u64) {
    let first = ph.vaddr / PAGE_SIZE;
    if ph.memsz == 0 {
        return (first, first);
    }
    let end = ph.end().unwrap_or(u64::MAX);
    (first, end.div_ceil(PAGE_SIZE))
}

/// Whether two page ranges share a page.
pub(crate) fn overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < b.1 && b.0 < a.1
}

/// Whether the program header table `[phoff, phoff + len)` lies in the file
/// bytes of `ph`; if so, its address in memory.
pub(crate) fn table_address(ph: &ProgramHeader, phoff: u64, len: u64) -> Option<u64> {
    let delta = phoff.checked_sub(ph.offset)?;
    if delta.checked_add(len)? > ph.filesz {
        return None;
    }
    ph.vaddr.checked_add(delta)
}
