//! The ELF64 file header (`Elf64_Ehdr`).

use crate::ElfError;
use crate::bytes::{u8_at, u16_at, u32_at, u64_at};

/// Size of an ELF64 file header.
pub(crate) const EHDR_SIZE: usize = 64;
/// Size of an ELF64 program header.
pub(crate) const PHDR_SIZE: usize = 56;

const MAGIC: &[u8; 4] = b"\x7fELF";
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
const EV_CURRENT: u8 = 1;
const ET_EXEC: u16 = 2;
const ET_DYN: u16 = 3;
const EM_X86_64: u16 = 62;
/// `e_phnum` value meaning "the real count is elsewhere" (unsupported).
const PN_XNUM: u16 = 0xffff;

/// The file-header fields the loader needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FileHeader {
    /// `e_entry`.
    pub entry: u64,
    /// `e_phoff`.
    pub phoff: u64,
    /// `e_phnum`.
    pub phnum: u16,
    /// `ET_DYN`: position-independent (accepted only when asked for).
    pub dynamic: bool,
}

/// Parses and checks the file header; `ET_DYN` only if `allow_dyn`.
pub(crate) fn parse(data: &[u8], allow_dyn: bool) -> Result<FileHeader, ElfError> {
    let short = ElfError::TooShort;
    if data.len() < EHDR_SIZE {
        return Err(short);
    }
    if data.get(..4) != Some(MAGIC) {
        return Err(ElfError::BadMagic);
    }
    if u8_at(data, 4) != Some(ELFCLASS64) {
        return Err(ElfError::NotElf64);
    }
    if u8_at(data, 5) != Some(ELFDATA2LSB) {
        return Err(ElfError::NotLittleEndian);
    }
    if u16_at(data, 18) != Some(EM_X86_64) {
        return Err(ElfError::NotX86_64);
    }
    let kind = u16_at(data, 16);
    let dynamic = allow_dyn && kind == Some(ET_DYN);
    if kind != Some(ET_EXEC) && !dynamic {
        return Err(ElfError::NotExecutable);
    }
    let version_ok = u8_at(data, 6) == Some(EV_CURRENT) && u32_at(data, 20) == Some(1);
    let ehsize_ok = u16_at(data, 52) == Some(EHDR_SIZE as u16);
    let phentsize_ok = u16_at(data, 54) == Some(PHDR_SIZE as u16);
    if !(version_ok && ehsize_ok && phentsize_ok) {
        return Err(ElfError::BadHeader);
    }
    let phnum = u16_at(data, 56).ok_or(short)?;
    if phnum == PN_XNUM {
        return Err(ElfError::BadProgramHeaders);
    }
    Ok(FileHeader { entry: u64_at(data, 24).ok_or(short)?, phoff: u64_at(data, 32).ok_or(short)?, phnum, dynamic })
}
