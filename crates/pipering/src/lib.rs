//! The arithmetic of a pipe's ring (the libOS's `fd::pipe`): two
//! free-running byte counters in the shared frame, `written` (advanced by
//! writers) and `read` (advanced by readers); `written - read` bytes
//! (wrapping) are in the ring, and byte `n` of the stream sits at
//! `n % capacity`.
//!
//! The counters live in memory every partner can write, so any value may
//! be garbage: [`Counters::used`] refuses a difference above the capacity
//! (the caller reports the pipe as scribbled on), and [`spans`] reduces
//! every index modulo the capacity, so no computed offset ever leaves the
//! ring. A pure `no_std` crate, host-tested.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(test)]
mod tests;

/// The two counters as loaded from the frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counters {
    /// Bytes consumed since creation.
    pub read: u64,
    /// Bytes produced since creation.
    pub written: u64,
}

impl Counters {
    /// Bytes in the ring; `None` if the counters cannot be right (more than
    /// `capacity` apart: a partner scribbled on them).
    pub fn used(self, capacity: u64) -> Option<u64> {
        let used = self.written.wrapping_sub(self.read);
        (used <= capacity).then_some(used)
    }

    /// Bytes a reader may take now, at most `want`; `None` if scribbled on.
    pub fn readable(self, capacity: u64, want: usize) -> Option<usize> {
        let used = self.used(capacity)?;
        Some(usize::try_from(used).unwrap_or(usize::MAX).min(want))
    }

    /// Bytes a writer may put in now, at most `want`; `None` if scribbled
    /// on.
    pub fn writable(self, capacity: u64, want: usize) -> Option<usize> {
        let free = capacity - self.used(capacity)?;
        Some(usize::try_from(free).unwrap_or(usize::MAX).min(want))
    }
}

/// One contiguous piece of a copy: `len` bytes at ring offset `ring`,
/// which are bytes `buf..buf + len` of the caller's buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
    /// Offset in the ring (below the capacity).
    pub ring: usize,
    /// Offset in the caller's buffer.
    pub buf: usize,
    /// Bytes.
    pub len: usize,
}

/// The pieces a copy of `len` bytes starting at stream byte `pos` falls
/// into: one, or two when it wraps at the ring's end (more only when
/// `len` exceeds `capacity`, which callers never ask for). Every piece
/// lies inside `[0, capacity)`. `capacity` must not be 0.
pub fn spans(pos: u64, len: usize, capacity: usize) -> impl Iterator<Item = Span> {
    let mut done = 0usize;
    core::iter::from_fn(move || {
        if done >= len || capacity == 0 {
            return None;
        }
        let ring = (pos.wrapping_add(done as u64) % capacity as u64) as usize;
        let n = (len - done).min(capacity - ring);
        let span = Span { ring, buf: done, len: n };
        done += n;
        Some(span)
    })
}
