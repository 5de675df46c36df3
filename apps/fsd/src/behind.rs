//! The writes clients left behind in their behind pages
//! (`proto::behind`): taken before every request, from whoever it comes,
//! so nobody ever sees a file without a write whose call has returned.

use alloc::vec::Vec;
use oxok_libos::fs::buffer::SERVED_MAX;
use oxok_libos::fs::proto::{Status, op};

use crate::server::{Server, status};

impl Server {
    /// Takes every record waiting in a buffer, each as the `WRITE_BUF` it
    /// stands for; a record the server cannot take changes nothing.
    pub(crate) fn take_behind(&mut self) {
        if !self.table.any_granted() {
            return;
        }
        let mut records = [(0u64, 0u64, 0usize); SERVED_MAX];
        let mut n = 0;
        for (client, handle, len) in self.buffers.take_behind() {
            records[n] = (client, handle, len);
            n += 1;
        }
        for &(client, handle, len) in &records[..n] {
            self.take_one(client, handle, len);
        }
    }

    /// `client`'s record of `len` bytes for `handle`: written if the
    /// handle is the client's, granted and open for writing, a failure
    /// kept for the handle's next write or `FSYNC`.
    fn take_one(&mut self, client: u64, handle: u64, len: usize) {
        let Ok(d) = self.table.get(client, handle) else { return };
        if !d.granted() || !d.write || d.append {
            return;
        }
        let (ino, at) = (d.ino, d.offset);
        self.table.end_grant(client, handle);
        let Some((buffer, scratch)) = self.buffers.parts(client) else { return };
        let Some(bytes) = scratch.get_mut(..len) else { return };
        buffer.copy_behind(bytes);
        self.generation.changed();
        let result = self.fs.write(ino, at, bytes);
        let Ok(d) = self.table.get(client, handle) else { return };
        match result {
            Ok(n) => {
                d.offset = at.saturating_add(n as u64);
                if n < len {
                    d.failed = Some(Status::NoSpace);
                }
            }
            Err(e) => d.failed = Some(status(e)),
        }
    }

    /// The numbers (as `stat` shows them) of the files a granted handle is
    /// open on: no open prefetches them or opens them along. A file system
    /// that names each open anew (the disk's) still numbers a file alike
    /// for every open of it. Empty, with nothing allocated, while no grant
    /// stands.
    pub(crate) fn granted_files(&mut self) -> Vec<u64> {
        let mut numbers = Vec::new();
        if numbers.try_reserve(self.table.granted().len()).is_ok() {
            for i in 0..self.table.granted().len() {
                let ino = self.table.granted()[i];
                if let Ok(meta) = self.fs.stat(ino) {
                    numbers.push(meta.number);
                }
            }
        }
        numbers
    }

    /// Ends the grant of the handle a request names, for the requests that
    /// end it (`proto::behind`, point 4).
    pub(crate) fn end_grant_for(&mut self, caller: u64, op: u8, handle: u64) {
        if self.table.any_granted()
            && matches!(op, op::READ | op::WRITE | op::SEEK | op::READ_BUF | op::WRITE_BUF | op::DUP)
        {
            self.table.end_grant(caller, handle);
        }
    }
}
