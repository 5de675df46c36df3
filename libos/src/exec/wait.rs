//! Waiting for a child: its end, read from the exposed environment table,
//! and its exit status (`env_reap`).

use super::{Child, WAIT_PRED};
use crate::process::SIGNALLED;
use crate::{exposed, sys};
use oxok_abi::layout::ENV_TABLE;
use oxok_abi::{ENV_ZOMBIE, EXIT_KILLED, EnvEntry, Error};
use oxok_pred::Builder;

/// How a child ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitStatus {
    /// It called `env_exit` with this code.
    Exited(i32),
    /// It ended by this signal's default action
    /// ([`crate::process::exit_signalled`]).
    Signalled(i32),
    /// The kernel destroyed it: a fault with no handler (the CPU vector), an
    /// overrun or a kill (`None`).
    Killed(Option<u8>),
}

impl ExitStatus {
    /// From the kernel's `exit_status` word.
    pub fn from_raw(raw: u64) -> ExitStatus {
        let code = raw as u32 as i32;
        if raw & EXIT_KILLED != 0 {
            let vector = (raw & 0xff) as u8;
            ExitStatus::Killed((vector != 0xff).then_some(vector))
        } else if raw & SIGNALLED != 0 && (129..=128 + 64).contains(&code) {
            // (Signals 1–64, as Linux counts them.)
            ExitStatus::Signalled(code - 128)
        } else {
            ExitStatus::Exited(code)
        }
    }

    /// The shell's view: the exit code, or 128 + the signal (for a kill by
    /// the kernel, the signal its vector stands for).
    pub fn code(self) -> i32 {
        match (self, self.signal()) {
            (ExitStatus::Exited(c), _) => c,
            (_, Some(sig)) => 128 + sig,
            (_, None) => 128 + crate::signal::SIGKILL,
        }
    }

    /// The signal it ended by, as Unix counts it: its own for
    /// [`ExitStatus::Signalled`], the one a fault's vector stands for
    /// ([`crate::signal::for_vector`]) or `SIGKILL` when the kernel
    /// destroyed it; `None` for an exit.
    pub fn signal(self) -> Option<i32> {
        match self {
            ExitStatus::Exited(_) => None,
            ExitStatus::Signalled(sig) => Some(sig),
            ExitStatus::Killed(Some(v)) => Some(crate::signal::for_vector(v)),
            ExitStatus::Killed(None) => Some(crate::signal::SIGKILL),
        }
    }
}

/// Sleeps until `child` has ended — exited, or destroyed by the kernel —
/// then reaps it and returns how it ended. It watches the child's row in
/// the exposed environment table with a wakeup predicate at predicate index
/// [`WAIT_PRED`]: the row turns `ENV_ZOMBIE` (holding the exit status) when
/// the child ends. Reaping frees the row and the caller's capability slot.
/// The child's frames may still be in the kernel's bounded-step reaping
/// queue when `wait` returns.
pub fn wait(child: Child) -> Result<ExitStatus, Error> {
    // The id is read from the capability each round, not kept: a process
    // restored from a checkpoint (`crate::restore`) in the middle of this
    // wait has the same slot but a new child id, and its restored
    // predicate still names the old row, so it wakes, finds the id changed
    // and installs a new one.
    let mut watched = None;
    loop {
        let id = child.live_id();
        if watched != Some(id) {
            install(id)?;
            watched = Some(id);
        }
        if exposed::env_status(id).is_none_or(|s| s == ENV_ZOMBIE) {
            break;
        }
        sys::env_sleep(1 << WAIT_PRED)?;
    }
    let [raw] = sys::env_reap(child.slot)?;
    Ok(ExitStatus::from_raw(raw))
}

/// Installs the predicate "child `id`'s row names another environment or a
/// zombie" in [`WAIT_PRED`].
fn install(id: u64) -> Result<(), Error> {
    let row = oxok_abi::env_id::row(id);
    let base = ENV_TABLE + (row * core::mem::size_of::<EnvEntry>()) as u64;
    let id_word = base + core::mem::offset_of!(EnvEntry, id) as u64;
    let status_word = base + core::mem::offset_of!(EnvEntry, status) as u64;
    let code = Builder::new()
        .load_u32(id_word)
        .ne_imm(id & 0xffff_ffff)
        .or()
        .load_u32(status_word)
        .eq_imm(u64::from(ENV_ZOMBIE))
        .build()
        .map_err(|_| Error::Invalid)?;
    let bytes = code.as_bytes();
    crate::pred::install(WAIT_PRED, bytes)?;
    Ok(())
}
