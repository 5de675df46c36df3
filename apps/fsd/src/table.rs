//! The server's books: which client holds which handle on which open file.
//!
//! Every request arrives with the caller's environment id, supplied by the
//! kernel (Aegis §5.1), so handles are looked up under (client, handle): a
//! number another client holds names nothing — or the caller's own file —
//! in the caller's table. An open-file record ([`Desc`]: inode, position,
//! access, directory cursor) may be shared by several handles (a parent's
//! and the copies it made for its children, as POSIX's open file
//! description); it holds one pin on its inode and goes with its last
//! handle. Everything is bounded: handles per client, clients, records, and
//! staged path bytes, so a hostile client can fill only its own quota.
//! Ids carry the environment's generation, so a dead client's handles can
//! never pass to a newer environment in the same table row; they are
//! released by [`Table::reclaim`].

use alloc::boxed::Box;
use alloc::collections::BTreeMap;
use alloc::vec::Vec;
use oxok_libos::fs::proto::{PAYLOAD_MAX, Status};
use oxok_slab::Handles;

/// Handles one client may hold.
pub const MAX_HANDLES: usize = oxok_slab::HANDLES;
/// Clients holding handles or staged bytes at once.
pub const MAX_CLIENTS: usize = 256;
/// Open-file records over all clients.
pub const MAX_DESCS: usize = 2048;
/// Staged path bytes over all clients.
pub const MAX_STAGED: usize = 128 * 1024;

/// A directory entry being handed out in name chunks.
pub struct Pending {
    /// Its name.
    pub name: Vec<u8>,
    /// `proto::KIND_*`.
    pub kind: u64,
    /// A file's size, a directory's entry count.
    pub size: u64,
}

/// An open file or directory.
pub struct Desc {
    /// The pinned inode.
    pub ino: u64,
    /// The position of reads and writes.
    pub offset: u64,
    /// Opened for reading.
    pub read: bool,
    /// Opened for writing.
    pub write: bool,
    /// Writes go to the end.
    pub append: bool,
    /// A directory's cursor: the last name handed out.
    pub cursor: Option<Vec<u8>>,
    /// The entry whose name is being handed out.
    pub pending: Option<Pending>,
    /// Its first write may wait in the opener's buffer (`proto::behind`):
    /// granted at the open, ended by [`Table::end_grant`].
    behind: bool,
    /// Why a write left behind could not be written: reported by the
    /// next `WRITE`, `WRITE_BUF` or `FSYNC` of the record.
    pub failed: Option<Status>,
    refs: u32,
}

impl Desc {
    /// A fresh record for `ino`.
    pub fn new(ino: u64, read: bool, write: bool, append: bool) -> Desc {
        Desc { ino, offset: 0, read, write, append, cursor: None, pending: None, behind: false, failed: None, refs: 0 }
    }

    /// Whether a write left behind may still name it.
    pub fn granted(&self) -> bool {
        self.behind
    }

    /// The failure kept for it (a write left behind that could not be
    /// written), reported once: by the `WRITE`, `WRITE_BUF` or `FSYNC`
    /// that asks.
    pub fn kept_failure(&mut self) -> Result<(), Status> {
        self.failed.take().map_or(Ok(()), Err)
    }
}

/// A client's handles (each the index of its record in `descs`: at most
/// [`MAX_DESCS`]) and staged bytes.
#[derive(Default)]
struct Client {
    handles: Handles<u32>,
    staging: Vec<u8>,
}

/// Clients, their handles and the open-file records.
#[derive(Default)]
pub struct Table {
    clients: BTreeMap<u64, Box<Client>>,
    descs: Vec<Option<Desc>>,
    free: Vec<usize>,
    live: usize,
    staged: usize,
    /// The inodes of the records whose first write may wait behind, one
    /// entry a record (few: a grant ends with the record's first request).
    granted: Vec<u64>,
}

impl Table {
    /// Counters: clients, handles, records.
    pub fn counts(&self) -> (usize, usize, usize) {
        (self.clients.len(), self.clients.values().map(|c| c.handles.len()).sum(), self.live)
    }

    /// True if `client` can take one more handle (and a record if `new`).
    pub fn has_room(&self, client: u64, new: bool) -> bool {
        let handles = self.handles(client);
        let clients_ok = self.clients.contains_key(&client) || self.clients.len() < MAX_CLIENTS;
        handles < MAX_HANDLES && clients_ok && (!new || self.live < MAX_DESCS)
    }

    /// Handles `client` holds.
    pub fn handles(&self, client: u64) -> usize {
        self.clients.get(&client).map_or(0, |c| c.handles.len())
    }

    /// Files `desc` under a new handle of `client`.
    pub fn open(&mut self, client: u64, desc: Desc) -> Result<u64, Status> {
        // The client's room is checked by `attach`, which undoes this.
        if self.live >= MAX_DESCS {
            return Err(Status::NoSpace);
        }
        let index = match self.free.pop() {
            Some(i) => i,
            None => {
                self.descs.try_reserve(1).map_err(|_| Status::NoSpace)?;
                self.descs.push(None);
                self.descs.len() - 1
            }
        };
        self.descs[index] = Some(desc);
        self.live += 1;
        self.attach(client, index).inspect_err(|_| {
            self.descs[index] = None;
            self.free.push(index);
            self.live -= 1;
        })
    }

    /// Gives `client` a handle on record `index` (one more reference).
    fn attach(&mut self, client: u64, index: usize) -> Result<u64, Status> {
        // As `has_room(client, false)`, with one look for the client.
        let clients = self.clients.len();
        let c = match self.clients.entry(client) {
            alloc::collections::btree_map::Entry::Occupied(c) => c.into_mut(),
            alloc::collections::btree_map::Entry::Vacant(v) if clients < MAX_CLIENTS => v.insert(Box::default()),
            alloc::collections::btree_map::Entry::Vacant(_) => return Err(Status::NoSpace),
        };
        if c.handles.len() >= MAX_HANDLES {
            return Err(Status::NoSpace);
        }
        let h = c.handles.add(index as u32).ok_or(Status::NoSpace)?;
        if let Some(Some(d)) = self.descs.get_mut(index) {
            d.refs += 1;
        }
        Ok(u64::from(h))
    }

    /// The record behind `client`'s `handle`.
    pub fn get(&mut self, client: u64, handle: u64) -> Result<&mut Desc, Status> {
        let h = u32::try_from(handle).map_err(|_| Status::BadHandle)?;
        let index = *self.clients.get(&client).and_then(|c| c.handles.get(h)).ok_or(Status::BadHandle)?;
        self.descs.get_mut(index as usize).and_then(Option::as_mut).ok_or(Status::BadHandle)
    }

    /// Grants `client`'s `handle`, a file open for writing and not
    /// appending, that its first write may wait behind; false if not.
    pub fn grant(&mut self, client: u64, handle: u64) -> bool {
        if self.granted.try_reserve(1).is_err() {
            return false;
        }
        let Ok(d) = self.get(client, handle) else { return false };
        if !d.write || d.append || d.behind {
            return false;
        }
        d.behind = true;
        let ino = d.ino;
        self.granted.push(ino);
        true
    }

    /// Ends the grant of `client`'s `handle`'s record, if it has one.
    pub fn end_grant(&mut self, client: u64, handle: u64) {
        if self.granted.is_empty() {
            return;
        }
        if let Ok(d) = self.get(client, handle)
            && d.behind
        {
            d.behind = false;
            let ino = d.ino;
            self.forget_grant(ino);
        }
    }

    fn forget_grant(&mut self, ino: u64) {
        if let Some(i) = self.granted.iter().position(|&g| g == ino) {
            self.granted.swap_remove(i);
        }
    }

    /// Whether any record holds a grant.
    pub fn any_granted(&self) -> bool {
        !self.granted.is_empty()
    }

    /// The inodes of the records that hold a grant (their files' bytes may
    /// change with no request: they must not be prefetched or opened
    /// along).
    pub fn granted(&self) -> &[u64] {
        &self.granted
    }

    /// Gives `target` its own handle on `client`'s `handle`'s record.
    pub fn dup(&mut self, client: u64, handle: u64, target: u64) -> Result<u64, Status> {
        let h = u32::try_from(handle).map_err(|_| Status::BadHandle)?;
        let index = *self.clients.get(&client).and_then(|c| c.handles.get(h)).ok_or(Status::BadHandle)?;
        self.attach(target, index as usize)
    }

    /// Closes `client`'s `handle`; the inode to unpin if that was the
    /// record's last handle.
    pub fn close(&mut self, client: u64, handle: u64) -> Result<Option<u64>, Status> {
        let h = u32::try_from(handle).map_err(|_| Status::BadHandle)?;
        let c = self.clients.get_mut(&client).ok_or(Status::BadHandle)?;
        let index = c.handles.remove(h).ok_or(Status::BadHandle)?;
        self.tidy(client);
        Ok(self.release(index as usize))
    }

    /// Drops one reference to record `index`; its inode if it was the last.
    fn release(&mut self, index: usize) -> Option<u64> {
        let slot = self.descs.get_mut(index)?;
        let d = slot.as_mut()?;
        d.refs = d.refs.saturating_sub(1);
        if d.refs > 0 {
            return None;
        }
        let (ino, behind) = (d.ino, d.behind);
        *slot = None;
        self.free.push(index);
        self.live -= 1;
        if behind {
            self.forget_grant(ino);
        }
        Some(ino)
    }

    /// Appends `bytes` to `client`'s staged payload (`first`: start anew).
    pub fn stage(&mut self, client: u64, first: bool, bytes: &[u8]) -> Result<(), Status> {
        if first {
            self.drop_staging(client);
        }
        let room = self.clients.contains_key(&client) || self.clients.len() < MAX_CLIENTS;
        let have = self.clients.get(&client).map_or(0, |c| c.staging.len());
        if !room || have + bytes.len() > PAYLOAD_MAX || self.staged + bytes.len() > MAX_STAGED {
            self.drop_staging(client);
            return Err(if room && have + bytes.len() > PAYLOAD_MAX { Status::Invalid } else { Status::NoSpace });
        }
        let c = self.clients.entry(client).or_default();
        if c.staging.try_reserve(bytes.len()).is_err() {
            self.drop_staging(client);
            return Err(Status::NoSpace);
        }
        c.staging.extend_from_slice(bytes);
        self.staged += bytes.len();
        Ok(())
    }

    /// Takes `client`'s staged payload.
    pub fn take_staging(&mut self, client: u64) -> Vec<u8> {
        let staged = self.clients.get_mut(&client).map(|c| core::mem::take(&mut c.staging)).unwrap_or_default();
        self.staged -= staged.len();
        self.tidy(client);
        staged
    }

    /// Forgets `client`'s staged payload.
    pub fn drop_staging(&mut self, client: u64) {
        drop(self.take_staging(client));
    }

    /// Releases everything of every client `alive` says is gone; returns
    /// the inodes to unpin.
    pub fn reclaim(&mut self, alive: impl Fn(u64) -> bool) -> Vec<u64> {
        let dead: Vec<u64> = self.clients.keys().copied().filter(|&id| !alive(id)).collect();
        let mut unpin = Vec::new();
        for id in dead {
            if let Some(mut c) = self.clients.remove(&id) {
                self.staged -= c.staging.len();
                for index in c.handles.drain() {
                    unpin.extend(self.release(index as usize));
                }
            }
        }
        unpin
    }

    /// Forgets a client that holds nothing.
    fn tidy(&mut self, client: u64) {
        if self.clients.get(&client).is_some_and(|c| c.handles.is_empty() && c.staging.is_empty()) {
            self.clients.remove(&client);
        }
    }
}
