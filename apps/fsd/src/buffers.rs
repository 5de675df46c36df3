//! The shared buffers (`proto`: `BUFFER`, `READ_BUF`, `WRITE_BUF`): up to
//! `BUFFER_PAGES` pages per client, kept by the client id the kernel
//! reports with each call, so a client's data only ever goes into the
//! pages granted to it. At most `SERVED_MAX` at once; a client that finds
//! the table full uses the register path. A dead client's buffer is let go
//! at the next sweep.

use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::fs::buffer::{SERVED_MAX, ServedBuffer};
use oxok_libos::fs::proto::{BUFFER_GRANT, BUFFER_SIZE, CLOSES_MAX, Status};
use oxok_libos::pct::Msg;

use crate::server::{Server, alive, status};

/// The buffers, by index in the server's part of the buffer region.
/// Nothing is allocated until the first client asks (the server starts as
/// fast as before buffers existed).
pub struct Buffers {
    buffers: [Option<(u64, ServedBuffer)>; SERVED_MAX],
    /// Staging for one buffer's worth of data between the file system and
    /// a buffer (allocated with the first buffer).
    scratch: Vec<u8>,
}

impl Default for Buffers {
    fn default() -> Buffers {
        Buffers { buffers: [const { None }; SERVED_MAX], scratch: Vec::new() }
    }
}

impl Buffers {
    fn index_of(&self, client: u64) -> Option<usize> {
        self.buffers.iter().position(|b| b.as_ref().is_some_and(|(c, _)| *c == client))
    }

    /// `client`'s buffer and the scratch space, borrowed together.
    pub(crate) fn parts(&mut self, client: u64) -> Option<(&ServedBuffer, &mut [u8])> {
        let buffer = self.buffers.iter().flatten().find(|(c, _)| *c == client).map(|(_, b)| b)?;
        Some((buffer, &mut self.scratch))
    }

    /// Takes the word of each behind page's write left behind: the client,
    /// the handle and the length of each record waiting.
    pub fn take_behind(&self) -> impl Iterator<Item = (u64, u64, usize)> + '_ {
        self.buffers.iter().flatten().filter_map(|(c, b)| b.take_behind().map(|(h, len)| (*c, h, len)))
    }

    /// Lets go of the buffers of clients that have ended.
    pub fn reclaim(&mut self) {
        for entry in self.buffers.iter_mut() {
            if entry.as_ref().is_some_and(|(c, _)| !alive(*c)) {
                *entry = None;
            }
        }
    }

    /// A fresh, empty buffer for `client` in its old place or a free one.
    /// Refused (`Denied`) while the client still holds pages of the one it
    /// has: it lets go of them before asking afresh, so asking again and
    /// again cannot make the server pay for more than one buffer a client.
    fn fresh(&mut self, client: u64) -> Result<&mut ServedBuffer, Status> {
        let index = match self.index_of(client) {
            Some(i) => {
                if self.buffers[i].as_ref().is_some_and(|(_, b)| b.held_elsewhere()) {
                    return Err(Status::Denied);
                }
                i
            }
            None => {
                let mut free = self.buffers.iter().position(Option::is_none);
                if free.is_none() {
                    self.reclaim();
                    free = self.buffers.iter().position(Option::is_none);
                }
                free.ok_or(Status::NoSpace)?
            }
        };
        self.buffers[index] = None;
        if self.scratch.is_empty() {
            self.scratch = vec![0; BUFFER_SIZE];
        }
        let buffer = ServedBuffer::new(index).map_err(|_| Status::NoSpace)?;
        Ok(&mut self.buffers[index].insert((client, buffer)).1)
    }
}

type Reply = Result<usize, Status>;

impl Server {
    /// `BUFFER`: makes `want` more pages of `caller`'s buffer from page
    /// `first` on (0: the buffer afresh) and grants them; their slots go
    /// in reply words 1..=`BUFFER_GRANT` (0 past the last).
    pub(crate) fn buffer(&mut self, caller: u64, first: u64, want: u64, out: &mut Msg) -> Reply {
        let first = usize::try_from(first).map_err(|_| Status::Invalid)?;
        let want = usize::try_from(want).map_err(|_| Status::Invalid)?;
        if want == 0 || want > BUFFER_GRANT {
            return Err(Status::Invalid);
        }
        let buffer = if first == 0 {
            self.buffers.fresh(caller)?
        } else {
            let i = self.buffers.index_of(caller).ok_or(Status::Invalid)?;
            self.buffers.buffers[i].as_mut().map(|(_, b)| b).ok_or(Status::Invalid)?
        };
        let slots = buffer.grant(first, want).map_err(|e| match e {
            oxok_libos::Error::Invalid => Status::Invalid,
            _ => Status::NoSpace,
        })?;
        out[1..=BUFFER_GRANT].copy_from_slice(&slots);
        Ok(0)
    }

    /// `BEHIND_PAGE`: makes `caller`'s behind page (`proto::behind`) and
    /// grants it; its slot goes in reply word 1.
    pub(crate) fn behind_page(&mut self, caller: u64, out: &mut Msg) -> Reply {
        let i = self.buffers.index_of(caller).ok_or(Status::Invalid)?;
        let buffer = self.buffers.buffers[i].as_mut().map(|(_, b)| b).ok_or(Status::Invalid)?;
        out[1] = buffer.grant_behind().map_err(|e| match e {
            oxok_libos::Error::Invalid => Status::Invalid,
            _ => Status::NoSpace,
        })?;
        Ok(0)
    }

    /// `READ_BUF`: reads up to `want` (at most the buffer) at the handle's
    /// position into the caller's buffer; the count goes in reply word 1.
    pub(crate) fn read_buf(&mut self, caller: u64, handle: u64, want: u64, out: &mut Msg) -> Reply {
        let want = self.within_buffer(caller, want)?;
        let d = self.table.get(caller, handle)?;
        if !d.read {
            return Err(Status::BadHandle);
        }
        let (ino, at) = (d.ino, d.offset);
        let (buffer, scratch) = self.buffers.parts(caller).ok_or(Status::Invalid)?;
        let n = self
            .fs
            .read_to(ino, at, &mut scratch[..want], &mut |to, bytes| buffer.copy_in(to, bytes))
            .map_err(status)?;
        self.table.get(caller, handle)?.offset = at.saturating_add(n as u64);
        out[1] = n as u64;
        Ok(0)
    }

    /// `WRITE_BUF`: writes the first `len` (at most the buffer) bytes of
    /// the caller's buffer at the handle's position (at the end for an
    /// append handle); the count taken goes in reply word 1.
    pub(crate) fn write_buf(&mut self, caller: u64, handle: u64, len: u64, out: &mut Msg) -> Reply {
        let len = self.within_buffer(caller, len)?;
        let d = self.table.get(caller, handle)?;
        if !d.write {
            return Err(Status::BadHandle);
        }
        d.kept_failure()?;
        let (ino, append, mut at) = (d.ino, d.append, d.offset);
        if append {
            at = self.fs.stat(ino).map_err(status)?.size;
        }
        let (buffer, scratch) = self.buffers.parts(caller).ok_or(Status::Invalid)?;
        buffer.copy_out(&mut scratch[..len]);
        let n = self.fs.write(ino, at, &scratch[..len]).map_err(status)?;
        self.table.get(caller, handle)?.offset = at.saturating_add(n as u64);
        out[1] = n as u64;
        Ok(0)
    }

    /// The closes an `OPEN` with `flags::CLOSES` carries at the start of
    /// `caller`'s buffer (its count word clipped to `CLOSES_MAX` and to the
    /// buffer), closed as a `CLOSE` closes them; nothing without a buffer.
    pub(crate) fn close_listed(&mut self, caller: u64) {
        let Some((buffer, _)) = self.buffers.parts(caller) else { return };
        let mut words = [0u8; 8 * (1 + CLOSES_MAX)];
        buffer.copy_out(&mut words);
        let mut listed = [0u64; 1 + CLOSES_MAX];
        for (w, b) in listed.iter_mut().zip(words.chunks_exact(8)) {
            *w = u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]);
        }
        let fit = (buffer.len() / 8).saturating_sub(1);
        let n = usize::try_from(listed[0]).unwrap_or(usize::MAX).min(CLOSES_MAX).min(fit);
        let _ = self.close_handles(caller, &listed[1..=n]);
    }

    /// Reads the whole of `ino` (`size` bytes) into `caller`'s buffer from
    /// its start, if the caller has a buffer that holds it; the bytes read.
    pub(crate) fn prefetch(&mut self, caller: u64, ino: u64, size: u64) -> Option<u64> {
        let size = usize::try_from(size).ok()?;
        let n = self.read_into_buffer(caller, ino, size, 0)?;
        (n == size).then_some(n as u64)
    }

    /// Reads up to `len` bytes of `ino` from its start into `caller`'s
    /// buffer at `at`, if the caller has a buffer that holds them; the
    /// bytes read.
    pub(crate) fn read_into_buffer(&mut self, caller: u64, ino: u64, len: usize, at: usize) -> Option<usize> {
        let (buffer, scratch) = self.buffers.parts(caller)?;
        let end = at.checked_add(len).filter(|&e| !buffer.is_empty() && e <= buffer.len())?;
        let scratch = scratch.get_mut(..end - at)?;
        self.fs.read_to(ino, 0, scratch, &mut |to, bytes| buffer.copy_in(at + to, bytes)).ok()
    }

    /// `n` as a length, if `caller` has a buffer that long (`Invalid`
    /// otherwise: no buffer, or more than its pages).
    fn within_buffer(&mut self, caller: u64, n: u64) -> Result<usize, Status> {
        let (buffer, _) = self.buffers.parts(caller).ok_or(Status::Invalid)?;
        usize::try_from(n).ok().filter(|&n| n <= buffer.len()).ok_or(Status::Invalid)
    }
}
