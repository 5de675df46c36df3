//! Writing archives (host tool side): deterministic ustar output.

use crate::ArchiveError;
use crate::header::{self, BLOCK};
use crate::octal;
use alloc::vec::Vec;
use core::ops::Range;

/// Header fields only the writer fills in (byte ranges).
const MODE: Range<usize> = 100..108;
const UID: Range<usize> = 108..116;
const GID: Range<usize> = 116..124;
const MTIME: Range<usize> = 136..148;
const VERSION: Range<usize> = 263..265;
const DEVMAJOR: Range<usize> = 329..337;
const DEVMINOR: Range<usize> = 337..345;

/// The POSIX ustar magic and version.
const USTAR_MAGIC: &[u8; 6] = b"ustar\0";
const USTAR_VERSION: &[u8; 2] = b"00";

/// Longest name [`append`] accepts (the name field keeps a terminating NUL).
const MAX_NAME: usize = 99;

/// Appends a regular file `name` holding `data` to `out`.
///
/// The name must be 1 to 99 bytes of printable ASCII, else
/// [`ArchiveError::BadName`]; data of 8 GiB or more gives
/// [`ArchiveError::BadSize`]. On error `out` is left unchanged. The header is
/// deterministic: mode 0755, owner 0:0, mtime 0, no user or group names.
pub fn append(out: &mut Vec<u8>, name: &str, data: &[u8]) -> Result<(), ArchiveError> {
    let block = make_header(name, data.len())?;
    let padding = data.len().next_multiple_of(BLOCK) - data.len();
    out.reserve(BLOCK.saturating_add(data.len()).saturating_add(padding));
    out.extend_from_slice(&block);
    out.extend_from_slice(data);
    out.resize(out.len().saturating_add(padding), 0);
    Ok(())
}

/// Ends the archive with the end-of-archive marker: two zero blocks.
pub fn finish(out: &mut Vec<u8>) {
    out.resize(out.len().saturating_add(2 * BLOCK), 0);
}

/// Builds the header block for a regular file.
fn make_header(name: &str, size: usize) -> Result<[u8; BLOCK], ArchiveError> {
    let bytes = name.as_bytes();
    if bytes.is_empty() || bytes.len() > MAX_NAME || !bytes.iter().all(|b| (0x20..0x7f).contains(b)) {
        return Err(ArchiveError::BadName);
    }
    let mut block = [0u8; BLOCK];
    put(&mut block, header::NAME.start, bytes);
    let size = u64::try_from(size).map_err(|_| ArchiveError::BadSize)?;
    octal_field(&mut block, header::SIZE, size).ok_or(ArchiveError::BadSize)?;
    for (range, value) in [(MODE, 0o755), (UID, 0), (GID, 0), (MTIME, 0), (DEVMAJOR, 0), (DEVMINOR, 0)] {
        octal_field(&mut block, range, value).ok_or(ArchiveError::BadSize)?;
    }
    if let Some(t) = block.get_mut(header::TYPEFLAG) {
        *t = b'0';
    }
    put(&mut block, header::MAGIC.start, USTAR_MAGIC);
    put(&mut block, VERSION.start, USTAR_VERSION);
    // Checksum: six octal digits, NUL, space (what GNU tar writes).
    let sum = header::checksum(&block);
    let digits = header::CHECKSUM.start..header::CHECKSUM.end - 1;
    octal_field(&mut block, digits, sum).ok_or(ArchiveError::BadChecksum)?;
    put(&mut block, header::CHECKSUM.end - 1, b" ");
    Ok(block)
}

/// Writes an octal number into a header field.
fn octal_field(block: &mut [u8; BLOCK], range: Range<usize>, value: u64) -> Option<()> {
    octal::format(block.get_mut(range)?, value)
}

/// Copies `bytes` into the block at `at` (silently clipped at the end).
fn put(block: &mut [u8; BLOCK], at: usize, bytes: &[u8]) {
    let dst = block.get_mut(at..).unwrap_or(&mut []);
    for (d, s) in dst.iter_mut().zip(bytes) {
        *d = *s;
    }
}
