//! [`PctSave`]: where an environment keeps the state a protected control
//! transfer interrupted, while it serves the call (`pct_reply` restores
//! it). The room is made once — when the environment first registers a
//! `PCT` entry, or imports a state that has one or serves a call — and
//! kept, so serving costs no allocation; an environment that never accepts
//! calls holds no room (its record is a saved register frame smaller).

use crate::arch::trapframe::TrapFrame;
use alloc::boxed::Box;
use oxok_abi::Error;

/// The saved state of a transfer being served, and its room.
pub struct PctSave {
    room: Option<Box<TrapFrame>>,
    serving: bool,
}

impl PctSave {
    /// Kernel heap the room takes.
    pub const HEAP: usize = size_of::<TrapFrame>();

    /// No room, serving nothing.
    pub const fn new() -> PctSave {
        PctSave { room: None, serving: false }
    }

    /// Whether the room is made.
    pub fn has_room(&self) -> bool {
        self.room.is_some()
    }

    /// Makes the room if there is none, within the kernel heap's reserve
    /// (`NoMemory`, nothing made).
    pub fn make_room(&mut self) -> Result<(), Error> {
        if self.room.is_none() {
            crate::mem::heap::reserve(Self::HEAP)?;
            self.room = Some(Box::new(TrapFrame::default()));
        }
        Ok(())
    }

    /// The state kept while a call is served.
    pub fn saved(&self) -> Option<&TrapFrame> {
        self.room.as_deref().filter(|_| self.serving)
    }

    /// Whether a call is being served.
    pub fn serving(&self) -> bool {
        self.saved().is_some()
    }

    /// Starts serving a call: keeps a copy of `regs`. `false`, nothing
    /// changed, without room.
    pub fn keep(&mut self, regs: &TrapFrame) -> bool {
        match self.room.as_deref_mut() {
            Some(r) => {
                *r = *regs;
                self.serving = true;
                true
            }
            None => false,
        }
    }

    /// Ends serving: the state kept goes back into `regs` (copied once,
    /// from the room). `false`, nothing changed, if no call is served.
    pub fn restore_into(&mut self, regs: &mut TrapFrame) -> bool {
        match self.saved() {
            Some(saved) => {
                *regs = *saved;
                self.serving = false;
                true
            }
            None => false,
        }
    }

    /// Serves `saved` (a state import), or nothing. `false`, nothing
    /// changed, if there is a state to keep and no room.
    pub fn set(&mut self, saved: Option<TrapFrame>) -> bool {
        match saved {
            Some(regs) => self.keep(&regs),
            None => {
                self.serving = false;
                true
            }
        }
    }
}
