//! Pipes over shared frames with directed yield (Aegis §6, ExOS IPC;
//! Xok §5.2). [`pipe`] makes one 4 KiB frame — a header and a ring buffer
//! ([`frame`]) — and returns its read end and its write end as descriptor
//! objects. An end passes to a child started by `spawn` as the spec
//! `pipe:r:<va>` or `pipe:w:<va>` (`<va>` in hex with `0x`): the parent
//! maps the frame into the child at the same address (a `page_batch` SHARE
//! record, never more rights than its own mapping) and registers the child
//! as a holder of that end before the child runs ([`holders`]).
//!
//! **Data.** Two free-running byte counters: `written` (advanced by the
//! writer after copying into the ring) and `read` (advanced by the reader
//! after copying out). `written - read` bytes are in the ring; a value
//! above the capacity means a partner scribbled on the header, and the
//! call fails with [`IoError::Invalid`] (after yielding, so retrying does
//! not spin) instead of trusting it. Writers in
//! different processes take turns through a lock word naming the copying
//! writer (taken over when that environment is dead); readers advance
//! `read` with compare-and-swap.
//!
//! **End of file.** A side is closed when no *other* process holds it
//! ([`holders::peer`]) and this process holds none of it itself: the last
//! end of a side in a process clears its holder entry when dropped, and a
//! holder that died without closing (killed, or exited with an end still
//! in a variable) is recognised through the exposed environment table. A
//! reader then gets end of file once the ring is drained; a writer gets
//! [`IoError::BrokenPipe`].
//!
//! **fork.** Pipe pages carry `pte::LIBOS_SHARED`, so `vm::fork` shares
//! them writable, and the child registers itself as a holder of the ends it
//! inherited (an `at_fork_child` hook). [`share_with`] lets fork register
//! the child from the parent before it runs, closing the window in which a
//! parent that closes its end at once could make the pipe look closed.
//!
//! **Waiting** ([`wait`]): directed yield to the partner when empty or
//! full, plain yields and short predicate sleeps when it cannot run.
//!
//! **Trust model.** A pipe frame is mapped only in the processes holding
//! its ends; any of them can write anything into it. A scribbling partner
//! can therefore corrupt the pipe's data, make its other users see errors,
//! or keep the pipe looking open while it lives (as a partner that holds an
//! end and never writes can) — and nothing else: every index is reduced
//! modulo the ring's size, every count is checked against it, every wait
//! gives up the CPU, and once no other process maps the frame (the
//! kernel's frame table, which partners cannot forge) the pipe is closed.
//! No process table or other shared state is involved.

mod frame;
mod holders;
mod local;
pub(crate) mod wait;

use super::{File, Handle, IoError};
use alloc::format;
use alloc::string::String;
use alloc::sync::Arc;
use core::sync::atomic::Ordering;
use frame::{CAPACITY, Frame, Side};
use holders::Peer;
pub use holders::Watch;
use oxok_abi::{Error, MapEntry};
use oxok_fdspec::{PipeSide, Spec};
use oxok_pipering::Counters;
use wait::Waiter;

pub use local::{MAX_PIPES, PIPE_BASE, PIPE_PAGES, reclaim, registry_busy, share_with};

/// For a checkpointer rebuilding a process tree elsewhere: rewrites the
/// holder entries of a pipe page's image (`page`, the bytes of a frame mapped
/// at `va`) through `map`, old environment id to new; ids `map` does not
/// know (processes outside the tree) become 0, a free entry. Nothing is
/// done unless `va` is in the pipe region and the page carries the pipe
/// magic. Returns true if it was a pipe page.
pub fn rebind_holders(va: u64, page: &mut [u8], map: &dyn Fn(u64) -> Option<u64>) -> bool {
    frame::rebind_image(va, page, map) && local::in_region(va)
}

/// Consecutive failed compare-and-swaps on `read` before a reader calls
/// the header corrupt (legitimate readers race only rarely).
const CAS_TRIES: u32 = 64;

/// One end of a pipe: what a descriptor holds. Dropping the last end object
/// of a side in a process closes that side for this process.
pub struct PipeEnd {
    frame: Frame,
    side: Side,
}

/// Creates a pipe; returns `(read end, write end)`, not installed in any
/// descriptor (use [`fd::install`](super::install) or pass them to a child
/// with `exec::SpawnOptions`).
pub fn pipe() -> Result<(Handle, Handle), IoError> {
    // `create` counted one end of each side.
    let (r, w) = local::create()?;
    let read = Arc::new(PipeEnd { frame: r, side: Side::Read });
    let write = Arc::new(PipeEnd { frame: w, side: Side::Write });
    Ok((Handle::Object(read), Handle::Object(write)))
}

/// A pipe whose write end is fed on demand: `(read end, feeder)`. The
/// shell gives the read end to a foreground job as its standard input and
/// writes the keyboard's lines into the feeder only when the job waits for
/// them ([`Feeder::wanted`]), so type-ahead the job never reads stays with
/// the shell. Dropping the feeder is the end of input for the reader.
pub fn fed_pipe() -> Result<(Handle, Feeder), IoError> {
    let (r, w) = local::create()?;
    let read = Arc::new(PipeEnd { frame: r, side: Side::Read });
    Ok((Handle::Object(read), Feeder { end: PipeEnd { frame: w, side: Side::Write } }))
}

/// The write end of a [`fed_pipe`].
pub struct Feeder {
    end: PipeEnd,
}

impl Feeder {
    /// Whether a reader waits on the empty pipe (it stored its demand and
    /// nothing was written since).
    pub fn wanted(&self) -> bool {
        let h = self.end.frame.header();
        h.demand.load(Ordering::Acquire) > h.written.load(Ordering::Acquire)
    }

    /// The address and the current value of the demand word, for a wakeup
    /// predicate that fires when a reader starts waiting.
    pub fn demand_word(&self) -> (u64, u64) {
        let h = self.end.frame.header();
        (self.end.frame.word_address(h.demand), h.demand.load(Ordering::Acquire))
    }

    /// Writes all of `bytes` (blocking while the pipe is full).
    pub fn write_all(&self, mut bytes: &[u8]) -> Result<(), IoError> {
        while !bytes.is_empty() {
            let n = self.end.write(bytes)?;
            bytes = &bytes[n..];
        }
        Ok(())
    }
}

/// The end a spec (`pipe:r:<va>` / `pipe:w:<va>`) names, in a child whose
/// parent mapped the frame there.
pub fn from_spec(spec: &str) -> Result<PipeEnd, IoError> {
    let Some(Spec::Pipe { side, va }) = Spec::parse(spec) else {
        return Err(IoError::Invalid);
    };
    let side = match side {
        PipeSide::Read => Side::Read,
        PipeSide::Write => Side::Write,
    };
    Ok(PipeEnd { frame: local::adopt(va, side)?, side })
}

impl PipeEnd {
    /// Who holds `side`: `Ok(Some(watch))`, a live other process to yield
    /// to and to watch while waiting; `Ok(None)`, only this process (open,
    /// but nobody to yield to); `Err(())`, nobody — the side is closed.
    fn partner(&self, side: Side) -> Result<Option<Watch>, ()> {
        let me = crate::exposed::self_id();
        match holders::peer(&self.frame, side, me) {
            Peer::Live(watch) => Ok(Some(watch)),
            Peer::Gone if local::holds(self.frame.va(), side) => Ok(None),
            Peer::Gone => Err(()),
        }
    }

    /// Takes the writers' copy lock; `false` if the readers are gone
    /// meanwhile.
    fn lock(&self, me: u64) -> bool {
        let h = self.frame.header();
        let mut waiter = Waiter::default();
        loop {
            let owner = h.lock.load(Ordering::Acquire);
            // Free, ours (left by this process), left by a dead writer, or
            // no other process maps the frame to be holding it.
            let free = owner == 0 || owner == me || !holders::alive(owner) || holders::mapped_only_here(&self.frame);
            if free && h.lock.compare_exchange(owner, me, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return true;
            }
            if self.partner(Side::Read).is_err() {
                return false;
            }
            waiter.wait((!free).then_some(owner), None, self.frame.word_address(h.lock), owner);
        }
    }
}

impl File for PipeEnd {
    fn read(&self, buf: &mut [u8]) -> Result<usize, IoError> {
        if self.side != Side::Read {
            return Err(IoError::Unsupported);
        }
        let h = self.frame.header();
        let mut waiter = Waiter::default();
        let mut races = 0;
        loop {
            // Look at the writers first: if they are gone, everything they
            // wrote is already counted in `written` (loaded after).
            let writers = self.partner(Side::Write);
            let read = h.read.load(Ordering::Acquire);
            let written = h.written.load(Ordering::Acquire);
            let Some(avail) = (Counters { read, written }).used(CAPACITY) else {
                // Scribbled on: an error while a writer lives, the end once
                // none does (so a reader always gets to the end).
                return if writers.is_err() { Ok(0) } else { Err(corrupt()) };
            };
            if avail > 0 {
                let n = (avail as usize).min(buf.len());
                self.frame.copy_out(read, &mut buf[..n]);
                if h.read
                    .compare_exchange(read, read.wrapping_add(n as u64), Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    return Ok(n);
                }
                races += 1;
                if races == CAS_TRIES {
                    return Err(corrupt());
                }
                continue;
            }
            if buf.is_empty() {
                return Ok(0);
            }
            match writers {
                Err(()) => return Ok(0),
                Ok(partner) => {
                    h.demand.fetch_max(read.wrapping_add(1), Ordering::AcqRel);
                    waiter.wait(partner.map(|w| w.id), partner, self.frame.word_address(h.written), written)
                }
            }
        }
    }

    fn write(&self, buf: &[u8]) -> Result<usize, IoError> {
        if self.side != Side::Write {
            return Err(IoError::Unsupported);
        }
        let h = self.frame.header();
        let me = crate::exposed::self_id();
        let mut waiter = Waiter::default();
        loop {
            let readers = self.partner(Side::Read).map_err(|()| IoError::BrokenPipe)?;
            if buf.is_empty() {
                return Ok(0);
            }
            if !self.lock(me) {
                return Err(IoError::BrokenPipe);
            }
            let read = h.read.load(Ordering::Acquire);
            let written = h.written.load(Ordering::Acquire);
            let outcome = match (Counters { read, written }).writable(CAPACITY, buf.len()) {
                None => Some(Err(())),
                Some(0) => None,
                Some(n) => {
                    self.frame.copy_in(written, &buf[..n]);
                    h.written.store(written.wrapping_add(n as u64), Ordering::Release);
                    Some(Ok(n))
                }
            };
            let _ = h.lock.compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
            match outcome {
                Some(Ok(n)) => return Ok(n),
                Some(Err(())) => return Err(corrupt()),
                None => {}
            }
            waiter.wait(readers.map(|w| w.id), readers, self.frame.word_address(h.read), read);
        }
    }

    fn kind(&self) -> &'static str {
        "pipe"
    }

    /// A read end is ready when bytes are in the ring or every writer is
    /// gone, a write end when there is room or every reader is gone; the
    /// wake word is the counter the other side advances.
    fn readiness(&self) -> super::Readiness {
        let h = self.frame.header();
        let read = h.read.load(Ordering::Acquire);
        let written = h.written.load(Ordering::Acquire);
        let used = written.wrapping_sub(read);
        let other = if self.side == Side::Read { Side::Write } else { Side::Read };
        let partner = self.partner(other);
        let hangup = partner.is_err();
        let (ready, word, seen) = if self.side == Side::Read {
            (used > 0 || hangup, &h.written, written)
        } else {
            (used < CAPACITY || hangup, &h.read, read)
        };
        super::Readiness {
            read: self.side == Side::Read && ready,
            write: self.side == Side::Write && ready,
            hangup,
            wake: Some((self.frame.word_address(word), seen)),
            partner: partner.ok().flatten(),
        }
    }

    /// Maps the frame into the child at the same address and registers
    /// the child as a holder of this end: `pipe:r:<va>` / `pipe:w:<va>`.
    fn spec(&self, child: u64, child_slot: u64) -> Result<Option<String>, IoError> {
        let va = self.frame.va();
        let share = MapEntry::share(va, va, local::FLAGS);
        match crate::sys::page_batch(child_slot, &raw const share as u64, 1) {
            // Mapped already: this spawn passed the same pipe on another
            // descriptor (nothing else maps into a child's pipe region).
            Ok(_) | Err(Error::Exists) => {}
            Err(e) => return Err(e.into()),
        }
        holders::register(&self.frame, self.side, child)?;
        let side = if self.side == Side::Read { PipeSide::Read } else { PipeSide::Write };
        Ok(Some(format!("{}", Spec::Pipe { side, va })))
    }
}

/// The error for a header a partner scribbled on. The CPU goes to others
/// first, so a caller that keeps trying does not spin on a corrupt pipe.
fn corrupt() -> IoError {
    let _ = crate::sys::yield_cpu(0);
    IoError::Invalid
}

impl Drop for PipeEnd {
    fn drop(&mut self) {
        local::release(&self.frame, self.side);
    }
}
