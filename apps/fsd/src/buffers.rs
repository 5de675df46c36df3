//! The shared buffer pages (`proto`: `BUFFER`, `READ_BUF`, `WRITE_BUF`):
//! one page per client, kept by the client id the kernel reports with each
//! call, so a client's data only ever goes into the page granted to it.
//! At most `SERVED_MAX` at once; a client that finds the table full uses
//! the register path. A dead client's page is let go at the next sweep.

use alloc::vec;
use alloc::vec::Vec;
use oxok_libos::fs::buffer::{SERVED_MAX, ServedPage};
use oxok_libos::fs::proto::{BUFFER_SIZE, Status};
use oxok_libos::pct::Msg;

use crate::server::{Server, alive, status};

/// The pages, by index in the server's part of the buffer region. Nothing
/// is allocated until the first client asks (the server starts as fast as
/// before buffers existed).
pub struct Buffers {
    pages: [Option<(u64, ServedPage)>; SERVED_MAX],
    /// Staging for one page of data between the file system and a buffer
    /// (allocated with the first page).
    scratch: Vec<u8>,
}

impl Default for Buffers {
    fn default() -> Buffers {
        Buffers { pages: [const { None }; SERVED_MAX], scratch: Vec::new() }
    }
}

impl Buffers {
    fn of(&self, client: u64) -> Option<&ServedPage> {
        self.pages.iter().flatten().find(|(c, _)| *c == client).map(|(_, p)| p)
    }

    /// `client`'s page and the scratch space, borrowed together.
    fn parts(&mut self, client: u64) -> Option<(&ServedPage, &mut [u8])> {
        let page = self.pages.iter().flatten().find(|(c, _)| *c == client).map(|(_, p)| p)?;
        Some((page, &mut self.scratch))
    }

    /// Lets go of the pages of clients that have ended.
    pub fn reclaim(&mut self) {
        for entry in self.pages.iter_mut() {
            if entry.as_ref().is_some_and(|(c, _)| !alive(*c)) {
                *entry = None;
            }
        }
    }
}

type Reply = Result<usize, Status>;

impl Server {
    /// `BUFFER`: grants `caller` its page (a new one on first asking); the
    /// slot of the capability in its list goes in reply word 1.
    pub(crate) fn buffer(&mut self, caller: u64, out: &mut Msg) -> Reply {
        if self.buffers.of(caller).is_none() {
            let mut free = self.buffers.pages.iter().position(Option::is_none);
            if free.is_none() {
                self.buffers.reclaim();
                free = self.buffers.pages.iter().position(Option::is_none);
            }
            let index = free.ok_or(Status::NoSpace)?;
            if self.buffers.scratch.is_empty() {
                self.buffers.scratch = vec![0; BUFFER_SIZE];
            }
            let page = ServedPage::new(index).map_err(|_| Status::NoSpace)?;
            self.buffers.pages[index] = Some((caller, page));
        }
        let page = self.buffers.of(caller).ok_or(Status::Invalid)?;
        out[1] = page.grant().map_err(|_| Status::Denied)?;
        Ok(0)
    }

    /// `READ_BUF`: reads up to `want` (at most a page) at the handle's
    /// position into the caller's page; the count goes in reply word 1.
    pub(crate) fn read_buf(&mut self, caller: u64, handle: u64, want: u64, out: &mut Msg) -> Reply {
        let want = usize::try_from(want).ok().filter(|&w| w <= BUFFER_SIZE).ok_or(Status::Invalid)?;
        let d = self.table.get(caller, handle)?;
        if !d.read {
            return Err(Status::BadHandle);
        }
        let (ino, at) = (d.ino, d.offset);
        let (page, scratch) = self.buffers.parts(caller).ok_or(Status::Invalid)?;
        let n = self.fs.read(ino, at, &mut scratch[..want]).map_err(status)?;
        page.copy_in(&scratch[..n]);
        self.table.get(caller, handle)?.offset = at.saturating_add(n as u64);
        out[1] = n as u64;
        Ok(0)
    }

    /// `WRITE_BUF`: writes the first `len` (at most a page) bytes of the
    /// caller's page at the handle's position (at the end for an append
    /// handle); the count taken goes in reply word 1.
    pub(crate) fn write_buf(&mut self, caller: u64, handle: u64, len: u64, out: &mut Msg) -> Reply {
        let len = usize::try_from(len).ok().filter(|&l| l <= BUFFER_SIZE).ok_or(Status::Invalid)?;
        let d = self.table.get(caller, handle)?;
        if !d.write {
            return Err(Status::BadHandle);
        }
        let (ino, append, mut at) = (d.ino, d.append, d.offset);
        if append {
            at = self.fs.stat(ino).map_err(status)?.size;
        }
        let (page, scratch) = self.buffers.parts(caller).ok_or(Status::Invalid)?;
        page.copy_out(&mut scratch[..len]);
        let n = self.fs.write(ino, at, &scratch[..len]).map_err(status)?;
        self.table.get(caller, handle)?.offset = at.saturating_add(n as u64);
        out[1] = n as u64;
        Ok(0)
    }
}
