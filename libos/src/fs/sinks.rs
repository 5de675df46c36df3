//! Where a transfer through the file server's buffer ([`buffer`](super::buffer))
//! takes its bytes from and puts them: memory of this process, or a
//! personality's program's, so that a file's bytes reach a Linux program,
//! and leave it, in one copy between its memory and the buffer (the
//! runtime's `SharedRegion` copies, which check the guest's pages).

use oxok_abi::Error;
use oxok_rt::page::SharedRegion;

/// Where a read's bytes go: memory of this process, or a personality's
/// program's (a guest address the caller found writable), so a file's
/// bytes reach a Linux program in one copy from the buffer.
pub(crate) enum Sink<'a> {
    Here(&'a mut [u8]),
    Guest(u64),
}

impl Sink<'_> {
    /// Copies up to `n` bytes from byte `from` of `region` to byte `at` of
    /// the sink: how many (clipped to both).
    pub(super) fn take(&mut self, region: &SharedRegion, from: usize, at: usize, n: usize) -> Result<usize, Error> {
        match self {
            Sink::Here(buf) => {
                let Some(dst) = buf.get_mut(at..) else { return Ok(0) };
                let n = n.min(dst.len());
                region.copy_out(from, &mut dst[..n]);
                Ok(n)
            }
            Sink::Guest(addr) => region.copy_to_guest(from, *addr + at as u64, n),
        }
    }

    /// Puts `bytes` at byte `at` of the sink (a message's bytes).
    pub(crate) fn put(&mut self, at: usize, bytes: &[u8]) -> Result<(), Error> {
        match self {
            Sink::Here(buf) => {
                buf.get_mut(at..at + bytes.len()).ok_or(Error::BadAddress)?.copy_from_slice(bytes);
                Ok(())
            }
            Sink::Guest(addr) => oxok_rt::guest::copy_out(*addr + at as u64, bytes),
        }
    }
}

/// Where a write's bytes come from: memory of this process, or a
/// personality's program's (a guest address the caller found readable).
pub(crate) enum Source<'a> {
    Here(&'a [u8]),
    Guest(u64),
}

impl Source<'_> {
    /// The source from its byte `at` on.
    pub(crate) fn after(&self, at: usize) -> Source<'_> {
        match self {
            Source::Here(buf) => Source::Here(buf.get(at..).unwrap_or(&[])),
            Source::Guest(addr) => Source::Guest(*addr + at as u64),
        }
    }

    /// Copies `dst.len()` bytes from its byte `at` into `dst` (a message's
    /// bytes).
    pub(crate) fn get(&self, at: usize, dst: &mut [u8]) -> Result<(), Error> {
        match self {
            Source::Here(buf) => {
                dst.copy_from_slice(buf.get(at..at + dst.len()).ok_or(Error::BadAddress)?);
                Ok(())
            }
            Source::Guest(addr) => oxok_rt::guest::copy_in(*addr + at as u64, dst),
        }
    }

    /// Copies up to `n` bytes from its start to byte `at` of `region`: how
    /// many (clipped to both).
    pub(super) fn give(&self, region: &SharedRegion, at: usize, n: usize) -> Result<usize, Error> {
        match self {
            Source::Here(buf) => Ok(region.copy_in(at, &buf[..n.min(buf.len())])),
            Source::Guest(addr) => region.copy_from_guest(at, *addr, n),
        }
    }
}
