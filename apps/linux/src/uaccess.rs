//! Copies between the Linux program's memory and the personality's, each
//! checked against the program's areas first ([`mem::ensure`]): a pointer
//! outside them, or without the access it needs, is `-EFAULT`.

use crate::errno::{EFAULT, ENAMETOOLONG};
use crate::mem;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::abi::layout::PAGE_SIZE;
use oxok_libos::guest;
use spin::Mutex;

/// Longest path accepted (Linux's `PATH_MAX`).
pub const PATH_MAX: usize = 4096;

/// Most bytes one call moves through the personality's buffers at once.
pub const CHUNK: usize = 64 * 1024;

/// A buffer of [`CHUNK`] bytes for moving data through the personality
/// (`read`, `sendfile`): one is kept and handed out again, so a call does
/// not allocate and zero 64 KiB each time (a `cat` of a small file did,
/// twice); a call while it is out (a thread waiting in its read) gets a
/// new one. Bytes of an earlier use stay in it — it never leaves the
/// process — so a caller copies out only what it filled.
pub struct Scratch(Vec<u8>);

/// The kept buffer, while nobody has it.
static KEPT: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// The kept buffer, or a new one.
pub fn scratch() -> Scratch {
    let kept = KEPT.try_lock().and_then(|mut k| k.take());
    Scratch(kept.unwrap_or_else(|| vec![0u8; CHUNK]))
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if let Some(mut k) = KEPT.try_lock()
            && k.is_none()
        {
            *k = Some(core::mem::take(&mut self.0));
        }
    }
}

impl core::ops::Deref for Scratch {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl core::ops::DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.0
    }
}

/// Runs `copy` (which checks every page of `[addr, addr + len)` before it
/// moves a byte) once the areas allow the access; only if it fails (a page
/// never touched, or shared copy-on-write for a write) are the pages made
/// usable ([`mem::ensure`]) and the copy tried again.
fn copy_checked<E>(addr: u64, len: usize, write: bool, mut copy: impl FnMut() -> Result<(), E>) -> Result<(), i64> {
    mem::allowed(addr, len as u64, write)?;
    if copy().is_ok() {
        return Ok(());
    }
    mem::ensure(addr, len as u64, write)?;
    copy().map_err(|_| EFAULT)
}

/// Reads `buf.len()` bytes at `addr`.
pub fn read(addr: u64, buf: &mut [u8]) -> Result<(), i64> {
    let len = buf.len();
    copy_checked(addr, len, false, || guest::copy_in(addr, buf))
}

/// Reads `len` bytes at `addr` into a new buffer.
pub fn read_vec(addr: u64, len: usize) -> Result<Vec<u8>, i64> {
    let mut v = vec![0u8; len];
    read(addr, &mut v)?;
    Ok(v)
}

/// Writes `data` at `addr`.
pub fn write(addr: u64, data: &[u8]) -> Result<(), i64> {
    copy_checked(addr, data.len(), true, || guest::copy_out(addr, data))
}

/// Writes `data` at `addr`, a range [`writable`] just found writable (the
/// copy checks the pages are mapped writable still; one taken away since
/// is `EFAULT`).
pub fn write_checked(addr: u64, data: &[u8]) -> Result<(), i64> {
    guest::copy_out(addr, data).map_err(|_| EFAULT)
}

/// Checks that `[addr, addr + len)` may be written (before a call that
/// would otherwise have an effect and then fail to report it).
pub fn writable(addr: u64, len: u64) -> Result<(), i64> {
    mem::ensure(addr, len, true)
}

/// Checks that `[addr, addr + len)` may be read (before a copy straight
/// from it that checks only that its pages are mapped).
pub fn readable(addr: u64, len: u64) -> Result<(), i64> {
    mem::ensure(addr, len, false)
}

/// Reads a little-endian `u64` at `addr`.
pub fn read_u64(addr: u64) -> Result<u64, i64> {
    let mut b = [0u8; 8];
    read(addr, &mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// Writes `words` (little-endian) at `addr`.
pub fn write_u64s(addr: u64, words: &[u64]) -> Result<(), i64> {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    write(addr, &bytes)
}

/// Reads a NUL-terminated path at `addr` (at most [`PATH_MAX`] bytes
/// with the NUL), page by page so a string ending just before an
/// unmapped page is fine.
pub fn read_path(addr: u64) -> Result<String, i64> {
    read_cstr(addr, PATH_MAX)
}

/// Reads a NUL-terminated string at `addr` of at most `max` bytes before
/// the NUL (longer: `ENAMETOOLONG`), page by page as [`read_path`].
pub fn read_cstr(addr: u64, max: usize) -> Result<String, i64> {
    // Steps never cross a page: the next page may not be readable. The
    // first is short and lands on the stack: most paths end within it.
    let step =
        |at: u64, read: usize, want: usize| ((PAGE_SIZE - at % PAGE_SIZE) as usize).min(max + 1 - read).min(want);
    let mut first = [0u8; FIRST_STEP];
    let n = step(addr, 0, FIRST_STEP);
    read(addr, &mut first[..n])?;
    if let Some(nul) = nul_at(&first[..n]) {
        return utf8(first[..nul].to_vec());
    }
    let mut out = first[..n].to_vec();
    loop {
        if out.len() > max {
            return Err(ENAMETOOLONG);
        }
        // Read straight onto what came before.
        let at = addr.checked_add(out.len() as u64).ok_or(EFAULT)?;
        let n = step(at, out.len(), 256);
        let start = out.len();
        out.resize(start + n, 0);
        read(at, &mut out[start..])?;
        if let Some(nul) = nul_at(&out[start..]) {
            out.truncate(start + nul);
            return utf8(out);
        }
    }
}

/// Bytes [`read_cstr`] reads first.
const FIRST_STEP: usize = 64;

/// The bytes as a `String`: `EINVAL` if they are not UTF-8.
fn utf8(bytes: Vec<u8>) -> Result<String, i64> {
    String::from_utf8(bytes).map_err(|_| crate::errno::EINVAL)
}

/// Where the first NUL in `bytes` is, eight bytes at a time: a word has a
/// zero byte where subtracting one from each byte borrows out of a byte
/// whose top bit was clear (the lowest such byte is the first zero).
fn nul_at(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const TOPS: u64 = 0x8080_8080_8080_8080;
    let mut words = bytes.chunks_exact(8);
    for (i, w) in (&mut words).enumerate() {
        let mut b = [0u8; 8];
        b.copy_from_slice(w);
        let v = u64::from_le_bytes(b);
        let zero = v.wrapping_sub(ONES) & !v & TOPS;
        if zero != 0 {
            return Some(i * 8 + zero.trailing_zeros() as usize / 8);
        }
    }
    let rest = words.remainder();
    rest.iter().position(|&b| b == 0).map(|p| bytes.len() - rest.len() + p)
}
