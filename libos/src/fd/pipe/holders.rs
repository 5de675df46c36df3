//! Who holds which end of a pipe: the holder entries in the shared header,
//! checked against the kernel's exposed tables.
//!
//! A process holding an end has its environment id in one entry of that
//! side. It puts it there itself ([`register`]) — or its parent does while
//! building it in `spawn`, before it ever runs, so a pipe never looks
//! closed between the parent closing its copy and the child starting — and
//! clears it itself when its last end of that side closes ([`unregister`]).
//! Nobody else writes a live holder's entry; an entry naming a dead or zombie
//! environment is free for anyone to reuse.
//!
//! Slots are advice from partners, so [`peer`] trusts them only as far as
//! the kernel confirms: an entry counts only if its environment is alive
//! (exposed environment table), and only if the frame is mapped by some
//! other process at all (the frame table's mapping count, which no
//! partner can forge). So once every other process that mapped the frame
//! is gone, the pipe is closed whatever its header says.

use super::frame::{Frame, HOLDERS, Side};
use crate::exposed;
use crate::fd::IoError;
use core::sync::atomic::Ordering;
use oxok_abi::layout::ENV_TABLE;
use oxok_abi::{ENV_ZOMBIE, EnvEntry};

/// True if environment `id` is alive and not a zombie.
pub fn alive(id: u64) -> bool {
    exposed::env_status(id).is_some_and(|s| s != ENV_ZOMBIE)
}

/// Puts `id` in an entry of `side` (no-op if it is there already); an entry
/// that is empty or names a dead environment is taken. `NoSpace` when
/// [`HOLDERS`] live processes hold that side already.
pub fn register(frame: &Frame, side: Side, id: u64) -> Result<(), IoError> {
    let entries = &frame.header().holders[side as usize];
    if entries.iter().any(|s| s.load(Ordering::Acquire) == id) {
        return Ok(());
    }
    for entry in entries {
        let v = entry.load(Ordering::Acquire);
        if (v == 0 || !alive(v)) && entry.compare_exchange(v, id, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            return Ok(());
        }
    }
    Err(IoError::NoSpace)
}

/// Clears every entry of `side` that names `id`.
pub fn unregister(frame: &Frame, side: Side, id: u64) {
    for entry in &frame.header().holders[side as usize] {
        let _ = entry.compare_exchange(id, 0, Ordering::AcqRel, Ordering::Relaxed);
    }
}

/// What the other processes holding `side` look like from here.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Peer {
    /// Another live process holds `side`.
    Live(Watch),
    /// No other process holds it.
    Gone,
}

/// Whether a process other than `me` holds `side` of the pipe (see the
/// module documentation for what is believed). With several, the first
/// live one is named (the one a waiting end yields to).
pub fn peer(frame: &Frame, side: Side, me: u64) -> Peer {
    if mapped_only_here(frame) {
        return Peer::Gone;
    }
    let entries = &frame.header().holders[side as usize];
    for entry in entries.iter().take(HOLDERS) {
        let v = entry.load(Ordering::Acquire);
        if v != 0 && v != me && alive(v) {
            return Peer::Live(Watch { id: v, entry: frame.word_address(entry) });
        }
    }
    Peer::Gone
}

/// A live partner as a waiting end sees it: its environment id and the
/// address of the holder entry that names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Watch {
    /// The partner.
    pub id: u64,
    /// Its holder entry in the pipe's shared header.
    pub entry: u64,
}

impl Watch {
    /// Wakeup-predicate instructions [`Watch::wake_on_gone`] adds.
    pub const INSNS: usize = 9;

    /// Adds to `b` three clauses, each after an `or`, one of which holds
    /// once the partner is gone: its entry no longer names it (it closed
    /// its last end of that side), or its row of the exposed environment
    /// table no longer holds it (reaped) or holds it ended. The kernel
    /// evaluates every sleeper when an environment ends, so a waiter
    /// wakes at its partner's end, not at a timeout.
    pub fn wake_on_gone(self, b: &mut oxok_pred::Builder) {
        let row = ENV_TABLE + (oxok_abi::env_id::row(self.id) * core::mem::size_of::<EnvEntry>()) as u64;
        b.or().load_u64(self.entry).ne_imm(self.id);
        b.or().load_u32(row + core::mem::offset_of!(EnvEntry, id) as u64).ne_imm(self.id & u64::from(u32::MAX));
        b.or().load_u32(row + core::mem::offset_of!(EnvEntry, status) as u64).eq_imm(u64::from(ENV_ZOMBIE));
    }
}

/// True if the frame table says no page table but this process's maps
/// the frame (this process maps each pipe frame exactly once).
pub fn mapped_only_here(frame: &Frame) -> bool {
    exposed::frame_of(frame.va()).and_then(exposed::frame_entry).is_some_and(|e| e.maps <= 1)
}
