//! Packet rings: frames an environment supplied and the kernel pinned when
//! the ring was bound (layout in `oxok_abi::net`). The kernel keeps the
//! ring's position and counters itself and never trusts what the owner
//! writes into the frames, except an entry's owner word (0: free).

use crate::env::EnvId;
use crate::mem::access::FrameRef;
use crate::mem::addr::PhysAddr;
use alloc::vec::Vec;
use core::sync::atomic::{Ordering, compiler_fence};
use oxok_abi::net::{ENTRIES_PER_FRAME, ENTRY_BYTES, ENTRY_DATA, RingHeader, RingRow};

/// One bound ring.
pub struct Ring {
    /// The environment that bound it.
    pub owner: EnvId,
    /// The header frame (the owner's, checked when bound).
    header: FrameRef,
    /// The entry frames (the owner's, checked when bound).
    data: Vec<FrameRef>,
    /// The kernel's own counters (the header frame holds a copy).
    state: RingHeader,
    /// Whether it has had less than a batch's room since a batch, and how
    /// many tick polls came since (kept by the network's receive).
    pub short: Option<u32>,
}

impl Ring {
    /// A ring over pinned frames `header` and `data`.
    pub fn new(owner: EnvId, header: FrameRef, data: Vec<FrameRef>) -> Ring {
        let entries = (data.len() * ENTRIES_PER_FRAME) as u64;
        let ring = Ring { owner, header, data, state: RingHeader { entries, ..RingHeader::default() }, short: None };
        ring.publish();
        ring
    }

    /// Every frame of the ring (physical addresses).
    pub fn frames(&self) -> impl Iterator<Item = PhysAddr> + '_ {
        core::iter::once(&self.header).chain(self.data.iter()).map(FrameRef::pa)
    }

    /// Whether the next `n` entries (or all of a smaller ring) are free: the
    /// owner frees entries in the order they were filled, so the last of
    /// them being free says so for all.
    pub fn has_room(&self, n: usize) -> bool {
        let entries = self.state.entries.max(1);
        let n = (n as u64).clamp(1, entries);
        let i = ((self.state.next + n - 1) % entries) as usize;
        self.data.get(i / ENTRIES_PER_FRAME).is_some_and(|f| f.read_u32((i % ENTRIES_PER_FRAME) * ENTRY_BYTES) == 0)
    }

    /// Copies `packet` into the next entry if it is free; otherwise counts
    /// a drop. Returns true if the packet was stored.
    pub fn push(&mut self, packet: &[u8]) -> bool {
        let entries = self.state.entries.max(1);
        let i = (self.state.next % entries) as usize;
        let Some(frame) = self.data.get(i / ENTRIES_PER_FRAME) else { return false };
        let offset = (i % ENTRIES_PER_FRAME) * ENTRY_BYTES;
        let len = packet.len().min(ENTRY_BYTES - ENTRY_DATA);
        let stored = if frame.read_u32(offset) != 0 {
            self.state.dropped += 1;
            false
        } else {
            frame.write(offset + ENTRY_DATA, &packet[..len]);
            // The packet is in place before the owner word says so.
            compiler_fence(Ordering::Release);
            frame.write(offset, &(len as u32).to_le_bytes());
            self.state.produced += 1;
            self.state.next = (self.state.next + 1) % entries;
            true
        };
        self.publish();
        stored
    }

    /// Its row in the network table, as ring number `id`.
    pub fn row(&self, id: u64) -> RingRow {
        RingRow { owner: u64::from(self.owner), ring: id, produced: self.state.produced, dropped: self.state.dropped }
    }

    fn publish(&self) {
        let s = &self.state;
        let mut bytes = [0u8; 32];
        for (i, v) in [s.produced, s.dropped, s.entries, s.next].iter().enumerate() {
            bytes[i * 8..i * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        self.header.write(0, &bytes);
    }
}
