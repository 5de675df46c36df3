//! Moving an image between machines as text: the bytes packed (runs of
//! zero bytes, most of a process's stacks and heap, shrink to a word) and
//! printed as hex lines on the console, which the host carries to the other
//! machine (its boot archive, or its console input).
//!
//! Packed form: records of a little-endian `u32` header — bit 31 set: that
//! many zero bytes (low 31 bits); clear: that many literal bytes follow.
//! Lines: `CKPT-BEGIN <packed bytes>`, `CKPT <hex>` (at most 64 bytes
//! each), `CKPT-END`. The image inside carries its own checksum; the
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
