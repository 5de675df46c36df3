//! * `cat_10mb`: what `cat` of a 10 MiB file does, without the console:
//!   open the file, `read` it to the end in 64 KiB reads, close it. The
//!   file lives in a file server (`fsd`) this program starts for the
//!   workload and stops after it. Linux's counterpart reads a 10 MiB file
//!   of its initramfs root the same way.

use crate::measure;
use crate::params::{CAT_BYTES, CAT_CHUNK, Counts};
use alloc::vec;
use oxok_libos::Error;
use oxok_libos::fd::{File, IoError};
use oxok_libos::fs::{self, OpenFlags};

const PATH: &str = "/cat10mb";

pub fn run(c: &Counts) {
    let server = match fs::spawn_server() {
        Ok(s) => s,
        Err(e) => return crate::skip("cat_10mb", io(e)),
    };
    match fill() {
        Ok(()) => measure("cat_10mb", c.cat_10mb, c.batches, cat),
        Err(e) => crate::skip("cat_10mb", io(e)),
    }
    let _ = fs::unlink(PATH);
    let _ = fs::stop_server(server);
}

/// Writes the file: `CAT_BYTES` bytes of a repeating pattern.
fn fill() -> Result<(), IoError> {
    let f = fs::open_file(PATH, OpenFlags::WRITE | OpenFlags::CREATE | OpenFlags::TRUNCATE)?;
    let chunk: alloc::vec::Vec<u8> = (0..CAT_CHUNK).map(|i| (i % 251) as u8).collect();
    let mut left = CAT_BYTES;
    while left > 0 {
        let want = left.min(CAT_CHUNK);
        let n = f.write(&chunk[..want])?;
        if n == 0 {
            return Err(IoError::NoSpace);
        }
        left -= n;
    }
    Ok(())
}

/// `ops` whole reads of the file; fails unless each read all of it.
fn cat(ops: u32) -> Result<u64, Error> {
    let mut buf = vec![0u8; CAT_CHUNK];
    let t0 = crate::cpu::now();
    for _ in 0..ops {
        let f = fs::open_file(PATH, OpenFlags::READ).map_err(io)?;
        let mut total = 0;
        loop {
            match f.read(&mut buf).map_err(io)? {
                0 => break,
                n => total += n,
            }
        }
        if total != CAT_BYTES {
            return Err(Error::Invalid);
        }
    }
    Ok(crate::cpu::now() - t0)
}

fn io(e: IoError) -> Error {
    match e {
        IoError::Kernel(k) => k,
        _ => Error::Invalid,
    }
}
