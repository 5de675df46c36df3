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
/// The format magic, "ustar" in ustar archives.
pub(crate) const MAGIC: Range<usize> = 257..263;
/// The ustar name prefix (unsupported: must be empty).
const PREFIX: Range<usize> = 345..500;

/// What a valid header says about its entry.
pub(crate) struct Header<'a> {
    /// The entry name (bytes before the first NUL of the name field).
    pub name: &'a str,
    /// The entry's data size in bytes.
    pub size: usize,
}

/// Whether a block is all zero bytes (the end-of-archive marker).
pub(crate) fn is_zero(block: &[u8]) -> bool {
    block.iter().all(|&b| b == 0)
}

/// The header checksum: the byte sum with the checksum field taken as spaces.
pub(crate) fn checksum(block: &[u8; BLOCK]) -> u64 {
    block.iter().enumerate().map(|(i, &b)| if CHECKSUM.contains(&i) { u64::from(b' ') } else { u64::from(b) }).sum()
}

/// Validates a header block and extracts its name and size.
pub(crate) fn parse(block: &[u8; BLOCK]) -> Result<Header<'_>, ArchiveError> {
    let stored = field(block, CHECKSUM).and_then(octal::parse);
    if stored != Some(checksum(block)) {
        return Err(ArchiveError::BadChecksum);
    }
    let name = parse_name(block)?;
    let size =
        field(block, SIZE).and_then(octal::parse).and_then(|s| usize::try_from(s).ok()).ok_or(ArchiveError::BadSize)?;
    match block.get(TYPEFLAG) {
        Some(b'0') | Some(0) => Ok(Header { name, size }),
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
