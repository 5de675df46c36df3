//! Writing archives (host tool side): deterministic ustar output.

use crate::ArchiveError;
use crate::header::{self, BLOCK};
use crate::octal;
use alloc::format;
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

/// The name of the pax header [`append_aligned`] pads with.
const PAD_NAME: &str = "PaxHeader/pad";

/// Appends a regular file `name` holding `data` to `out`.
///
/// The name must be 1 to 99 bytes of printable ASCII, else
/// [`ArchiveError::BadName`]; data of 8 GiB or more gives
/// [`ArchiveError::BadSize`]. On error `out` is left unchanged. The header is
/// deterministic: mode 0755, owner 0:0, mtime 0, no user or group names.
pub fn append(out: &mut Vec<u8>, name: &str, data: &[u8]) -> Result<(), ArchiveError> {
    let block = make_header(name, data.len(), header::REGULAR)?;
    push_entry(out, &block, data);
    Ok(())
}

/// Like [`append`], but the file's data starts at a multiple of `align`
/// bytes of `out` (the archive): a page-aligned ELF can then be mapped
/// straight from the archive.
///
/// When the data would not land there, a padding entry goes first: a POSIX
/// pax extended header named `PaxHeader/pad` whose data is one `comment`
/// record, which readers ignore (this crate's reader skips pax headers
/// altogether). It fills the gap exactly; a gap of one block gets a pax
/// header with no data. `align` must be a power of two and a multiple of 512,
/// and `out` a whole number of 512-byte blocks (as an archive being built
/// is), else [`ArchiveError::BadAlignment`]. Errors are otherwise those of
/// [`append`], and on any error `out` is left unchanged.
pub fn append_aligned(out: &mut Vec<u8>, name: &str, data: &[u8], align: usize) -> Result<(), ArchiveError> {
    if !align.is_power_of_two() || !align.is_multiple_of(BLOCK) || !out.len().is_multiple_of(BLOCK) {
        return Err(ArchiveError::BadAlignment);
    }
    let block = make_header(name, data.len(), header::REGULAR)?;
    // Bytes from the end of `out` to where the data would go, rounded up to
    // the alignment: the file's own header plus the gap (whole blocks).
    let start = out.len().checked_add(BLOCK).ok_or(ArchiveError::BadSize)?;
    let aligned = start.checked_next_multiple_of(align).ok_or(ArchiveError::BadSize)?;
    let pad = match aligned - start {
        0 => None,
        gap => {
            let record = pad_record(gap - BLOCK);
            Some((make_header(PAD_NAME, record.len(), header::PAX_EXTENDED)?, record))
        }
    };
    if let Some((pad_header, record)) = &pad {
        push_entry(out, pad_header, record);
    }
    push_entry(out, &block, data);
    Ok(())
}

/// Ends the archive with the end-of-archive marker: two zero blocks.
pub fn finish(out: &mut Vec<u8>) {
    out.resize(out.len().saturating_add(2 * BLOCK), 0);
}

/// Appends a header block and data padded with zeros to a whole block.
fn push_entry(out: &mut Vec<u8>, header: &[u8; BLOCK], data: &[u8]) {
    let padding = data.len().next_multiple_of(BLOCK) - data.len();
    out.reserve(BLOCK.saturating_add(data.len()).saturating_add(padding));
    out.extend_from_slice(header);
    out.extend_from_slice(data);
    out.resize(out.len().saturating_add(padding), 0);
}

/// One pax record of exactly `len` bytes (none when `len` is 0):
/// `"<len> comment=<filler>\n"`, where `<len>` counts the whole record,
/// its own digits included. `len` is a multiple of 512 here, so there is
/// always room for the filler.
fn pad_record(len: usize) -> Vec<u8> {
    if len == 0 {
        return Vec::new();
    }
    let mut record = Vec::with_capacity(len);
    record.extend_from_slice(format!("{len} comment=").as_bytes());
    record.resize(len.saturating_sub(1), b'.');
    record.push(b'\n');
    record
}

/// Builds the header block for a regular file or a pax header.
fn make_header(name: &str, size: usize, typeflag: u8) -> Result<[u8; BLOCK], ArchiveError> {
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
        *t = typeflag;
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
