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
///
/// A call that runs its callee at once leaves the state it interrupted
/// where it was, in the environment's saved registers, untouched while the
/// callee runs in the frame: it is copied into the room only if those
/// registers are about to be written ([`PctSave::spill`], through
/// [`Env::regs_mut`](crate::env::Env::regs_mut)), so a call answered
/// without the callee leaving the CPU copies nothing to keep and nothing
/// to restore.
pub struct PctSave {
    room: Option<Box<TrapFrame>>,
    serving: bool,
    /// While serving: the state kept is still the environment's saved
    /// registers, not yet copied into the room.
    in_regs: bool,
}

impl PctSave {
    /// Kernel heap the room takes.
    pub const HEAP: usize = size_of::<TrapFrame>();

    /// No room, serving nothing.
    pub const fn new() -> PctSave {
        PctSave { room: None, serving: false, in_regs: false }
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

    /// The state kept while a call is served; `regs` are the environment's
    /// saved registers (where it is until spilled).
    pub fn saved<'a>(&'a self, regs: &'a TrapFrame) -> Option<&'a TrapFrame> {
        if !self.serving {
            None
        } else if self.in_regs {
            Some(regs)
        } else {
            self.room.as_deref()
        }
    }

    /// Whether a call is being served.
    pub fn serving(&self) -> bool {
        self.serving
    }

    /// Starts serving a call whose interrupted state is the environment's
    /// saved registers, kept where they are. `false`, nothing changed,
    /// without room (which a later [`PctSave::spill`] needs).
    pub fn keep_in_place(&mut self) -> bool {
        if self.room.is_none() {
            return false;
        }
        self.serving = true;
        self.in_regs = true;
        true
    }

    /// Before the environment's saved registers `regs` change: the state
    /// kept in them, if any, goes into the room.
    #[inline(always)]
    pub fn spill(&mut self, regs: &TrapFrame) {
        if self.in_regs {
            self.in_regs = false;
            if let Some(r) = self.room.as_deref_mut() {
                r.copy_from(regs);
            }
        }
    }

    /// Starts serving a call: keeps a copy of `regs`. `false`, nothing
    /// changed, without room.
    fn keep(&mut self, regs: &TrapFrame) -> bool {
        match self.room.as_deref_mut() {
            Some(r) => {
                r.copy_from(regs);
                self.serving = true;
                self.in_regs = false;
                true
            }
            None => false,
        }
    }

    /// Ends serving: the state kept goes back into `regs`, the
    /// environment's saved registers (copied once, from the room, or
    /// already there). `false`, nothing changed, if no call is served.
    pub fn restore_into(&mut self, regs: &mut TrapFrame) -> bool {
        if !self.serving {
            return false;
        }
        if !self.in_regs
            && let Some(saved) = self.room.as_deref()
        {
            regs.copy_from(saved);
        }
        self.serving = false;
        self.in_regs = false;
        true
    }

    /// Serves `saved` (a state import), or nothing. `false`, nothing
    /// changed, if there is a state to keep and no room.
    pub fn set(&mut self, saved: Option<TrapFrame>) -> bool {
        match saved {
            Some(regs) => self.keep(&regs),
            None => {
                self.serving = false;
                self.in_regs = false;
                true
            }
        }
    }
}
