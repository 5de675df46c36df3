//! ELF64 program headers (`Elf64_Phdr`).

use crate::bytes::{u32_at, u64_at};
use crate::file_header::PHDR_SIZE;

/// A loadable segment.
pub(crate) const PT_LOAD: u32 = 1;
/// The location of the program header table itself.
pub(crate) const PT_PHDR: u32 = 6;
/// The thread-local storage template.
pub(crate) const PT_TLS: u32 = 7;

const PF_X: u32 = 1;
const PF_W: u32 = 2;
const PF_R: u32 = 4;

/// One program header's fields.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ProgramHeader {
    pub kind: u32,
    pub flags: u32,
    pub offset: u64,
    pub vaddr: u64,
    pub filesz: u64,
    pub memsz: u64,
    pub align: u64,
}

impl ProgramHeader {
    /// Parses the `index`th entry of a table already checked to hold it,
    /// its address moved up by `bias` (a position-independent executable's
    /// load address; `None` if that overflows).
    pub(crate) fn read(table: &[u8], index: usize, bias: u64) -> Option<ProgramHeader> {
        let entry = table.get(index.checked_mul(PHDR_SIZE)?..)?.get(..PHDR_SIZE)?;
        Some(ProgramHeader {
            kind: u32_at(entry, 0)?,
            flags: u32_at(entry, 4)?,
            offset: u64_at(entry, 8)?,
            vaddr: u64_at(entry, 16)?.checked_add(bias)?,
            filesz: u64_at(entry, 32)?,
            memsz: u64_at(entry, 40)?,
            align: u64_at(entry, 48)?,
        })
    }

    /// Whether the segment is executable.
    pub(crate) fn exec(&self) -> bool {
        self.flags & PF_X != 0
    }

    /// The permission bits as [`crate::Flags`].
    pub(crate) fn permissions(&self) -> crate::Flags {
        crate::Flags { read: self.flags & PF_R != 0, write: self.flags & PF_W != 0, exec: self.exec() }
    }

    /// The end of the segment in memory (`p_vaddr + p_memsz`), if it fits.
    pub(crate) fn end(&self) -> Option<u64> {
        self.vaddr.checked_add(self.memsz)
    }
}
