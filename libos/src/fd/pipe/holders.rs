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
use oxok_abi::ENV_ZOMBIE;

/// True if environment `id` is alive and not a zombie.
pub fn alive(id: u64) -> bool {
    exposed::env_entry(id).is_some_and(|e| e.status != ENV_ZOMBIE)
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
    /// Another live process (this id) holds `side`.
    Live(u64),
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
            return Peer::Live(v);
        }
    }
    Peer::Gone
}

/// True if the frame table says no page table but this process's maps
/// the frame (this process maps each pipe frame exactly once).
pub fn mapped_only_here(frame: &Frame) -> bool {
    exposed::frame_of(frame.va()).and_then(exposed::frame_entry).is_some_and(|e| e.maps <= 1)
}
