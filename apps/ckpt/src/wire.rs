//! Moving an image between machines as text: the bytes packed (runs of
//! zero bytes, most of a process's stacks and heap, shrink to a word) and
//! printed as hex lines on the console, which the host carries to the other
//! machine (its boot archive, or its console input).
//!
//! Packed form: records of a little-endian `u32` header — bit 31 set: that
//! many zero bytes (low 31 bits); clear: that many literal bytes follow.
//! Lines: `CKPT-BEGIN <packed bytes>`, `CKPT <hex>` (at most 64 bytes
//! each), `CKPT-END`. On the second serial line: the receiver repeats a
//! "ready" byte until the image starts, and the sender waits for it;
//! the receiver answers accepted or refused, and the sender waits for that
//! before it destroys the original (or lets it run on). The image inside carries its own checksum; the
//! packing adds none.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt::Write;
use oxok_libos::println;

const ZERO_RUN: u32 = 1 << 31;
/// Zero bytes worth a run record (shorter runs stay literal).
const MIN_RUN: usize = 16;
/// Unpacked images larger than this are refused.
pub const MAX_UNPACKED: usize = 80 << 20;

/// Packs `bytes`.
pub fn pack(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut lit_start = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|&&b| b == 0).count().min((ZERO_RUN - 1) as usize);
        if run >= MIN_RUN {
            literal(&mut out, &bytes[lit_start..i]);
            out.extend_from_slice(&(ZERO_RUN | run as u32).to_le_bytes());
            i += run;
            lit_start = i;
        } else {
            i += run.max(1);
        }
    }
    literal(&mut out, &bytes[lit_start..]);
    out
}

fn literal(out: &mut Vec<u8>, bytes: &[u8]) {
    for chunk in bytes.chunks((ZERO_RUN - 1) as usize) {
        if !chunk.is_empty() {
            out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
            out.extend_from_slice(chunk);
        }
    }
}

/// Unpacks `packed`; a record running past the end, or an image past
/// [`MAX_UNPACKED`], is refused.
pub fn unpack(packed: &[u8]) -> Result<Vec<u8>, &'static str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < packed.len() {
        let head = packed.get(i..i + 4).ok_or("truncated packing")?;
        let word = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        i += 4;
        let n = (word & !ZERO_RUN) as usize;
        if out.len() + n > MAX_UNPACKED {
            return Err("image too large");
        }
        if word & ZERO_RUN != 0 {
            out.resize(out.len() + n, 0);
        } else {
            out.extend_from_slice(packed.get(i..i + n).ok_or("truncated packing")?);
            i += n;
        }
    }
    Ok(out)
}

/// Prints `image` packed, as `CKPT` lines.
pub fn send(image: &[u8]) {
    let packed = pack(image);
    println!("CKPT-BEGIN {}", packed.len());
    let mut line = String::with_capacity(140);
    for chunk in packed.chunks(64) {
        line.clear();
        line.push_str("CKPT ");
        for b in chunk {
            let _ = write!(line, "{b:02x}");
        }
        println!("{line}");
    }
    println!("CKPT-END");
}

/// The first bytes of an image on the second serial line.
const LINE_MAGIC: &[u8; 8] = b"OXMIGRAT";
/// Seconds `receive_line` waits for an image at most.
const RECEIVE_SECS: u64 = 120;

/// The receiver's "ready" byte, repeated until the image starts: the
/// sender waits for it, so nothing is sent while the receiving machine is
/// still booting (its UART's initialisation would drop what arrived).
const READY: u8 = b'R';

/// A deadline `secs` seconds from now, in TSC cycles.
fn deadline(secs: u64) -> u64 {
    oxok_libos::time::rdtsc() + secs * oxok_libos::exposed::clock().map_or(1_000_000_000, |c| c.tsc_hz.max(1))
}

/// Waits until the receiver says it is ready.
fn await_ready() -> Result<(), oxok_libos::Error> {
    let until = deadline(RECEIVE_SECS);
    let mut buf = [0u8; 64];
    loop {
        let [n] = oxok_libos::sys::aux_read(buf.as_mut_ptr() as u64, buf.len() as u64)?;
        if buf[..n as usize].contains(&READY) {
            return Ok(());
        }
        if oxok_libos::time::rdtsc() > until {
            return Err(oxok_libos::Error::Busy);
        }
        let _ = oxok_libos::sys::yield_cpu(0);
    }
}

/// The receiver's answers once the whole image is in: accepted (it
/// decoded and checked), or refused.
const ACCEPTED: u8 = b'A';
const REFUSED: u8 = b'N';

/// Sends `image` packed on the second serial line (`aux_write`) once the
/// receiver is ready — [`LINE_MAGIC`], the packed length, the packed bytes
/// — and waits for its answer: true if it accepted the image. The sender
/// must not end before the answer: bytes still in transit would be lost
/// with its end of the link.
pub fn send_line(image: &[u8]) -> Result<bool, oxok_libos::Error> {
    await_ready()?;
    let packed = pack(image);
    let mut all = Vec::with_capacity(packed.len() + 16);
    all.extend_from_slice(LINE_MAGIC);
    all.extend_from_slice(&(packed.len() as u64).to_le_bytes());
    all.extend_from_slice(&packed);
    let mut done = 0;
    while done < all.len() {
        let chunk = &all[done..all.len().min(done + 4096)];
        let [n] = oxok_libos::sys::aux_write(chunk.as_ptr() as u64, chunk.len() as u64)?;
        done += n as usize;
        if n == 0 {
            let _ = oxok_libos::sys::yield_cpu(0);
        }
    }
    let until = deadline(RECEIVE_SECS);
    let mut buf = [0u8; 64];
    loop {
        let [n] = oxok_libos::sys::aux_read(buf.as_mut_ptr() as u64, buf.len() as u64)?;
        for &b in &buf[..n as usize] {
            match b {
                ACCEPTED => return Ok(true),
                REFUSED => return Ok(false),
                _ => {}
            }
        }
        if oxok_libos::time::rdtsc() > until {
            return Err(oxok_libos::Error::Busy);
        }
        let _ = oxok_libos::sys::yield_cpu(0);
    }
}

/// Tells the sender whether the image it sent was accepted.
pub fn answer(accepted: bool) {
    let b = if accepted { ACCEPTED } else { REFUSED };
    let until = deadline(10);
    while oxok_libos::sys::aux_write(&b as *const u8 as u64, 1) == Ok([0]) && oxok_libos::time::rdtsc() < until {
        let _ = oxok_libos::sys::yield_cpu(0);
    }
}

/// Waits for an image on the second serial line and returns it unpacked.
pub fn receive_line() -> Result<Vec<u8>, &'static str> {
    let until = deadline(RECEIVE_SECS);
    let mut got: Vec<u8> = Vec::new();
    let mut want: Option<usize> = None;
    let mut buf = [0u8; 512];
    loop {
        let n = match oxok_libos::sys::aux_read(buf.as_mut_ptr() as u64, buf.len() as u64) {
            Ok([n]) => n as usize,
            Err(_) => return Err("no second serial line"),
        };
        got.extend_from_slice(&buf[..n]);
        if want.is_none() {
            // Skip anything before the magic.
            if let Some(at) = got.windows(LINE_MAGIC.len()).position(|w| w == LINE_MAGIC) {
                got.drain(..at);
            } else if got.len() > LINE_MAGIC.len() {
                got.drain(..got.len() - LINE_MAGIC.len());
            }
            if got.len() >= 16 {
                let len = u64::from_le_bytes(got[8..16].try_into().unwrap_or([0; 8]));
                if len > MAX_UNPACKED as u64 {
                    return Err("announced image too large");
                }
                want = Some(len as usize);
                got.drain(..16);
            }
        }
        if let Some(len) = want
            && got.len() >= len
        {
            got.truncate(len);
            return unpack(&got);
        }
        if n == 0 {
            if want.is_none() {
                // Not started yet: say "ready" (a busy line takes nothing).
                let _ = oxok_libos::sys::aux_write(&READY as *const u8 as u64, 1);
            }
            if oxok_libos::time::rdtsc() > until {
                return Err("nothing arrived");
            }
            let _ = oxok_libos::sys::yield_cpu(0);
        }
    }
}
