//! Reading one 512-byte ustar header.

use crate::ArchiveError;
use crate::octal;
use core::ops::Range;

/// The size of a header and the unit data is padded to.
pub(crate) const BLOCK: usize = 512;

/// The name field (NUL-terminated unless all 100 bytes are used).
pub(crate) const NAME: Range<usize> = 0..100;
/// The data size, octal.
pub(crate) const SIZE: Range<usize> = 124..136;
/// The header checksum, octal.
pub(crate) const CHECKSUM: Range<usize> = 148..156;
/// The entry type: `'0'` or NUL for a regular file.
pub(crate) const TYPEFLAG: usize = 156;
/// The type flag of a regular file.
pub(crate) const REGULAR: u8 = b'0';
/// The type flag of a POSIX pax extended header (it describes the next entry).
pub(crate) const PAX_EXTENDED: u8 = b'x';
/// The type flag of a POSIX pax global header (it describes all later entries).
pub(crate) const PAX_GLOBAL: u8 = b'g';
/// The format magic, "ustar" in ustar archives.
pub(crate) const MAGIC: Range<usize> = 257..263;
/// The ustar name prefix (unsupported: must be empty).
const PREFIX: Range<usize> = 345..500;

/// What a valid header says about its entry.
pub(crate) struct Header<'a> {
    /// The entry name (bytes before the first NUL of the name field), or
    /// `None` for a pax header, which the reader skips: its records are not
    /// interpreted, and its name is neither checked nor used.
    pub name: Option<&'a str>,
    /// The entry's data size in bytes.
    pub size: usize,
}

/// Whether a block is all zero bytes (the end-of-archive marker).
pub(crate) fn is_zero(block: &[u8]) -> bool {
    block.iter().all(|&b| b == 0)
}

/// The header checksum: the byte sum with the checksum field taken as spaces.
///
/// Summed eight bytes a step: each word's bytes are added pairwise into
/// four 16-bit lanes (a lane gains at most 2 × 255 a word, 64 words: no
/// carry between lanes), then the lanes are added; a byte at a time cost a
/// few thousand instructions a header, and every process that looks up a
/// program reads every header of the boot archive once.
pub(crate) fn checksum(block: &[u8; BLOCK]) -> u64 {
    const LOW: u64 = 0x00ff_00ff_00ff_00ff;
    let mut lanes = 0u64;
    for chunk in block.as_chunks::<8>().0 {
        let w = u64::from_le_bytes(*chunk);
        lanes += (w & LOW) + ((w >> 8) & LOW);
    }
    let all = (lanes & 0xffff) + ((lanes >> 16) & 0xffff) + ((lanes >> 32) & 0xffff) + (lanes >> 48);
    let field: u64 = block.get(CHECKSUM).map_or(0, |f| f.iter().map(|&b| u64::from(b)).sum());
    all - field + CHECKSUM.len() as u64 * u64::from(b' ')
}

/// Validates a header block and extracts its name and size. A regular file
/// has a name; a pax extended or global header (`'x'`, `'g'`) has none, only
/// the size of the data to skip. Any other type is
/// [`ArchiveError::NotRegularFile`].
pub(crate) fn parse(block: &[u8; BLOCK]) -> Result<Header<'_>, ArchiveError> {
    let stored = field(block, CHECKSUM).and_then(octal::parse);
    if stored != Some(checksum(block)) {
        return Err(ArchiveError::BadChecksum);
    }
    let typeflag = block.get(TYPEFLAG).copied();
    let pax = matches!(typeflag, Some(PAX_EXTENDED | PAX_GLOBAL));
    let name = if pax { None } else { Some(parse_name(block)?) };
    let size =
        field(block, SIZE).and_then(octal::parse).and_then(|s| usize::try_from(s).ok()).ok_or(ArchiveError::BadSize)?;
    match typeflag {
        Some(REGULAR | 0 | PAX_EXTENDED | PAX_GLOBAL) => Ok(Header { name, size }),
        _ => Err(ArchiveError::NotRegularFile),
    }
}

/// The name field up to its first NUL; a ustar prefix is refused because the
/// full name would not be one contiguous slice of the archive.
fn parse_name(block: &[u8; BLOCK]) -> Result<&str, ArchiveError> {
    let raw = field(block, NAME).ok_or(ArchiveError::BadName)?;
    let len = raw.iter().position(|&b| b == 0).unwrap_or(raw.len());
    let bytes = raw.get(..len).ok_or(ArchiveError::BadName)?;
    let has_magic = field(block, MAGIC).is_some_and(|m| m.starts_with(b"ustar"));
    let has_prefix = field(block, PREFIX).is_some_and(|p| p.first() != Some(&0));
    if bytes.is_empty() || (has_magic && has_prefix) {
        return Err(ArchiveError::BadName);
    }
    core::str::from_utf8(bytes).map_err(|_| ArchiveError::BadName)
}

/// A field of a header, by range.
fn field(block: &[u8; BLOCK], range: Range<usize>) -> Option<&[u8]> {
    block.get(range)
}
