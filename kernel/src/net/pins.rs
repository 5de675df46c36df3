//! A ring's pins on its frames. Binding a ring pins each of its frames
//! (counted like a mapping, so the frame cannot be freed while the device
//! path may write it). Unbinding one ring drops its pins one by one with
//! [`unpin`], which collects frames left unreachable (`net::unbind_ring`);
//! an ending environment's rings hand theirs back as [`Pins`], which drops
//! them when it goes.

use crate::env::EnvTable;
use crate::mem::addr::{Pfn, PhysAddr};
use alloc::vec::Vec;

/// Pins frame `pfn` for a ring.
pub fn pin(pfn: Pfn) {
    crate::mem::frame::with(|f| {
        if let Some(e) = f.entry_mut(pfn) {
            e.maps = e.maps.saturating_add(1);
        }
    });
}

/// Drops a ring's pin on the frame at `pa` and collects the frame if that
/// left it unreachable (no mapping, pin or capability left; see
/// [`crate::env::release_mapping`]; an orphan is freed).
pub fn unpin(pa: PhysAddr, envs: &mut EnvTable) {
    if crate::env::release_mapping(pa) {
        envs.collect(pa.pfn());
    }
}

/// The pins of an unbound ring's frames, owned until dropped.
pub struct Pins(Vec<PhysAddr>);

impl Pins {
    /// The pins on these frames (a ring's, just unbound).
    pub(super) fn of(frames: Vec<PhysAddr>) -> Pins {
        Pins(frames)
    }

    /// No pins.
    pub(super) fn none() -> Pins {
        Pins(Vec::new())
    }

    /// Takes `other`'s pins too.
    pub(super) fn absorb(&mut self, mut other: Pins) {
        self.0.append(&mut other.0);
    }
}

impl Drop for Pins {
    /// Ownership ends: every pin still held is dropped (a frame left
    /// unreachable stays its owner's until the owner ends).
    fn drop(&mut self) {
        for pa in self.0.drain(..) {
            let _ = crate::env::release_mapping(pa);
        }
    }
}
