//! [`Handlers`]: what an environment asked the kernel to run for it — its
//! upcall entry points (`oxok_abi::upcall`) and its wakeup predicates. They
//! live in a room made when it first registers an entry or installs a
//! predicate (or imports a state with either) and kept once made, as the
//! room for a served call's state is (`pctsave`): an environment that
//! never asked for either holds none. Its account pays for the room when
//! the environment is made (`account::ENV_HEAP`).

use super::Pred;
use alloc::boxed::Box;
use oxok_abi::{Error, PREDICATES, upcall};

/// The upcall entries and predicates of one environment, and their room.
pub struct Handlers {
    room: Option<Box<Room>>,
}

/// The room's contents.
pub struct Room {
    /// Upcall entry points by kind; 0 = none.
    pub upcalls: [u64; upcall::KINDS],
    /// Installed wakeup predicates by predicate index.
    pub preds: [Option<Box<Pred>>; PREDICATES],
}

impl Handlers {
    /// Kernel heap the room takes.
    pub const HEAP: usize = size_of::<Room>();

    /// No room: no entry, no predicate.
    pub const fn new() -> Handlers {
        Handlers { room: None }
    }

    /// The entry for upcall `kind` (0: none, or no such kind).
    #[inline(always)]
    pub fn upcall(&self, kind: u64) -> u64 {
        self.room.as_deref().and_then(|r| r.upcalls.get(kind as usize)).copied().unwrap_or(0)
    }

    /// The upcall entries by kind, if the room is made (none is
    /// registered otherwise): for a path that reads several.
    #[inline(always)]
    pub fn entries(&self) -> Option<&[u64; upcall::KINDS]> {
        self.room.as_deref().map(|r| &r.upcalls)
    }

    /// Every upcall entry, by kind.
    pub fn upcalls(&self) -> [u64; upcall::KINDS] {
        self.room.as_deref().map_or([0; upcall::KINDS], |r| r.upcalls)
    }

    /// The predicates by index (none at all without a room).
    #[inline]
    pub fn preds(&self) -> &[Option<Box<Pred>>] {
        self.room.as_deref().map_or(&[], |r| &r.preds)
    }

    /// Predicate `index`, if installed.
    pub fn pred(&self, index: usize) -> Option<&Pred> {
        self.preds().get(index).and_then(|p| p.as_deref())
    }

    /// The room, if made.
    pub fn room_mut(&mut self) -> Option<&mut Room> {
        self.room.as_deref_mut()
    }

    /// The room, made if there is none, within the kernel heap's reserve
    /// (`NoMemory`, nothing made).
    pub fn make_room(&mut self) -> Result<&mut Room, Error> {
        if self.room.is_none() {
            crate::mem::heap::reserve(Self::HEAP)?;
            self.room = Some(Box::new(Room { upcalls: [0; upcall::KINDS], preds: Default::default() }));
        }
        self.room.as_deref_mut().ok_or(Error::NoMemory)
    }

    /// Sets the entry of upcall `kind` (`kind < upcall::KINDS`); an entry
    /// of 0 needs no room where there is none. `NoMemory`, nothing changed,
    /// when the room cannot be made.
    pub fn set_upcall(&mut self, kind: usize, entry: u64) -> Result<(), Error> {
        if entry == 0 && self.room.is_none() {
            return Ok(());
        }
        let slot = self.make_room()?.upcalls.get_mut(kind).ok_or(Error::Invalid)?;
        *slot = entry;
        Ok(())
    }
}
