//! Inodes and the arena that holds them.
//!
//! Inodes live in a slab: a vector of slots, each with a generation number,
//! and a free list of slot indices. An [`Ino`] handle is a slot index plus
//! the generation the slot had when the inode was allocated; freeing an
//! inode bumps its slot's generation, so an old handle kept by a careless
//! caller no longer matches and fails with
//! [`FsError::BadInode`](crate::FsError::BadInode) instead of naming the new
//! occupant. A slot whose generation would wrap is retired, never reused.

use alloc::boxed::Box;
use alloc::vec::Vec;

use crate::dir::Dir;
use crate::error::{FsError, Result};
use crate::file::FileData;

/// A handle on an inode: slot index and generation.
///
/// Handles are plain values; every operation validates them. Two handles are
/// equal exactly when they name the same inode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Ino {
    index: u32,
    generation: u32,
}

impl Ino {
    /// The root directory of every [`Fs`](crate::Fs).
    pub const ROOT: Ino = Ino { index: 0, generation: 0 };

    /// The inode number to report as `st_ino` / `d_ino`: slot index + 1
    /// (the root is 1). Unique among live inodes; a number may be reused
    /// after its inode is freed, as POSIX allows.
    pub const fn number(self) -> u64 {
        self.index as u64 + 1
    }

    /// The slot generation part of the handle.
    pub const fn generation(self) -> u32 {
        self.generation
    }

    /// The handle packed into one word (generation high, index low), for
    /// tables that store plain integers.
    pub const fn to_raw(self) -> u64 {
        ((self.generation as u64) << 32) | self.index as u64
    }

    /// The handle from [`to_raw`](Self::to_raw)'s word. Any word makes a
    /// handle; operations reject handles that name no live inode.
    pub const fn from_raw(raw: u64) -> Ino {
        Ino { index: raw as u32, generation: (raw >> 32) as u32 }
    }

    pub(crate) const fn index(self) -> usize {
        self.index as usize
    }
}

/// What an inode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// A regular file of bytes.
    File,
    /// A directory of named entries.
    Dir,
    /// A symbolic link: a path (its target) that resolution follows.
    Symlink,
}

/// Permission bits a new file gets unless its creator asks for others.
pub(crate) const FILE_MODE: u16 = 0o644;
/// Permission bits a new directory gets.
pub(crate) const DIR_MODE: u16 = 0o755;
/// Permission bits of every symbolic link (they cannot be changed).
pub(crate) const SYMLINK_MODE: u16 = 0o777;
/// The bits a mode may hold: permissions, set-user-ID, set-group-ID, sticky.
pub(crate) const MODE_MASK: u16 = 0o7777;

/// The contents of an inode.
pub(crate) enum Body {
    File(FileData),
    Dir(Dir),
    /// A symbolic link's target: 1..[`PATH_MAX`](crate::PATH_MAX) bytes
    /// without NUL, stored verbatim and never changed.
    Symlink(Box<[u8]>),
}

/// One inode: contents, link and pin counts, permission bits, timestamps.
pub(crate) struct Inode {
    pub body: Body,
    /// Directory entries naming a file or symbolic link; for a directory
    /// `2 + subdirectories` while it is linked, 0 once removed.
    pub nlink: u64,
    /// Open references held by the caller ([`Fs::pin`](crate::Fs::pin)).
    pub pins: u64,
    /// Permission bits (within [`MODE_MASK`]).
    pub mode: u16,
    pub atime: u64,
    pub mtime: u64,
    pub ctime: u64,
}

impl Inode {
    /// A new inode with its kind's default mode.
    pub fn new(body: Body, nlink: u64, now: u64) -> Inode {
        let mode = match body {
            Body::File(_) => FILE_MODE,
            Body::Dir(_) => DIR_MODE,
            Body::Symlink(_) => SYMLINK_MODE,
        };
        Inode { body, nlink, pins: 0, mode, atime: now, mtime: now, ctime: now }
    }

    pub fn kind(&self) -> Kind {
        match self.body {
            Body::File(_) => Kind::File,
            Body::Dir(_) => Kind::Dir,
            Body::Symlink(_) => Kind::Symlink,
        }
    }

    /// The directory contents, or `NotADirectory`.
    pub fn dir(&self) -> Result<&Dir> {
        match &self.body {
            Body::Dir(d) => Ok(d),
            _ => Err(FsError::NotADirectory),
        }
    }

    pub fn dir_mut(&mut self) -> Result<&mut Dir> {
        match &mut self.body {
            Body::Dir(d) => Ok(d),
            _ => Err(FsError::NotADirectory),
        }
    }

    /// The file contents, or `IsADirectory` (`Invalid` for a symbolic link).
    pub fn file(&self) -> Result<&FileData> {
        match &self.body {
            Body::File(f) => Ok(f),
            Body::Dir(_) => Err(FsError::IsADirectory),
            Body::Symlink(_) => Err(FsError::Invalid),
        }
    }

    pub fn file_mut(&mut self) -> Result<&mut FileData> {
        match &mut self.body {
            Body::File(f) => Ok(f),
            Body::Dir(_) => Err(FsError::IsADirectory),
            Body::Symlink(_) => Err(FsError::Invalid),
        }
    }

    /// A symbolic link's target, if this is one.
    pub fn target(&self) -> Option<&[u8]> {
        match &self.body {
            Body::Symlink(t) => Some(t),
            _ => None,
        }
    }

    /// Modification: content and change times.
    pub fn modified(&mut self, now: u64) {
        self.mtime = now;
        self.ctime = now;
    }
}

struct Slot {
    generation: u32,
    inode: Option<Inode>,
}

/// The inode slab.
pub(crate) struct Arena {
    slots: Vec<Slot>,
    free: Vec<u32>,
    live: usize,
}

impl Arena {
    pub const fn new() -> Arena {
        Arena { slots: Vec::new(), free: Vec::new(), live: 0 }
    }

    /// Live inodes.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Slots ever allocated (live, free or retired): an upper bound on any
    /// chain of parent links.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Stores `inode` in a free slot, or `None` when all 2³² slots are used.
    pub fn alloc(&mut self, inode: Inode) -> Option<Ino> {
        if let Some(index) = self.free.pop() {
            let slot = &mut self.slots[index as usize];
            slot.inode = Some(inode);
            self.live += 1;
            return Some(Ino { index, generation: slot.generation });
        }
        let index = u32::try_from(self.slots.len()).ok()?;
        self.slots.push(Slot { generation: 0, inode: Some(inode) });
        self.live += 1;
        Some(Ino { index, generation: 0 })
    }

    /// The live inode `ino` names, or `BadInode`.
    pub fn get(&self, ino: Ino) -> Result<&Inode> {
        match self.slots.get(ino.index()) {
            Some(Slot { generation, inode: Some(inode) }) if *generation == ino.generation => Ok(inode),
            _ => Err(FsError::BadInode),
        }
    }

    pub fn get_mut(&mut self, ino: Ino) -> Result<&mut Inode> {
        match self.slots.get_mut(ino.index()) {
            Some(Slot { generation, inode: Some(inode) }) if *generation == ino.generation => Ok(inode),
            _ => Err(FsError::BadInode),
        }
    }

    /// Frees `ino`'s slot and returns its inode (`None` if `ino` is stale).
    pub fn remove(&mut self, ino: Ino) -> Option<Inode> {
        let slot = self.slots.get_mut(ino.index())?;
        if slot.generation != ino.generation {
            return None;
        }
        let inode = slot.inode.take()?;
        self.live -= 1;
        // A slot whose generation would wrap is retired: an old handle can
        // then never name a new inode.
        if let Some(next) = slot.generation.checked_add(1) {
            slot.generation = next;
            self.free.push(ino.index);
        }
        Some(inode)
    }

    /// Every live inode with its handle, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (Ino, &Inode)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            let ino = Ino { index: i as u32, generation: s.generation };
            s.inode.as_ref().map(|inode| (ino, inode))
        })
    }

    /// Free-list length (for the consistency check).
    pub fn free_len(&self) -> usize {
        self.free.len()
    }
}
